// The one GraphQL pipeline, for /graphql and REST routes alike: the schema with its plugins
// (query bounds, rate units, error policy, standard and compiled execution), the GraphiQL
// page, and the per-request context (the caller's admission and its tenant-scoped client).
import { createYoga } from 'graphql-yoga';
import type { Context } from '../context.js';
import type { TenantClient } from '../db/tenant.js';
import type { FieldError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { RateLimiter } from '../rate-limit.js';
import { schema } from '../schema/index.js';
import { useCompiledExecution, useStandardExecution } from './compiled-execution.js';
import { safeError, useErrorPolicy } from './error-policy.js';
import { useQueryBounds } from './query-bounds.js';
import { useRootFieldUnits, type Admission } from './rate-units.js';

export interface ServerContext {
  requestId: string;
  /** Null only for the GraphiQL page, which executes nothing. */
  admission: Admission | null;
  /** A REST body's faults found before execution (see InputCheck). */
  inputErrors?: FieldError[];
}

const GRAPHIQL_EXAMPLE = `# Put your API key in the Headers tab below, then run this query.
query NewestCustomers {
  customers(limit: 5) {
    data {
      name
      email
      invoices(limit: 3) { number status totalAmount currency }
    }
    pagination { total }
  }
  invoiceSummary { status currency count totalAmount }
}
`;

/** A browser asking for the GraphiQL page rather than running an operation. */
export function wantsGraphiQL(request: Request): boolean {
  return request.method === 'GET' && (request.headers.get('accept') ?? '').includes('text/html');
}

export function createGraphQL({ log, rateLimiter, tenants }: { log: Logger; rateLimiter: RateLimiter; tenants: (organizationId: string) => TenantClient }) {
  return createYoga<ServerContext, Context>({
    schema,
    graphqlEndpoint: '/graphql',
    logging: false,
    landingPage: false,
    // The bundled GraphiQL works without access to a CDN; it is large, so it is loaded on
    // the first visit rather than at start.
    renderGraphiQL: async (options) => (await import('@graphql-yoga/render-graphiql')).renderGraphiQL(options),
    graphiql: {
      title: 'CRM GraphQL explorer',
      headers: JSON.stringify({ Authorization: 'Bearer svc_live_...' }, null, 2),
      defaultQuery: GRAPHIQL_EXAMPLE,
    },
    plugins: [useQueryBounds(), useRootFieldUnits(rateLimiter), useErrorPolicy(log), useStandardExecution(), useCompiledExecution(log)],
    // Masking is the error policy's (error-policy.ts), which has the request id at hand.
    maskedErrors: false,
    context: ({ requestId, admission, inputErrors }) => {
      if (!admission) throw safeError(new Error('operation without authentication'), log, requestId);
      const { auth } = admission;
      return { requestId, auth, admission, prisma: tenants(auth.organizationId), log, inputErrors };
    },
  });
}

export type GraphQLServer = ReturnType<typeof createGraphQL>;

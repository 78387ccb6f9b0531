// The HTTP surface: one fetch-API handler (so tests can call it without a socket).
// Every API request, GraphQL or REST, passes the same steps: request id -> authentication
// -> the GraphQL pipeline (scopes, validation, tenant-scoped execution). REST requests are
// route-table rows that run a GraphQL operation through that same pipeline.
import type { IncomingMessage } from 'node:http';
import { createServerAdapter } from '@whatwg-node/server';
import { GraphQLError } from 'graphql';
import { createYoga } from 'graphql-yoga';
import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import { createAuthenticator, type Auth } from './auth/authenticate.js';
import type { Context } from './context.js';
import type { Database } from './db/connection.js';
import { tenantClients } from './db/tenant.js';
import { statusOf } from './errors.js';
import { safeError, useErrorPolicy } from './graphql/errors.js';
import { useQueryBounds } from './graphql/query-bounds.js';
import { problemResponse } from './http/problem.js';
import { requestIdFor } from './http/request-id.js';
import type { Logger } from './logger.js';
import { handleRest } from './rest/handler.js';
import { matchRest } from './rest/router.js';
import { schema } from './schema/index.js';
import { createAccountPages } from './web/account.js';

export interface AppDeps {
  db: Database;
  log: Logger;
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

interface ServerContext {
  requestId: string;
  /** Null only for the GraphiQL page, which executes nothing. */
  auth: Auth | null;
}

/** A browser asking for the GraphiQL page rather than running an operation. */
function wantsGraphiQL(request: Request): boolean {
  return request.method === 'GET' && (request.headers.get('accept') ?? '').includes('text/html');
}

export function createApp({ db, log }: AppDeps) {
  const authenticator = createAuthenticator(db.prisma, log);
  const tenants = tenantClients(db.prisma);
  const accountPages = createAccountPages(db.prisma, log);

  const yoga = createYoga<ServerContext, Context>({
    schema,
    graphqlEndpoint: '/graphql',
    logging: false,
    landingPage: false,
    // The bundled GraphiQL works without access to a CDN.
    renderGraphiQL,
    graphiql: {
      title: 'CRM GraphQL explorer',
      headers: JSON.stringify({ Authorization: 'Bearer svc_live_...' }, null, 2),
      defaultQuery: GRAPHIQL_EXAMPLE,
    },
    plugins: [useQueryBounds(), useErrorPolicy(log)],
    maskedErrors: { maskError: (error) => safeError(error, log) },
    context: ({ requestId, auth }) => {
      if (!auth) throw safeError(new Error('operation without authentication'), log, requestId);
      return { requestId, auth, prisma: tenants(auth.organizationId), log };
    },
  });

  /** The caller's key, or the error to answer with (401, or 503 when the database is down). */
  async function authenticate(request: Request, requestId: string): Promise<Auth | GraphQLError> {
    try {
      return await authenticator(request.headers.get('authorization'));
    } catch (error) {
      return safeError(error, log, requestId);
    }
  }

  function errorHeaders(error: GraphQLError): Record<string, string> {
    return ((error.extensions.http as { headers?: Record<string, string> } | undefined)?.headers ?? {});
  }

  async function route(request: Request, requestId: string, clientAddress: string): Promise<Response> {
    const url = new URL(request.url);
    const { pathname } = url;
    if (pathname === '/healthz') return Response.json({ status: 'ok' });
    if (pathname === '/readyz') {
      try {
        await db.sql.query('SELECT 1');
        return Response.json({ status: 'ready' });
      } catch (error) {
        log.warn('readiness check failed', { request_id: requestId, error: (error as Error).message });
        return problemResponse({ status: 503, code: 'UNAVAILABLE', detail: 'The database is unreachable.', headers: { 'retry-after': '5' } }, requestId);
      }
    }

    if (pathname === '/graphql') {
      if (wantsGraphiQL(request)) return yoga.fetch(request, { requestId, auth: null });
      const auth = await authenticate(request, requestId);
      if (auth instanceof GraphQLError) {
        return Response.json({ errors: [auth.toJSON()] }, { status: statusOf(auth.extensions.code), headers: errorHeaders(auth) });
      }
      return yoga.fetch(request, { requestId, auth });
    }

    const page = await accountPages(request, pathname, clientAddress);
    if (page) return page;

    const match = matchRest(request.method, pathname);
    if (match.kind === 'not-found') {
      return problemResponse({ status: 404, code: 'NOT_FOUND', detail: `No route for ${pathname}.` }, requestId);
    }
    if (match.kind === 'method-not-allowed') {
      return problemResponse(
        { status: 405, code: 'METHOD_NOT_ALLOWED', detail: `${request.method} is not allowed here; use ${match.allow.join(' or ')}.`, headers: { allow: match.allow.join(', ') } },
        requestId,
      );
    }
    if (match.kind === 'document') return match.respond();
    const auth = await authenticate(request, requestId);
    if (auth instanceof GraphQLError) {
      return problemResponse(
        { status: statusOf(auth.extensions.code), code: String(auth.extensions.code), detail: auth.message, headers: errorHeaders(auth) },
        requestId,
      );
    }
    const execute = (_request: Request, document: string, variables: Record<string, unknown>) =>
      yoga.fetch(
        new Request('http://rest.internal/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify({ query: document, variables }),
        }),
        { requestId, auth },
      );
    return handleRest(match.route, request, url, match.base, match.id, execute, requestId);
  }

  return createServerAdapter<{ req?: IncomingMessage }>(async (request, serverContext) => {
    const started = performance.now();
    const requestId = requestIdFor(request);
    let response: Response;
    try {
      response = await route(request, requestId, serverContext.req?.socket.remoteAddress ?? 'unknown');
    } catch (error) {
      log.error('unhandled error', { request_id: requestId, err: { message: (error as Error).message, stack: (error as Error).stack } });
      response = problemResponse({ status: 500, code: 'INTERNAL', detail: 'An internal error occurred.' }, requestId);
    }
    response.headers.set('x-request-id', requestId);
    log.info('request', {
      request_id: requestId,
      method: request.method,
      path: new URL(request.url).pathname,
      status: response.status,
      duration_ms: Math.round(performance.now() - started),
    });
    return response;
  });
}

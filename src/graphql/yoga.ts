// The one GraphQL pipeline, for /graphql and REST routes alike: the schema with its plugins
// (query bounds, rate units, error policy, standard and compiled execution), the GraphiQL
// page, and the per-request context (the caller's admission and its tenant-scoped client).
import { createYoga } from 'graphql-yoga';
import type { Context, WebhookServices } from '../context.js';
import type { EventHub } from '../events/hub.js';
import type { TenantClient } from '../db/tenant.js';
import { useReplicaReads, type ReadReplicas } from '../db/replicas.js';
import type { FieldError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { RateLimiter } from '../rate-limit.js';
import { schema } from '../schema/index.js';
import { useCompiledExecution, useStandardExecution } from './compiled-execution.js';
import { safeError, useErrorPolicy } from './error-policy.js';
import { useQueryBounds } from './query-bounds.js';
import { useTextInputRules } from './text-inputs.js';
import type { Admission } from '../auth/admission.js';
import { useRateLimitCharge } from './rate-limit-charge.js';
import { useDryRun } from './dry-run.js';

export interface ServerContext {
  requestId: string;
  /** Null only for the GraphiQL page, which executes nothing. */
  admission: Admission | null;
  /** A REST body's faults found before execution (see InputCheck). */
  inputErrors?: FieldError[];
  /** `Prefer: dry-run` (graphql/dry-run.ts). */
  dryRun?: boolean;
  /** The request carries an Idempotency-Key (see Context). */
  idempotent?: boolean;
}

const GRAPHIQL_EXAMPLE = `# Welcome! The Docs button (top left) shows every type and field.
# To run queries, put an API key in the Headers tab below: the first start of the embedded
# default prints one; /settings/api-keys makes more. Then run this query with the play button.
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

/**
 * GraphiQL fetches the schema once, as the page opens, before a visitor has put a key in
 * the Headers tab, so its docs stayed empty until re-fetched by hand. This fetches it again
 * as soon as a (new) key appears in the headers editor.
 */
const SCHEMA_REFETCH_SCRIPT = `<script>
(() => {
  let seen = '';
  setInterval(() => {
    const editors = document.querySelectorAll('.graphiql-editor-tool .graphiql-editor');
    const text = Array.from(editors, (editor) => editor.textContent || '').join(' ');
    const key = (text.match(/svc_(?:live|test)_[A-Za-z0-9]{32}/) || [''])[0];
    if (!key || key === seen) return;
    seen = key;
    const button = document.querySelector('[aria-label^="Re-fetch GraphQL schema"]');
    if (button) button.click();
  }, 500);
})();
</script>`;

function withSchemaRefetch(html: string): string {
  // The page's inline bundle may spell '</body>' too: insert before the last one.
  const end = html.lastIndexOf('</body>');
  return end < 0 ? html + SCHEMA_REFETCH_SCRIPT : html.slice(0, end) + SCHEMA_REFETCH_SCRIPT + html.slice(end);
}

/** A browser asking for the GraphiQL page rather than running an operation. */
export function wantsGraphiQL(request: Request): boolean {
  return request.method === 'GET' && (request.headers.get('accept') ?? '').includes('text/html');
}

export interface GraphQLDeps {
  log: Logger;
  rateLimiter: RateLimiter;
  tenants: (organizationId: string) => TenantClient;
  webhooks: WebhookServices;
  events: EventHub;
  /** The deployment's cursor key, read once (see schema/cursor.ts). */
  cursorKey: () => Promise<Buffer>;
  /** Read replicas: queries may run on one instead of `tenants`' primary (db/replicas.ts). */
  replicas?: ReadReplicas;
}

export function createGraphQL({ log, rateLimiter, tenants, webhooks, events, cursorKey, replicas }: GraphQLDeps) {
  return createYoga<ServerContext, Context>({
    schema,
    graphqlEndpoint: '/graphql',
    logging: false,
    landingPage: false,
    // CORS is the server's (http/cors.ts), for REST and GraphQL alike. yoga's own default
    // reflected any origin with credentials allowed on /graphql, whatever CORS_ORIGINS said.
    cors: false,
    // The body was read under the server's own cap (http/read-body.ts) and reaches yoga as a
    // string; yoga's cap would stream that string again through a transform, per request.
    maxRequestBodySize: false,
    // The bundled GraphiQL works without access to a CDN; it is large, so it is loaded on
    // the first visit rather than at start.
    renderGraphiQL: async (options) => withSchemaRefetch((await import('@graphql-yoga/render-graphiql')).renderGraphiQL(options)),
    graphiql: {
      title: 'CRM GraphQL explorer',
      headers: JSON.stringify({ Authorization: 'Bearer svc_live_...' }, null, 2),
      defaultQuery: GRAPHIQL_EXAMPLE,
    },
    plugins: [useQueryBounds(), useTextInputRules(), useRateLimitCharge(rateLimiter), useErrorPolicy(log), useStandardExecution(), useCompiledExecution(log), ...(replicas ? [useReplicaReads(replicas)] : []), useDryRun()],
    // Masking is the error policy's (error-policy.ts), which has the request id at hand.
    maskedErrors: false,
    context: async ({ requestId, admission, inputErrors, dryRun, idempotent }) => {
      if (!admission) throw safeError(new Error('operation without authentication'), log, requestId);
      const { auth } = admission;
      return { requestId, auth, admission, prisma: tenants(auth.organizationId), log, inputErrors, webhooks, events, cursorKey: await cursorKey(), dryRun: dryRun ?? false, idempotent: idempotent ?? false };
    },
  });
}

export type GraphQLServer = ReturnType<typeof createGraphQL>;


// The HTTP surface: one fetch-API handler (so tests can call it without a socket).
// Every API request, GraphQL or REST, passes the same steps: request id -> authentication
// -> rate limit -> the GraphQL pipeline (query bounds, scopes, validation, tenant-scoped
// execution). REST requests are route-table rows that run a GraphQL operation through
// that same pipeline.
import type { IncomingMessage } from 'node:http';
import { createServerAdapter } from '@whatwg-node/server';
import { GraphQLError, type ExecutionResult } from 'graphql';
import { createYoga } from 'graphql-yoga';
import { createAuthenticator, type Auth } from './auth/authenticate.js';
import type { Context } from './context.js';
import type { Database } from './db/connection.js';
import { tenantClients } from './db/tenant.js';
import { apiError, errorHeaders, statusOf, type ErrorCode, type FieldError } from './errors.js';
import { useCompiledExecution, useStandardExecution } from './graphql/compiled-execution.js';
import { graphqlErrorBody, safeError, useErrorPolicy } from './graphql/errors.js';
import { useQueryBounds } from './graphql/query-bounds.js';
import { useRootFieldUnits, type Admission } from './graphql/rate-units.js';
import { createIdempotency, fingerprint, IDEMPOTENCY_HEADER, idempotencyKeyError, type IdempotencyRefusal } from './http/idempotency.js';
import { problemResponse } from './http/problem.js';
import { requestIdFor } from './http/request-id.js';
import type { Fields, Logger } from './logger.js';
import { rateLimitHeaders, type RateLimiter } from './rate-limit.js';
import { handleRest, ProblemError, readBody, type Execute } from './rest/handler.js';
import { matchRest } from './rest/router.js';
import type { Route } from './rest/routes.js';
import { schema } from './schema/index.js';
import { createAccountPages } from './web/account.js';
import { Request, Response } from './http/fetch.js';

export interface AppDeps {
  db: Database;
  log: Logger;
  rateLimiter: RateLimiter;
  /**
   * Shutdown state: without an argument, whether shutdown has begun (responses then close
   * their connection); with a request, whether that request arrived after it began (and
   * is refused rather than served).
   */
  draining?: (arrived?: IncomingMessage) => boolean;
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
  admission: Admission | null;
  /** A REST body's faults found before execution (see InputCheck). */
  inputErrors?: FieldError[];
}

/** A browser asking for the GraphiQL page rather than running an operation. */
function wantsGraphiQL(request: Request): boolean {
  return request.method === 'GET' && (request.headers.get('accept') ?? '').includes('text/html');
}

export function createApp({ db, log, rateLimiter, draining = () => false }: AppDeps) {
  const authenticator = createAuthenticator(db, log);
  const tenants = tenantClients(db.prisma);
  const accountPages = createAccountPages(db.prisma, log, authenticator.forget);
  const once = createIdempotency(db.prisma);

  const yoga = createYoga<ServerContext, Context>({
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
    // Masking is the error policy's (graphql/errors.ts), which has the request id at hand.
    maskedErrors: false,
    context: ({ requestId, admission, inputErrors }) => {
      if (!admission) throw safeError(new Error('operation without authentication'), log, requestId);
      const { auth } = admission;
      return { requestId, auth, admission, prisma: tenants(auth.organizationId), log, inputErrors };
    },
  });

  /**
   * Authentication and the rate limit, for both surfaces. Requests without a valid key are
   * bounded per client address, and refused before any database lookup once over it.
   */
  async function admit(request: Request, requestId: string, clientAddress: string, logFields: Fields): Promise<Admission | GraphQLError> {
    const address = `address:${clientAddress}`;
    try {
      const anonymous = await rateLimiter.peek(address);
      if (anonymous.limited) return apiError('RATE_LIMITED', 'Too many requests without a valid API key from this address.', { headers: rateLimitHeaders(anonymous) });
      let auth: Auth;
      try {
        auth = await authenticator(request.headers.get('authorization'));
      } catch (error) {
        await rateLimiter.consume(address);
        return safeError(error, log, requestId);
      }
      logFields.organization_id = auth.organizationId;
      logFields.key_prefix = auth.keyPrefix;
      const rate = await rateLimiter.consume(`key:${auth.keyId}`);
      const admission: Admission = { auth, rate };
      if (rate.limited) {
        return apiError('RATE_LIMITED', `Rate limit of ${rate.limit} requests per window exceeded; retry in ${rate.resetSeconds} s.`, { headers: rateLimitHeaders(rate) });
      }
      return admission;
    } catch (error) {
      return safeError(error, log, requestId);
    }
  }

  // REST operations are fixed documents, parsed when the route table is built, executed on
  // the same envelop pipeline /graphql uses (context, query bounds, rate units, scopes,
  // error policy) without a detour through an HTTP request and its JSON.
  async function executeRoute(request: Request, route: Route, variables: Record<string, unknown>, serverContext: ServerContext) {
    const enveloped = yoga.getEnveloped({ ...serverContext, request, params: { query: route.document, variables } });
    try {
      const contextValue = await enveloped.contextFactory();
      return (await enveloped.execute({ schema: enveloped.schema, document: route.parsed, contextValue, variableValues: variables })) as ExecutionResult<{
        result: unknown;
      } | null>;
    } catch (error) {
      return { errors: [safeError(error, log, serverContext.requestId)] };
    }
  }

  /** Runs a create once per Idempotency-Key (see http/idempotency.ts); without the header, just runs it. */
  async function idempotent(
    request: Request,
    requestId: string,
    admission: Admission,
    path: string,
    run: (request: Request) => Promise<Response>,
    refuse: (refusal: IdempotencyRefusal) => Response,
  ): Promise<Response> {
    const key = request.headers.get(IDEMPOTENCY_HEADER);
    if (key === null || request.method !== 'POST') return run(request);
    const invalid = idempotencyKeyError(key);
    if (invalid) return refuse(invalid);
    let body: string;
    try {
      body = await readBody(request);
    } catch (error) {
      if (error instanceof ProblemError) return problemResponse(error.problem, requestId);
      throw error;
    }
    const replayable = new Request(request.url, { method: request.method, headers: request.headers, body });
    const result = await once(admission.auth.organizationId, key, fingerprint(request.method, path, body), () => run(replayable));
    return result instanceof Response ? result : refuse(result);
  }

  async function route(request: Request, url: URL, requestId: string, clientAddress: string, logFields: Fields): Promise<Response> {
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
      if (wantsGraphiQL(request)) return yoga.fetch(request, { requestId, admission: null });
      const admission = await admit(request, requestId, clientAddress, logFields);
      if (admission instanceof GraphQLError) {
        return Response.json(graphqlErrorBody(admission), { status: statusOf(admission.extensions.code), headers: errorHeaders(admission) });
      }
      // The document is read under the same size cap as a REST body before yoga parses it.
      let body: string | undefined;
      if (request.method === 'POST') {
        try {
          body = await readBody(request);
        } catch (error) {
          if (!(error instanceof ProblemError)) throw error;
          return withRateHeaders(Response.json(graphqlErrorBody(apiError(error.problem.code as ErrorCode, error.problem.detail)), { status: error.problem.status }), admission);
        }
      }
      const bounded = body === undefined ? request : new Request(request.url, { method: 'POST', headers: request.headers, body });
      const run = async (req: Request) => yoga.fetch(req, { requestId, admission });
      const response = await idempotent(bounded, requestId, admission, '/graphql', run, (refusal) =>
        Response.json(
          { errors: [{ message: refusal.detail, extensions: { code: refusal.status === 409 ? 'CONFLICT' : 'BAD_REQUEST', ...(refusal.errors ? { errors: refusal.errors } : {}) } }] },
          { status: refusal.status },
        ),
      );
      return withRateHeaders(response, admission);
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
    logFields.route = `${match.route.method} ${match.route.path}`;
    const admission = await admit(request, requestId, clientAddress, logFields);
    if (admission instanceof GraphQLError) {
      return problemResponse(
        { status: statusOf(admission.extensions.code), code: String(admission.extensions.code), detail: admission.message, headers: errorHeaders(admission) },
        requestId,
      );
    }
    const execute: Execute = (route, variables, inputErrors) => executeRoute(request, route, variables, { requestId, admission, inputErrors });
    const run = (req: Request) => handleRest(match.route, req, url, match.base, match.id, execute, requestId);
    const response =
      match.route.kind === 'create'
        ? await idempotent(request, requestId, admission, match.route.path, run, (refusal) =>
            problemResponse({ status: refusal.status, code: refusal.status === 409 ? 'CONFLICT' : 'BAD_REQUEST', detail: refusal.detail, errors: refusal.errors }, requestId),
          )
        : await run(request);
    return withRateHeaders(response, admission);
  }

  return createServerAdapter<{ req?: IncomingMessage }>(async (request, serverContext) => {
    const started = performance.now();
    const url = new URL(request.url);
    const requestId = requestIdFor(request);
    const logFields: Fields = {};
    let response: Response;
    try {
      response = draining(serverContext.req)
        ? // Clients on kept-alive connections would otherwise keep a stopping server busy.
          problemResponse({ status: 503, code: 'UNAVAILABLE', detail: 'The server is shutting down; retry.', headers: { 'retry-after': '1' } }, requestId)
        : await route(request, url, requestId, serverContext.req?.socket.remoteAddress ?? 'unknown', logFields);
    } catch (error) {
      log.error('unhandled error', { request_id: requestId, err: { message: (error as Error).message, stack: (error as Error).stack } });
      response = problemResponse({ status: 500, code: 'INTERNAL', detail: 'An internal error occurred.' }, requestId);
    }
    response.headers.set('x-request-id', requestId);
    if (draining()) response.headers.set('connection', 'close');
    log.info('request', {
      request_id: requestId,
      method: request.method,
      path: url.pathname,
      ...logFields,
      status: response.status,
      duration_ms: Math.round(performance.now() - started),
    });
    return response;
  });
}

/** Every authenticated response says where its key stands (the latest count, after any extra units). */
function withRateHeaders(response: Response, admission: Admission): Response {
  for (const [name, value] of Object.entries(rateLimitHeaders(admission.rate))) response.headers.set(name, value);
  return response;
}

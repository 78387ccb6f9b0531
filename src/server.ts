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
import { apiError, type ErrorCode, type FieldError } from './errors.js';
import { useCompiledExecution, useStandardExecution } from './graphql/compiled-execution.js';
import { graphqlErrorResponse, safeError, useErrorPolicy } from './graphql/errors.js';
import { useQueryBounds } from './graphql/query-bounds.js';
import { useRootFieldUnits, type Admission } from './graphql/rate-units.js';
import { createIdempotency, fingerprint, graphqlRequestWrites, IDEMPOTENCY_HEADER, idempotencyKeyError, refusalError } from './http/idempotency.js';
import { errorProblemResponse, problemResponse } from './http/problem.js';
import { clientAddress } from './http/client-address.js';
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
  /** Reverse proxies in front (see http/client-address.ts). */
  trustProxy?: number;
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

export function createApp({ db, log, rateLimiter, trustProxy = 0, draining = () => false }: AppDeps) {
  const authenticator = createAuthenticator(db, log);
  const tenants = tenantClients(db.prisma);
  const accountPages = createAccountPages(db.prisma, log, authenticator.forget);
  const idempotency = createIdempotency(db.prisma, log);

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
   * Authentication and the rate limit, for both surfaces. A valid key is counted against its
   * own allowance only; requests that fail authentication are counted per client address,
   * so a flood of bad keys from behind a shared proxy cannot lock out the valid ones.
   */
  async function admit(request: Request, requestId: string, clientAddress: string, logFields: Fields): Promise<Admission | GraphQLError> {
    try {
      let auth: Auth;
      try {
        auth = await authenticator(request.headers.get('authorization'));
      } catch (error) {
        const anonymous = await rateLimiter.consume(`address:${clientAddress}`);
        if (anonymous.limited) return apiError('RATE_LIMITED', 'Too many requests without a valid API key from this address.', { headers: rateLimitHeaders(anonymous) });
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

  /**
   * Runs a write once per Idempotency-Key (see http/idempotency.ts); without the header, or
   * for a request that writes nothing, just runs it.
   */
  async function idempotent(
    request: Request,
    admission: Admission,
    path: string,
    run: (request: Request) => Promise<Response>,
    refuse: (refusal: GraphQLError) => Response,
    writes: (body: string) => boolean = () => true,
  ): Promise<Response> {
    const key = request.headers.get(IDEMPOTENCY_HEADER);
    if (key === null || request.method !== 'POST') return run(request);
    const invalid = idempotencyKeyError(key);
    if (invalid) return refuse(refusalError(invalid));
    let body: string;
    try {
      body = await readBody(request);
    } catch (error) {
      if (error instanceof ProblemError) return refuse(apiError(error.problem.code as ErrorCode, error.problem.detail, { errors: error.problem.errors }));
      throw error;
    }
    const replayable = new Request(request.url, { method: request.method, headers: request.headers, body });
    if (!writes(body)) return run(replayable);
    const result = await idempotency.once(admission.auth.organizationId, admission.auth.keyId, key, fingerprint(request.method, path, body), () => run(replayable));
    return result instanceof Response ? result : refuse(refusalError(result));
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
        return graphqlErrorResponse(admission);
      }
      // The document is read under the same size cap as a REST body before yoga parses it.
      let body: string | undefined;
      if (request.method === 'POST') {
        try {
          body = await readBody(request);
        } catch (error) {
          if (!(error instanceof ProblemError)) throw error;
          return withRateHeaders(graphqlErrorResponse(apiError(error.problem.code as ErrorCode, error.problem.detail)), admission);
        }
      }
      const bounded = body === undefined ? request : new Request(request.url, { method: 'POST', headers: request.headers, body });
      const run = async (req: Request) => yoga.fetch(req, { requestId, admission });
      const response = await idempotent(bounded, admission, '/graphql', run, graphqlErrorResponse, graphqlRequestWrites);
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
    if (admission instanceof GraphQLError) return errorProblemResponse(admission, requestId);
    const execute: Execute = (route, variables, inputErrors) => executeRoute(request, route, variables, { requestId, admission, inputErrors });
    const run = (req: Request) => handleRest(match.route, req, url, match.base, match.id, execute, requestId);
    const response =
      match.route.kind === 'create'
        ? await idempotent(request, admission, match.route.path, run, (refusal) => errorProblemResponse(refusal, requestId))
        : await run(request);
    return withRateHeaders(response, admission);
  }

  return createServerAdapter<{ req?: IncomingMessage }>(async (request, serverContext) => {
    const started = performance.now();
    const url = URL.canParse(request.url) ? new URL(request.url) : undefined;
    const requestId = requestIdFor(request);
    const logFields: Fields = {};
    let response: Response;
    try {
      response = !url
        ? // The address is built from the Host header, which the client chose.
          problemResponse({ status: 400, code: 'BAD_REQUEST', detail: 'The request has an invalid Host header.', errors: [{ param: 'Host', message: 'is not a valid host' }] }, requestId)
        : draining(serverContext.req)
        ? // Clients on kept-alive connections would otherwise keep a stopping server busy.
          problemResponse({ status: 503, code: 'UNAVAILABLE', detail: 'The server is shutting down; retry.', headers: { 'retry-after': '1' } }, requestId)
        : await route(request, url, requestId, clientAddress(request, serverContext.req?.socket, trustProxy), logFields);
    } catch (error) {
      log.error('unhandled error', { request_id: requestId, err: { message: (error as Error).message, stack: (error as Error).stack } });
      response = problemResponse({ status: 500, code: 'INTERNAL', detail: 'An internal error occurred.' }, requestId);
    }
    response.headers.set('x-request-id', requestId);
    if (draining()) response.headers.set('connection', 'close');
    log.info('request', {
      request_id: requestId,
      method: request.method,
      path: url?.pathname,
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

// The HTTP surface: one fetch-API handler (so tests can call it without a socket), composed
// of single-purpose steps. Every API request, GraphQL or REST, is admitted the same way
// (auth/admission.ts), may be guarded by its Idempotency-Key (http/idempotency.ts), and runs
// on the one GraphQL pipeline (graphql/yoga.ts); REST requests are route-table rows
// (rest/router.ts) executed on that pipeline (rest/execute.ts).
import type { IncomingMessage } from 'node:http';
import { createServerAdapter } from '@whatwg-node/server';
import { GraphQLError } from 'graphql';
import { createAdmission, withRateHeaders, type Admission } from './auth/admission.js';
import { createAuthenticator } from './auth/authenticate.js';
import { instanceKeyChanger } from './auth/key-changes.js';
import type { Database } from './db/connection.js';
import { lazyServiceKey } from './db/service-keys.js';
import { tenantClients } from './db/tenant.js';
import type { WebhookServices } from './context.js';
import { createEventHub, type EventHub } from './events/hub.js';
import { lazySecretBox } from './webhooks/secrets.js';
import { apiError, codeOf } from './errors.js';
import { graphqlErrorResponse } from './graphql/error-policy.js';
import { createGraphQL, wantsGraphiQL } from './graphql/yoga.js';
import { clientAddress } from './http/client-address.js';
import { createCors } from './http/cors.js';
import { favicon } from './http/favicon.js';
import { NO_FRAMING, Request, Response } from './http/fetch.js';
import { healthCheck } from './http/health.js';
import { createIdempotency, graphqlRequestWrites, IDEMPOTENCY_HEADER } from './http/idempotency.js';
import { problemResponse } from './http/problem.js';
import { readBody } from './http/read-body.js';
import { requestIdFor } from './http/request-id.js';
import type { Fields, Logger } from './logger.js';
import type { RateLimiter } from './rate-limit.js';
import { MAX_IMPORT_BYTES } from './imports/plan.js';
import { anonymousAdmission, isIntrospectionOnly } from './graphql/public-introspection.js';
import { markDryRun, wantsDryRun } from './http/dry-run.js';
import { routeExecutor } from './rest/execute.js';
import { handleRest } from './rest/handler.js';
import { matchRest } from './rest/router.js';
import type { ResponseCache } from './rest/response-cache.js';
import { createAccountPages } from './web/account.js';
// Request logs (GET /v1/request_logs): one entry per authenticated API request.
import { recordRequest } from './request-logs/record.js';
import type { RequestLogWriter } from './request-logs/writer.js';
import type { ThrottleFactory } from './web/login-throttle.js';

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
  /** Origins allowed to call the API from a browser (see http/cors.ts). */
  corsOrigins?: string[] | '*';
  /** Webhook endpoints' address policy and secrets, and the delivery loop to wake. */
  webhooks?: WebhookServices;
  /** Committed events as this instance hears of them (subscriptions). */
  events?: EventHub;
  /** Where failed logins are counted (default: this process; in a cluster, the primary). */
  loginThrottles?: ThrottleFactory;
  /** Where the organization's request log is written (request-logs/writer.ts); none: not kept. */
  requestLogs?: RequestLogWriter;
  /** REST reads answered from memory while their organization is unchanged (rest/response-cache.ts); none: every read computed. */
  responses?: ResponseCache;
}

export function createApp({
  db,
  log,
  rateLimiter,
  trustProxy = 0,
  corsOrigins = '*',
  webhooks = { policy: { allowHttp: false, allowPrivate: false }, box: lazySecretBox(db.prisma, undefined), wake: () => undefined },
  events = createEventHub(db, log),
  draining = () => false,
  loginThrottles,
  requestLogs,
  responses,
}: AppDeps) {
  // Open subscriptions hear of key changes too: a revoked key's streams end.
  const authenticator = createAuthenticator(db, log, events.streams);
  const admit = createAdmission(authenticator, rateLimiter, log);
  const yoga = createGraphQL({ log, rateLimiter, tenants: tenantClients(db.prisma, { session: db.sql.session, read: db.read }), webhooks, events, cursorKey: lazyServiceKey(db.prisma, 'cursors'), replicas: db.replicas });
  const idempotency = createIdempotency(db.prisma, log, webhooks.box);
  const health = healthCheck(db, log);
  const accountPages = createAccountPages(db.prisma, log, instanceKeyChanger(db, authenticator.forget, log), webhooks, loginThrottles);
  const cors = createCors(corsOrigins);

  /** Runs a surface's steps; a refusal one of them throws is rendered once, in that surface's form. */
  async function rendering(render: (refusal: GraphQLError) => Response, steps: () => Promise<Response>): Promise<Response> {
    try {
      return await steps();
    } catch (error) {
      if (error instanceof GraphQLError) return render(error);
      throw error;
    }
  }

  /** What runs once admitted: the request (its body read), its address, and how it runs. */
  interface Run {
    request: Request;
    /** Where an Idempotency-Key applies: the path below /v1, or /graphql. */
    path: string;
    dryRun: boolean;
    run: (request: Request) => Promise<Response>;
    /** Whether the request writes (from its body); a write unless said. */
    writes?: (body: string) => boolean;
    /** The body cap, where it is not a JSON body's. */
    limit?: number;
  }

  /**
   * The chain both surfaces share once a request is admitted: a write runs once per
   * Idempotency-Key (a dry run persists nothing, its key included); refusals are rendered in
   * the surface's form; every answer says where the key stands.
   */
  async function admitted(admission: Admission, requestId: string, render: (refusal: GraphQLError) => Response, prepare: () => Promise<Run>): Promise<Response> {
    const response = await rendering(render, async () => {
      const { request, path, dryRun, run, writes, limit } = await prepare();
      return dryRun ? markDryRun(await run(request)) : idempotency.guard(request, { ...admission.auth, requestId }, path, run, writes, limit);
    });
    return withRateHeaders(response, admission);
  }

  async function graphql(request: Request, requestId: string, address: string, logFields: Fields): Promise<Response> {
    if (wantsGraphiQL(request)) {
      const page = await yoga.fetch(request, { requestId, admission: null });
      for (const [name, value] of Object.entries(NO_FRAMING)) page.headers.set(name, value);
      return page;
    }
    return rendering(graphqlErrorResponse, async () => {
      let introspection: string | undefined;
      const admission = await admit(request, requestId, address, logFields).catch(async (refusal: GraphQLError) => {
        // Introspection alone needs no key (graphql/public-introspection.ts); the address was counted.
        const body = codeOf(refusal) === 'UNAUTHENTICATED' && request.method === 'POST' ? await readBody(request).catch(() => undefined) : undefined;
        if (body === undefined || !isIntrospectionOnly(body)) throw refusal;
        introspection = body;
        return undefined;
      });
      if (!admission) {
        const anonymous = new Request(request.url, { method: 'POST', headers: request.headers, body: introspection });
        return yoga.fetch(anonymous, { requestId, admission: anonymousAdmission({ limit: 0, remaining: 0, resetSeconds: 0, limited: false }) });
      }
      return admitted(admission, requestId, graphqlErrorResponse, async () => {
        // The document is read under the same size cap as a REST body before yoga parses it;
        // the signal goes along: it tells a subscription that its client left.
        const bounded = request.method === 'POST' ? new Request(request.url, { method: 'POST', headers: request.headers, body: await readBody(request), signal: request.signal }) : request;
        const dryRun = wantsDryRun(request);
        const run = async (req: Request) => yoga.fetch(req, { requestId, admission, dryRun, idempotent: req.headers.has(IDEMPOTENCY_HEADER) });
        return { request: bounded, path: '/graphql', dryRun, run, writes: graphqlRequestWrites };
      });
    });
  }

  async function rest(request: Request, url: URL, requestId: string, address: string, logFields: Fields): Promise<Response | undefined> {
    const match = matchRest(request.method, url.pathname);
    if (match.kind === 'not-found') return undefined;
    if (match.kind === 'reference') return match.respond();
    const render = (refusal: GraphQLError) => problemResponse(refusal, requestId);
    if (match.kind === 'method-not-allowed') {
      const detail = `${request.method} is not allowed here; use ${match.allow.join(' or ')}.`;
      return render(apiError('METHOD_NOT_ALLOWED', detail, { headers: { Allow: match.allow.join(', ') } }));
    }
    logFields.route = `${match.route.method} ${match.route.path}`;
    return rendering(render, async () => {
      const admission = await admit(request, requestId, address, logFields);
      const dryRun = match.route.method !== 'GET' && wantsDryRun(request);
      const execute = routeExecutor(yoga, log, request, { requestId, admission, dryRun, idempotent: request.headers.has(IDEMPOTENCY_HEADER) });
      return admitted(admission, requestId, render, async () => ({
        request,
        // The key covers this record's address.
        path: url.pathname.slice(match.base.length),
        dryRun,
        run: (req) => {
          const compute = () => handleRest(match.route, req, url, match.base, match.id, execute, requestId);
          return responses ? responses.answer(match.route, req, url, admission.auth, compute) : compute();
        },
        limit: match.route.kind === 'import' ? MAX_IMPORT_BYTES : undefined,
      }));
    });
  }

  async function route(request: Request, url: URL, requestId: string, address: string, logFields: Fields): Promise<Response> {
    if (url.pathname === '/graphql') return graphql(request, requestId, address, logFields);
    return (
      favicon(request, url.pathname) ??
      (await health(url.pathname, requestId)) ??
      (await rest(request, url, requestId, address, logFields)) ??
      (await accountPages(request, url.pathname, address)) ??
      problemResponse(apiError('NOT_FOUND', `No route for ${url.pathname}.`), requestId)
    );
  }

  return createServerAdapter<{ req?: IncomingMessage }>(async (request, serverContext) => {
    const started = performance.now();
    const url = URL.canParse(request.url) ? new URL(request.url) : undefined;
    const requestId = requestIdFor(request);
    const logFields: Fields = {};
    let response: Response;
    try {
      if (!url) {
        // The address is built from the Host header, which the client chose.
        response = problemResponse(apiError('BAD_REQUEST', 'The request has an invalid Host header.', { errors: [{ param: 'Host', message: 'is not a valid host' }] }), requestId);
      } else if (draining(serverContext.req)) {
        // Clients on kept-alive connections would otherwise keep a stopping server busy.
        response = problemResponse(apiError('UNAVAILABLE', 'The server is shutting down; retry.', { headers: { 'Retry-After': '1' } }), requestId);
      } else {
        response = cors.preflight(request, url.pathname) ?? (await route(request, url, requestId, clientAddress(request, serverContext.req?.socket, trustProxy), logFields));
      }
    } catch (error) {
      log.error('unhandled error', { request_id: requestId, err: { message: (error as Error).message, stack: (error as Error).stack } });
      response = problemResponse(apiError('INTERNAL', 'An internal error occurred.'), requestId);
    }
    response.headers.set('x-request-id', requestId);
    if (url) cors.expose(request, url.pathname, response);
    if (draining()) response.headers.set('connection', 'close');
    const durationMs = Math.round(performance.now() - started);
    log.info('request', { request_id: requestId, method: request.method, path: url?.pathname, ...logFields, status: response.status, duration_ms: durationMs });
    // The organization's request log: API requests that authenticated (admission named the
    // organization), handed to the writer, which stores them off this path.
    if (requestLogs && url && typeof logFields.organization_id === 'string' && typeof logFields.key_prefix === 'string') {
      const served = { organizationId: logFields.organization_id, keyPrefix: logFields.key_prefix, requestId, method: request.method, path: url.pathname, status: response.status, durationMs };
      recordRequest(requestLogs, served, response);
    }
    return response;
  });
}

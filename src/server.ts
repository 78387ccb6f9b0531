// The HTTP surface: one fetch-API handler (so tests can call it without a socket) that
// routes to health checks, the GraphQL endpoint and, failing those, a 404 problem.
import { createServerAdapter } from '@whatwg-node/server';
import { createYoga } from 'graphql-yoga';
import { createAuthenticator } from './auth/authenticate.js';
import type { Context } from './context.js';
import type { Database } from './db/connection.js';
import { tenantClients } from './db/tenant.js';
import { safeError, useErrorPolicy } from './graphql/errors.js';
import { problemResponse } from './http/problem.js';
import { requestIdFor } from './http/request-id.js';
import type { Logger } from './logger.js';
import { schema } from './schema/index.js';

export interface AppDeps {
  db: Database;
  log: Logger;
}

interface ServerContext {
  requestId: string;
}

export function createApp({ db, log }: AppDeps) {
  const authenticate = createAuthenticator(db.prisma, log);
  const tenants = tenantClients(db.prisma);

  const yoga = createYoga<ServerContext, Context>({
    schema,
    graphqlEndpoint: '/graphql',
    logging: false,
    landingPage: false,
    plugins: [useErrorPolicy(log)],
    // Errors outside execution (authentication, for one) come through here.
    maskedErrors: { maskError: (error) => safeError(error, log) },
    context: async ({ request, requestId }) => {
      const auth = await authenticate(request.headers.get('authorization')).catch((error: unknown) => {
        throw safeError(error, log, requestId);
      });
      return { requestId, auth, prisma: tenants(auth.organizationId), log };
    },
  });

  async function route(request: Request, requestId: string): Promise<Response> {
    const { pathname } = new URL(request.url);
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
    if (pathname === '/graphql') return yoga.fetch(request, { requestId });
    return problemResponse({ status: 404, code: 'NOT_FOUND', detail: `No route for ${pathname}.` }, requestId);
  }

  return createServerAdapter(async (request: Request) => {
    const started = performance.now();
    const requestId = requestIdFor(request);
    let response: Response;
    try {
      response = await route(request, requestId);
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

// Cross-origin calls to the API from browser apps on other origins. The API authenticates
// by header, never by cookie, so any allowed origin may call it, and credentials are never
// allowed. The account pages (cookie sessions) get no CORS headers at all.
import { PREFIXES } from '../rest/router.js';
import { Response } from './fetch.js';

const ALLOWED_METHODS = 'GET, POST, PUT, PATCH, DELETE, OPTIONS';
const ALLOWED_HEADERS = 'Authorization, Content-Type, Accept, Idempotency-Key, If-Match, If-None-Match, X-Request-Id';
const EXPOSED_HEADERS = 'X-Request-Id, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, ETag, Location, Idempotent-Replayed';
const PREFLIGHT_MAX_AGE_SECONDS = '600';

export function isApiPath(pathname: string): boolean {
  return pathname === '/graphql' || PREFIXES.some((prefix) => pathname === prefix || pathname.startsWith(`${prefix}/`));
}

/** Adds Origin to Vary once: a preflight's answer has it already, and yoga's may name others. */
function varyOnOrigin(headers: Headers): void {
  const named = (headers.get('vary') ?? '').split(',').map((name) => name.trim().toLowerCase());
  if (!named.includes('origin') && !named.includes('*')) headers.append('vary', 'Origin');
}

/** `origins`: the allowed origins, or `*` for any (CORS_ORIGINS). */
export function createCors(origins: readonly string[] | '*') {
  const allowed = (origin: string) => origins === '*' || origins.includes(origin);

  return {
    /** The answer to a preflight (`OPTIONS` with `Access-Control-Request-Method`) on an API path. */
    preflight(request: Request, pathname: string): Response | undefined {
      if (request.method !== 'OPTIONS' || !isApiPath(pathname) || !request.headers.has('access-control-request-method')) return undefined;
      const origin = request.headers.get('origin');
      const headers: Record<string, string> = { vary: 'Origin' };
      if (origin && allowed(origin)) {
        Object.assign(headers, {
          'access-control-allow-origin': origins === '*' ? '*' : origin,
          'access-control-allow-methods': ALLOWED_METHODS,
          'access-control-allow-headers': ALLOWED_HEADERS,
          'access-control-max-age': PREFLIGHT_MAX_AGE_SECONDS,
        });
      }
      return new Response(null, { status: 204, headers });
    },

    /** Lets a browser on an allowed origin read an API response. */
    expose(request: Request, pathname: string, response: Response): void {
      if (!isApiPath(pathname)) return;
      varyOnOrigin(response.headers);
      const origin = request.headers.get('origin');
      if (!origin || !allowed(origin)) return;
      response.headers.set('access-control-allow-origin', origins === '*' ? '*' : origin);
      response.headers.set('access-control-expose-headers', EXPOSED_HEADERS);
    },
  };
}

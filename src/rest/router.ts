// Matches a request to a route-table row. The API is served under /v1 and, with identical
// behaviour, /api/v1 and /v1/api (the spec's alternative listing).
import { schema } from '../schema/index.js';
import { docsResponse } from './docs.js';
import { openApiDocument } from './openapi.js';
import { buildRoutes, type Route } from './routes.js';
import { Response } from '../http/fetch.js';

export const PREFIXES = ['/api/v1', '/v1/api', '/v1'];
export const ROUTES = buildRoutes(schema);
/** Paths without an id, such as `/customers/duplicates`: matched as they are, before `/customers/{id}` (ids are UUIDs). */
const FIXED = new Set(ROUTES.map((route) => route.path).filter((path) => !path.includes('{')));

export type RestMatch =
  | { kind: 'route'; route: Route; base: string; id?: string }
  | { kind: 'reference'; respond: () => Response }
  | { kind: 'method-not-allowed'; allow: string[] }
  | { kind: 'not-found' };

let openApiJson: string | undefined;

export function matchRest(method: string, pathname: string): RestMatch {
  const base = PREFIXES.find((prefix) => pathname === prefix || pathname.startsWith(`${prefix}/`));
  if (!base) return { kind: 'not-found' };
  const rest = pathname.slice(base.length).replace(/\/$/, '');
  if (rest === '/openapi.json') {
    if (method !== 'GET' && method !== 'HEAD') return { kind: 'method-not-allowed', allow: ['GET'] };
    openApiJson ??= JSON.stringify(openApiDocument(ROUTES));
    return { kind: 'reference', respond: () => new Response(openApiJson, { headers: { 'content-type': 'application/json' } }) };
  }
  if (rest === '/docs' || rest.startsWith('/docs/')) {
    if (method !== 'GET' && method !== 'HEAD') return { kind: 'method-not-allowed', allow: ['GET'] };
    const response = docsResponse(base, rest);
    return response ? { kind: 'reference', respond: () => response } : { kind: 'not-found' };
  }
  const segments = rest.split('/').slice(1);
  if (segments.length < 1 || segments.length > 3 || segments.some((s) => s === '')) return { kind: 'not-found' };
  const fixed = FIXED.has(rest);
  const [collection, id, action] = segments as [string, string | undefined, string | undefined];
  // `/customers/by_external_id/{external_id}`: the record an integration names by its own id.
  const external = !fixed && id === 'by_external_id' && action !== undefined;
  const path = fixed ? rest : external ? `/${collection}/by_external_id/{id}` : id === undefined ? `/${collection}` : action === undefined ? `/${collection}/{id}` : `/${collection}/{id}/${action}`;
  const candidates = ROUTES.filter((route) => route.path === path);
  if (candidates.length === 0) return { kind: 'not-found' };
  const route = candidates.find((r) => r.method === method);
  if (!route) return { kind: 'method-not-allowed', allow: candidates.map((r) => r.method) };
  let decoded: string | undefined;
  try {
    decoded = external ? decodeURIComponent(action!) : id === undefined || fixed ? undefined : decodeURIComponent(id);
  } catch {
    return { kind: 'not-found' };
  }
  return { kind: 'route', route, base, id: decoded };
}

// The human-readable API reference: Swagger UI, served from the npm package (no CDN),
// reading the generated OpenAPI document.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { NO_FRAMING, Response } from '../http/fetch.js';

const require = createRequire(import.meta.url);
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
};
const cache = new Map<string, Buffer>();

function page(base: string): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>CRM API v1 reference</title>
  <link rel="stylesheet" href="${base}/docs/swagger-ui.css">
</head>
<body>
  <div id="reference"></div>
  <script src="${base}/docs/swagger-ui-bundle.js"></script>
  <script>
    window.ui = SwaggerUIBundle({ url: '${base}/openapi.json', dom_id: '#reference', deepLinking: true, persistAuthorization: true });
  </script>
</body>
</html>`;
}

/** Answers /docs and its assets, or null for any other path. */
export function docsResponse(base: string, path: string): Response | null {
  if (path === '/docs') return new Response(page(base), { headers: { 'content-type': 'text/html; charset=utf-8', ...NO_FRAMING } });
  const asset = path.startsWith('/docs/') ? path.slice('/docs/'.length) : '';
  const type = ASSETS[asset];
  if (!type) return null;
  let body = cache.get(asset);
  if (!body) {
    body = readFileSync(join(dirname(require.resolve('swagger-ui-dist/package.json')), asset));
    cache.set(asset, body);
  }
  return new Response(new Uint8Array(body), { headers: { 'content-type': type, 'cache-control': 'public, max-age=86400' } });
}

// A browser app on another origin calls REST and GraphQL with its key in a header; the
// account pages (cookie sessions) stay closed to other origins.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startApi, type Api } from '../helpers/api.js';
import { ANY_DATABASE } from '../helpers/databases.js';
import { launchBrowser } from '../helpers/browser.js';

describe('cross-origin calls from a browser', () => {
  let api: Api;
  let browser: Browser;
  let app: Server;
  let appUrl: string;

  beforeAll(async () => {
    api = await startApi(ANY_DATABASE, { web: { org: 'Acme' } });
    // The app's own origin: another port and host name than the API's.
    app = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>app</title>'));
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    appUrl = `http://localhost:${(app.address() as AddressInfo).port}`;
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => app?.close(resolve));
    await api?.stop();
  });

  it('REST and GraphQL answer a page on another origin, with the headers it needs readable', async () => {
    const page = await browser.newPage();
    await page.goto(appUrl);
    const results = await page.evaluate(
      async ({ base, key }) => {
        const headers = { authorization: `Bearer ${key}` };
        const created = await fetch(`${base}/v1/customers`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json', 'idempotency-key': 'from-the-browser' },
          body: JSON.stringify({ name: 'Made in a browser' }),
        });
        const list = await fetch(`${base}/v1/customers`, { headers });
        const graph = await fetch(`${base}/graphql`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ customerCount }' }) });
        let accountPage = 'readable';
        try {
          await fetch(`${base}/login`);
        } catch {
          accountPage = 'blocked';
        }
        return {
          created: { status: created.status, location: created.headers.get('location'), requestId: created.headers.get('x-request-id') },
          list: { status: list.status, remaining: list.headers.get('ratelimit-remaining'), body: await list.json() },
          graph: { status: graph.status, body: await graph.json() },
          accountPage,
        };
      },
      { base: api.url, key: api.keys.web! },
    );
    expect(results.created.status).toBe(201);
    expect(results.created.location).toMatch(/^\/v1\/customers\/[0-9a-f-]{36}$/);
    expect(results.created.requestId).toBeTruthy();
    expect(results.list.status).toBe(200);
    expect(Number(results.list.remaining)).toBeGreaterThan(0);
    expect(results.list.body.data[0].name).toBe('Made in a browser');
    expect(results.graph).toEqual({ status: 200, body: { data: { customerCount: 1 } } });
    expect(results.accountPage).toBe('blocked');
  });

  it('a preflight is answered without a key and never allows credentials', async () => {
    const response = await fetch(`${api.url}/api/v1/customers`, {
      method: 'OPTIONS',
      headers: { origin: appUrl, 'access-control-request-method': 'PATCH', 'access-control-request-headers': 'authorization, if-match, content-type' },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-allow-headers')).toMatch(/Authorization.*If-Match/);
    expect(response.headers.get('access-control-allow-credentials')).toBeNull();
    const accountPreflight = await fetch(`${api.url}/settings/api-keys`, { method: 'OPTIONS', headers: { origin: appUrl, 'access-control-request-method': 'POST' } });
    expect(accountPreflight.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('CORS_ORIGINS', () => {
  let api: Api;
  beforeAll(async () => {
    api = await startApi(ANY_DATABASE, { web: { org: 'Acme' } }, { CORS_ORIGINS: 'https://app.example.com' });
  });
  afterAll(() => api?.stop());

  it('allows the listed origins only, naming the origin', async () => {
    const listed = await call(`${api.url}/v1/customers`, { key: api.keys.web, headers: { origin: 'https://app.example.com' } });
    expect(listed.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(listed.headers.get('access-control-expose-headers')).toContain('X-Request-Id');
    expect(listed.headers.get('vary')).toContain('Origin');
    const other = await call(`${api.url}/v1/customers`, { key: api.keys.web, headers: { origin: 'https://evil.example' } });
    expect(other.status).toBe(200);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('applies the same rule to GraphQL, never with credentials (yoga adds no CORS headers of its own)', async () => {
    const query = (origin: string) =>
      call(`${api.url}/graphql`, { method: 'POST', key: api.keys.web, headers: { origin }, json: { query: '{ customerCount }' } });
    const listed = await query('https://app.example.com');
    expect(listed.status).toBe(200);
    expect(listed.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(listed.headers.get('access-control-allow-credentials')).toBeNull();
    expect(listed.headers.get('vary')).toBe('Origin');
    const other = await query('https://evil.example');
    expect(other.status).toBe(200);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    expect(other.headers.get('access-control-allow-credentials')).toBeNull();
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DB_KINDS, migratedDatabase, POSTGRES_ADMIN_URL, type TestDatabase } from '../helpers/databases.js';
import { makeKeys, serveInProcess, type ServedInstance } from '../helpers/api.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';

describe.each(DB_KINDS)('health, readiness and unknown paths on %s', (kind) => {
  let db: TestDatabase;
  let server: ServedInstance;
  let key: string;
  beforeAll(async () => {
    db = await migratedDatabase(kind);
    key = (await makeKeys(db, { key: { org: 'Acme' } })).key!;
    server = await serveInProcess(db.env);
  });
  afterAll(async () => {
    await server?.stop();
    await db?.drop();
  });

  it('GET /healthz answers 200 while the process is up', async () => {
    const response = await fetch(`${server.url}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
  });

  it('GET /readyz answers 200 when the database is reachable', async () => {
    const response = await fetch(`${server.url}/readyz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ready' });
  });

  it('an unknown path is a 404 problem document', async () => {
    const response = await fetch(`${server.url}/no/such/thing`);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    const requestId = response.headers.get('x-request-id');
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(await response.json()).toEqual({
      type: 'about:blank',
      title: 'Not Found',
      status: 404,
      detail: 'No route for /no/such/thing.',
      code: 'NOT_FOUND',
      request_id: requestId,
    });
  });

  it('echoes a sane X-Request-Id and replaces an unsafe one', async () => {
    const own = await fetch(`${server.url}/healthz`, { headers: { 'x-request-id': 'client-abc.123' } });
    expect(own.headers.get('x-request-id')).toBe('client-abc.123');
    const unsafe = await fetch(`${server.url}/healthz`, { headers: { 'x-request-id': 'a b\tc'.repeat(60) } });
    expect(unsafe.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('serves GraphQL at /graphql, to callers with a key', async () => {
    const request = (headers: Record<string, string>) =>
      fetch(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ query: '{ apiVersion }' }) });
    const anonymous = await request({});
    expect(anonymous.status).toBe(401);
    const response = await request({ authorization: `Bearer ${key}` });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { apiVersion: '1' } });
  });

  it('logs one JSON line per request, with its request id', async () => {
    await fetch(`${server.url}/healthz`, { headers: { 'x-request-id': 'log-line-check' } });
    // Log lines are written once per turn of the event loop, so possibly after the response.
    const logged = () => server.output().split('\n').find((l) => l.includes('"request_id":"log-line-check"'));
    for (let i = 0; i < 100 && !logged(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(JSON.parse(logged()!)).toMatchObject({ level: 'info', msg: 'request', method: 'GET', path: '/healthz', status: 200 });
  });
});

describe('readiness follows the database link', () => {
  it('GET /readyz fails while PostgreSQL is unreachable, /healthz stays up, and both recover', async () => {
    const db = await migratedDatabase('postgres');
    const target = new URL(POSTGRES_ADMIN_URL);
    const proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    const viaProxy = new URL(db.env.DATABASE_URL!);
    viaProxy.host = `127.0.0.1:${proxy.port}`;
    const server = await serveInProcess({ DATABASE_URL: viaProxy.toString() });
    try {
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);

      proxy.cut();
      const down = await fetch(`${server.url}/readyz`);
      expect(down.status).toBe(503);
      expect(down.headers.get('content-type')).toBe('application/problem+json');
      expect(down.headers.get('retry-after')).toBe('5');
      expect(await down.json()).toMatchObject({ status: 503, code: 'UNAVAILABLE' });
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);

      proxy.restore();
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    } finally {
      await server.stop();
      await proxy.close();
      await db.drop();
    }
  });
});

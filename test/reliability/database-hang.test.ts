// A database that stops answering (a hung network, a frozen server) rather than refusing:
// no request may wait for it longer than its bounds. In-process, through a TCP proxy the
// test blackholes, on PostgreSQL (PGlite is embedded: there is no link to lose).
import { afterEach, describe, expect, it } from 'vitest';
import { startAppBehindProxy, type Answer, type AppBehindProxy } from '../helpers/app-behind-proxy.js';

// A statement's bound (5 s on the server, 5.5 s on the client) or the wait for a
// connection (5 s), with room for a loaded machine.
const API_BOUND_MS = 7_000;
const READY_BOUND_MS = 1_500;

function expectUnavailable(answer: Answer, surface: 'rest' | 'graphql') {
  expect(answer.status, JSON.stringify(answer.body)).toBe(503);
  expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(answer.ms).toBeLessThan(API_BOUND_MS);
  if (surface === 'rest') {
    expect(answer.headers.get('content-type')).toBe('application/problem+json');
    expect(answer.body).toMatchObject({ status: 503, code: 'UNAVAILABLE' });
  } else {
    expect(answer.body.errors[0].extensions.code).toBe('UNAVAILABLE');
  }
  expect(JSON.stringify(answer.body)).not.toMatch(/ECONN|terminated|timeout|postgres|SELECT|INSERT/i);
}

describe('a hung database', () => {
  let app: AppBehindProxy;
  afterEach(() => app?.stop());

  it('creates, lists, GraphQL and /readyz answer 503 with Retry-After within their bounds, and all work again once it answers', async () => {
    app = await startAppBehindProxy();
    // Several pooled connections, which the blackhole leaves open and silent.
    const warm = await Promise.all(Array.from({ length: 4 }, () => app.call('GET', '/v1/customers')));
    expect(warm.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect((await app.call('POST', '/v1/customers', { json: { name: 'Before' } })).status).toBe(201);

    app.proxy.blackhole();
    // Twice: first on the silent pooled connections, then on new ones that never connect.
    for (let round = 0; round < 2; round++) {
      const [create, list, graph, ready] = await Promise.all([
        app.call('POST', '/v1/customers', { json: { name: 'During' } }),
        app.call('GET', '/v1/customers'),
        app.call('POST', '/graphql', { json: { query: '{ customerCount }' } }),
        app.call('GET', '/readyz'),
      ]);
      expectUnavailable(create, 'rest');
      expectUnavailable(list, 'rest');
      expectUnavailable(graph, 'graphql');
      expect(ready.status).toBe(503);
      expect(ready.ms).toBeLessThan(READY_BOUND_MS);
      expect(ready.body).toMatchObject({ status: 503, code: 'UNAVAILABLE' });
      expect(ready.headers.get('retry-after')).toBe('5');
      // Probes while the database is silent keep answering at once, one after another.
      for (let probe = 0; probe < 3; probe++) {
        const again = await app.call('GET', '/readyz');
        expect(again.status).toBe(503);
        expect(again.ms).toBeLessThan(READY_BOUND_MS);
      }
      expect((await app.call('GET', '/healthz')).status).toBe(200);
    }

    app.proxy.restore();
    await expect.poll(async () => (await app.call('GET', '/readyz')).status, { timeout: 15_000, interval: 200 }).toBe(200);
    await expect.poll(async () => (await app.call('GET', '/v1/customers')).status, { timeout: 15_000, interval: 200 }).toBe(200);
    expect((await app.call('POST', '/v1/customers', { json: { name: 'After' } })).status).toBe(201);
    const names = (await app.call('GET', '/v1/customers')).body.data.map((c: { name: string }) => c.name);
    expect(names).toContain('Before');
    expect(names).toContain('After');
    expect(app.output()).not.toContain('"level":"error"');
  }, 60_000);

  it('requests in flight while connections are reset answer 503, never 500', async () => {
    app = await startAppBehindProxy();
    expect((await app.call('GET', '/v1/customers')).status).toBe(200);
    const statuses: number[] = [];
    for (let round = 0; round < 4; round++) {
      // Every connection is reset the moment a create's INSERT reaches the database, while
      // the other requests are in flight; the link comes back at once.
      const reset = app.proxy.cutAfter('INSERT INTO "customers"').then(() => app.proxy.restore());
      const load = Promise.all(
        Array.from({ length: 24 }, (_, i) => {
          // Half the writes carry an Idempotency-Key, whose claim and record meet the reset too.
          const headers: Record<string, string> = i % 2 === 0 ? { 'idempotency-key': `reset-${round}-${i}` } : {};
          if (i % 3 === 0) return app.call('GET', '/v1/customers');
          if (i % 3 === 1) return app.call('POST', '/v1/customers', { json: { name: `Round ${round} #${i}` }, headers });
          return app.call('POST', '/graphql', { json: { query: `mutation { createCustomer(input: { name: "GraphQL ${round} #${i}" }) { id } }` }, headers });
        }),
      );
      await reset;
      statuses.push(...(await load).map((a) => a.status));
    }
    expect(statuses.filter((s) => ![200, 201, 503].includes(s))).toEqual([]);
    expect(app.output()).not.toContain('"level":"error"');
    expect(statuses.some((s) => s === 503)).toBe(true);
  }, 60_000);
});

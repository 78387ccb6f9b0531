import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, makeKeys, serveInProcess, startApi, type Api } from '../helpers/api.js';
import { migratedDatabase } from '../helpers/databases.js';
import { startServer } from '../helpers/processes.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';

const REDIS = { host: '127.0.0.1', port: 6379 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const graphql = (url: string, key: string, query = '{ customerCount }') => call(`${url}/graphql`, { method: 'POST', key, json: { query } });

describe('rate limits in one instance (memory)', () => {
  let api: Api;
  beforeAll(async () => {
    // The allowance refills one request every window / max (4 s here): slow enough that the
    // counts below stay exact on a loaded machine, quick enough to wait for one refill.
    api = await startApi('pglite', { a: { org: 'Acme' }, b: { org: 'Acme' }, c: { org: 'Acme' }, d: { org: 'Acme' } }, { RATE_LIMIT_MAX: '5', RATE_LIMIT_WINDOW_SECONDS: '20' });
  });
  afterAll(() => api.stop());

  it('counts down in headers, refuses the 6th request with 429 and Retry-After, and admits again once that has passed', async () => {
    for (let i = 1; i <= 5; i++) {
      const response = await call(`${api.url}/v1/customers`, { key: api.keys.a });
      expect(response.status).toBe(200);
      expect(response.headers.get('ratelimit-limit')).toBe('5');
      expect(response.headers.get('ratelimit-remaining')).toBe(String(5 - i));
      expect(Number(response.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(1);
      expect(Number(response.headers.get('ratelimit-reset'))).toBeLessThanOrEqual(20);
    }
    const refused = await call(`${api.url}/v1/customers`, { key: api.keys.a });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toBe('application/problem+json');
    expect(refused.body).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(4);
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');

    await sleep(retryAfter * 1000 + 100);
    expect((await call(`${api.url}/v1/customers`, { key: api.keys.a })).status).toBe(200);
  });

  it('two keys do not share an allowance', async () => {
    for (let i = 0; i < 5; i++) await call(`${api.url}/v1/customers`, { key: api.keys.b });
    expect((await call(`${api.url}/v1/customers`, { key: api.keys.b })).status).toBe(429);
    expect((await call(`${api.url}/v1/customers`, { key: api.keys.c })).status).toBe(200);
  });

  it('REST and GraphQL draw from one allowance, and GraphQL answers RATE_LIMITED with 429', async () => {
    for (let i = 0; i < 3; i++) expect((await call(`${api.url}/v1/jobs`, { key: api.keys.d })).status).toBe(200);
    const graph = await graphql(api.url, api.keys.d!);
    expect(graph.headers.get('ratelimit-remaining')).toBe('1');
    // Two root fields count two units: one left, so this operation is refused.
    const twoFields = await graphql(api.url, api.keys.d!, '{ a: customerCount b: customerCount }');
    expect(twoFields.status).toBe(429);
    // Only the code: the internal HTTP extension never reaches a client.
    expect(twoFields.body.errors[0].extensions).toEqual({ code: 'RATE_LIMITED' });
    expect(twoFields.headers.get('retry-after')).toBeTruthy();
  });
});

describe('requests without a valid key', () => {
  it('are bounded per client address', async () => {
    const api = await startApi('pglite', { good: { org: 'Acme' } }, { RATE_LIMIT_MAX: '4', RATE_LIMIT_WINDOW_SECONDS: '60' });
    try {
      for (let i = 0; i < 4; i++) expect((await call(`${api.url}/v1/customers`, { key: `svc_live_${'x'.repeat(32)}` })).status).toBe(401);
      const flood = await call(`${api.url}/v1/customers`, { key: `svc_live_${'y'.repeat(32)}` });
      expect(flood.status).toBe(429);
      expect(flood.body.code).toBe('RATE_LIMITED');
    } finally {
      await api.stop();
    }
  });
});

describe('rate limits shared through Redis', () => {
  it('two server processes admit exactly the limit out of 300 concurrent requests', async () => {
    const db = await migratedDatabase('postgres');
    // Keys are UUIDs made for this run, so their Redis counts never meet another run's.
    const { key } = await makeKeys(db, { key: { org: 'Acme' } });
    // Processes: the instances' Redis commands (500 ms timeout) must not wait behind this
    // process's burst of 300 requests. Straight to Redis (a proxy here would slow it the
    // same way); a window long enough that the burst cannot outlast the refill of one unit (180 s).
    const env = { ...db.env, REDIS_URL: `redis://${REDIS.host}:${REDIS.port}`, RATE_LIMIT_MAX: '20', RATE_LIMIT_WINDOW_SECONDS: '3600' };
    const [one, two] = await Promise.all([startServer(env), startServer(env)]);
    try {
      const burst = await Promise.all(Array.from({ length: 300 }, (_, i) => call(`${(i % 2 ? one : two).url}/v1/customers`, { key })));
      const admitted = burst.filter((r) => r.status === 200);
      expect(admitted).toHaveLength(20);
      expect(burst.filter((r) => r.status === 429)).toHaveLength(280);
      expect(new Set(admitted.map((r) => r.headers.get('ratelimit-remaining')))).toEqual(new Set(Array.from({ length: 20 }, (_, i) => String(i))));
      for (const r of burst.filter((r) => r.status === 429)) expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(one.output() + two.output()).not.toContain('Redis is unreachable');
    } finally {
      await one.stop();
      await two.stop();
      await db.drop();
    }
  });

  it('two instances share one allowance, and survive Redis going away', async () => {
    const db = await migratedDatabase('postgres');
    const { key } = await makeKeys(db, { key: { org: 'Acme' } });
    const proxy = await startTcpProxy(REDIS.host, REDIS.port);
    // Six an hour: no unit comes back during the test.
    const env = { ...db.env, REDIS_URL: `redis://127.0.0.1:${proxy.port}`, RATE_LIMIT_MAX: '6', RATE_LIMIT_WINDOW_SECONDS: '3600' };
    const [one, two] = await Promise.all([serveInProcess(env), serveInProcess(env)]);
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await call(`${(i % 2 ? one : two).url}/v1/customers`, { key })).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
      expect((await call(`${one.url}/v1/customers`, { key })).status).toBe(429);
      expect((await call(`${two.url}/graphql`, { method: 'POST', key, json: { query: '{ customerCount }' } })).status).toBe(429);

      // Redis goes away: the API keeps serving, counting in each instance's memory.
      proxy.cut();
      const during = await call(`${one.url}/v1/customers`, { key });
      expect(during.status).toBe(200);
      expect(during.headers.get('ratelimit-limit')).toBe('6');
      await expect.poll(() => one.output()).toContain('Redis is unreachable');

      // Redis returns: a background probe finds it, and the shared count (still over the
      // limit) applies again.
      proxy.restore();
      await expect.poll(() => one.output(), { timeout: 10_000 }).toContain('shared through Redis again');
      expect((await call(`${one.url}/v1/customers`, { key })).status).toBe(429);
    } finally {
      await one.stop();
      await two.stop();
      await proxy.close();
      await db.drop();
    }
  });

  it('while Redis hangs, only the first request waits for it; the others are counted in memory at once, until Redis answers again', async () => {
    const db = await migratedDatabase('postgres');
    const { key } = await makeKeys(db, { key: { org: 'Acme' } });
    const proxy = await startTcpProxy(REDIS.host, REDIS.port);
    // At 100,000 a day the allowance refills about one unit a second, so the counts below
    // tell Redis's (a few units) from memory's (twenty) apart.
    const server = await serveInProcess({ ...db.env, REDIS_URL: `redis://127.0.0.1:${proxy.port}`, RATE_LIMIT_MAX: '100000', RATE_LIMIT_WINDOW_SECONDS: '86400' });
    const timed = async () => {
      const begun = performance.now();
      const response = await call(`${server.url}/v1/customers`, { key });
      return { status: response.status, limit: response.headers.get('ratelimit-limit'), remaining: Number(response.headers.get('ratelimit-remaining')), ms: performance.now() - begun };
    };
    const count = (text: string) => server.output().split(text).length - 1;
    try {
      expect(await timed()).toMatchObject({ status: 200, limit: '100000', remaining: 99_999 });
      expect(await timed()).toMatchObject({ status: 200 }); // Redis holds 2 units

      proxy.stall();
      const first = await timed();
      expect(first).toMatchObject({ status: 200, remaining: 99_999 }); // memory's own count begins
      expect(first.ms).toBeGreaterThanOrEqual(450); // it waited for Redis's command timeout (500 ms)
      await expect.poll(() => count('Redis is unreachable')).toBe(1);
      let last = first;
      for (let i = 2; i <= 20; i++) {
        last = await timed();
        expect(last.status).toBe(200);
        expect(last.ms).toBeLessThan(450); // no wait for Redis
      }
      expect(last.remaining).toBeLessThanOrEqual(99_990); // memory counted them

      // Redis answers again (the held bytes arrive, the timed-out charge among them): the
      // background probe returns counting to Redis, whose count (2 or 3) is below memory's.
      proxy.resume();
      await expect.poll(async () => (await timed()).remaining, { timeout: 10_000, interval: 200 }).toBeGreaterThanOrEqual(99_996);
      await expect.poll(() => count('shared through Redis again')).toBe(1);
      expect(count('Redis is unreachable')).toBe(1);
    } finally {
      await server.stop();
      await proxy.close();
      await db.drop();
    }
  });
});

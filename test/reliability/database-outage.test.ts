import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { call, makeKeys, serveInProcess } from '../helpers/api.js';
import { migratedDatabase, POSTGRES_ADMIN_URL } from '../helpers/databases.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';

// In process: what is tested is how the app answers when its database fails, not the process.
describe('a database outage', () => {
  it('answers 503 with Retry-After while PostgreSQL is unreachable, and recovers by itself', async () => {
    const db = await migratedDatabase('postgres');
    const { key } = await makeKeys(db, { key: { org: 'Acme' } });
    const target = new URL(POSTGRES_ADMIN_URL);
    const proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    const url = new URL(db.env.DATABASE_URL!);
    url.host = `127.0.0.1:${proxy.port}`;
    const server = await serveInProcess({ DATABASE_URL: url.toString() });
    try {
      expect((await call(`${server.url}/v1/customers`, { key })).status).toBe(200);
      const created = await call(`${server.url}/v1/customers`, { method: 'POST', key, json: { name: 'Before the outage' } });
      expect(created.status).toBe(201);

      for (let outage = 1; outage <= 2; outage++) {
        proxy.cut();
        const list = await call(`${server.url}/v1/customers`, { key });
        expect(list.status, JSON.stringify(list.body)).toBe(503);
        expect(list.headers.get('content-type')).toBe('application/problem+json');
        expect(list.headers.get('retry-after')).toBe('5');
        expect(list.body).toMatchObject({ status: 503, code: 'UNAVAILABLE' });
        expect(JSON.stringify(list.body)).not.toMatch(/ECONN|terminated|postgres|SELECT/i);

        const create = await call(`${server.url}/v1/customers`, { method: 'POST', key, json: { name: 'During the outage' } });
        expect(create.status).toBe(503);
        const graph = await call(`${server.url}/graphql`, { method: 'POST', key, json: { query: '{ customerCount }' } });
        expect(graph.status).toBe(503);
        expect(graph.body.errors[0].extensions.code).toBe('UNAVAILABLE');
        expect((await fetch(`${server.url}/readyz`)).status).toBe(503);
        expect((await fetch(`${server.url}/healthz`)).status).toBe(200);

        proxy.restore();
        await expect.poll(async () => (await call(`${server.url}/v1/customers`, { key })).status, { timeout: 10_000, interval: 200 }).toBe(200);
        expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
      }
      const after = await call(`${server.url}/v1/customers`, { key });
      expect(after.body.data.map((c: { name: string }) => c.name)).toEqual(['Before the outage']);
      expect(server.output()).not.toContain('"level":"error"');
    } finally {
      await server.stop();
      await proxy.close();
      await db.drop();
    }
  });

  it('a purge waiting on a lock holds none of the connections requests use', async () => {
    const db = await migratedDatabase('postgres');
    const { key } = await makeKeys(db, { key: { org: 'Acme' } });
    const blocker = new pg.Client({ connectionString: db.env.DATABASE_URL });
    // Its own connection: pg_stat_activity stays as first read for the rest of a transaction.
    const observer = new pg.Client({ connectionString: db.env.DATABASE_URL });
    await blocker.connect();
    await observer.connect();
    // The tombstone purge an instance runs as it starts: its DELETE on customers waits for this lock.
    const purgeWaiting = async () =>
      (await observer.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'DELETE FROM "public"."customers"%'`)).rows[0].n === 1;
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE customers IN ACCESS EXCLUSIVE MODE');
    const server = await serveInProcess({ ...db.env, DATABASE_POOL_SIZE: '1' });
    try {
      await expect.poll(purgeWaiting, { timeout: 4_000, interval: 50 }).toBe(true);
      // With a pool of one, a request that needed the purge's connection would wait out its
      // statement timeout first; it is answered while the purge still waits.
      const jobs = await call(`${server.url}/v1/jobs`, { key });
      expect(jobs.status, JSON.stringify(jobs.body)).toBe(200);
      expect(await purgeWaiting()).toBe(true);
    } finally {
      await blocker.query('ROLLBACK');
      await blocker.end();
      await observer.end();
      await server.stop();
      await db.drop();
    }
  });

  it('a statement that cannot finish in time answers 503 with Retry-After, and frees its connection', async () => {
    const db = await migratedDatabase('postgres');
    const { key } = await makeKeys(db, { key: { org: 'Acme' } });
    const server = await serveInProcess({ ...db.env, DATABASE_POOL_SIZE: '1' });
    const blocker = new pg.Client({ connectionString: db.env.DATABASE_URL });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE customers IN ACCESS EXCLUSIVE MODE');
      const started = performance.now();
      const stuck = await call(`${server.url}/v1/customers`, { key });
      expect(stuck.status, JSON.stringify(stuck.body)).toBe(503);
      expect(stuck.headers.get('retry-after')).not.toBeNull();
      expect(performance.now() - started).toBeLessThan(9_000);
      await blocker.query('ROLLBACK');
      // (It failed once in CI with the server gone: say what the server said.)
      const after = await call(`${server.url}/v1/customers`, { key }).catch((error: Error) => {
        throw new Error(`${error.message}; the server's output:\n${server.output()}`);
      });
      expect(after.status).toBe(200);
      expect(server.output()).not.toContain('"level":"error"');
    } finally {
      await blocker.end();
      await server.stop();
      await db.drop();
    }
  });

  it('a flood of wildcard-heavy searches from one organization leaves another served', async () => {
    const db = await migratedDatabase('postgres');
    const keys = await makeKeys(db, { noisy: { org: 'Noisy' }, quiet: { org: 'Quiet' } });
    const server = await serveInProcess({ ...db.env, DATABASE_POOL_SIZE: '4', RATE_LIMIT_MAX: '1000' });
    try {
      const seed = Array.from({ length: 50 }, (_, i) => call(`${server.url}/v1/customers`, { method: 'POST', key: keys.noisy, json: { name: `Customer ${i} %_%` } }));
      await Promise.all(seed);
      const flood = Array.from({ length: 40 }, () => call(`${server.url}/v1/customers?search=${encodeURIComponent('%_%_%_%_%_%_%')}`, { key: keys.noisy }));
      const quiet = await call(`${server.url}/v1/customers`, { key: keys.quiet });
      expect(quiet.status).toBe(200);
      const answers = await Promise.all(flood);
      expect(answers.every((a) => a.status === 200 || a.status === 503)).toBe(true);
      // Wildcards are literal: only names holding that very text match.
      expect(answers.find((a) => a.status === 200)!.body.pagination.total).toBe(0);
      expect(server.output()).not.toContain('"level":"error"');
    } finally {
      await server.stop();
      await db.drop();
    }
  });
});

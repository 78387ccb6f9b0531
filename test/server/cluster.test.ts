// WEB_CONCURRENCY=2 on PostgreSQL: two worker processes share the port, and what must be one
// (the rate limit and login throttles without Redis, key revocation, a graceful stop) is one
// across them. Which worker served a request is read from its log line (workers log their pid).
import http from 'node:http';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/auth/passwords.js';
import { openDatabase } from '../../src/db/connection.js';
import { makeKeys, postLogin } from '../helpers/api.js';
import { runCliHere } from '../helpers/cli.js';
import { migratedDatabase, type TestDatabase } from '../helpers/databases.js';
import { startServer, type RunningServer } from '../helpers/processes.js';
import { stopUnderLoad } from '../helpers/shutdown-load.js';

const CLUSTER = { WEB_CONCURRENCY: '2' };

/** Resolves once `check(output)` holds, re-checked on every chunk the server writes. */
function whenOutput<T>(server: RunningServer, check: (output: string) => T | undefined, what: string, ms = 15_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const test = () => {
      const found = check(server.output());
      if (found === undefined) return false;
      clearTimeout(timer);
      server.process.stdout!.off('data', onData);
      resolve(found);
      return true;
    };
    const onData = () => void test();
    const timer = setTimeout(() => {
      server.process.stdout!.off('data', onData);
      reject(new Error(`timed out waiting for ${what}:\n${server.output().slice(-2000)}`));
    }, ms);
    // Registered after the helper's own listener, so output() already holds the chunk.
    server.process.stdout!.on('data', onData);
    test();
  });
}

/** The pid of the worker that logged each request id, once all of them are logged. */
function workersOf(server: RunningServer, requestIds: string[]): Promise<Map<string, number>> {
  return whenOutput(
    server,
    (output) => {
      const pids = new Map<string, number>();
      for (const line of output.split('\n')) {
        if (!line.includes('"msg":"request"')) continue;
        const entry = JSON.parse(line) as { request_id: string; pid?: number };
        if (requestIds.includes(entry.request_id) && entry.pid) pids.set(entry.request_id, entry.pid);
      }
      return pids.size === requestIds.length ? pids : undefined;
    },
    'the requests to be logged',
  );
}

/** One request on a connection of its own: the cluster hands each new connection to the next worker. */
function get(url: string, path: string, key: string): Promise<{ status: number; requestId: string }> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${url}${path}`, { agent: false, headers: { authorization: `Bearer ${key}` } }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode!, requestId: String(response.headers['x-request-id']) }));
    });
    request.on('error', reject);
  });
}

const workerPids = (output: string) => [...output.matchAll(/"msg":"worker listening","pid":(\d+)/g)].map((m) => Number(m[1]));

describe('a cluster of two workers on PostgreSQL (memory rate limits)', () => {
  const LIMIT = 30;
  let db: TestDatabase;
  let keys: Record<string, string>;
  let server: RunningServer;

  beforeAll(async () => {
    db = await migratedDatabase('postgres');
    keys = await makeKeys(db, { limited: { org: 'Acme' }, revoked: { org: 'Acme' }, other: { org: 'Acme' } });
    const open = await openDatabase({ databaseUrl: db.env.DATABASE_URL, dataDir: '' });
    const org = await open.prisma.organization.findFirstOrThrow({ where: { name: 'Acme' } });
    await open.prisma.user.create({ data: { organizationId: org.id, email: 'owner@acme.example', passwordHash: await hashPassword('the right password') } });
    await open.close();
    // A window of an hour: the allowance refills one request every 2 minutes, so counts stay exact.
    server = await startServer({ ...db.env, ...CLUSTER, RATE_LIMIT_MAX: String(LIMIT), RATE_LIMIT_WINDOW_SECONDS: '3600' });
  });
  afterAll(async () => {
    await server?.stop();
    await db?.drop();
  });

  it('starts two workers, migrates once and logs "listening" once with the shared port', async () => {
    // The primary's line can overtake the workers' own (three processes, one stdout).
    const output = await whenOutput(server, (o) => (workerPids(o).length === 2 ? o : undefined), 'both workers');
    expect(output.match(/"msg":"listening"/g)).toHaveLength(1);
    expect(output.match(/"msg":"database ready"/g)).toHaveLength(1);
    const ports = [...output.matchAll(/"listening".*?"port":(\d+)/g)].map((m) => m[1]);
    expect(new Set(ports).size).toBe(1);
  });

  it('admits exactly the limit out of more concurrent requests with one key, served by both workers', async () => {
    const results = await Promise.all(Array.from({ length: LIMIT + 15 }, () => get(server.url, '/v1/customers?limit=1', keys.limited!)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(LIMIT);
    expect(results.filter((r) => r.status === 429)).toHaveLength(15);
    const pids = await workersOf(server, results.map((r) => r.requestId));
    // Both workers took requests (which of them admitted the first LIMIT depends on timing).
    expect(new Set(results.map((r) => pids.get(r.requestId))).size).toBe(2);
  }, 30_000);

  it('counts failed logins across workers: the 11th try for one account is refused, whichever worker takes it', async () => {
    const tries = await Promise.all(Array.from({ length: 14 }, () => postLogin(server.url, 'owner@acme.example', 'a wrong password')));
    const statuses = tries.map((t) => t.response.status).sort();
    expect(statuses).toEqual([...Array(10).fill(401), ...Array(4).fill(429)]);
    const pids = await workersOf(server, tries.map((t) => t.response.headers.get('x-request-id')!));
    expect(new Set(pids.values()).size).toBe(2);
  }, 30_000);

  it('a key revoked with the CLI is refused by every worker on its next request', async () => {
    // Until both workers have served (and so remember) the key.
    const served: string[] = [];
    for (let pids = new Set<number>(); pids.size < 2; ) {
      const { status, requestId } = await get(server.url, '/v1/customers?limit=1', keys.revoked!);
      expect(status).toBe(200);
      served.push(requestId);
      pids = new Set((await workersOf(server, served)).values());
      if (served.length > 10) throw new Error('the cluster did not spread connections over its workers');
    }
    // The CLI's command, outside the cluster's processes (its process: test/cli).
    // It returns once both workers have forgotten the key (auth/key-changes.ts).
    const result = await runCliHere(['keys', 'revoke', keys.revoked!], db.env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toContain('did not confirm');
    const after = [];
    for (let i = 0; i < 4; i++) after.push(await get(server.url, '/v1/customers?limit=1', keys.revoked!));
    expect(after.map((r) => r.status)).toEqual([401, 401, 401, 401]);
    expect(new Set((await workersOf(server, after.map((r) => r.requestId))).values()).size).toBe(2);
  }, 30_000);

  it('a worker that dies is replaced, and the cluster keeps serving', async () => {
    const [victim] = workerPids(server.output());
    process.kill(victim!, 'SIGKILL');
    await whenOutput(server, (output) => (output.includes('"msg":"worker exited unexpectedly') && workerPids(output).length === 3 ? true : undefined), 'a new worker');
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await get(server.url, '/v1/customers?limit=1', keys.other!));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const pids = new Set((await workersOf(server, results.map((r) => r.requestId))).values());
    expect(pids.has(victim!)).toBe(false);
    expect(pids.size).toBe(2);
  }, 30_000);

  it('on SIGTERM every worker stops and the primary exits 0', async () => {
    expect(await server.stop()).toBe(0);
    expect(server.output().match(/"msg":"stopped","pid"/g)).toHaveLength(2);
    expect(server.output()).toMatch(/"msg":"stopped","workers":2/);
  });
});

describe('graceful shutdown of a cluster under load', () => {
  it('SIGTERM while creates are in flight on both workers: every 201 has its row, and nothing else was written', async () => {
    const db = await migratedDatabase('postgres');
    const { key } = await makeKeys(db, { key: { org: 'Acme' } });
    const server = await startServer({ ...db.env, ...CLUSTER, RATE_LIMIT_MAX: '10000' });
    try {
      // Both workers creating; SIGTERM once 40 creates have been acknowledged.
      const { created, refused, sent, exitCode } = await stopUnderLoad(server, key!, 40);

      const client = new pg.Client({ connectionString: db.env.DATABASE_URL });
      await client.connect();
      const { rows } = await client.query<{ count: number }>('SELECT count(*)::int AS count FROM customers');
      await client.end();
      expect(exitCode).toBe(0);
      expect(rows[0]!.count).toBe(created);
      expect(created + refused).toBe(sent);
      // Both workers were creating, and both drained.
      const creators = new Set([...server.output().matchAll(/"msg":"request","pid":(\d+)[^\n]*"status":201/g)].map((m) => m[1]));
      expect(creators.size).toBe(2);
      expect(server.output().match(/"msg":"stopped","pid"/g)).toHaveLength(2);
    } finally {
      await server.stop();
      await db.drop();
    }
  }, 45_000);
});

describe('the embedded database', () => {
  it('stays one process whatever WEB_CONCURRENCY says, and says so', async () => {
    const db = await migratedDatabase('pglite');
    const server = await startServer({ ...db.env, ...CLUSTER });
    try {
      expect(server.output()).toMatch(/"msg":"the embedded database is served by one process: WEB_CONCURRENCY=2 is ignored[^"]*"/);
      expect(server.output()).not.toContain('worker listening');
      const health = await fetch(`${server.url}/healthz`);
      expect(health.status).toBe(200);
      const requestId = health.headers.get('x-request-id')!;
      // One process: its lines carry no worker pid.
      const line = await whenOutput(server, (output) => output.split('\n').find((l) => l.includes(requestId)), 'the request line');
      expect(JSON.parse(line).pid).toBeUndefined();
      expect(await server.stop()).toBe(0);
    } finally {
      await server.stop();
      await db.drop();
    }
  });
});

// Read replicas (DATABASE_REPLICA_URLS, src/db/replicas.ts) on a real streaming replica made
// for this file (test/helpers/replica.ts), which replays every commit 200 ms after it: it is
// behind each write the test makes, so a writer's read sent there by mistake would show the
// old version. Which server ran a read is read from the servers' own statement logs.
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/auth/api-keys.js';
import { allScopes } from '../../src/auth/scopes.js';
import '../../src/schema/index.js';
import { openDatabase, type Database } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrator.js';
import { createLogger } from '../../src/logger.js';
import { createRateLimiter } from '../../src/rate-limit.js';
import { createApp } from '../../src/server.js';
import { startReplicatedCluster, type ReplicatedCluster, type Server } from '../helpers/replica.js';

const APPLY_DELAY_MS = 200;
const REDIS_URL = 'redis://127.0.0.1:6379';

type App = ReturnType<typeof createApp>;
interface Answer {
  status: number;
  body: any;
}

async function send(app: App, key: string, method: string, path: string, { json, headers = {} }: { json?: unknown; headers?: Record<string, string> } = {}): Promise<Answer> {
  const response = await app.fetch(
    new Request(`http://test${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(json === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: json === undefined ? undefined : JSON.stringify(json),
    }),
  );
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** Waits until `condition` holds (checked every 10 ms), failing after `ms`. */
async function until(condition: () => Promise<boolean>, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('read replicas', () => {
  let cluster: ReplicatedCluster;
  let replica: pg.Client;
  const opened: Database[] = [];
  let output = '';
  const log = createLogger('info', (line) => (output += line));
  let db: Database;
  let app: App;
  const keys: Record<'writer' | 'reader' | 'shared', { key: string; id: string }> = {} as never;
  let customer: { id: string; version: number };

  async function instance(options: { redisUrl?: string } = {}): Promise<{ db: Database; app: App }> {
    const open = await openDatabase({ databaseUrl: cluster.primaryUrl, dataDir: '', replicaUrls: [cluster.replicaUrl], log, ...options });
    opened.push(open);
    return { db: open, app: createApp({ db: open, log, rateLimiter: createRateLimiter({ max: 1_000_000, windowSeconds: 60, log }) }) };
  }

  /** Statements that read or wrote customers on `server` so far. */
  const customerStatements = (server: Server) => cluster.statements(server).filter((statement) => statement.includes('"customers"')).length;

  /** The customer's version as the replica has it now. */
  const versionOnReplica = async (id: string) => Number((await replica.query('SELECT version FROM customers WHERE id = $1', [id])).rows[0]?.version ?? 0);

  /**
   * Waits until the replica has replayed everything the primary has written so far (on a
   * loaded machine replay can trail by seconds; the tests below measure routing, not lag).
   */
  async function replicaCaughtUp(): Promise<void> {
    const [{ lsn }] = (await db.sql.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')) as [{ lsn: string }];
    for (const until = Date.now() + 60_000; ; ) {
      const { rows } = await replica.query<{ behind: boolean }>('SELECT pg_last_wal_replay_lsn() < $1::pg_lsn AS behind', [lsn]);
      if (!rows[0]!.behind) return;
      if (Date.now() > until) throw new Error(`the replica did not replay up to ${lsn} within a minute`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  beforeAll(async () => {
    cluster = await startReplicatedCluster({ applyDelayMs: APPLY_DELAY_MS });
    replica = new pg.Client({ connectionString: cluster.replicaUrl });
    replica.on('error', () => undefined); // the replica is stopped in the last test
    await replica.connect();
    ({ db, app } = await instance());
    await migrate(db.sql);
    const organization = await db.prisma.organization.create({ data: { name: 'Acme' } });
    for (const name of ['writer', 'reader', 'shared'] as const) {
      const made = await createApiKey(db.prisma, { organizationId: organization.id, name, scopes: allScopes() });
      keys[name] = { key: made.key, id: made.record.id };
    }
    const created = await send(app, keys.writer.key, 'POST', '/v1/customers', { json: { name: 'Ada', email: 'ada@example.com' } });
    expect(created.status).toBe(201);
    customer = { id: created.body.id, version: created.body.version };
    await replicaCaughtUp();
  });

  afterAll(async () => {
    await replica?.end().catch(() => undefined);
    for (const open of opened) await open.close().catch(() => undefined);
    const redis = new Redis(REDIS_URL, { lazyConnect: true });
    await redis
      .connect()
      .then(() => redis.del(...Object.values(keys).map(({ id }) => `crm:replica-position:{${id}}`)))
      .catch(() => undefined)
      .finally(() => redis.disconnect());
    await cluster?.stop();
  });

  it('a writer reads its change back at once, 100 times: the item, its sync page and If-None-Match', async () => {
    const { key } = keys.writer;
    let cursor = (await send(app, key, 'GET', '/v1/customers?updated_since=2000-01-01T00:00:00Z&limit=100')).body.pagination.next_cursor;
    let replicaBehind = 0;
    for (let round = 1; round <= 100; round++) {
      const patched = await send(app, key, 'PATCH', `/v1/customers/${customer.id}`, { json: { name: `Ada ${round}` } });
      expect(patched.status).toBe(200);
      expect(patched.body.version).toBe(customer.version + 1);
      customer.version = patched.body.version;
      // All three at once, as soon as the write has answered, and a look at the replica meanwhile.
      const [item, page, changed, onReplica] = await Promise.all([
        send(app, key, 'GET', `/v1/customers/${customer.id}`),
        send(app, key, 'GET', `/v1/customers?cursor=${encodeURIComponent(cursor)}`),
        send(app, key, 'GET', `/v1/customers/${customer.id}`, { headers: { 'if-none-match': `"${customer.version - 1}"` } }),
        versionOnReplica(customer.id),
      ]);
      if (onReplica < customer.version) replicaBehind++;
      expect([item.status, item.body.version, item.body.name]).toEqual([200, customer.version, `Ada ${round}`]);
      expect(page.status).toBe(200);
      expect(page.body.data.map((row: { id: string; version: number }) => [row.id, row.version])).toEqual([[customer.id, customer.version]]);
      cursor = page.body.pagination.next_cursor;
      expect([changed.status, changed.body?.version]).toEqual([200, customer.version]);
    }
    // The replica was behind the write when those reads came: they had to go elsewhere.
    expect(replicaBehind).toBeGreaterThanOrEqual(90);
  });

  it("another key's reads, REST lists and GraphQL queries, are served by the replica, none by the primary", async () => {
    const { key } = keys.reader;
    await replicaCaughtUp();
    const before = { primary: customerStatements('primary'), replica: customerStatements('replica') };
    for (let i = 0; i < 10; i++) {
      const page = await send(app, key, 'GET', '/v1/customers?limit=10');
      expect(page.status).toBe(200);
      expect(page.body.data.map((row: { id: string }) => row.id)).toEqual([customer.id]);
      const query = await send(app, key, 'POST', '/graphql', { json: { query: '{ customers(limit: 10) { data { id } } }' } });
      expect(query.body).toEqual({ data: { customers: { data: [{ id: customer.id }] } } });
    }
    expect(customerStatements('primary') - before.primary).toBe(0);
    expect(customerStatements('replica') - before.replica).toBeGreaterThanOrEqual(20);
  });

  it("the writer's reads go to the replica too, once it has replayed the writer's last write", async () => {
    // A later commit by someone else, as a live primary always has: the replica's replay
    // position then passes the writer's own, which it reaches exactly only mid-page.
    await db.sql.query('SELECT txid_current()');
    const before = customerStatements('replica');
    await until(async () => {
      const item = await send(app, keys.writer.key, 'GET', `/v1/customers/${customer.id}`);
      expect(item.body.version).toBe(customer.version);
      return customerStatements('replica') > before;
    });
  });

  it("instances share each key's last write through Redis: a write on one is read back on another", async () => {
    const [first, second] = [await instance({ redisUrl: REDIS_URL }), await instance({ redisUrl: REDIS_URL })];
    const { key } = keys.shared;
    let replicaBehind = 0;
    for (let round = 1; round <= 30; round++) {
      const patched = await send(first.app, key, 'PATCH', `/v1/customers/${customer.id}`, { json: { name: `Shared ${round}` } });
      expect(patched.status).toBe(200);
      customer.version = patched.body.version;
      const [item, changed, onReplica] = await Promise.all([
        send(second.app, key, 'GET', `/v1/customers/${customer.id}`),
        send(second.app, key, 'GET', `/v1/customers/${customer.id}`, { headers: { 'if-none-match': `"${customer.version - 1}"` } }),
        versionOnReplica(customer.id),
      ]);
      if (onReplica < customer.version) replicaBehind++;
      expect([item.status, item.body.version]).toEqual([200, customer.version]);
      expect([changed.status, changed.body?.version]).toEqual([200, customer.version]);
    }
    expect(replicaBehind).toBeGreaterThanOrEqual(27);
    // The second instance does read from the replica, for a key that did not write.
    const before = customerStatements('replica');
    await until(async () => {
      expect((await send(second.app, keys.reader.key, 'GET', '/v1/customers?limit=10')).status).toBe(200);
      return customerStatements('replica') > before;
    });
  });

  it('with Redis unreachable, positions cannot be known: reads go to the primary, writes still answer', async () => {
    const { app: cut } = await instance({ redisUrl: 'redis://127.0.0.1:1' });
    const before = customerStatements('replica');
    for (let round = 1; round <= 10; round++) {
      const patched = await send(cut, keys.shared.key, 'PATCH', `/v1/customers/${customer.id}`, { json: { name: `Cut ${round}` } });
      expect(patched.status).toBe(200);
      customer.version = patched.body.version;
      const item = await send(cut, keys.shared.key, 'GET', `/v1/customers/${customer.id}`);
      expect([item.status, item.body.version]).toEqual([200, customer.version]);
      expect((await send(cut, keys.reader.key, 'GET', '/v1/customers?limit=10')).status).toBe(200);
    }
    expect(customerStatements('replica') - before).toBe(0);
    expect(output).toContain('Redis did not take a write position for read replicas');
  });

  it('the replica stopped mid-test: every read still answers 200, from the primary', async () => {
    // The other key's changes reach this key's reads on the replica late (only its own are
    // promised at once): with the replica caught up, every answer has the latest version.
    await until(async () => (await versionOnReplica(customer.id)) === customer.version);
    const before = customerStatements('primary');
    const answers: Answer[] = [];
    const read = async () => {
      const [list, item] = await Promise.all([
        send(app, keys.reader.key, 'GET', '/v1/customers?limit=10'),
        send(app, keys.writer.key, 'GET', `/v1/customers/${customer.id}`),
      ]);
      answers.push(list, item);
      expect(list.body.data?.map((row: { id: string }) => row.id)).toEqual([customer.id]);
      expect(item.body.version).toBe(customer.version);
    };
    let stopping: Promise<void> | undefined;
    for (let i = 0; i < 30; i++) {
      if (i === 5) stopping = cluster.stopReplica(); // reads go on while it goes down
      await read();
    }
    await stopping;
    const afterStop = customerStatements('primary');
    for (let i = 0; i < 10; i++) await read();
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
    // Both keys' reads after the stop ran on the primary; the loss was logged.
    expect(customerStatements('primary') - afterStop).toBeGreaterThanOrEqual(20);
    expect(customerStatements('primary')).toBeGreaterThan(before);
    expect(output).toContain('read replica lost');
  });
});

// REST reads answered from memory (src/rest/response-cache.ts) are exact: two instances,
// each with its own memory, on one PostgreSQL database, read while the other writes, and
// every answer is compared with the one an instance without memory gives at that moment.
// In process (createApp), so the statements each read sends can be counted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../src/schema/index.js';
import { openDatabase, type Database } from '../../src/db/connection.js';
import { purgeTombstones } from '../../src/db/tombstones.js';
import type { Sql } from '../../src/db/sql.js';
import { createLogger } from '../../src/logger.js';
import { createRateLimiter } from '../../src/rate-limit.js';
import { createResponseCache, type ResponseCache } from '../../src/rest/response-cache.js';
import { ROUTES } from '../../src/rest/router.js';
import { registeredResources } from '../../src/schema/registry.js';
import { createApp } from '../../src/server.js';
import { keysIn } from '../helpers/api.js';
import { migratedDatabase, type TestDatabase } from '../helpers/databases.js';
import { createExample } from '../helpers/examples.js';

interface Answer {
  status: number;
  etag: string | null;
  body: string;
}

/** An instance: its app, the statements Prisma sent and the raw queries its memory sent. */
interface Instance {
  db: Database;
  app: ReturnType<typeof createApp>;
  cache?: ResponseCache;
  statements: string[];
  changeReads: number;
}

const log = createLogger('silent');
const hasRoute = (method: string, path: string) => ROUTES.some((route) => route.method === method && route.path === path);
/** Statements of a request's own, not the housekeeping a request may start (a key's lookup or last use, expired idempotency keys and sessions). */
const own = (statements: string[]) => statements.filter((sql) => !/"(api_keys|idempotency_keys|sessions|service_keys)"/.test(sql));

async function instance(env: TestDatabase['env'], cacheBytes?: number, sqlOf?: (db: Database) => Sql): Promise<Instance> {
  const statements: string[] = [];
  const db = await openDatabase({ databaseUrl: env.DATABASE_URL, dataDir: env.DATA_DIR ?? '', onQuery: (sql) => statements.push(sql) });
  const self: Instance = { db, app: undefined!, statements, changeReads: 0 };
  const counted: Sql = { ...db.sql, query: (text, params) => (self.changeReads++, (sqlOf?.(db) ?? db.sql).query(text, params)) };
  self.cache = cacheBytes === undefined ? undefined : createResponseCache(counted, cacheBytes);
  self.app = createApp({ db, log, rateLimiter: createRateLimiter({ max: 1_000_000, windowSeconds: 60, log }), responses: self.cache });
  return self;
}

async function send(on: Instance, key: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer & { json: any }> {
  const init: RequestInit = { method, headers: { authorization: `Bearer ${key}`, ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) } };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await on.app.fetch(new Request(`http://test/v1${path}`, init));
  const text = await response.text();
  return { status: response.status, etag: response.headers.get('etag'), body: text, json: text ? JSON.parse(text) : undefined };
}

describe('REST answers from memory', () => {
  let test: TestDatabase;
  let a: Instance;
  let b: Instance;
  let truth: Instance;
  let keys: Record<string, string>;

  beforeAll(async () => {
    test = await migratedDatabase('postgres');
    [a, b, truth] = await Promise.all([instance(test.env, 2 ** 24), instance(test.env, 2 ** 24), instance(test.env)]);
    keys = await keysIn(truth.db, { all: { org: 'Acme' }, jobs: { org: 'Acme', scopes: 'jobs:read' }, other: { org: 'Other Co' } });
  });
  afterAll(async () => {
    await Promise.all([a, b, truth].map((one) => one?.db.close()));
    await test?.drop();
  });

  /** What `on` answers for a GET, and what the database answers at that moment (read right after, nothing writing in between). */
  async function exact(on: Instance, path: string, key = keys.all!): Promise<Answer> {
    const served = await send(on, key, 'GET', path);
    const fresh = await send(truth, key, 'GET', path);
    // A refusal names its own request.
    const same = (answer: Answer) => ({ status: answer.status, etag: answer.etag, body: answer.body.replace(/"request_id":"[^"]*"/, '') });
    expect(same(served), `${path} from memory`).toEqual(same(fresh));
    return served;
  }

  /** A read served from memory: one raw statement (the change number) and none from Prisma. */
  async function fromMemory(on: Instance, path: string): Promise<void> {
    expect((await exact(on, path)).status, path).toBe(200);
    on.statements.length = 0;
    const reads = on.changeReads;
    await exact(on, path);
    expect(own(on.statements), path).toEqual([]);
    expect(on.changeReads - reads, path).toBe(1);
  }

  const client = (on: Instance) => ({ post: (path: string, body?: unknown) => send(on, keys.all!, 'POST', path, body).then((r) => ({ status: r.status, body: r.json })) });

  describe.each(registeredResources().map((resource) => ({ resource, name: resource.path })))('$name', ({ resource }) => {
    const list = `/${resource.path}?limit=5`;

    it('a list and an item read on one instance show every write made on the other at once, and are served from memory while nothing changed', async () => {
      // Each list and item starts in memory on both instances.
      for (const on of [a, b]) await fromMemory(on, list);
      // Two records at least, so that a page of one leads to a next.
      await createExample(client(a), resource);
      const record = await createExample(client(b), resource);
      const item = `/${resource.path}/${record.id}`;
      expect((await exact(a, list)).body).toContain(record.id);
      await fromMemory(a, item);
      await fromMemory(b, item);

      if (hasRoute('PATCH', `/${resource.path}/{id}`)) {
        const patched = await send(a, keys.all!, 'PATCH', item, { metadata: { round: 'patched' } });
        expect(patched.status, patched.body).toBe(200);
        expect((await exact(b, item)).body).toContain('"round":"patched"');
        expect((await exact(b, list)).body).toContain('"round":"patched"');
      }

      expect((await send(b, keys.all!, 'DELETE', item)).status).toBe(204);
      expect((await exact(a, item)).status).toBe(404);
      expect((await exact(a, list)).body).not.toContain(record.id);

      const restored = await send(a, keys.all!, 'POST', `${item}/restore`);
      expect(restored.status, restored.body).toBe(200);
      expect((await exact(b, item)).status).toBe(200);
      expect((await exact(b, list)).body).toContain(record.id);
      // What other parameters ask is kept apart: another order, a sparse record, a page by cursor.
      const second = JSON.parse((await exact(b, `/${resource.path}?limit=1`)).body).pagination.next_cursor;
      await fromMemory(b, `/${resource.path}?limit=1&cursor=${encodeURIComponent(second)}`);
      await fromMemory(b, `/${resource.path}?limit=5&fields=id,version`);
    });
  });

  it('interleaved writes and reads on both instances: every read is the database answer of its moment', async () => {
    const paths = ['/customers?limit=3', '/customers?limit=3&order_by=name', '/jobs?limit=3'];
    const customers: string[] = [];
    let seed = 7;
    const random = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    for (let step = 0; step < 30; step++) {
      const writer = random(2) === 0 ? a : b;
      const op = customers.length === 0 ? 0 : random(4);
      if (op === 0) {
        const created = await send(writer, keys.all!, 'POST', '/customers', { name: `Customer ${step}` });
        customers.push(created.json.id);
      } else if (op === 1) {
        expect((await send(writer, keys.all!, 'PATCH', `/customers/${customers[random(customers.length)]}`, { name: `Renamed ${step}` })).status).toBe(200);
      } else if (op === 2) {
        expect((await send(writer, keys.all!, 'POST', '/jobs', { customer_id: customers[random(customers.length)], title: `Job ${step}` })).status).toBe(201);
      } else {
        const id = customers[random(customers.length)]!;
        await send(writer, keys.all!, 'DELETE', `/customers/${id}`);
        await send(writer, keys.all!, 'POST', `/customers/${id}/restore`);
      }
      for (const on of [a, b]) for (const path of [...paths, `/customers/${customers.at(-1)}`]) await exact(on, path);
    }
    // Reads racing writes: afterwards, each instance answers the final state.
    await Promise.all([
      ...customers.slice(0, 10).map((id, n) => send(n % 2 ? a : b, keys.all!, 'PATCH', `/customers/${id}`, { name: `Raced ${n}` })),
      ...Array.from({ length: 20 }, (_, n) => send(n % 2 ? b : a, keys.all!, 'GET', paths[n % paths.length]!)),
    ]);
    for (const on of [a, b]) for (const path of paths) await exact(on, path);
  });

  it('a sync (include_deleted, updated_since, a cursor of one) is computed every time: the tombstone purge deletes without a change number', async () => {
    const { json: gone } = await send(a, keys.all!, 'POST', '/customers', { name: 'Purged soon' });
    expect((await send(a, keys.all!, 'DELETE', `/customers/${gone.id}`)).status).toBe(204);
    const first = await exact(a, '/customers?include_deleted=true&limit=2');
    const walk = [
      '/customers?include_deleted=true&limit=100',
      '/customers?updated_since=2000-01-01T00:00:00Z&limit=100',
      `/customers?limit=100&cursor=${encodeURIComponent(JSON.parse(first.body).pagination.next_cursor)}`,
    ];
    for (const path of walk) {
      await exact(a, path);
      a.statements.length = 0;
      expect((await exact(a, path)).status, path).toBe(200);
      expect(own(a.statements).length, path).toBeGreaterThan(0);
    }
    expect((await exact(a, walk[0]!)).body).toContain(gone.id);
    // A list of live records is kept: the purge changes nothing it shows, its total included.
    await fromMemory(a, '/customers?limit=5');
    // Every tombstone, however recent (a retention of -1 days), is purged.
    await purgeTombstones(truth.db.prisma, -1, log);
    for (const path of walk) expect((await exact(a, path)).body, path).not.toContain(gone.id);
    await exact(a, '/customers?limit=5');
  });

  it("keeps answers apart by key: a key without the scope is refused, another organization's key sees its own records", async () => {
    await fromMemory(a, '/customers?limit=5');
    const refused = await send(a, keys.jobs!, 'GET', '/customers?limit=5');
    expect(refused.status).toBe(403);
    const other = await exact(a, '/customers?limit=5', keys.other!);
    expect(JSON.parse(other.body).pagination.total).toBe(0);
  });

  it('a conditional GET still answers 304 for the current ETag; refusals and errors are not kept', async () => {
    const { json: customer } = await send(a, keys.all!, 'POST', '/customers', { name: 'Tagged' });
    await fromMemory(a, `/customers/${customer.id}`);
    const unchanged = await send(a, keys.all!, 'GET', `/customers/${customer.id}`, undefined, { 'if-none-match': '"1"' });
    expect(unchanged.status).toBe(304);
    const kept = a.cache!.size().entries;
    expect((await send(a, keys.all!, 'GET', '/customers?limit=0')).status).toBe(400);
    expect((await send(a, keys.all!, 'GET', '/customers/00000000-0000-0000-0000-000000000000')).status).toBe(404);
    expect(a.cache!.size().entries).toBe(kept);
  });

  it('keeps at most its size, dropping the least recently used answers', async () => {
    const small = await instance(test.env, 40_000);
    try {
      for (let limit = 1; limit <= 30; limit++) await exact(small, `/customers?limit=${limit}`);
      const { entries, bytes } = small.cache!.size();
      expect(bytes).toBeLessThanOrEqual(40_000);
      expect(entries).toBeGreaterThan(0);
      expect(entries).toBeLessThan(30);
      // The newest is kept; the first was dropped and is computed again.
      small.statements.length = 0;
      await exact(small, '/customers?limit=30');
      expect(own(small.statements)).toEqual([]);
      await exact(small, '/customers?limit=1');
      expect(small.statements.filter((sql) => /"customers"/.test(sql)).length).toBeGreaterThan(0);
    } finally {
      await small.db.close();
    }
  });

  it('a change number that cannot be read leaves the request to compute its answer', async () => {
    // Its memory reads through a database handle already closed: every read of it fails.
    const closed = await openDatabase({ databaseUrl: test.env.DATABASE_URL!, dataDir: '' });
    await closed.close();
    const broken = await instance(test.env, 2 ** 20, () => closed.sql);
    try {
      for (let run = 0; run < 2; run++) await exact(broken, '/customers?limit=5');
      expect(broken.changeReads).toBe(2);
      expect(broken.cache!.size().entries).toBe(0);
    } finally {
      await broken.db.close();
    }
  });
});

describe('REST answers from memory on the embedded database', () => {
  it('an unchanged read is served from memory; a read after a write shows it', async () => {
    const test = await migratedDatabase('pglite');
    const one = await instance(test.env, 2 ** 20);
    try {
      const { all } = await keysIn(one.db, { all: { org: 'Acme' } });
      const read = async () => {
        const statements = one.statements.length;
        const answer = await send(one, all!, 'GET', '/customers?limit=5');
        expect(answer.status).toBe(200);
        return { names: answer.json.data.map((c: { name: string }) => c.name), computed: own(one.statements.slice(statements)).length > 0 };
      };
      expect(await read()).toEqual({ names: [], computed: true });
      expect(await read()).toEqual({ names: [], computed: false });
      expect((await send(one, all!, 'POST', '/customers', { name: 'Ada' })).status).toBe(201);
      expect(await read()).toEqual({ names: ['Ada'], computed: true });
      expect(await read()).toEqual({ names: ['Ada'], computed: false });
    } finally {
      await one.db.close();
      await test.drop();
    }
  });
});

// Cursor paging and incremental sync: newest-first cursors, change-ordered sync with
// updated_since and include_deleted (tombstones), cursors that resume later, cursors that
// are refused, and a reader that keeps an exact copy while writers change records at once.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connection.js';
import { rest, startApi, type Api } from '../helpers/api.js';
import { migrate } from '../../src/db/migrator.js';
import { purgeTombstones } from '../../src/db/tombstones.js';
import { createLogger } from '../../src/logger.js';
import { DB_KINDS, migratedDatabase } from '../helpers/databases.js';

type Client = ReturnType<typeof rest>;
interface Row {
  id: string;
  version: number;
  deleted?: boolean;
  name?: string;
}

/** Follows next_cursor until has_more is false; answers the rows seen and the cursor to resume from. */
async function follow(client: Client, first: string): Promise<{ rows: Row[]; cursor: string; pages: number }> {
  const rows: Row[] = [];
  let path = first;
  for (let pages = 1; ; pages++) {
    const page = await client.get(path);
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    rows.push(...page.body.data);
    const { next_cursor: cursor, has_more: more } = page.body.pagination;
    expect(cursor).toEqual(expect.any(String));
    if (!more) return { rows, cursor, pages };
    path = `/customers?cursor=${cursor}&limit=7`;
  }
}

describe.each(DB_KINDS)('REST cursors and sync on %s', (kind) => {
  let api: Api;
  let acme: Client;
  let other: Client;

  beforeAll(async () => {
    api = await startApi(kind, { acme: { org: 'Acme' }, other: { org: 'Other Co' } });
    acme = rest(api, api.keys.acme!);
    other = rest(api, api.keys.other!);
    for (let i = 0; i < 12; i++) await acme.post('/customers', { name: `Customer ${i}` });
    await acme.post('/jobs', { customer_id: (await acme.get('/customers')).body.data[0].id, title: 'A job' });
  });
  afterAll(() => api?.stop());

  it('newest-first cursors walk the same records as page numbers, and end with next_cursor null', async () => {
    const byNumber = [...(await acme.get('/customers?limit=100')).body.data].map((c) => c.id);
    const seen: string[] = [];
    let page = await acme.get('/customers?limit=5');
    expect(page.body.pagination).toMatchObject({ page: 1, limit: 5, total: byNumber.length, has_more: true, next_cursor: expect.any(String) });
    seen.push(...page.body.data.map((c: Row) => c.id));
    while (page.body.pagination.has_more) {
      page = await acme.get(`/customers?limit=5&cursor=${page.body.pagination.next_cursor}`);
      expect(page.status).toBe(200);
      seen.push(...page.body.data.map((c: Row) => c.id));
    }
    expect(page.body.pagination).toMatchObject({ page: Math.ceil(byNumber.length / 5), next_cursor: null, has_more: false });
    expect(seen).toEqual(byNumber);
  });

  it('a sync follows next_cursor in change order and later resumes from its last cursor with every change, tombstones included', async () => {
    const initial = await follow(acme, '/customers?include_deleted=true&limit=7');
    expect(initial.rows.length).toBe((await acme.get('/customers')).body.pagination.total);
    expect(initial.pages).toBe(2);

    const [a, b] = initial.rows;
    await acme.patch(`/customers/${a!.id}`, { name: 'Renamed' });
    await acme.delete(`/customers/${b!.id}`);
    const created = (await acme.post('/customers', { name: 'Newcomer' })).body;

    const resumed = await follow(acme, `/customers?cursor=${initial.cursor}`);
    expect(resumed.rows).toEqual([
      expect.objectContaining({ id: a!.id, name: 'Renamed', version: 2 }),
      { id: b!.id, deleted: true, deleted_at: expect.stringMatching(/Z$/), version: 2 },
      expect.objectContaining({ id: created.id, version: 1, deleted_at: null }),
    ]);
    // Nothing new: the same cursor answers an empty page and hands itself back.
    const idle = await acme.get(`/customers?cursor=${resumed.cursor}`);
    expect(idle.body.data).toEqual([]);
    expect(idle.body.pagination).toMatchObject({ has_more: false, next_cursor: resumed.cursor });
    await acme.post(`/customers/${b!.id}/restore`);
  });

  it('updated_since lists the records changed since then, in change order', async () => {
    const all = (await acme.get('/customers?limit=100')).body.data as Row[];
    const since = new Date(Date.now() - 1).toISOString();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const touched = [all[3]!, all[1]!];
    for (const record of touched) await acme.patch(`/customers/${record.id}`, { phone: '+441234567890' });
    const page = await acme.get(`/customers?updated_since=${since}`);
    expect(page.status).toBe(200);
    expect(page.body.data.map((c: Row) => c.id)).toEqual(touched.map((c) => c.id));
    expect(page.body.pagination).toMatchObject({ total: 2, has_more: false, next_cursor: expect.any(String) });
    const bad = await acme.get('/customers?updated_since=yesterday');
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].param).toBe('updated_since');
    expect((await acme.get('/customers?include_deleted=maybe')).body.errors[0].param).toBe('include_deleted');
  });

  it('without include_deleted a sync shows no deleted records', async () => {
    const victim = (await acme.post('/customers', { name: 'Short-lived' })).body;
    const since = new Date(Date.now() - 60_000).toISOString();
    await acme.delete(`/customers/${victim.id}`);
    const page = await acme.get(`/customers?updated_since=${since}&limit=100`);
    expect(page.body.data.map((c: Row) => c.id)).not.toContain(victim.id);
    const withDeleted = await acme.get(`/customers?updated_since=${since}&include_deleted=true&limit=100`);
    expect(withDeleted.body.data).toContainEqual({ id: victim.id, deleted: true, deleted_at: expect.any(String), version: 2 });
  });

  it('GET /customers/sync is the list with include_deleted=true: the same rows and cursors, no page or order_by', async () => {
    const victim = (await acme.post('/customers', { name: 'Synced away' })).body;
    await acme.delete(`/customers/${victim.id}`);
    const viaList = await acme.get('/customers?include_deleted=true&limit=100');
    const viaSync = await acme.get('/customers/sync?limit=100');
    expect(viaSync.status, JSON.stringify(viaSync.body)).toBe(200);
    expect(viaSync.body.data).toEqual(viaList.body.data);
    expect(viaSync.body.data).toContainEqual({ id: victim.id, deleted: true, deleted_at: expect.any(String), version: 2 });
    // Its cursor resumes on either address; filters and the record's shape apply as on the list.
    const first = await acme.get('/customers/sync?limit=3&fields=name');
    expect(Object.keys(first.body.data[0]).sort()).toEqual(['id', 'name']);
    const cursor = first.body.pagination.next_cursor as string;
    const onSync = await acme.get(`/customers/sync?cursor=${cursor}&limit=3`);
    const onList = await acme.get(`/customers?cursor=${cursor}&limit=3`);
    expect(onSync.body.data).toEqual(onList.body.data);
    expect(onSync.body.data.map((r: Row) => r.id)).toEqual(viaList.body.data.slice(3, 6).map((r: Row) => r.id));
    const jobs = await acme.get('/jobs/sync?status=scheduled');
    expect(jobs.status).toBe(200);
    expect(jobs.body.data.length).toBeGreaterThan(0);
    for (const [path, param] of [['/customers/sync?page=2', 'page'], ['/customers/sync?order_by=name', 'order_by'], ['/customers/sync?include_deleted=false', 'include_deleted']]) {
      const refused = await acme.get(path!);
      expect(refused.status, path).toBe(400);
      expect(refused.body.errors[0].param).toBe(param);
    }
    expect((await acme.post('/customers/sync', { name: 'x' })).status).toBe(405);
    await acme.post(`/customers/${victim.id}/restore`);
  });

  it('a cursor from another organization, list or filter, tampered or truncated, is a 400 naming cursor', async () => {
    const mine = (await acme.get('/customers?include_deleted=true&limit=2')).body.pagination.next_cursor as string;
    const refusals = [
      await other.get(`/customers?cursor=${mine}`),
      await acme.get(`/jobs?cursor=${mine}`),
      await acme.get(`/customers?cursor=${mine}&search=ada`),
      await acme.get(`/customers?cursor=${mine.slice(0, -3)}`),
      await acme.get(`/customers?cursor=${mine.slice(0, 10)}X${mine.slice(11)}`),
      await acme.get('/customers?cursor=%00%01'),
      await acme.get(`/customers?cursor=${Buffer.from(JSON.stringify({ o: 'changes', p: 1, k: '1', f: {}, h: 'x' })).toString('base64url')}`),
      await acme.get(`/customers?cursor=${mine}&page=2`),
    ];
    for (const refusal of refusals) {
      expect(refusal.status, JSON.stringify(refusal.body)).toBe(400);
      expect(['cursor', 'page']).toContain(refusal.body.errors[0].param);
    }
    // The same cursor with its own filter is fine.
    expect((await acme.get(`/customers?cursor=${mine}&include_deleted=true`)).status).toBe(200);
  });

  it('a filtered list keeps its filter in the cursor', async () => {
    const jobs = await acme.get('/jobs?status=scheduled&include_deleted=true&limit=1');
    const next = await acme.get(`/jobs?cursor=${jobs.body.pagination.next_cursor}`);
    expect(next.status).toBe(200);
    expect((await acme.get(`/jobs?cursor=${jobs.body.pagination.next_cursor}&status=completed`)).status).toBe(400);
  });

  it('GraphQL lists take updatedSince, cursor and includeDeleted and answer nextCursor and hasMore', async () => {
    const response = await fetch(`${api.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${api.keys.acme}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ customers(includeDeleted: true, limit: 3) { data { id version deletedAt } pagination { nextCursor hasMore total } } }' }),
    });
    const { data } = (await response.json()) as { data: { customers: { data: Row[]; pagination: { nextCursor: string; hasMore: boolean } } } };
    expect(data.customers.data).toHaveLength(3);
    expect(data.customers.pagination).toMatchObject({ nextCursor: expect.any(String), hasMore: true });
    const rest2 = await acme.get(`/customers?cursor=${data.customers.pagination.nextCursor}&limit=100`);
    expect(rest2.status).toBe(200);
  });
});

describe.each(DB_KINDS)('sync under concurrent writers on %s', (kind) => {
  it("a reader that follows cursors while writers create, update and delete ends with the database's exact copy", async () => {
    const api = await startApi(kind, { acme: { org: 'Acme' } }, { RATE_LIMIT_MAX: '100000' });
    const acme = rest(api, api.keys.acme!);
    try {
      const mirror = new Map<string, Row>();
      const apply = (rows: Row[]) => {
        for (const row of rows) {
          const known = mirror.get(row.id);
          // Change order means every row is newer than what the mirror holds.
          if (known) expect(row.version).toBeGreaterThan(known.version);
          mirror.set(row.id, row);
        }
      };
      let cursor: string | undefined;
      const readOnce = async () => {
        for (;;) {
          const page = await acme.get(cursor ? `/customers?cursor=${cursor}&limit=25` : '/customers?include_deleted=true&limit=25');
          expect(page.status).toBe(200);
          apply(page.body.data);
          cursor = page.body.pagination.next_cursor;
          if (!page.body.pagination.has_more) return;
        }
      };

      let writing = true;
      const writer = async (w: number) => {
        const mine: string[] = [];
        for (let i = 0; i < 40; i++) {
          const roll = i % 5;
          if (roll < 2 || mine.length < 2) mine.push((await acme.post('/customers', { name: `W${w}-${i}` })).body.id);
          else if (roll < 4) await acme.patch(`/customers/${mine[(i * 7) % mine.length]}`, { name: `W${w}-${i} edited` });
          else {
            const id = mine.splice((i * 3) % mine.length, 1)[0]!;
            await acme.delete(`/customers/${id}`);
          }
        }
      };
      const reader = (async () => {
        while (writing) await readOnce();
      })();
      await Promise.all([1, 2, 3, 4].map(writer));
      writing = false;
      await reader;
      await readOnce();

      // The database's own view: every record with its version and whether it is deleted.
      const truth = new Map<string, { version: number; deleted: boolean }>();
      if (kind === 'postgres') {
        const client = new pg.Client({ connectionString: api.db.env.DATABASE_URL });
        await client.connect();
        const { rows } = await client.query<{ id: string; version: number; deleted: boolean }>('SELECT id, version, deleted_at IS NOT NULL AS deleted FROM customers');
        await client.end();
        for (const row of rows) truth.set(row.id, { version: row.version, deleted: row.deleted });
      } else {
        // The embedded folder belongs to the server: stop it and open the folder directly.
        await api.server.stop();
        const db = await openDatabase({ databaseUrl: undefined, dataDir: api.db.env.DATA_DIR! });
        for (const row of await db.prisma.customer.findMany({ select: { id: true, version: true, deletedAt: true } })) {
          truth.set(row.id, { version: row.version, deleted: row.deletedAt !== null });
        }
        await db.close();
      }
      expect(truth.size).toBeGreaterThan(60);
      const copy = new Map([...mirror].map(([id, row]) => [id, { version: row.version, deleted: row.deleted === true }]));
      expect(copy).toEqual(truth);
    } finally {
      await api.stop().catch(() => undefined);
    }
  }, 120_000);
});

describe.each(DB_KINDS)('tombstone retention on %s', (kind) => {
  it('tombstones older than the retention are purged; newer ones and live records stay', async () => {
    const fresh = await migratedDatabase(kind);
    const db = await openDatabase({ databaseUrl: fresh.env.DATABASE_URL, dataDir: fresh.env.DATA_DIR ?? '' });
    try {
      await migrate(db.sql);
      const organization = await db.prisma.organization.create({ data: { name: 'Acme' } });
      const make = (name: string, deletedAt: Date | null) => db.prisma.customer.create({ data: { organizationId: organization.id, name, deletedAt } });
      const [old, recent, live] = [await make('Old', new Date(Date.now() - 31 * 86_400_000)), await make('Recent', new Date()), await make('Live', null)];
      await purgeTombstones(db.prisma, 30, createLogger('silent', () => undefined));
      const left = (await db.prisma.customer.findMany({ select: { id: true } })).map((c) => c.id).sort();
      expect(left).toEqual([recent.id, live.id].sort());
      expect(old.id).toBeDefined();
    } finally {
      await db.close();
      await fresh.drop();
    }
  });
});

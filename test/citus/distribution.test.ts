// On Citus only (`npm run test:citus`, which points TEST_CITUS_URL at a coordinator with two
// workers): the migrations distribute the schema by organization, and two organizations
// whose rows sit on different workers each get exact numbers, a dense change sequence,
// events that name their request, and live streams (their NOTIFY is sent by the worker).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/auth/api-keys.js';
import { allScopes } from '../../src/auth/scopes.js';
import '../../src/schema/index.js';
import { purgeTombstones } from '../../src/db/tombstones.js';
import { BUSINESS_MODELS } from '../../src/db/tenant.js';
import { purgeEvents } from '../../src/events/retention.js';
import { createLogger } from '../../src/logger.js';
import { purgeRequestLogs } from '../../src/request-logs/retention.js';
import { createRequestLogWriter } from '../../src/request-logs/writer.js';
import { inProcess, type InProcess } from '../events/in-process.js';
import { subscribe } from '../events/sse.js';

if (!process.env.TEST_CITUS_URL) throw new Error('test/citus runs on Citus: npm run test:citus');

describe('on Citus, a coordinator and two workers', () => {
  let app: InProcess;
  beforeAll(async () => {
    app = await inProcess('postgres');
  });
  afterAll(() => app?.stop());

  /** The worker (its port) that holds an organization's rows. */
  async function workerOf(organizationId: string): Promise<number> {
    const [row] = await app.db.prisma.$queryRaw<{ nodeport: number }[]>`
      SELECT nodeport FROM citus_shards
      WHERE table_name = 'organization_counters'::regclass
        AND shardid = get_shard_id_for_distribution_column('organization_counters', ${organizationId}::uuid)`;
    return Number(row!.nodeport);
  }

  it('distributes every table of a tenant by organization_id, co-located, and copies the shared ones to every node', async () => {
    const tables = await app.db.prisma.$queryRaw<{ name: string; type: string; column: string; colocation: number }[]>`
      SELECT table_name::text AS name, citus_table_type AS type, distribution_column AS column, colocation_id AS colocation FROM citus_tables`;
    const byName = new Map(tables.map((table) => [table.name, table]));
    // A tenant's tables: those keyed by organization_id first (the tenant client's models).
    const keyed = await app.db.prisma.$queryRaw<{ name: string }[]>`
      SELECT c.relname::text AS name FROM pg_index i
      JOIN pg_class c ON c.oid = i.indrelid
      JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = i.indkey[0]
      WHERE i.indisprimary AND a.attname = 'organization_id' AND c.relnamespace = 'public'::regnamespace`;
    const tenant = keyed.map((table) => table.name);
    expect(tenant).toHaveLength(BUSINESS_MODELS.size);
    expect(tenant).toContain('organization_counters');
    for (const name of tenant) expect(byName.get(name), name).toMatchObject({ type: 'distributed', column: 'organization_id' });
    expect(new Set(tenant.map((name) => byName.get(name)!.colocation)).size).toBe(1);
    for (const name of ['organizations', 'users', 'sessions', 'service_keys']) expect(byName.get(name), name).toMatchObject({ type: 'reference' });
    // API keys on the coordinator alone: a change to one sends a NOTIFY, and a reference
    // table's changes commit in two phases, which a NOTIFY forbids (the api_keys_on_coordinator migration).
    expect(byName.get('api_keys')).toMatchObject({ type: 'local' });
  });

  it('two organizations on different workers: exact numbers, dense sequences, events naming their request, live streams', async () => {
    // Organizations until one lives on the other worker than the first's.
    const first = app.organizationId;
    let second: string | undefined;
    for (let i = 0; !second; i++) {
      expect(i).toBeLessThan(50);
      const organization = await app.db.prisma.organization.create({ data: { name: `Other ${i}` } });
      if ((await workerOf(organization.id)) !== (await workerOf(first))) second = organization.id;
    }
    const server = await app.listen();
    try {
      for (const organizationId of [first, second]) {
        const { key } = await createApiKey(app.db.prisma, { organizationId, name: 'citus', scopes: allScopes() });
        const stream = await subscribe(server.url, key, { types: ['customer.created', 'invoice.created'] });
        expect(stream.status).toBe(200);
        const send = async (path: string, json: object) => {
          const response = await fetch(`${server.url}/v1/${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(json) });
          expect(response.status, await response.clone().text()).toBe(201);
          return { body: (await response.json()) as Record<string, any>, requestId: response.headers.get('x-request-id') };
        };
        const customer = await send('customers', { name: 'Ann', email: 'ann@example.com' });
        const invoice = await send('invoices', { customer_id: customer.body.id, currency: 'USD', line_items: [{ description: 'Visit', quantity: 2, unit_amount: 5000 }] });
        expect(invoice.body).toMatchObject({ number: 'INV-000001', total_amount: 10000, status: 'draft' });

        const events = await fetch(`${server.url}/v1/events`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.json() as Promise<{ data: Array<Record<string, any>> }>);
        expect(events.data.map((e) => [e.type, e.seq, e.request_id])).toEqual([
          ['invoice.created', 2, invoice.requestId],
          ['customer.created', 1, customer.requestId],
        ]);
        // The worker's NOTIFY reached this instance.
        expect((await stream.events(2)).map((e) => e.type)).toEqual(['customer.created', 'invoice.created']);
        stream.close();
        const customers = await fetch(`${server.url}/v1/customers`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.json() as Promise<{ data: unknown[]; pagination: { total: number } }>);
        expect(customers.pagination.total).toBe(1);
      }
    } finally {
      await server.close();
    }
  });

  it('the background purges (tombstones, events, request logs) run across the shards', async () => {
    const { key } = await createApiKey(app.db.prisma, { organizationId: app.organizationId, name: 'purges', scopes: allScopes() });
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const created = await app.fetch('http://test/v1/customers', { method: 'POST', headers, body: JSON.stringify({ name: 'Gone soon' }) });
    const { id } = (await created.json()) as { id: string };
    expect((await app.fetch(`http://test/v1/customers/${id}`, { method: 'DELETE', headers })).status).toBe(204);
    const org = app.organizationId;
    await app.db.prisma.$executeRaw`UPDATE customers SET deleted_at = now() - interval '400 days' WHERE organization_id = ${org}::uuid AND id = ${id}::uuid`;
    await app.db.prisma.$executeRaw`UPDATE events SET created_at = now() - interval '400 days' WHERE organization_id = ${org}::uuid AND record_id = ${id}::uuid`;
    // Another organization's log, which no request adds to meanwhile: ten days, one a day.
    const logged = (await app.db.prisma.organization.create({ data: { name: 'Logged' } })).id;
    await app.db.prisma.$executeRaw`
      INSERT INTO request_logs (organization_id, id, request_id, method, path, status, duration_ms, key_prefix, created_at)
      SELECT ${logged}::uuid, gen_random_uuid(), 'r' || g, 'GET', '/v1/customers', 200, 1, 'svc_live_x', now() - g * interval '1 day' - interval '1 minute'
      FROM generate_series(0, 9) g`;
    const warnings: string[] = [];
    const log = createLogger('warn', (line) => void warnings.push(line));
    await purgeTombstones(app.db.prisma, 30, log);
    await purgeEvents(app.db.prisma, 30, log);
    await purgeRequestLogs(app.db.prisma, log, { days: 7, rowsPerOrganization: 3 });
    expect(warnings).toEqual([]);
    expect(await app.db.prisma.customer.count({ where: { organizationId: org, id } })).toBe(0);
    expect(await app.db.prisma.event.count({ where: { organizationId: org, recordId: id } })).toBe(0);
    // Older than 7 days, then past the newest 3.
    const left = await app.db.prisma.requestLog.findMany({ where: { organizationId: logged }, orderBy: { createdAt: 'desc' } });
    expect(left.map((row) => row.requestId)).toEqual(['r0', 'r1', 'r2']);
  });

  it("the request log's batches (one INSERT of unnested arrays) reach every organization's shard", async () => {
    const organizations = [app.organizationId, (await app.db.prisma.organization.create({ data: { name: 'Logged too' } })).id];
    const warnings: string[] = [];
    const writer = createRequestLogWriter(app.db.sql, createLogger('warn', (line) => void warnings.push(line)), { flushEveryMs: 3_600_000 });
    for (const [n, organizationId] of [...organizations, ...organizations].entries()) {
      writer.record({ organizationId, requestId: `batch-${n}`, method: 'GET', path: '/v1/customers', status: 200, durationMs: 1, errorCode: null, keyPrefix: 'svc_live_x', createdAt: new Date() });
    }
    await writer.stop();
    expect(warnings).toEqual([]);
    for (const organizationId of organizations) {
      const rows = await app.db.prisma.requestLog.findMany({ where: { organizationId, requestId: { startsWith: 'batch-' } } });
      expect(rows).toHaveLength(2);
    }
  });
});


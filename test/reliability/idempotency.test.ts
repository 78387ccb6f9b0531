import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connection.js';
import { fingerprint } from '../../src/http/idempotency.js';
import { call, makeKeys, serveInProcess, startApi, type Api, type ServedInstance } from '../helpers/api.js';
import { DB_KINDS, migratedDatabase, type TestDatabase } from '../helpers/databases.js';

describe.each(DB_KINDS)('Idempotency-Key on creates, on %s', (kind) => {
  let api: Api;
  let customerId: string;
  const post = (path: string, json: unknown, key?: string) =>
    call(`${api.url}/v1${path}`, { method: 'POST', key: api.keys.acme, json, headers: key ? { 'idempotency-key': key } : {} });
  const count = async (path: string) => (await call(`${api.url}/v1${path}`, { key: api.keys.acme })).body.pagination.total as number;

  beforeAll(async () => {
    api = await startApi(kind, { acme: { org: 'Acme' }, other: { org: 'Other Co' } });
    customerId = (await post('/customers', { name: 'Ada' })).body.id;
  });
  afterAll(() => api.stop());

  it('a retried invoice create returns the first response and creates nothing new', async () => {
    const body = { customer_id: customerId, currency: 'USD', line_items: [{ description: 'Work', quantity: 1, unit_amount: 1000 }] };
    const first = await post('/invoices', body, 'retry-invoice-1');
    expect(first.status).toBe(201);
    const retry = await post('/invoices', body, 'retry-invoice-1');
    expect(retry.status).toBe(201);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.get('location')).toBe(first.headers.get('location'));
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await count('/invoices')).toBe(1);
    const next = await post('/invoices', body, 'retry-invoice-2');
    expect(next.body.number).toBe('INV-000002');
  });

  it('the same key with a different body is refused', async () => {
    await post('/customers', { name: 'Grace' }, 'customer-key');
    const other = await post('/customers', { name: 'Someone else' }, 'customer-key');
    expect(other.status).toBe(400);
    expect(other.body.errors).toEqual([{ param: 'Idempotency-Key', message: 'was already used with a different request' }]);
  });

  it('a refused create is replayed as refused, and keys are per organization', async () => {
    const bad = await post('/customers', { name: '' }, 'bad-create');
    expect(bad.status).toBe(400);
    expect((await post('/customers', { name: '' }, 'bad-create')).body).toEqual(bad.body);
    const theirs = await call(`${api.url}/v1/customers`, { method: 'POST', key: api.keys.other, json: { name: 'Grace' }, headers: { 'idempotency-key': 'customer-key' } });
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
  });

  it('concurrent requests with one key create one record', async () => {
    const before = await count('/jobs');
    const body = { customer_id: customerId, title: 'Concurrent' };
    const responses = await Promise.all(Array.from({ length: 8 }, () => post('/jobs', body, 'concurrent-job')));
    const created = responses.filter((r) => r.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(responses.every((r) => r.status === 201 || r.status === 409)).toBe(true);
    expect(new Set(created.map((r) => r.body.id)).size).toBe(1);
    expect(await count('/jobs')).toBe(before + 1);
    const later = await post('/jobs', body, 'concurrent-job');
    expect(later.status).toBe(201);
    expect(later.body.id).toBe(created[0]!.body.id);
  });

  it('an invalid key is a 400 naming the header', async () => {
    const response = await post('/customers', { name: 'X' }, 'x'.repeat(256));
    expect(response.status).toBe(400);
    expect(response.body.errors[0].param).toBe('Idempotency-Key');
  });

  it('GraphQL mutations honour the header too', async () => {
    const mutation = { query: 'mutation($i: CreateProposalInput!) { createProposal(input: $i) { id } }', variables: { i: { customerId, title: 'P', totalAmount: 1, currency: 'USD' } } };
    const send = () => call(`${api.url}/graphql`, { method: 'POST', key: api.keys.acme, json: mutation, headers: { 'idempotency-key': 'gql-proposal' } });
    const first = await send();
    const second = await send();
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(await count('/proposals')).toBe(1);
  });
});

describe.each(DB_KINDS)('Idempotency-Key records on %s', (kind) => {
  let db: TestDatabase;
  let server: ServedInstance;
  let keys: Record<string, string>;
  const crashedBody = { name: 'Created just before a crash' };
  const post = (key: string, json: unknown, idempotencyKey: string) =>
    call(`${server.url}/v1/customers`, { method: 'POST', key, json, headers: { 'idempotency-key': idempotencyKey } });

  beforeAll(async () => {
    db = await migratedDatabase(kind);
    keys = await makeKeys(db, { writer: { org: 'Acme' }, reader: { org: 'Acme', scopes: 'customers:read' } });
    // What a process killed between a create's commit and storing its response leaves
    // behind (six minutes ago), and a record older than the 24 hours keys are kept.
    const open = await openDatabase({ databaseUrl: db.env.DATABASE_URL, dataDir: db.env.DATA_DIR ?? '' });
    try {
      const writer = await open.prisma.apiKey.findFirstOrThrow({ where: { name: 'writer' } });
      const organizationId = writer.organizationId;
      await open.prisma.idempotencyKey.createMany({
        data: [
          { organizationId, key: `${writer.id}:crashed`, fingerprint: fingerprint('POST', '/customers', JSON.stringify(crashedBody)), createdAt: new Date(Date.now() - 6 * 60_000) },
          { organizationId, key: `${writer.id}:ancient`, fingerprint: 'another request', status: 201, body: '{}', createdAt: new Date(Date.now() - 25 * 3_600_000) },
        ],
      });
    } finally {
      await open.close();
    }
    server = await serveInProcess(db.env);
  });
  afterAll(async () => {
    await server.stop();
    await db.drop();
  });

  const total = async () => (await call(`${server.url}/v1/customers`, { key: keys.writer })).body.pagination.total as number;

  it('a retry of a first request that never finished creates nothing and says so', async () => {
    const retry = await post(keys.writer!, crashedBody, 'crashed');
    expect(retry.status).toBe(409);
    expect(retry.body.detail).toMatch(/did not finish/);
    expect(retry.headers.get('retry-after')).toBeNull();
    expect(await total()).toBe(0);
  });

  it('records past 24 hours are purged in the background, freeing their key', async () => {
    await expect.poll(() => server.output(), { timeout: 10_000 }).toContain('expired idempotency keys purged');
    expect((await post(keys.writer!, { name: 'New use of an old key' }, 'ancient')).status).toBe(201);
  });

  it("keys belong to one API key: a read-only key's refusal is not replayed to the writer", async () => {
    const refused = await post(keys.reader!, { name: 'Shared key' }, 'shared');
    expect(refused.status).toBe(403);
    const created = await post(keys.writer!, { name: 'Shared key' }, 'shared');
    expect(created.status).toBe(201);
    expect(created.headers.get('idempotent-replayed')).toBeNull();
  });

  it('queries sent with the header are not stored', async () => {
    const query = await call(`${server.url}/graphql`, { method: 'POST', key: keys.writer, json: { query: '{ customerCount }' }, headers: { 'idempotency-key': 'reused' } });
    expect(query.status).toBe(200);
    const mutation = await call(`${server.url}/graphql`, {
      method: 'POST',
      key: keys.writer,
      json: { query: 'mutation { createCustomer(input: { name: "After a query" }) { name } }' },
      headers: { 'idempotency-key': 'reused' },
    });
    expect(mutation.body).toEqual({ data: { createCustomer: { name: 'After a query' } } });
  });
});

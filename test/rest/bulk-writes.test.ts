// Upserts by external id and batches (CONTRACT section 10): PUT /v1/{resource}/by_external_id/{id}
// and POST /v1/{resource}/batch, on REST and GraphQL: one record under concurrency, atomic
// and partial batches with faults in several items, one event per item.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, gql, rest, startApi, type Api } from '../helpers/api.js';
import { DB_KINDS } from '../helpers/databases.js';

describe.each(DB_KINDS)('upserts and batches on %s', (kind) => {
  let api: Api;
  let acme: ReturnType<typeof rest>;
  const put = (path: string, json: unknown, headers: Record<string, string> = {}) => call(`${api.url}/v1${path}`, { method: 'PUT', key: api.keys.acme, json, headers });
  const count = async (path: string) => (await acme.get(path)).body.pagination.total as number;

  beforeAll(async () => {
    api = await startApi(kind, { acme: { org: 'Acme' }, reader: { org: 'Acme', scopes: 'customers:read' } }, { RATE_LIMIT_MAX: '5000', RATE_LIMIT_WINDOW_SECONDS: '86400' });
    acme = rest(api, api.keys.acme!);
  });
  afterAll(() => api.stop());

  it('PUT by_external_id creates (201, Location) then updates (200) the same record', async () => {
    const created = await put('/customers/by_external_id/crm-42', { name: 'Ada', email: 'ada@x.example', metadata: { a: '1' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.headers.get('location')).toBe(`/v1/customers/${created.body.id}`);
    expect(created.body).toMatchObject({ external_id: 'crm-42', name: 'Ada', version: 1 });
    const updated = await put('/customers/by_external_id/crm-42', { name: 'Ada Lovelace', metadata: { b: '2' } });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ id: created.body.id, name: 'Ada Lovelace', email: 'ada@x.example', version: 2, metadata: { a: '1', b: '2' } });
    expect(updated.headers.get('etag')).toBe('"2"');
    // An id with characters a path segment must escape.
    const odd = await put(`/customers/by_external_id/${encodeURIComponent('hub/7 x')}`, { name: 'Odd' });
    expect(odd.status).toBe(201);
    expect(odd.body.external_id).toBe('hub/7 x');
    const invalid = await put('/customers/by_external_id/crm-43', { name: '' });
    expect(invalid.status).toBe(400);
    expect(invalid.body.errors).toEqual([{ param: 'name', message: 'must not be blank' }]);
    expect((await call(`${api.url}/v1/customers/by_external_id/x`, { method: 'PUT', key: api.keys.reader, json: { name: 'x' } })).status).toBe(403);
  });

  it('ten concurrent upserts of one external id make one record', async () => {
    const statuses = await Promise.all(Array.from({ length: 10 }, (_, i) => put('/customers/by_external_id/race-1', { name: `Racer ${i}` }).then((r) => r.status)));
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(9);
    expect(await count('/customers?external_id=race-1')).toBe(1);
    expect((await acme.get('/customers?external_id=race-1')).body.data[0].version).toBe(10);
  });

  it('GraphQL upsert<Type> does the same; what only a create sets stays', async () => {
    const customers = [(await acme.post('/customers', { name: 'C1' })).body.id, (await acme.post('/customers', { name: 'C2' })).body.id];
    const mutation = 'mutation($id: String!, $input: CreateInvoiceInput!) { upsertInvoice(externalId: $id, input: $input) { id customerId totalAmount version externalId } }';
    const line = (amount: number) => [{ description: 'x', quantity: 1, unitAmount: amount }];
    const first = await gql(api, api.keys.acme!, mutation, { id: 'qb-1', input: { customerId: customers[0], currency: 'EUR', lineItems: line(100) } });
    const second = await gql(api, api.keys.acme!, mutation, { id: 'qb-1', input: { customerId: customers[1], currency: 'EUR', lineItems: line(250) } });
    expect(first.upsertInvoice).toMatchObject({ customerId: customers[0], totalAmount: 100, version: 1, externalId: 'qb-1' });
    expect(second.upsertInvoice).toMatchObject({ id: first.upsertInvoice.id, customerId: customers[0], totalAmount: 250, version: 2 });
  });

  it('an atomic batch writes every item, each with its own event, in order', async () => {
    const before = (await acme.get('/events?limit=1')).body.data[0]?.seq ?? 0;
    const target = (await acme.post('/customers', { name: 'To update' })).body;
    const doomed = (await acme.post('/customers', { name: 'To delete', external_id: 'doomed' })).body;
    const response = await acme.post('/customers/batch', {
      items: [
        { op: 'create', data: { name: 'B1', email: 'b1@x.example' } },
        { op: 'create', external_id: 'b2', data: { name: 'B2' } },
        { op: 'upsert', external_id: 'crm-42', data: { name: 'Ada L.' } },
        { op: 'update', id: target.id, data: { phone: '+14155550123' }, if_match: 1 },
        { op: 'delete', external_id: 'doomed' },
      ],
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.results.map((r: { index: number; status: number }) => [r.index, r.status])).toEqual([[0, 201], [1, 201], [2, 200], [3, 200], [4, 204]]);
    expect(response.body.results[1].record).toMatchObject({ name: 'B2', external_id: 'b2', version: 1 });
    expect(response.body.results[3].record).toMatchObject({ id: target.id, phone: '+14155550123', version: 2 });
    expect(response.body.results[4].record).toBeUndefined();
    expect((await acme.get(`/customers/${doomed.id}`)).status).toBe(404);
    const events = (await acme.get(`/events?limit=20`)).body.data.filter((e: { seq: number }) => e.seq > before + 2).reverse();
    expect(events.map((e: { type: string }) => e.type)).toEqual(['customer.created', 'customer.created', 'customer.updated', 'customer.updated', 'customer.deleted']);
    expect(events.map((e: { seq: number }) => e.seq)).toEqual([before + 3, before + 4, before + 5, before + 6, before + 7]);
    // The batch names its request once; every item's event carries it.
    expect(events.map((e: { request_id: string }) => e.request_id)).toEqual(Array(5).fill(response.headers.get('x-request-id')));
  });

  it('a batch of creates only (one INSERT) answers each record in item order, each with its own event and sequence number', async () => {
    const before = (await acme.get('/events?limit=1')).body.data[0]?.seq ?? 0;
    const names = Array.from({ length: 30 }, (_, i) => `Row ${String(i).padStart(2, '0')} ${'z'.repeat(1 + (i % 3))}`);
    const response = await acme.post('/customers/batch', { items: names.map((name, i) => ({ op: 'create', external_id: `row-${i}`, data: { name, metadata: { i: String(i) } } })) });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const results = response.body.results as Array<{ index: number; status: number; record: { id: string; name: string; external_id: string; metadata: object; version: number } }>;
    expect(results.map((r) => [r.index, r.status, r.record.name, r.record.external_id, r.record.metadata, r.record.version])).toEqual(
      names.map((name, i) => [i, 201, name, `row-${i}`, { i: String(i) }, 1]),
    );
    const events = (await acme.get('/events?limit=50')).body.data.filter((e: { seq: number }) => e.seq > before).reverse();
    expect(events.map((e: { seq: number }) => e.seq)).toEqual(names.map((_, i) => before + 1 + i));
    expect(events.map((e: { data: { object: { id: string } } }) => e.data.object.id)).toEqual(results.map((r) => r.record.id));
    expect(new Set(events.map((e: { type: string; request_id: string }) => `${e.type} ${e.request_id}`))).toEqual(new Set([`customer.created ${response.headers.get('x-request-id')}`]));
    // Each record reads back exactly as the batch answered it; the list, newest first, has the last item first.
    for (const i of [0, 17, 29]) expect((await acme.get(`/customers/${results[i]!.record.id}`)).body).toEqual(results[i]!.record);
    expect((await acme.get('/customers?limit=30')).body.data.map((c: { name: string }) => c.name)).toEqual([...names].reverse());
  });

  it('a batch of creates only with clashing external ids or a deleted reference writes nothing and names each item', async () => {
    const total = await count('/customers');
    const clash = await acme.post('/customers/batch', {
      items: [
        { op: 'create', external_id: 'fresh-1', data: { name: 'Fresh' } },
        { op: 'create', external_id: 'row-3', data: { name: 'Taken before' } },
        { op: 'create', external_id: 'twice', data: { name: 'Twice A' } },
        { op: 'create', external_id: 'twice', data: { name: 'Twice B' } },
      ],
    });
    expect(clash.status, JSON.stringify(clash.body)).toBe(409);
    expect(clash.body.errors).toEqual([
      { param: 'items[1].external_id', message: expect.stringContaining('is already the external id of customer') },
      { param: 'items[3].external_id', message: expect.stringContaining('is already the external id of customer') },
    ]);
    expect(await count('/customers')).toBe(total);
    expect(await count('/customers?external_id=fresh-1')).toBe(0);

    const [kept, gone] = [(await acme.post('/customers', { name: 'Kept' })).body.id, (await acme.post('/customers', { name: 'Gone' })).body.id];
    expect((await acme.delete(`/customers/${gone}`)).status).toBe(204);
    const jobs = await count('/jobs');
    const refused = await acme.post('/jobs/batch', {
      items: [
        { op: 'create', data: { customer_id: kept, title: 'One' } },
        { op: 'create', data: { customer_id: gone, title: 'Two' } },
        { op: 'create', data: { customer_id: kept, title: 'Three' } },
      ],
    });
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual([{ param: 'items[1].customer_id', message: 'does not name a record of this organization' }]);
    expect(await count('/jobs')).toBe(jobs);
    const written = await acme.post('/jobs/batch', { items: ['One', 'Two', 'Three'].map((title) => ({ op: 'create', data: { customer_id: kept, title } })) });
    expect(written.body.results.map((r: { record: { title: string; customer_id: string } }) => [r.record.title, r.record.customer_id])).toEqual([['One', kept], ['Two', kept], ['Three', kept]]);
  });

  it('batches of creates only, of every plain kind, partial with a refused item, and a currency too long for its column', async () => {
    const customer = (await acme.post('/customers', { name: 'Kinds' })).body.id;
    const emails = await acme.post('/emails/batch', {
      items: (['incoming', 'outgoing'] as const).map((type) => ({ op: 'create', data: { customer_id: customer, type, from: 'a@x.example', to: 'b@x.example', subject: type } })),
    });
    expect(emails.body.results.map((r: { status: number; record: { type: string } }) => [r.status, r.record.type])).toEqual([[201, 'incoming'], [201, 'outgoing']]);
    const proposals = await acme.post('/proposals/batch', {
      mode: 'partial',
      items: [
        { op: 'create', data: { customer_id: customer, title: 'Euro', total_amount: 100, currency: 'EUR' } },
        { op: 'create', data: { customer_id: customer, title: 'Too long', total_amount: 100, currency: 'EURO' } },
        { op: 'create', data: { customer_id: customer, title: 'Pound', total_amount: 200, currency: 'GBP' } },
      ],
    });
    expect(proposals.status).toBe(200);
    expect(proposals.body.results.map((r: { status: number; record?: { currency: string } }) => [r.status, r.record?.currency])).toEqual([[201, 'EUR'], [400, undefined], [201, 'GBP']]);
    expect(proposals.body.results[1].error.errors).toEqual([{ param: 'currency', message: expect.any(String) }]);
    expect(await count(`/proposals?customer_id=${customer}`)).toBe(2);
  });

  it('a single create answers its record whether or not the selection reaches its customer', async () => {
    const customer = (await acme.post('/customers', { name: 'Selected', external_id: 'sel-1' })).body;
    expect((await acme.post('/customers', { name: 'Clash', external_id: 'sel-1' })).body.errors).toEqual([{ param: 'external_id', message: `is already the external id of customer ${customer.id}` }]);
    const mutation = 'mutation($input: CreateJobInput!) { createJob(input: $input) { id title customerId version customer { name externalId } } }';
    const job = (await gql(api, api.keys.acme!, mutation, { input: { customerId: customer.id, title: 'With its customer' } })).createJob;
    expect(job).toMatchObject({ title: 'With its customer', customerId: customer.id, version: 1, customer: { name: 'Selected', externalId: 'sel-1' } });
    const plain = (await gql(api, api.keys.acme!, 'mutation($input: CreateJobInput!) { createJob(input: $input) { id title version } }', { input: { customerId: customer.id, title: 'Alone' } })).createJob;
    expect((await acme.get(`/jobs/${plain.id}`)).body).toMatchObject({ id: plain.id, title: 'Alone', customer_id: customer.id, version: 1 });
  });

  it('an atomic batch with faults in several items writes nothing and names each as items[i].field', async () => {
    const total = await count('/customers');
    const response = await acme.post('/customers/batch', {
      items: [
        { op: 'create', data: { name: 'Fine' } },
        { op: 'create', data: { name: 'Bad', email: 'not an address' } },
        { op: 'update', id: '01a20d00-0000-7000-8000-000000000000', data: { name: 'Nobody' } },
        { op: 'create', data: { name: 'Clash', external_id: 'b2' } },
        { op: 'create', data: { nickname: 'x' } },
      ],
    });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([
      { param: 'items[1].email', message: expect.any(String) },
      { param: 'items[2]', message: expect.stringContaining('No customer') },
      { param: 'items[3].external_id', message: expect.stringContaining('is already the external id of customer') },
      { param: 'items[4].nickname', message: 'is not a known field' },
      { param: 'items[4].name', message: 'is required' },
    ]);
    expect(await count('/customers')).toBe(total);
  });

  it('a partial batch writes the good items and answers each failure in its result', async () => {
    const total = await count('/customers');
    const response = await acme.post('/customers/batch', {
      mode: 'partial',
      items: [
        { op: 'create', data: { name: 'P1' } },
        { op: 'create', data: { name: 'P2', email: 'nope' } },
        { op: 'update', external_id: 'b2', data: { name: 'B2 again' }, if_match: 7 },
        { op: 'create', data: { name: 'P3' } },
      ],
    });
    expect(response.status).toBe(200);
    const [one, two, three, four] = response.body.results;
    expect([one.status, two.status, three.status, four.status]).toEqual([201, 400, 412, 201]);
    expect(two.error).toMatchObject({ code: 'BAD_REQUEST', errors: [{ param: 'email', message: expect.any(String) }] });
    expect(three.error.code).toBe('PRECONDITION_FAILED');
    expect(await count('/customers')).toBe(total + 2);
    // The third item failed inside its write (its savepoint rolled back): the fourth's event
    // still carries the request's id, as the first's does.
    for (const record of [one.record, four.record]) {
      const [created] = (await acme.get(`/customers/${record.id}/events`)).body.data;
      expect(created.request_id).toBe(response.headers.get('x-request-id'));
    }
  });

  it('a partial batch whose first write fails inside its transaction still names the request on the events after it', async () => {
    const target = (await acme.post('/customers', { name: 'Versioned' })).body;
    const response = await acme.post('/customers/batch', {
      mode: 'partial',
      items: [
        { op: 'update', id: target.id, data: { name: 'Stale' }, if_match: 9 },
        { op: 'create', data: { name: 'After the stale one' } },
      ],
    });
    expect(response.body.results.map((r: { status: number }) => r.status)).toEqual([412, 201]);
    const [created] = (await acme.get(`/customers/${response.body.results[1].record.id}/events`)).body.data;
    expect(created.request_id).toBe(response.headers.get('x-request-id'));
  });

  it('bounds and malformed bodies are 400s; Idempotency-Key covers the whole call; a dry run writes nothing', async () => {
    const many = await acme.post('/customers/batch', { items: Array.from({ length: 101 }, (_, i) => ({ op: 'create', data: { name: `N${i}` } })) });
    expect(many.status).toBe(400);
    expect(many.body.errors).toEqual([{ param: 'items', message: 'must hold 1 to 100 items' }]);
    const malformed = await acme.post('/customers/batch', { items: [{ op: 'merge' }, 'x'], extra: 1 });
    expect(malformed.body.errors.map((e: { param: string }) => e.param)).toEqual(['extra', 'items[0].op', 'items[1]']);
    const total = await count('/customers');
    const body = { items: [{ op: 'create', data: { name: 'Once' } }, { op: 'create', data: { name: 'Twice' } }] };
    const first = await acme.post('/customers/batch', body, { 'idempotency-key': 'batch-1' });
    const again = await acme.post('/customers/batch', body, { 'idempotency-key': 'batch-1' });
    expect(again.body).toEqual(first.body);
    expect(await count('/customers')).toBe(total + 2);
    const dry = await acme.post('/customers/batch', body, { prefer: 'dry-run' });
    expect(dry.status).toBe(200);
    expect(dry.headers.get('dry-run')).toBe('true');
    expect(await count('/customers')).toBe(total + 2);
  });

  it('GraphQL batch<Type>s takes the same items', async () => {
    const data = await gql(api, api.keys.acme!, `mutation { batchJobs(mode: partial, items: [
      { op: create, data: { customerId: "nope", title: "x" } },
      { op: upsert, externalId: "job-9", data: { customerId: "${(await acme.get('/customers?limit=1')).body.data[0].id}", title: "Upserted" } }
    ]) { results { index status record { title externalId } error { code errors { param } } } } }`);
    expect(data.batchJobs.results).toEqual([
      { index: 0, status: 400, record: null, error: { code: 'BAD_REQUEST', errors: [{ param: 'customerId' }] } },
      { index: 1, status: 201, record: { title: 'Upserted', externalId: 'job-9' }, error: null },
    ]);
  });

  it('a batch counts one rate-limit unit per ten items', async () => {
    const remaining = async (response: Promise<{ headers: Headers }>) => Number((await response).headers.get('ratelimit-remaining'));
    const before = await remaining(acme.get('/customers?limit=1'));
    const after = await remaining(acme.post('/customers/batch', { mode: 'partial', items: Array.from({ length: 25 }, (_, i) => ({ op: 'create', data: { name: `Unit ${i}` } })) }));
    // The GET took one; the batch of 25 takes three.
    expect(before - after).toBe(3);
  });

  it("a batch update of a resource that takes none is that item's 400, naming op", async () => {
    const customer = (await acme.get('/customers?limit=1')).body.data[0].id;
    const email = (await acme.post('/emails', { customer_id: customer, type: 'incoming', from: 'a@x.example', to: 'b@x.example', subject: 'Hi' })).body.id;
    const response = await acme.post('/emails/batch', { mode: 'partial', items: [{ op: 'update', id: email, data: { subject: 'x' } }] });
    expect(response.status).toBe(200);
    expect(response.body.results[0]).toMatchObject({ status: 400, error: { code: 'BAD_REQUEST', errors: [{ param: 'op', message: 'email records cannot be updated' }] } });
    expect((await acme.post('/customers', { name: 'No metadata', metadata: null })).status).toBe(201);
  });

  it('review findings stay fixed: odd item keys and versions are 400s; a record that cannot change refuses a second upsert', async () => {
    for (const key of ['constructor', 'toString', '__proto__']) {
      const response = await call(`${api.url}/v1/customers/batch`, { method: 'POST', key: api.keys.acme, headers: { 'content-type': 'application/json' }, body: `{"items":[{"op":"create","data":{"name":"B"},"${key}":1}]}` });
      expect(response.status, key).toBe(400);
      expect(response.body.errors[0].param).toBe(`items[0].${key}`);
    }
    const customer = (await acme.get('/customers?limit=1')).body.data[0].id;
    const overflow = await acme.post('/customers/batch', { items: [{ op: 'update', id: customer, data: { name: 'B' }, if_match: 1e10 }] });
    expect(overflow.status).toBe(400);
    expect(overflow.body.errors).toEqual([{ param: 'items[0].if_match', message: 'must be a version number' }]);
    const first = await put('/emails/by_external_id/mail-1', { customer_id: customer, type: 'incoming', from: 'a@x.example', to: 'b@x.example', subject: 'one' });
    expect(first.status).toBe(201);
    const second = await put('/emails/by_external_id/mail-1', { customer_id: customer, type: 'incoming', from: 'a@x.example', to: 'b@x.example', subject: 'two' });
    expect(second.status).toBe(409);
    expect(second.body.detail).toContain(first.body.id);
    expect((await acme.get(`/emails/${first.body.id}`)).body.subject).toBe('one');
    expect((await acme.post('/customers', { name: 'P', metadata: { __proto__: 'x' } as Record<string, string> })).status).toBe(201);
    const proto = await call(`${api.url}/v1/customers`, { method: 'POST', key: api.keys.acme, headers: { 'content-type': 'application/json' }, body: '{"name":"P","metadata":{"__proto__":"x","z":"1"}}' });
    expect(proto.status).toBe(400);
    expect(proto.body.errors).toEqual([{ param: 'metadata.__proto__', message: 'is a reserved name' }]);
    for (const query of ['external_id=', 'email=%20']) {
      const blank = await acme.get(`/customers?${query}`);
      expect(blank.status, query).toBe(400);
      expect(blank.body.errors[0].message).toBe('must not be blank');
    }
  });
});

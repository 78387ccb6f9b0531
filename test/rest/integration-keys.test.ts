// external_id and metadata on every resource (CONTRACT section 10): set on create, changed on
// PATCH (metadata merged key by key), unique among live records (409 naming the holder),
// filterable, and carried by events.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, gql, rest, startApi, type Api } from '../helpers/api.js';
import { DB_KINDS } from '../helpers/databases.js';

describe.each(DB_KINDS)('external ids and metadata on %s', (kind) => {
  let api: Api;
  let acme: ReturnType<typeof rest>;
  let customer: string;
  let job: string;

  beforeAll(async () => {
    api = await startApi(kind, { acme: { org: 'Acme' }, other: { org: 'Other' } });
    acme = rest(api, api.keys.acme!);
    customer = (await acme.post('/customers', { name: 'Ada', external_id: 'hub-1', metadata: { source: 'hubspot', tier: 'gold' } })).body.id;
    job = (await acme.post('/jobs', { customer_id: customer, title: 'Boiler', external_id: 'job-1' })).body.id;
  });
  afterAll(() => api.stop());

  it('every resource takes them on create and answers them', async () => {
    const created = {
      customer: (await acme.get(`/customers/${customer}`)).body,
      job: (await acme.get(`/jobs/${job}`)).body,
      invoice: (await acme.post('/invoices', { customer_id: customer, currency: 'EUR', external_id: 'inv-1', metadata: { a: '1' }, line_items: [{ description: 'x', quantity: 1, unit_amount: 100 }] })).body,
      estimate: (await acme.post('/estimates', { customer_id: customer, currency: 'EUR', external_id: 'est-1', metadata: { a: '1' }, line_items: [{ description: 'x', quantity: 1, unit_amount: 100 }] })).body,
      proposal: (await acme.post('/proposals', { customer_id: customer, title: 'P', total_amount: 5, currency: 'EUR', external_id: 'pro-1', metadata: { a: '1' } })).body,
      email: (await acme.post('/emails', { customer_id: customer, type: 'incoming', from: 'a@x.example', to: 'b@x.example', subject: 'Hi', external_id: 'mail-1', metadata: { a: '1' } })).body,
    };
    expect(created.customer).toMatchObject({ external_id: 'hub-1', metadata: { source: 'hubspot', tier: 'gold' } });
    expect(created.job).toMatchObject({ external_id: 'job-1', metadata: {} });
    for (const [name, record] of Object.entries(created).slice(2)) expect(record, name).toMatchObject({ external_id: expect.stringMatching(/-1$/), metadata: { a: '1' } });
    const graphql = await gql(api, api.keys.acme!, `{ customer(id: "${customer}") { externalId metadata } }`);
    expect(graphql.customer).toEqual({ externalId: 'hub-1', metadata: { source: 'hubspot', tier: 'gold' } });
  });

  it('PATCH merges metadata key by key (null removes one) and sets or clears external_id', async () => {
    const patched = await call(`${api.url}/v1/customers/${customer}`, { method: 'PATCH', key: api.keys.acme, json: { metadata: { tier: null, region: 'eu' }, external_id: 'hub-1b' } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body).toMatchObject({ external_id: 'hub-1b', metadata: { source: 'hubspot', region: 'eu' } });
    expect(Object.keys(patched.body.metadata).sort()).toEqual(['region', 'source']);
    const events = await acme.get(`/customers/${customer}/events?limit=1`);
    expect(events.body.data[0].data.object).toMatchObject({ external_id: 'hub-1b', metadata: { source: 'hubspot', region: 'eu' } });
    expect(events.body.data[0].data.previous_attributes).toMatchObject({ external_id: 'hub-1', metadata: { source: 'hubspot', tier: 'gold' } });
    // A sent invoice's content is frozen, not its integration keys.
    const invoice = (await acme.post('/invoices', { customer_id: customer, currency: 'EUR', line_items: [{ description: 'x', quantity: 1, unit_amount: 100 }] })).body.id;
    await acme.post(`/invoices/${invoice}/send`);
    expect((await acme.patch(`/invoices/${invoice}`, { metadata: { synced: 'yes' } })).status).toBe(200);
    expect((await acme.patch(`/invoices/${invoice}`, { currency: 'USD' })).status).toBe(409);
  });

  it('concurrent metadata patches of different keys all hold', async () => {
    const id = (await acme.post('/customers', { name: 'Many' })).body.id;
    await Promise.all(Array.from({ length: 8 }, (_, i) => acme.patch(`/customers/${id}`, { metadata: { [`k${i}`]: String(i) } })));
    const record = (await acme.get(`/customers/${id}`)).body;
    expect(Object.keys(record.metadata).sort()).toEqual(['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7']);
    expect(record.version).toBe(9);
  });

  it('an external id is unique among live records: 409 naming the holder; deleted ones release it, and come back only if it is free', async () => {
    const first = (await acme.post('/customers', { name: 'One', external_id: 'dup' })).body.id;
    const clash = await acme.post('/customers', { name: 'Two', external_id: 'dup' });
    expect(clash.status).toBe(409);
    expect(clash.body.errors).toEqual([{ param: 'external_id', message: `is already the external id of customer ${first}` }]);
    expect(clash.body.detail).toContain(first);
    // Another organization and another resource have their own.
    expect((await rest(api, api.keys.other!).post('/customers', { name: 'Two', external_id: 'dup' })).status).toBe(201);
    expect((await acme.post('/jobs', { customer_id: customer, title: 'x', external_id: 'dup' })).status).toBe(201);
    expect((await acme.patch(`/customers/${customer}`, { external_id: 'dup' })).status).toBe(409);
    expect((await acme.delete(`/customers/${first}`)).status).toBe(204);
    const second = (await acme.post('/customers', { name: 'Two', external_id: 'dup' })).body.id;
    const restore = await acme.post(`/customers/${first}/restore`);
    expect(restore.status).toBe(409);
    expect(restore.body.detail).toContain(second);
  });

  it('filters: external_id= and metadata[key]=value, on REST and GraphQL', async () => {
    const ids = async (path: string) => (await acme.get(path)).body.data.map((r: { id: string }) => r.id);
    expect(await ids('/customers?external_id=hub-1b')).toEqual([customer]);
    expect(await ids('/customers?metadata[source]=hubspot&metadata[region]=eu')).toEqual([customer]);
    expect(await ids('/customers?metadata[source]=salesforce')).toEqual([]);
    expect(await ids('/jobs?customer[metadata][region]=eu&external_id=job-1')).toEqual([job]);
    const data = await gql(api, api.keys.acme!, '{ customers(where: { metadata: { region: "eu" } }) { data { id } } }');
    expect(data.customers.data).toEqual([{ id: customer }]);
    expect((await acme.get('/customers?metadata=x')).body.errors[0].param).toBe('metadata');
  });

  it('bad keys and values are 400s naming each', async () => {
    const response = await acme.post('/customers', { name: 'X', external_id: '', metadata: { 'bad key': 'x', long: 'y'.repeat(501), n: 1 } });
    expect(response.status).toBe(400);
    expect(response.body.errors.map((e: { param: string }) => e.param).sort()).toEqual(['external_id', 'metadata.bad key', 'metadata.long', 'metadata.n']);
    const many = await acme.post('/customers', { name: 'X', metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v'])) });
    expect(many.body.errors).toEqual([{ param: 'metadata', message: 'must have at most 50 keys' }]);
    expect((await acme.post('/customers', { name: 'X', metadata: ['a'] })).body.errors).toEqual([{ param: 'metadata', message: 'must be an object of string values' }]);
    expect((await acme.post('/customers', { name: 'X', external_id: 'e'.repeat(256) })).status).toBe(400);
  });
});

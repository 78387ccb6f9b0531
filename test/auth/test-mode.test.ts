// Test mode (CONTRACT section 10): svc_test_ keys work in their organization's test twin.
// Records, numbers, events, webhooks and limits of one mode are never seen from the other.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gql, rest, startApi, type Api } from '../helpers/api.js';
import { DB_KINDS } from '../helpers/databases.js';

describe.each(DB_KINDS)('test mode on %s', (kind) => {
  let api: Api;
  let live: ReturnType<typeof rest>;
  let test: ReturnType<typeof rest>;

  beforeAll(async () => {
    api = await startApi(kind, { live: { org: 'Acme' }, test: { org: 'Acme', mode: 'test' }, test2: { org: 'Acme', mode: 'test', scopes: 'customers:read' } }, { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
    live = rest(api, api.keys.live!);
    test = rest(api, api.keys.test!);
  });
  afterAll(() => api.stop());

  it('test keys are svc_test_ and work like live ones', async () => {
    expect(api.keys.test).toMatch(/^svc_test_[0-9A-Za-z]{32}$/);
    expect(api.keys.live).toMatch(/^svc_live_/);
    expect((await test.get('/customers')).status).toBe(200);
  });

  it('neither mode sees the other\'s records, numbers or events', async () => {
    const liveCustomer = (await live.post('/customers', { name: 'Live Ada', external_id: 'same' })).body.id;
    const liveInvoice = (await live.post('/invoices', { customer_id: liveCustomer, currency: 'EUR', line_items: [{ description: 'x', quantity: 1, unit_amount: 1 }] })).body;
    const testCustomer = (await test.post('/customers', { name: 'Test Ada', external_id: 'same' }));
    expect(testCustomer.status).toBe(201);
    const testInvoice = (await test.post('/invoices', { customer_id: testCustomer.body.id, currency: 'EUR', line_items: [{ description: 'x', quantity: 1, unit_amount: 1 }] })).body;
    // Test numbering starts at its own first number.
    expect(liveInvoice.number).toBe('INV-000001');
    expect(testInvoice.number).toBe('INV-000001');
    expect((await test.get('/customers')).body.data.map((c: { name: string }) => c.name)).toEqual(['Test Ada']);
    expect((await live.get('/customers')).body.data.map((c: { name: string }) => c.name)).toEqual(['Live Ada']);
    expect((await test.get(`/customers/${liveCustomer}`)).status).toBe(404);
    expect((await live.get(`/invoices/${testInvoice.id}`)).status).toBe(404);
    // A live id named as a reference from test mode is no record of its organization.
    expect((await test.post('/jobs', { customer_id: liveCustomer, title: 'x' })).status).toBe(400);
    const testEvents = (await test.get('/events')).body.data;
    expect(testEvents.map((e: { type: string }) => e.type).sort()).toEqual(['customer.created', 'invoice.created']);
    expect(testEvents.every((e: { data: { object: { id: string } } }) => [testCustomer.body.id, testInvoice.id].includes(e.data.object.id))).toBe(true);
    const seqs = testEvents.map((e: { seq: number }) => e.seq).sort();
    expect(seqs).toEqual([1, 2]);
    const graphql = await gql(api, api.keys.test2!, '{ customers { data { name } } }');
    expect(graphql.customers.data).toEqual([{ name: 'Test Ada' }]);
  });

  it('webhook endpoints are per mode', async () => {
    const created = await test.post('/webhook_endpoints', { url: 'http://127.0.0.1:9/test-hook' });
    expect(created.status).toBe(201);
    expect((await live.get('/webhook_endpoints')).body.data).toEqual([]);
    expect((await test.get('/webhook_endpoints')).body.data.map((e: { id: string }) => e.id)).toEqual([created.body.id]);
  });
});

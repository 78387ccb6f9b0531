// REST errors in REST's words, every fault of a body in one answer, and search as a plain
// substring match.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, rest, startApi, type Api } from '../helpers/api.js';
import { DB_KINDS } from '../helpers/databases.js';

describe.each(DB_KINDS)('REST errors on %s', (kind) => {
  let api: Api;
  let acme: ReturnType<typeof rest>;

  beforeAll(async () => {
    api = await startApi(kind, { acme: { org: 'Acme' }, reader: { org: 'Acme', scopes: 'customers:read' } });
    acme = rest(api, api.keys.acme!);
    for (const name of ['Katherine Berners-Lee', 'Ada 100% Lovelace', 'Grace_Hopper']) expect((await acme.post('/customers', { name })).status).toBe(201);
  });
  afterAll(() => api.stop());

  it('search matches % and _ literally', async () => {
    const names = async (search: string) => (await acme.get(`/customers?search=${encodeURIComponent(search)}`)).body.data.map((c: { name: string }) => c.name);
    expect(await names('%')).toEqual(['Ada 100% Lovelace']);
    expect(await names('a%b')).toEqual([]);
    expect(await names('_')).toEqual(['Grace_Hopper']);
    expect(await names('e_s')).toEqual([]);
    expect(await names('\\')).toEqual([]);
    const count = await call(`${api.url}/graphql`, { method: 'POST', key: api.keys.acme, json: { query: '{ customerCount(search: "%") }' } });
    expect(count.body.data.customerCount).toBe(1);
  });

  it('a body with type and rule faults names every field at once, in snake_case and plain words', async () => {
    const customer = (await acme.get('/customers?limit=1')).body.data[0];
    const response = await acme.post('/invoices', {
      customer_id: customer.id,
      currency: 'usd',
      line_items: [{ description: '', quantity: 'two', unit_amount: 100 }, { description: 'ok', quantity: 1, unit_amount: 1.5 }],
      colour: 'red',
    });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('BAD_REQUEST');
    expect(response.body.errors).toEqual(
      expect.arrayContaining([
        { param: 'colour', message: 'is not a known field' },
        { param: 'line_items[0].quantity', message: 'must be a whole number from -2147483648 to 2147483647' },
        { param: 'line_items[1].unit_amount', message: 'must be a whole number from -2147483648 to 2147483647' },
        { param: 'currency', message: 'must be an ISO 4217 currency code such as USD' },
        { param: 'line_items[0].description', message: 'must not be blank' },
      ]),
    );
    expect(response.body.errors).toHaveLength(5);
    expect(response.body.detail).not.toMatch(/lineItems|unitAmount|cannot represent|Int|String/);
    expect(response.body.detail).toContain('line_items[0].quantity');
  });

  it('a wrongly typed field is named once, with what it must be', async () => {
    const response = await acme.post('/customers', { name: 42, email: 'not-an-address', phone: false });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([
      { param: 'name', message: 'must be a string' },
      { param: 'phone', message: 'must be a string' },
      { param: 'email', message: 'must be a valid e-mail address' },
    ]);
  });

  it('a single object where a list of lines is expected names each missing field of the line (found by the fuzz test)', async () => {
    for (const path of ['/invoices', '/estimates']) {
      const response = await acme.post(path, { line_items: {} });
      expect(response.status, path).toBe(400);
      expect(response.body.errors.map((e: { param: string }) => e.param)).toEqual(
        expect.arrayContaining(['customer_id', 'currency', 'line_items.description', 'line_items.quantity', 'line_items.unit_amount']),
      );
    }
  });

  it.each([
    ['/customers', { name: 42 }],
    ['/jobs', { title: ['x'], customer_id: '00000000-0000-4000-8000-000000000000' }],
    ['/invoices', { currency: 'EUR', customer_id: 7, line_items: [{ description: 'x', quantity: 1, unit_amount: 1 }] }],
  ])('POST %s with a type fault creates nothing', async (path, body) => {
    const before = (await acme.get(`${path}?limit=1`)).body.pagination.total;
    expect((await acme.post(path, body)).status).toBe(400);
    expect((await acme.get(`${path}?limit=1`)).body.pagination.total).toBe(before);
  });

  it('a missing scope is named in REST terms', async () => {
    const response = await call(`${api.url}/v1/jobs`, { key: api.keys.reader });
    expect(response.status).toBe(403);
    expect(response.body.detail).toBe('This API key lacks the scope jobs:read.');
  });

  it('a body that is not UTF-8 is refused, not repaired', async () => {
    const response = await fetch(`${api.url}/v1/customers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${api.keys.acme}`, 'content-type': 'application/json' },
      body: Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
    });
    expect(response.status).toBe(400);
    expect((await response.json()).errors).toEqual([{ param: 'body', message: 'is not valid UTF-8' }]);
  });
});

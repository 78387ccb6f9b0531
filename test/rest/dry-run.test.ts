// `Prefer: dry-run` on every write (CONTRACT section 10): the status and body the real call
// gives, `Dry-Run: true`, and a database left byte for byte as it was: records, numbers,
// change sequences, counts, events, deliveries and idempotency rows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, rest, startApi, type Api } from '../helpers/api.js';
import { DB_KINDS } from '../helpers/databases.js';

const DRY = { prefer: 'dry-run' };

describe.each(DB_KINDS)('dry runs on %s', (kind) => {
  let api: Api;
  let acme: ReturnType<typeof rest>;
  let customer: string;
  let draft: { id: string; number: string };

  /**
   * Every table's rows, as one fingerprint per table. The delivery loop works on the real
   * changes' deliveries meanwhile (attempts, next times): deliveries count by their ids, and
   * attempts follow from deliveries.
   */
  async function snapshot(): Promise<Record<string, string>> {
    // The request log records a dry run like any request: it is the request's trace, not its effect.
    const tables = await api.server.sql.query<{ name: string }>(`SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' AND tablename NOT IN ('webhook_attempts', 'request_logs') ORDER BY 1`);
    const prints: Record<string, string> = {};
    for (const { name } of tables) {
      const rows = name === 'webhook_deliveries' ? '(SELECT id FROM webhook_deliveries)' : `"${name}"`;
      const [row] = await api.server.sql.query<{ print: string }>(`SELECT count(*) || ':' || coalesce(md5(string_agg(t::text, '|' ORDER BY t::text)), '') AS print FROM ${rows} t`);
      prints[name] = row!.print;
    }
    return prints;
  }

  /** The dry run of a write, then the database unchanged; answers the dry run's response. */
  async function unchangedBy(send: () => Promise<{ status: number; headers: Headers; body: any }>) {
    const before = await snapshot();
    const response = await send();
    expect(response.headers.get('dry-run')).toBe('true');
    expect(await snapshot()).toEqual(before);
    return response;
  }

  beforeAll(async () => {
    api = await startApi(kind, { acme: { org: 'Acme' } }, { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
    acme = rest(api, api.keys.acme!);
    customer = (await acme.post('/customers', { name: 'Ada', email: 'ada@x.example' })).body.id;
    draft = (await acme.post('/invoices', { customer_id: customer, currency: 'EUR', line_items: [{ description: 'Visit', quantity: 1, unit_amount: 9900 }] })).body;
    // A webhook endpoint: a real change would queue a delivery for it.
    await acme.post('/webhook_endpoints', { url: 'http://127.0.0.1:9/hook' });
  });
  afterAll(() => api.stop());

  it('a create answers 201 and the record it would make, number included, and makes nothing', async () => {
    const dry = await unchangedBy(() => acme.post('/invoices', { customer_id: customer, currency: 'EUR', line_items: [{ description: 'Visit', quantity: 2, unit_amount: 5000 }] }, DRY));
    expect(dry.status).toBe(201);
    expect(dry.body).toMatchObject({ status: 'draft', total_amount: 10000, version: 1, customer_id: customer });
    expect(dry.headers.get('location')).toBe(`/v1/invoices/${dry.body.id}`);
    expect((await acme.get(`/invoices/${dry.body.id}`)).status).toBe(404);
    // The number was not taken: the real create gets the same one.
    const real = await acme.post('/invoices', { customer_id: customer, currency: 'EUR', line_items: [{ description: 'Visit', quantity: 2, unit_amount: 5000 }] });
    expect(real.body.number).toBe(dry.body.number);
    expect(real.headers.get('dry-run')).toBeNull();
  });

  it('updates, transitions, deletes and restores answer as the real call would', async () => {
    const patch = await unchangedBy(() => call(`${api.url}/v1/customers/${customer}`, { method: 'PATCH', key: api.keys.acme, json: { name: 'Ada L.' }, headers: DRY }));
    expect(patch.status).toBe(200);
    expect(patch.body).toMatchObject({ name: 'Ada L.', version: 2 });
    expect((await acme.get(`/customers/${customer}`)).body).toMatchObject({ name: 'Ada', version: 1 });
    const send = await unchangedBy(() => acme.post(`/invoices/${draft.id}/send`, undefined, DRY));
    expect(send.status).toBe(200);
    expect(send.body).toMatchObject({ status: 'sent', version: 2 });
    const remove = await unchangedBy(() => acme.delete(`/invoices/${draft.id}`, DRY));
    expect(remove.status).toBe(204);
    expect((await acme.get(`/invoices/${draft.id}`)).status).toBe(200);
    // Refusals are the real ones: 409 for a customer with invoices, 412 for a stale version.
    const refused = await unchangedBy(() => acme.delete(`/customers/${customer}`, DRY));
    expect(refused.status).toBe(409);
    const stale = await unchangedBy(() => call(`${api.url}/v1/customers/${customer}`, { method: 'PATCH', key: api.keys.acme, json: { name: 'X' }, headers: { ...DRY, 'if-match': '"7"' } }));
    expect(stale.status).toBe(412);
    const invalid = await unchangedBy(() => acme.post('/customers', { name: '' }, DRY));
    expect(invalid.status).toBe(400);
  });

  it('keeps no Idempotency-Key: the real call with the same key runs afterwards', async () => {
    const headers = { ...DRY, 'idempotency-key': 'dry-then-real' };
    const dry = await unchangedBy(() => acme.post('/customers', { name: 'Grace' }, headers));
    expect(dry.status).toBe(201);
    const real = await acme.post('/customers', { name: 'Grace' }, { 'idempotency-key': 'dry-then-real' });
    expect(real.status).toBe(201);
    expect(real.body.id).not.toBe(dry.body.id);
    expect(real.headers.get('idempotent-replayed')).toBeNull();
  });

  it('GraphQL mutations take the same header', async () => {
    const response = await unchangedBy(() =>
      call(`${api.url}/graphql`, { method: 'POST', key: api.keys.acme, headers: DRY, json: { query: 'mutation { createCustomer(input: { name: "Linus" }) { id name version } }' } }),
    );
    expect(response.status).toBe(200);
    expect((response.body as { data: { createCustomer: { name: string } } }).data.createCustomer).toMatchObject({ name: 'Linus', version: 1 });
  });

  it('webhook endpoints: a create is dry too; a test delivery cannot be (it would have to send)', async () => {
    const created = await unchangedBy(() => acme.post('/webhook_endpoints', { url: 'http://127.0.0.1:9/other' }, DRY));
    expect(created.status).toBe(201);
    expect((created.body as { secret: string }).secret).toMatch(/^whsec_/);
    const endpoints = (await acme.get('/webhook_endpoints')).body.data;
    expect(endpoints).toHaveLength(1);
    const test = await unchangedBy(() => acme.post(`/webhook_endpoints/${endpoints[0].id}/test`, undefined, DRY));
    expect(test.status).toBe(400);
    expect((test.body as { errors: unknown }).errors).toEqual([{ param: 'prefer', message: 'a test delivery cannot be a dry run: it is sent, or nothing is' }]);
  });
});

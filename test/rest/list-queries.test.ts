// Lists that answer what screens ask (CONTRACT section 10): order_by, ranges, sets, exact
// values, search, relation filters, expand and fields, on REST and GraphQL, over fixtures
// whose expected ids and order are known.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, gql, rest, startApi, type Api } from '../helpers/api.js';
import { DB_KINDS } from '../helpers/databases.js';

describe.each(DB_KINDS)('lists on %s', (kind) => {
  let api: Api;
  let acme: ReturnType<typeof rest>;
  const c: Record<string, string> = {};
  const inv: Record<string, string> = {};
  const job: Record<string, string> = {};

  const ids = async (path: string) => {
    const response = await acme.get(path);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return (response.body.data as Array<{ id: string }>).map((r) => r.id);
  };
  const invoice = async (name: string, customer: string, total: number, due: string | null, moves: string[] = []) => {
    const created = await acme.post('/invoices', { customer_id: c[customer], currency: 'EUR', due_date: due ?? undefined, line_items: [{ description: name, quantity: 1, unit_amount: total }] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    inv[name] = created.body.id;
    for (const move of moves) expect((await acme.post(`/invoices/${created.body.id}/${move}`)).status).toBe(200);
  };

  beforeAll(async () => {
    api = await startApi(kind, {
      acme: { org: 'Acme' },
      other: { org: 'Other Co' },
      invoicesOnly: { org: 'Acme', scopes: 'invoices:read' },
      customersOnly: { org: 'Acme', scopes: 'customers:read' },
    });
    acme = rest(api, api.keys.acme!);
    for (const [name, email] of [['Bob', 'bob@x.example'], ['Ada', 'ada@x.example'], ['Cy', null], ['Dee', 'dee@acme.example']] as const) {
      c[name] = (await acme.post('/customers', { name, ...(email ? { email } : {}) })).body.id;
    }
    // Another organization's look-alikes never match nor appear.
    const other = rest(api, api.keys.other!);
    const otherAda = (await other.post('/customers', { name: 'Ada', email: 'ada@x.example' })).body.id;
    await other.post(`/invoices/${(await other.post('/invoices', { customer_id: otherAda, currency: 'EUR', line_items: [{ description: 'x', quantity: 1, unit_amount: 1 }] })).body.id}/send`);

    await invoice('A1', 'Ada', 5000, '2026-12-10');
    await invoice('A2', 'Ada', 12000, '2026-11-01', ['send']);
    await invoice('A3', 'Ada', 300, null, ['send']);
    await invoice('B1', 'Bob', 9000, '2026-10-01', ['send', 'pay']);
    await invoice('C1', 'Cy', 12000, '2026-11-15', ['send']);
    for (const [name, customer, at] of [['boiler', 'Ada', '2026-12-01T09:00:00Z'], ['fence', 'Bob', '2026-12-03T09:00:00Z'], ['roof', 'Cy', null]] as const) {
      job[name] = (await acme.post('/jobs', { customer_id: c[customer], title: `Job ${name}`, ...(at ? { scheduled_at: at } : {}) })).body.id;
    }
  });
  afterAll(() => api.stop());

  it('order_by sorts by one field or several, descending with -, nulls last either way, id breaking ties', async () => {
    expect(await ids('/customers?order_by=name')).toEqual([c.Ada, c.Bob, c.Cy, c.Dee]);
    expect(await ids('/customers?order_by=-name')).toEqual([c.Dee, c.Cy, c.Bob, c.Ada]);
    expect(await ids('/customers?order_by=email')).toEqual([c.Ada, c.Bob, c.Dee, c.Cy]);
    expect(await ids('/customers?order_by=-email')).toEqual([c.Dee, c.Bob, c.Ada, c.Cy]);
    expect(await ids('/invoices?order_by=due_date')).toEqual([inv.B1, inv.A2, inv.C1, inv.A1, inv.A3]);
    expect(await ids('/invoices?order_by=-due_date')).toEqual([inv.A1, inv.C1, inv.A2, inv.B1, inv.A3]);
    // Equal totals (A2, C1): the second key decides.
    expect(await ids('/invoices?order_by=-total_amount,due_date')).toEqual([inv.A2, inv.C1, inv.B1, inv.A1, inv.A3]);
    expect(await ids('/invoices?order_by=-total_amount,-due_date')).toEqual([inv.C1, inv.A2, inv.B1, inv.A1, inv.A3]);
    const [first, second] = [inv.A2, inv.C1].sort();
    expect(await ids('/invoices?order_by=total_amount&total_amount[gte]=12000')).toEqual([first, second]);
    expect(await ids('/invoices?order_by=-total_amount&total_amount[gte]=12000')).toEqual([second, first]);
    // Enumerations sort in their declared order: draft, sent, paid.
    expect((await acme.get('/invoices?order_by=status,number')).body.data.map((r: { status: string }) => r.status)).toEqual(['draft', 'sent', 'sent', 'sent', 'paid']);
    expect(await ids('/jobs?order_by=scheduled_at')).toEqual([job.boiler, job.fence, job.roof]);
  });

  it('ranges, sets and exact values filter, and total counts what matches', async () => {
    const overdue = await acme.get('/invoices?status=sent&due_date[lt]=2026-11-20&order_by=due_date');
    expect(overdue.body.data.map((r: { id: string }) => r.id)).toEqual([inv.A2, inv.C1]);
    expect(overdue.body.pagination.total).toBe(2);
    expect(await ids('/invoices?status=draft,paid&order_by=number')).toEqual([inv.A1, inv.B1]);
    expect(await ids('/invoices?total_amount[gte]=5000&total_amount[lt]=12000&order_by=total_amount')).toEqual([inv.A1, inv.B1]);
    expect(await ids('/invoices?total_amount=300')).toEqual([inv.A3]);
    expect(await ids('/jobs?scheduled_at[gte]=2026-12-01T00:00:00Z&scheduled_at[lt]=2026-12-02T00:00:00Z')).toEqual([job.boiler]);
    expect(await ids('/customers?email=bob@x.example')).toEqual([c.Bob]);
    expect(await ids(`/invoices?customer_id=${c.Ada}&order_by=number`)).toEqual([inv.A1, inv.A2, inv.A3]);
    expect((await acme.get('/invoices?status=sent')).body.pagination.total).toBe(3);
    expect((await acme.get('/invoices?status=sent,paid')).body.pagination.total).toBe(4);
  });

  it('search reads each list’s own fields', async () => {
    expect(await ids('/customers?search=ACME.example')).toEqual([c.Dee]);
    expect(await ids('/jobs?search=BOILER')).toEqual([job.boiler]);
    const number = (await acme.get(`/invoices/${inv.B1}`)).body.number as string;
    expect(await ids(`/invoices?search=${number.slice(-3)}`)).toContain(inv.B1);
  });

  it('relation filters: customers with at least one matching child, children whose customer matches', async () => {
    expect(await ids('/customers?invoices[status]=sent&order_by=name')).toEqual([c.Ada, c.Cy]);
    expect(await ids('/customers?invoices[due_date][lt]=2026-11-10&order_by=name')).toEqual([c.Ada, c.Bob]);
    expect(await ids('/customers?jobs[scheduled_at][gte]=2026-12-02T00:00:00Z')).toEqual([c.Bob]);
    expect(await ids('/invoices?customer[search]=ada&order_by=number')).toEqual([inv.A1, inv.A2, inv.A3]);
    expect(await ids('/invoices?customer[email]=bob@x.example')).toEqual([inv.B1]);
    // Only this organization's records match (another has an Ada with a sent invoice).
    expect((await acme.get('/customers?invoices[status]=sent')).body.pagination.total).toBe(2);
  });

  it('expand answers the referenced record beside its id, on lists and items; fields answers only those', async () => {
    const list = await acme.get(`/invoices?expand=customer&order_by=number&limit=1`);
    expect(list.body.data[0].customer).toMatchObject({ id: c.Ada, name: 'Ada', email: 'ada@x.example' });
    expect(list.body.data[0].customer_id).toBe(c.Ada);
    const item = await acme.get(`/jobs/${job.boiler}?expand[]=customer`);
    expect(item.status).toBe(200);
    expect(item.body.customer).toMatchObject({ id: c.Ada, name: 'Ada' });
    const sparse = await acme.get('/customers?fields=name&order_by=name&limit=2');
    expect(sparse.body.data).toEqual([{ id: c.Ada, name: 'Ada' }, { id: c.Bob, name: 'Bob' }]);
    const both = await acme.get(`/invoices/${inv.B1}?fields=number,total_amount&expand=customer`);
    expect(Object.keys(both.body).sort()).toEqual(['customer', 'id', 'number', 'total_amount']);
    // A sparse record keeps its ETag, and a sync with fields= still sees deletions as tombstones.
    const full = await acme.get(`/invoices/${inv.B1}`);
    expect(both.headers.get('etag')).toBe(full.headers.get('etag'));
    expect((await acme.get(`/invoices/${inv.B1}?fields=number`, { 'if-none-match': full.headers.get('etag')! })).status).toBe(304);
    const gone = (await acme.post('/customers', { name: 'Gone' })).body.id;
    expect((await acme.delete(`/customers/${gone}`)).status).toBe(204);
    const sync = await acme.get('/customers?fields=name&include_deleted=true&limit=100');
    expect(sync.body.data.find((r: { id: string }) => r.id === gone)).toEqual({ id: gone, deleted: true, deleted_at: expect.any(String), version: 2 });
    expect(sync.body.data.find((r: { id: string }) => r.id === c.Ada)).toEqual({ id: c.Ada, name: 'Ada' });
  });

  it('expand and relation filters need the referenced read scope: 403 naming it', async () => {
    const invoicesOnly = rest(api, api.keys.invoicesOnly!);
    const expanded = await invoicesOnly.get('/invoices?expand=customer');
    expect(expanded.status).toBe(403);
    expect(expanded.body.detail).toContain('customers:read');
    const filtered = await invoicesOnly.get('/invoices?customer[search]=ada');
    expect(filtered.status).toBe(403);
    expect(filtered.body.detail).toContain('customers:read');
    const byInvoices = await rest(api, api.keys.customersOnly!).get('/customers?invoices[status]=sent');
    expect(byInvoices.status).toBe(403);
    expect(byInvoices.body.detail).toContain('invoices:read');
  });

  it('unknown fields, operators and values are a 400 naming each parameter as sent, at once', async () => {
    const response = await acme.get('/invoices?order_by=colour&total_amount[between]=1&status=lost&due_date[lt]=soon&fields=id,colour&expand=owner&customer[invoices][status]=sent&nope=1');
    expect(response.status).toBe(400);
    expect(response.body.errors.map((e: { param: string }) => e.param).sort()).toEqual(
      ['customer[invoices][status]', 'due_date[lt]', 'expand', 'fields', 'nope', 'order_by', 'status', 'total_amount[between]'].sort(),
    );
    expect(response.body.errors.find((e: { param: string }) => e.param === 'order_by').message).toContain('due_date');
    expect((await acme.get('/invoices?order_by=due_date,-due_date')).status).toBe(400);
    expect((await acme.get('/invoices?customer_id=nope')).body.errors).toEqual([{ param: 'customer_id', message: 'must be a UUID' }]);
    expect((await acme.get(`/invoices?search=${'x'.repeat(201)}`)).body.errors[0].param).toBe('search');
    expect((await acme.get('/invoices?order_by=due_date&include_deleted=true')).status).toBe(400);
  });

  it('a cursor carries the sort and filters: a walk never repeats nor skips, while records are inserted', async () => {
    const seen: string[] = [];
    let next = '/invoices?order_by=-total_amount,due_date&status=sent,paid,draft&limit=2';
    let inserted = 0;
    for (;;) {
      const page = await acme.get(next);
      expect(page.status, JSON.stringify(page.body)).toBe(200);
      seen.push(...page.body.data.map((r: { id: string }) => r.id));
      // Inserted mid-walk: at the ends of the order, never between pages already seen.
      if (inserted++ < 2) await invoice(`N${inserted}`, 'Dee', inserted === 1 ? 1 : 99999, null);
      if (!page.body.pagination.next_cursor) break;
      next = `/invoices?cursor=${page.body.pagination.next_cursor}&limit=2`;
    }
    expect(new Set(seen).size).toBe(seen.length);
    for (const name of ['A1', 'A2', 'A3', 'B1', 'C1']) expect(seen).toContain(inv[name]);
    // The cheap one sorts last and is reached; the dear one sorts first, before the walk's position.
    expect(seen).toContain(inv.N1);
    expect(seen).not.toContain(inv.N2);
  });

  it('GraphQL lists take where and orderBy, and select references', async () => {
    const data = await gql(api, api.keys.acme!, `{
      invoices(where: { status: { in: [sent] }, dueDate: { lt: "2026-11-20" }, customer: { search: "a" } }, orderBy: [DUE_DATE_ASC]) {
        data { id customer { name } } pagination { total }
      }
      customers(where: { invoices: { totalAmount: { gte: 12000, lte: 12000 } } }, orderBy: [NAME_DESC]) { data { id } }
    }`);
    expect(data.invoices.data).toEqual([{ id: inv.A2, customer: { name: 'Ada' } }]);
    expect(data.invoices.pagination.total).toBe(1);
    expect(data.customers.data.map((r: { id: string }) => r.id)).toEqual([c.Cy, c.Ada]);
    const nested = await call(`${api.url}/graphql`, {
      method: 'POST',
      key: api.keys.acme!,
      json: { query: '{ invoices(where: { customer: { invoices: { status: { in: [sent] } } } }) { data { id } } }' },
    });
    // One level: a related record's filters (`CustomerRelatedWhere`) have no relations.
    expect(nested.body.errors[0].message).toMatch(/"invoices" is not defined by type "CustomerRelatedWhere"/);
  });

  it("GET /{resource}/{id}/events is a record's history, newest first; events?object_id= is the same", async () => {
    const history = await acme.get(`/invoices/${inv.B1}/events`);
    expect(history.status, JSON.stringify(history.body)).toBe(200);
    expect(history.body.data.map((e: { type: string }) => e.type)).toEqual(['invoice.paid', 'invoice.sent', 'invoice.created']);
    expect(history.body.data.every((e: { data: { object: { id: string } } }) => e.data.object.id === inv.B1)).toBe(true);
    expect(history.body.pagination.total).toBe(3);
    const filtered = await acme.get(`/events?object_id=${inv.B1}`);
    expect(filtered.body.data.map((e: { id: string }) => e.id)).toEqual(history.body.data.map((e: { id: string }) => e.id));
    const paged = await acme.get(`/invoices/${inv.B1}/events?limit=2`);
    const rest2 = await acme.get(`/invoices/${inv.B1}/events?cursor=${paged.body.pagination.next_cursor}`);
    expect([...paged.body.data, ...rest2.body.data].map((e: { id: string }) => e.id)).toEqual(history.body.data.map((e: { id: string }) => e.id));
    // Its record's read scope reads it; another organization's record, or none, is a 404.
    expect((await rest(api, api.keys.invoicesOnly!).get(`/invoices/${inv.B1}/events`)).status).toBe(200);
    const refused = await rest(api, api.keys.customersOnly!).get(`/invoices/${inv.B1}/events`);
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toContain('invoices:read');
    expect((await rest(api, api.keys.other!).get(`/invoices/${inv.B1}/events`)).status).toBe(404);
    expect((await acme.get(`/customers/${inv.B1}/events`)).status).toBe(404);
    expect((await acme.get('/events?object_id=nope')).body.errors).toEqual([{ param: 'object_id', message: 'must be a UUID' }]);
  });
});

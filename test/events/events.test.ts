// The event log over HTTP: every change writes one event in its own transaction (none when
// it fails), with the record as REST shows it and the fields it changed; the events API,
// its paging and its scopes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, gql, rest, startApi, type Api } from '../helpers/api.js';
import { DB_KINDS } from '../helpers/databases.js';

const LINE = { description: 'Work', quantity: 2, unit_amount: 5000 };

describe.each(DB_KINDS)('events on %s', (kind) => {
  let api: Api;
  let acme: ReturnType<typeof rest>;

  beforeAll(async () => {
    api = await startApi(kind, {
      acme: { org: 'Acme' },
      other: { org: 'Other Co' },
      customersOnly: { org: 'Acme', scopes: 'customers:read,customers:write' },
      eventsOnly: { org: 'Acme', scopes: 'events:read' },
      jobsWrite: { org: 'Acme', scopes: 'jobs:write' },
    });
    acme = rest(api, api.keys.acme!);
  });
  afterAll(() => api.stop());

  /** The events of one record, oldest first. */
  const eventsOf = async (id: string) => {
    const page = await acme.get('/events?limit=100');
    expect(page.status).toBe(200);
    return (page.body.data as Array<{ id: string; type: string; data: { object: { id: string } } }>).filter((e) => e.data.object.id === id).reverse();
  };

  it('a create writes <resource>.created with the record as REST shows it and the request id', async () => {
    const created = await acme.post('/customers', { name: 'Ada', email: 'ada@x.example' }, { 'x-request-id': 'req-create-ada' });
    const [event] = await eventsOf(created.body.id);
    expect(event).toEqual({
      id: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
      seq: expect.any(Number),
      type: 'customer.created',
      created_at: expect.stringMatching(/Z$/),
      data: { object: created.body },
      request_id: 'req-create-ada',
    });
    const one = await acme.get(`/events/${event!.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(event);
  });

  it('updates carry previous_attributes; transitions, deletes and restores have their own types', async () => {
    const customer = (await acme.post('/customers', { name: 'Grace' })).body;
    await acme.patch(`/customers/${customer.id}`, { name: 'Grace H', phone: '+441234567890' });
    const invoice = (await acme.post('/invoices', { customer_id: customer.id, currency: 'EUR', line_items: [LINE] })).body;
    await acme.post(`/invoices/${invoice.id}/send`);
    await acme.post(`/invoices/${invoice.id}/pay`);
    const job = (await acme.post('/jobs', { customer_id: customer.id, title: 'Boiler' })).body;
    await acme.post(`/jobs/${job.id}/start`);
    await acme.post(`/jobs/${job.id}/complete`);
    const other = (await acme.post('/jobs', { customer_id: customer.id, title: 'Roof' })).body;
    await acme.post(`/jobs/${other.id}/cancel`);
    await acme.delete(`/jobs/${other.id}`);
    await acme.post(`/jobs/${other.id}/restore`);
    const estimate = (await acme.post('/estimates', { customer_id: customer.id, currency: 'EUR', line_items: [LINE] })).body;
    await acme.post(`/estimates/${estimate.id}/send`);
    await acme.post(`/estimates/${estimate.id}/accept`);
    const proposal = (await acme.post('/proposals', { customer_id: customer.id, title: 'P', total_amount: 10, currency: 'EUR' })).body;
    await acme.post(`/proposals/${proposal.id}/send`);
    await acme.post(`/proposals/${proposal.id}/decline`);
    const email = (await acme.post('/emails', { customer_id: customer.id, type: 'incoming', from: 'a@x.example', to: 'b@x.example', subject: 'Hi' })).body;

    const updated = (await eventsOf(customer.id)).map((e) => e.type);
    expect(updated).toEqual(['customer.created', 'customer.updated']);
    const change = (await eventsOf(customer.id))[1] as unknown as { data: { object: Record<string, unknown>; previous_attributes: Record<string, unknown> } };
    expect(change.data.previous_attributes).toEqual({ name: 'Grace', phone: null });
    expect(change.data.object).toMatchObject({ name: 'Grace H', phone: '+441234567890', version: 2 });

    expect((await eventsOf(invoice.id)).map((e) => e.type)).toEqual(['invoice.created', 'invoice.sent', 'invoice.paid']);
    const paid = (await eventsOf(invoice.id))[2] as unknown as { data: { object: Record<string, unknown>; previous_attributes: Record<string, unknown> } };
    expect(paid.data.object).toEqual((await acme.get(`/invoices/${invoice.id}`)).body);
    expect(paid.data.previous_attributes).toEqual({ status: 'sent', paid_at: null });
    expect((await eventsOf(job.id)).map((e) => e.type)).toEqual(['job.created', 'job.started', 'job.completed']);
    expect((await eventsOf(other.id)).map((e) => e.type)).toEqual(['job.created', 'job.cancelled', 'job.deleted', 'job.restored']);
    expect((await eventsOf(estimate.id)).map((e) => e.type)).toEqual(['estimate.created', 'estimate.sent', 'estimate.accepted']);
    expect((await eventsOf(proposal.id)).map((e) => e.type)).toEqual(['proposal.created', 'proposal.sent', 'proposal.declined']);
    expect((await eventsOf(email.id)).map((e) => e.type)).toEqual(['email.created']);
  });

  it('a change that fails writes no event', async () => {
    const before = (await acme.get('/events')).body.pagination.total;
    const customer = (await acme.post('/customers', { name: 'Holder' })).body;
    const invoice = (await acme.post('/invoices', { customer_id: customer.id, currency: 'EUR', line_items: [LINE] })).body;
    // The delete's UPDATE runs, then its check refuses it: the transaction rolls back.
    expect((await acme.delete(`/customers/${customer.id}`)).status).toBe(409);
    expect((await acme.patch(`/customers/${customer.id}`, { email: 'nope' })).status).toBe(400);
    expect((await acme.post(`/invoices/${invoice.id}/pay`)).status).toBe(409);
    expect((await acme.post('/customers', { name: '' })).status).toBe(400);
    const after = await acme.get('/events?limit=100');
    expect(after.body.pagination.total).toBe(before + 2);
    expect(after.body.data.slice(0, 2).map((e: { type: string }) => e.type)).toEqual(['invoice.created', 'customer.created']);
  });

  it('lists newest first, filters by type, pages by cursor, and catches up after a given event', async () => {
    const all = (await acme.get('/events?limit=100')).body.data as Array<{ id: string; type: string }>;
    const created = await acme.get('/events?type=customer.created&limit=2');
    expect(created.body.data.every((e: { type: string }) => e.type === 'customer.created')).toBe(true);
    const seen = [...created.body.data];
    let page = created;
    while (page.body.pagination.has_more) {
      page = await acme.get(`/events?cursor=${page.body.pagination.next_cursor}`);
      seen.push(...page.body.data);
    }
    expect(seen.map((e) => e.id)).toEqual(all.filter((e) => e.type === 'customer.created').map((e) => e.id));

    const mark = all[3]!;
    const after = await acme.get(`/events?after=${mark.id}`);
    expect(after.body.data.map((e: { id: string }) => e.id)).toEqual(all.slice(0, 3).map((e) => e.id).reverse());
    const resume = after.body.pagination.next_cursor;
    const fresh = (await acme.post('/customers', { name: 'Later' })).body;
    const caughtUp = await acme.get(`/events?cursor=${resume}`);
    expect(caughtUp.body.data.map((e: { type: string; data: { object: { id: string } } }) => [e.type, e.data.object.id])).toEqual([['customer.created', fresh.id]]);
    expect((await acme.get('/events?after=evt_00000000000000000000000000000000')).status).toBe(400);
  });

  it('a key reads the events of what it may read; events:read reads them all', async () => {
    const customersOnly = await rest(api, api.keys.customersOnly!).get('/events?limit=100');
    expect(customersOnly.status).toBe(200);
    expect(new Set(customersOnly.body.data.map((e: { type: string }) => e.type.split('.')[0]))).toEqual(new Set(['customer']));
    const everything = await rest(api, api.keys.eventsOnly!).get('/events?limit=100');
    expect(new Set(everything.body.data.map((e: { type: string }) => e.type.split('.')[0])).size).toBeGreaterThan(3);
    const refused = await rest(api, api.keys.jobsWrite!).get('/events');
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toContain('events:read');
    const jobEvent = everything.body.data.find((e: { type: string }) => e.type.startsWith('job.'));
    expect((await rest(api, api.keys.customersOnly!).get(`/events/${jobEvent.id}`)).status).toBe(404);
    expect((await rest(api, api.keys.other!).get(`/events/${jobEvent.id}`)).status).toBe(404);
    expect((await rest(api, api.keys.other!).get('/events')).body.data).toEqual([]);
  });

  it('GraphQL: events and event', async () => {
    const data = await gql(api, api.keys.acme!, '{ events(limit: 1) { data { id type createdAt data requestId } pagination { total hasMore nextCursor } } }');
    const [latest] = data.events.data;
    expect(latest.data.object.id).toEqual(expect.any(String));
    const one = await gql(api, api.keys.acme!, 'query($id: ID!) { event(id: $id) { id type } }', { id: latest.id });
    expect(one.event).toEqual({ id: latest.id, type: latest.type });
    const response = await call(`${api.url}/graphql`, { method: 'POST', key: api.keys.jobsWrite, json: { query: '{ events { data { id } } }' } });
    expect(response.body.errors[0].extensions.code).toBe('FORBIDDEN');
  });
});

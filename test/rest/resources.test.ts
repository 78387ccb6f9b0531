import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gql, rest, startApi, type Api } from '../helpers/api.js';
import { DB_KINDS } from '../helpers/databases.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe.each(DB_KINDS)('REST jobs, emails, invoices, estimates and proposals on %s', (kind) => {
  let api: Api;
  let acme: ReturnType<typeof rest>;
  let ada: string;
  let grace: string;
  let foreignCustomer: string;

  beforeAll(async () => {
    api = await startApi(kind, { acme: { org: 'Acme' }, other: { org: 'Other Co' } });
    acme = rest(api, api.keys.acme!);
    ada = (await acme.post('/customers', { name: 'Ada', email: 'ada@x.example' })).body.id;
    grace = (await acme.post('/customers', { name: 'Grace', email: 'grace@x.example' })).body.id;
    foreignCustomer = (await rest(api, api.keys.other!).post('/customers', { name: 'Foreign' })).body.id;
    for (const [customerId, type] of [[ada, 'incoming'], [ada, 'outgoing'], [grace, 'incoming']] as const) {
      await gql(api, api.keys.acme!, 'mutation($input: CreateEmailInput!) { createEmail(input: $input) { id } }', {
        input: { customerId, type, from: 'a@x.example', to: 'b@x.example', subject: `${type} mail`, body: 'Hello' },
      });
    }
    for (const customerId of [ada, grace]) {
      await gql(api, api.keys.acme!, 'mutation($input: CreateEstimateInput!) { createEstimate(input: $input) { id } }', {
        input: { customerId, currency: 'EUR', lineItems: [{ description: 'Work', quantity: 2, unitAmount: 5000 }], validUntil: '2026-12-31' },
      });
      await gql(api, api.keys.acme!, 'mutation($input: CreateProposalInput!) { createProposal(input: $input) { id } }', {
        input: { customerId, title: 'Renovation', totalAmount: 120000, currency: 'EUR' },
      });
    }
  });
  afterAll(() => api.stop());

  it('POST /jobs creates a scheduled job', async () => {
    const response = await acme.post('/jobs', { customer_id: ada, title: 'Fix the boiler', description: 'Noisy', scheduled_at: '2026-12-01T09:00:00Z' });
    expect(response.status).toBe(201);
    expect(response.headers.get('location')).toBe(`/v1/jobs/${response.body.id}`);
    expect(response.body).toMatchObject({
      customer_id: ada,
      title: 'Fix the boiler',
      description: 'Noisy',
      status: 'scheduled',
      scheduled_at: '2026-12-01T09:00:00.000Z',
      completed_at: null,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    expect(Object.keys(response.body).sort()).toEqual(
      ['completed_at', 'created_at', 'customer_id', 'deleted_at', 'description', 'external_id', 'id', 'metadata', 'scheduled_at', 'status', 'title', 'updated_at', 'version'],
    );
  });

  it('POST /jobs naming another organization\'s customer is a 400 on customer_id, and creates nothing', async () => {
    const before = (await acme.get('/jobs')).body.pagination.total;
    const response = await acme.post('/jobs', { customer_id: foreignCustomer, title: 'Sneaky' });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([{ param: 'customer_id', message: 'does not name a record of this organization' }]);
    expect((await acme.get('/jobs')).body.pagination.total).toBe(before);
  });

  it('POST /jobs lists every bad field, type and rule faults in one answer', async () => {
    const response = await acme.post('/jobs', { customer_id: 'nope', scheduled_at: 'tomorrow' });
    expect(response.status).toBe(400);
    expect(response.body.errors.map((e: { param: string }) => e.param).sort()).toEqual(['customer_id', 'scheduled_at', 'title']);
    const semantic = await acme.post('/jobs', { customer_id: 'nope' });
    expect(semantic.body.errors.map((e: { param: string }) => e.param).sort()).toEqual(['customer_id', 'title']);
  });

  it('GET /jobs filters by status and customer_id; all means no filter', async () => {
    await acme.post('/jobs', { customer_id: grace, title: 'Paint the fence' });
    expect((await acme.get('/jobs')).body.pagination.total).toBe(2);
    expect((await acme.get(`/jobs?customer_id=${grace}`)).body.data.map((j: { title: string }) => j.title)).toEqual(['Paint the fence']);
    expect((await acme.get('/jobs?status=scheduled')).body.pagination.total).toBe(2);
    expect((await acme.get('/jobs?status=completed')).body.pagination.total).toBe(0);
    expect((await acme.get('/jobs?status=all')).body.pagination.total).toBe(2);
    expect((await acme.get(`/jobs?customer_id=${foreignCustomer}`)).body.pagination.total).toBe(0);
    const bad = await acme.get('/jobs?status=done');
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].param).toBe('status');
    const badId = await acme.get('/jobs?customer_id=42');
    expect(badId.status).toBe(400);
    expect(badId.body.errors[0].param).toBe('customer_id');
  });

  it('POST /invoices numbers invoices per organization and computes amounts', async () => {
    const job = (await acme.get('/jobs')).body.data[0];
    const first = await acme.post('/invoices', {
      customer_id: ada,
      job_id: job.id,
      currency: 'USD',
      due_date: '2027-01-15',
      line_items: [
        { description: 'Labour', quantity: 3, unit_amount: 4500 },
        { description: 'Parts', quantity: 1, unit_amount: 1250 },
      ],
    });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({
      number: 'INV-000001',
      customer_id: ada,
      job_id: job.id,
      status: 'draft',
      currency: 'USD',
      total_amount: 14750,
      due_date: '2027-01-15',
      issued_at: null,
      paid_at: null,
      line_items: [
        { description: 'Labour', quantity: 3, unit_amount: 4500, amount: 13500 },
        { description: 'Parts', quantity: 1, unit_amount: 1250, amount: 1250 },
      ],
    });
    const second = await acme.post('/invoices', { customer_id: grace, currency: 'EUR', line_items: [{ description: 'Visit', quantity: 1, unit_amount: 9900 }] });
    expect(second.body.number).toBe('INV-000002');
    const otherOrg = await rest(api, api.keys.other!).post('/invoices', { customer_id: foreignCustomer, currency: 'EUR', line_items: [{ description: 'Visit', quantity: 1, unit_amount: 1 }] });
    expect(otherOrg.body.number).toBe('INV-000001');
  });

  it('POST /invoices refuses bad money and references, naming each field', async () => {
    const response = await acme.post('/invoices', {
      customer_id: ada,
      job_id: '00000000-0000-4000-8000-000000000000',
      currency: 'usd',
      line_items: [{ description: '', quantity: -1, unit_amount: 10 }],
    });
    expect(response.status).toBe(400);
    expect(response.body.errors.map((e: { param: string }) => e.param).sort()).toEqual(
      ['currency', 'job_id', 'line_items[0].description', 'line_items[0].quantity'].sort(),
    );
    const empty = await acme.post('/invoices', { customer_id: ada, currency: 'USD', line_items: [] });
    expect(empty.body.errors).toEqual([{ param: 'line_items', message: 'must have at least one line item' }]);
    const unknown = await acme.post('/invoices', { customer_id: ada, currency: 'USD', line_items: [{ description: 'x', quantity: 1, unit_amount: 1, tax: 2 }] });
    expect(unknown.body.errors).toEqual([{ param: 'line_items[0].tax', message: 'is not a known field' }]);
  });

  it('GET /invoices filters by status and customer_id', async () => {
    expect((await acme.get('/invoices')).body.pagination.total).toBe(2);
    expect((await acme.get('/invoices?status=draft')).body.pagination.total).toBe(2);
    expect((await acme.get('/invoices?status=paid')).body.data).toEqual([]);
    expect((await acme.get(`/invoices?customer_id=${ada}&status=all`)).body.data.map((i: { number: string }) => i.number)).toEqual(['INV-000001']);
  });

  it('GET /emails filters by type and customer_id', async () => {
    const all = await acme.get('/emails');
    expect(all.body.pagination.total).toBe(3);
    expect(Object.keys(all.body.data[0]).sort()).toEqual(['body', 'created_at', 'customer_id', 'deleted_at', 'external_id', 'from', 'id', 'metadata', 'sent_at', 'subject', 'to', 'type', 'updated_at', 'version']);
    expect((await acme.get('/emails?type=incoming')).body.pagination.total).toBe(2);
    expect((await acme.get(`/emails?type=outgoing&customer_id=${ada}`)).body.data.map((e: { subject: string }) => e.subject)).toEqual(['outgoing mail']);
    expect((await acme.get('/emails?type=all')).body.pagination.total).toBe(3);
    expect((await acme.get('/emails?type=spam')).status).toBe(400);
    expect((await acme.get('/emails?status=sent')).body.errors[0].param).toBe('status');
  });

  it('GET /estimates and /proposals list with their status filters', async () => {
    const estimates = await acme.get('/estimates');
    expect(estimates.body.pagination.total).toBe(2);
    expect(estimates.body.data.map((e: { number: string }) => e.number)).toEqual(['EST-000002', 'EST-000001']);
    expect(estimates.body.data[0]).toMatchObject({ status: 'draft', currency: 'EUR', total_amount: 10000, valid_until: '2026-12-31' });
    expect((await acme.get('/estimates?status=accepted')).body.pagination.total).toBe(0);
    expect((await acme.get(`/estimates?customer_id=${grace}`)).body.pagination.total).toBe(1);
    const proposals = await acme.get('/proposals?status=draft');
    expect(proposals.body.pagination.total).toBe(2);
    expect(Object.keys(proposals.body.data[0]).sort()).toEqual(['created_at', 'currency', 'customer_id', 'deleted_at', 'external_id', 'id', 'metadata', 'status', 'title', 'total_amount', 'updated_at', 'version']);
    expect((await acme.get('/proposals?status=paid')).status).toBe(400);
  });

  it('GET /{resource}/{id} answers the record, and 404 for another organization\'s', async () => {
    for (const resource of ['jobs', 'emails', 'invoices', 'estimates', 'proposals']) {
      const [first] = (await acme.get(`/${resource}`)).body.data;
      const item = await acme.get(`/${resource}/${first.id}`);
      expect(item.status, resource).toBe(200);
      expect(item.body).toEqual(first);
      const foreign = await rest(api, api.keys.other!).get(`/${resource}/${first.id}`);
      expect(foreign.status, resource).toBe(404);
    }
  });

  it('every resource has a REST create; an empty body names each required field', async () => {
    const required: Record<string, string[]> = {
      emails: ['customer_id', 'from', 'subject', 'to', 'type'],
      estimates: ['currency', 'customer_id', 'line_items'],
      proposals: ['currency', 'customer_id', 'title', 'total_amount'],
    };
    for (const [resource, fields] of Object.entries(required)) {
      const response = await acme.post(`/${resource}`, {});
      expect(response.status, resource).toBe(400);
      expect(response.body.errors.map((e: { param: string }) => e.param).sort(), resource).toEqual(fields);
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BadRequest, Conflict, CrmClient, CrmError, Forbidden, NotFound, RateLimited, ServerError, Unauthorized } from '../src/index.js';
import { startInFlightProxy } from '../../../test/helpers/in-flight-proxy.js';
import { startApi, type Api } from '../../../test/helpers/api.js';
import { call } from '../../../test/helpers/api.js';

describe('JavaScript client against the real server', () => {
  let api: Api;
  let crm: CrmClient;
  beforeAll(async () => {
    api = await startApi('pglite', { full: { org: 'Acme' }, readOnly: { org: 'Acme', scopes: 'customers:read' }, limited: { org: 'Limited' } }, { RATE_LIMIT_MAX: '1000' });
    crm = new CrmClient({ apiKey: api.keys.full, baseUrl: `${api.url}/v1` });
  });
  afterAll(() => api.stop());

  it('creates, gets and lists, with pagination', async () => {
    const ada = await crm.customers.create({ name: 'Ada Lovelace', email: 'ada@example.com' });
    expect(ada).toMatchObject({ name: 'Ada Lovelace', email: 'ada@example.com' });
    expect(await crm.customers.get(ada.id)).toEqual(ada);
    const job = await crm.jobs.create({ customer_id: ada.id, title: 'Boiler' });
    const invoice = await crm.invoices.create({ customer_id: ada.id, job_id: job.id, currency: 'USD', line_items: [{ description: 'Work', quantity: 2, unit_amount: 500 }] });
    expect(invoice.total_amount).toBe(1000);
    const page = await crm.customers.list({ search: 'ada', limit: 5 });
    expect(page.pagination).toEqual({ page: 1, limit: 5, total: 1 });
    expect((await crm.invoices.list({ status: 'draft' })).data.map((i) => i.number)).toEqual([invoice.number]);
    for (const resource of [crm.emails, crm.estimates, crm.proposals]) expect((await resource.list()).pagination.total).toBe(0);
  });

  it('waits and retries a 409 carrying Retry-After (an Idempotency-Key still in flight)', async () => {
    const proxy = await startInFlightProxy(api.url);
    try {
      const through = new CrmClient({ apiKey: api.keys.full, baseUrl: `${proxy.url}/v1` });
      expect((await through.customers.create({ name: 'JS in flight' })).name).toBe('JS in flight');
      expect(proxy.refused()).toBe(1);
      expect(new Conflict(409, 'CONFLICT', 'x', [], null)).toBeInstanceOf(CrmError);
    } finally {
      await proxy.close();
    }
  });

  it('iterates over every page', async () => {
    for (let i = 0; i < 7; i++) await crm.customers.create({ name: `Paged ${i}` });
    const names: string[] = [];
    for await (const customer of crm.customers.iterate({ search: 'paged', limit: 3 })) names.push(customer.name);
    expect(names).toHaveLength(7);
    expect(new Set(names).size).toBe(7);
  });

  it('raises a typed error for each kind of problem, with its details', async () => {
    const bad = await crm.customers.create({ name: '' }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(BadRequest);
    expect(bad).toMatchObject({ status: 400, code: 'BAD_REQUEST', errors: [{ param: 'name', message: 'must not be blank' }] });
    expect((bad as CrmError).requestId).toMatch(/^[0-9a-f-]{36}$/);
    await expect(new CrmClient({ apiKey: 'svc_live_nope', baseUrl: `${api.url}/v1` }).customers.list()).rejects.toBeInstanceOf(Unauthorized);
    await expect(new CrmClient({ apiKey: api.keys.readOnly, baseUrl: `${api.url}/v1` }).invoices.list()).rejects.toBeInstanceOf(Forbidden);
    await expect(crm.customers.get('00000000-0000-4000-8000-000000000000')).rejects.toBeInstanceOf(NotFound);
    const failing = new CrmClient({
      apiKey: 'k',
      maxRetries: 0,
      fetch: async () => new Response(JSON.stringify({ status: 500, code: 'INTERNAL', detail: 'An internal error occurred.', request_id: 'r1' }), { status: 500 }),
    });
    await expect(failing.customers.list()).rejects.toMatchObject({ name: 'ServerError', status: 500, requestId: 'r1' });
    expect(ServerError.prototype).toBeInstanceOf(CrmError);
  });

  it('retries a 429 after Retry-After, and raises RateLimited when out of retries', async () => {
    const limitedApi = await startApi('pglite', { key: { org: 'Acme' } }, { RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW_SECONDS: '2' });
    try {
      const impatient = new CrmClient({ apiKey: limitedApi.keys.key, baseUrl: `${limitedApi.url}/v1`, maxRetries: 0 });
      await impatient.customers.list();
      await impatient.customers.list();
      await expect(impatient.customers.list()).rejects.toBeInstanceOf(RateLimited);
      const patient = new CrmClient({ apiKey: limitedApi.keys.key, baseUrl: `${limitedApi.url}/v1`, maxRetries: 3 });
      const started = Date.now();
      expect((await patient.customers.list()).pagination.total).toBe(0);
      expect(Date.now() - started).toBeGreaterThan(500);
    } finally {
      await limitedApi.stop();
    }
  });

  it('a create retried after a lost response creates one record', async () => {
    let dropped = false;
    const flaky = new CrmClient({
      apiKey: api.keys.full,
      baseUrl: `${api.url}/v1`,
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        if (!dropped && init?.method === 'POST') {
          dropped = true; // the server created it, but the answer never arrives
          throw new TypeError('fetch failed: connection reset');
        }
        return response;
      },
    });
    const created = await flaky.customers.create({ name: 'Exactly once' });
    expect(dropped).toBe(true);
    const matches = await call(`${api.url}/v1/customers?search=${encodeURIComponent('Exactly once')}`, { key: api.keys.full });
    expect(matches.body.data.map((c: { id: string }) => c.id)).toEqual([created.id]);
  });

  it('has a method for every operation of the OpenAPI document', async () => {
    const document = (await call(`${api.url}/v1/openapi.json`)).body;
    for (const [path, methods] of Object.entries(document.paths as Record<string, Record<string, unknown>>)) {
      const resource = (crm as unknown as Record<string, Record<string, unknown>>)[path.split('/')[1]!]!;
      for (const method of Object.keys(methods)) {
        const name = method === 'post' ? 'create' : path.endsWith('{id}') ? 'get' : 'list';
        expect(typeof resource[name], `${method.toUpperCase()} ${path}`).toBe('function');
      }
    }
  });
});

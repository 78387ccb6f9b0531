import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, rest, startApi, type Api } from '../helpers/api.js';
import { DB_KINDS } from '../helpers/databases.js';
import { ROUTES } from '../../src/rest/router.js';

const MESSAGE = 'A valid API key is required: send "Authorization: Bearer svc_live_...".';

describe.each(DB_KINDS)('API keys and scopes on %s', (kind) => {
  let api: Api;
  beforeAll(async () => {
    api = await startApi(kind, {
      full: { org: 'Acme' },
      revoked: { org: 'Acme', revoked: true },
      expired: { org: 'Acme', expiresAt: new Date(Date.now() - 1000) },
      future: { org: 'Acme', expiresAt: new Date(Date.now() + 3_600_000) },
      customersOnly: { org: 'Acme', scopes: 'customers:read' },
      nothingRead: { org: 'Acme', scopes: 'customers:write' },
    });
  });
  afterAll(() => api.stop());

  const unknownKey = 'svc_live_' + 'A'.repeat(32);
  const cases: Array<[string, Record<string, string>]> = [
    ['no Authorization header', {}],
    ['a malformed header', { authorization: 'Token abc' }],
    ['a key without the prefix', { authorization: `Bearer ${'x'.repeat(41)}` }],
    ['an unknown key', { authorization: `Bearer ${unknownKey}` }],
  ];

  it.each(cases)('REST with %s is a 401 with WWW-Authenticate: Bearer', async (_name, headers) => {
    const response = await call(`${api.url}/v1/customers`, { headers });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(response.body).toMatchObject({ status: 401, code: 'UNAUTHENTICATED', detail: MESSAGE });
  });

  it('revoked and expired keys get the very same 401', async () => {
    for (const name of ['revoked', 'expired']) {
      const response = await call(`${api.url}/v1/customers`, { key: api.keys[name] });
      expect(response.status, name).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
      const { request_id: _, ...body } = response.body;
      expect(body).toEqual({ type: 'about:blank', title: 'Unauthorized', status: 401, detail: MESSAGE, code: 'UNAUTHENTICATED' });
    }
    expect((await call(`${api.url}/v1/customers`, { key: api.keys.future })).status).toBe(200);
  });

  it('GraphQL without a valid key is a 401 UNAUTHENTICATED', async () => {
    for (const [, headers] of cases) {
      const response = await call(`${api.url}/graphql`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: '{"query":"{ customerCount }"}' });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
      expect(response.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    }
  });

  it('an authenticated request is not refused, even with bad parameters, before the key is checked', async () => {
    const response = await call(`${api.url}/v1/customers?bogus=1`);
    expect(response.status).toBe(401);
  });

  it('each REST route needs its scope: 403 naming it', async () => {
    const client = rest(api, api.keys.nothingRead!);
    for (const route of ROUTES) {
      if (route.scope === 'customers:write') continue;
      const path = route.path.replace('{id}', '00000000-0000-4000-8000-000000000000');
      const response = await call(`${api.url}/v1${path}`, { method: route.method, key: api.keys.nothingRead, json: route.method === 'GET' || route.method === 'DELETE' ? undefined : {} });
      expect(response.status, `${route.method} ${route.path}`).toBe(403);
      expect(response.body.code).toBe('FORBIDDEN');
      expect(response.body.detail).toContain(route.scope);
    }
  });

  it('a key with a scope reaches its routes and only those', async () => {
    const client = rest(api, api.keys.customersOnly!);
    expect((await client.get('/customers')).status).toBe(200);
    expect((await client.post('/customers', { name: 'x' })).body.detail).toContain('customers:write');
    expect((await client.get('/invoices')).body.detail).toContain('invoices:read');
  });

  it('GraphQL fields outside the scopes are FORBIDDEN, the rest still resolves', async () => {
    await rest(api, api.keys.full!).post('/customers', { name: 'Scoped' });
    const response = await call(`${api.url}/graphql`, {
      method: 'POST',
      key: api.keys.customersOnly,
      json: { query: '{ customerCount invoices { pagination { total } } }' },
    });
    expect(response.status).toBe(200);
    expect(response.body.errors).toHaveLength(1);
    expect(response.body.errors[0]).toMatchObject({ path: ['invoices'], extensions: { code: 'FORBIDDEN' } });
    expect(response.body.errors[0].message).toContain('invoices:read');
  });

  it.each([
    ['{ customers { pagination { total } } }', 'customers:read'],
    ['{ customer(id: "00000000-0000-4000-8000-000000000000") { id } }', 'customers:read'],
    ['{ customerCount }', 'customers:read'],
    ['{ jobs { pagination { total } } }', 'jobs:read'],
    ['{ job(id: "00000000-0000-4000-8000-000000000000") { id } }', 'jobs:read'],
    ['{ emails { pagination { total } } }', 'emails:read'],
    ['{ email(id: "00000000-0000-4000-8000-000000000000") { id } }', 'emails:read'],
    ['{ invoices { pagination { total } } }', 'invoices:read'],
    ['{ invoice(id: "00000000-0000-4000-8000-000000000000") { id } }', 'invoices:read'],
    ['{ invoiceSummary { count } }', 'invoices:read'],
    ['{ estimates { pagination { total } } }', 'estimates:read'],
    ['{ estimate(id: "00000000-0000-4000-8000-000000000000") { id } }', 'estimates:read'],
    ['{ proposals { pagination { total } } }', 'proposals:read'],
    ['{ proposal(id: "00000000-0000-4000-8000-000000000000") { id } }', 'proposals:read'],
    ['mutation { createCustomer(input: { name: "x" }) { id } }', 'customers:write'],
    ['mutation { createEmail(input: { customerId: "00000000-0000-4000-8000-000000000000", type: incoming, from: "a@b.example", to: "c@d.example", subject: "s" }) { id } }', 'customers:write'],
    ['mutation { createJob(input: { customerId: "00000000-0000-4000-8000-000000000000", title: "t" }) { id } }', 'jobs:write'],
    ['mutation { startJob(id: "x") { id } }', 'jobs:write'],
    ['mutation { completeJob(id: "x") { id } }', 'jobs:write'],
    ['mutation { cancelJob(id: "x") { id } }', 'jobs:write'],
    ['mutation { createInvoice(input: { customerId: "00000000-0000-4000-8000-000000000000", currency: "USD", lineItems: [] }) { id } }', 'invoices:write'],
    ['mutation { sendInvoice(id: "x") { id } }', 'invoices:write'],
    ['mutation { markInvoicePaid(id: "x") { id } }', 'invoices:write'],
    ['mutation { createEstimate(input: { customerId: "00000000-0000-4000-8000-000000000000", currency: "USD", lineItems: [] }) { id } }', 'estimates:write'],
    ['mutation { sendEstimate(id: "x") { id } }', 'estimates:write'],
    ['mutation { acceptEstimate(id: "x") { id } }', 'estimates:write'],
    ['mutation { declineEstimate(id: "x") { id } }', 'estimates:write'],
    ['mutation { createProposal(input: { customerId: "00000000-0000-4000-8000-000000000000", title: "t", totalAmount: 1, currency: "USD" }) { id } }', 'proposals:write'],
    ['mutation { sendProposal(id: "x") { id } }', 'proposals:write'],
    ['mutation { acceptProposal(id: "x") { id } }', 'proposals:write'],
    ['mutation { declineProposal(id: "x") { id } }', 'proposals:write'],
  ])('GraphQL %s needs %s', async (query, scope) => {
    const key = scope === 'customers:read' || scope === 'customers:write' ? api.keys.nothingRead! : api.keys.customersOnly!;
    const holder = scope === 'customers:write' ? api.keys.customersOnly! : key;
    const response = await call(`${api.url}/graphql`, { method: 'POST', key: holder, json: { query } });
    expect(response.body.errors?.[0]?.extensions.code, JSON.stringify(response.body)).toBe('FORBIDDEN');
    expect(response.body.errors[0].message).toContain(scope);
  });

  it('a relation outside the scopes is FORBIDDEN too', async () => {
    const response = await call(`${api.url}/graphql`, {
      method: 'POST',
      key: api.keys.customersOnly,
      json: { query: '{ customers { data { name jobs { id } } } }' },
    });
    expect(response.body.errors[0].extensions.code).toBe('FORBIDDEN');
    expect(response.body.errors[0].message).toContain('jobs:read');
  });
});

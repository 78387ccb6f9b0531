import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, gql, rest, startApi, type Api, type KeySpec } from '../helpers/api.js';
import { DB_KINDS } from '../helpers/databases.js';
import { ROUTES } from '../../src/rest/router.js';

interface OrgData {
  customer: string;
  job: string;
  invoice: string;
  estimate: string;
  proposal: string;
  email: string;
}

async function fill(api: Api, key: string, tag: string): Promise<OrgData> {
  const customer = (await rest(api, key).post('/customers', { name: `${tag} customer`, email: `${tag}@example.com` })).body.id;
  const job = (await rest(api, key).post('/jobs', { customer_id: customer, title: `${tag} job` })).body.id;
  const invoice = (await rest(api, key).post('/invoices', { customer_id: customer, job_id: job, currency: 'USD', line_items: [{ description: tag, quantity: 1, unit_amount: 777 }] })).body.id;
  const estimate = (await gql(api, key, 'mutation($i: CreateEstimateInput!) { createEstimate(input: $i) { id } }', { i: { customerId: customer, currency: 'USD', lineItems: [{ description: tag, quantity: 1, unitAmount: 1 }] } })).createEstimate.id;
  const proposal = (await gql(api, key, 'mutation($i: CreateProposalInput!) { createProposal(input: $i) { id } }', { i: { customerId: customer, title: tag, totalAmount: 5, currency: 'USD' } })).createProposal.id;
  const email = (await gql(api, key, 'mutation($i: CreateEmailInput!) { createEmail(input: $i) { id } }', { i: { customerId: customer, type: 'incoming', from: `${tag}@example.com`, to: 'us@example.com', subject: tag } })).createEmail.id;
  return { customer, job, invoice, estimate, proposal, email };
}

// The other side: another organization, or the caller's own test mode (svc_test_ keys work
// in a test twin of the organization: neither mode may see the other's data).
const OTHERS: Array<[string, KeySpec]> = [
  ['another organization', { org: 'Theirs' }],
  ['its own test mode', { org: 'Mine', mode: 'test' }],
];

describe.each(DB_KINDS.flatMap((kind) => OTHERS.map(([name, spec]) => ({ kind, name, spec }))))('isolation from $name on $kind', ({ kind, spec }) => {
  let api: Api;
  let mine: OrgData;
  let theirs: OrgData;
  let seen: string[];

  beforeAll(async () => {
    api = await startApi(kind, { mine: { org: 'Mine' }, theirs: spec });
    mine = await fill(api, api.keys.mine!, 'mine');
    theirs = await fill(api, api.keys.theirs!, 'theirs');
    seen = [];
  });
  afterAll(() => api.stop());

  const foreignIds = () => Object.values(theirs);
  function expectNothingForeign(body: unknown) {
    const text = JSON.stringify(body);
    seen.push(text);
    for (const id of foreignIds()) expect(text).not.toContain(id);
    expect(text).not.toContain('theirs');
  }

  it('every REST list shows only the caller\'s rows and counts', async () => {
    for (const route of ROUTES.filter((r) => r.kind === 'list')) {
      const response = await rest(api, api.keys.mine!).get(route.path);
      expect(response.status).toBe(200);
      // The event log, webhook endpoints and the request log are not records made here: only nothing foreign.
      if (['events', 'webhook_endpoints', 'request_logs'].includes(route.resource.path)) {
        expectNothingForeign(response.body);
        continue;
      }
      expect(response.body.pagination.total, route.path).toBe(1);
      expectNothingForeign(response.body);
      const filtered = await rest(api, api.keys.mine!).get(
        route.params.some((p) => p.name === 'customer_id') ? `${route.path}?customer_id=${theirs.customer}` : `${route.path}?search=theirs`,
      );
      expect(filtered.body.pagination.total, `${route.path} filtered`).toBe(0);
    }
  });

  it('every REST item route answers 404 for the other organization\'s ids', async () => {
    const ids: Record<string, string> = { customers: theirs.customer, jobs: theirs.job, invoices: theirs.invoice, estimates: theirs.estimate, proposals: theirs.proposal, emails: theirs.email };
    for (const route of ROUTES.filter((r) => r.kind === 'item')) {
      const response = await rest(api, api.keys.mine!).get(`/${route.resource.path}/${ids[route.resource.path]}`);
      expect(response.status, route.path).toBe(404);
      expectNothingForeign(response.body);
    }
  });

  it('creates refuse references to the other organization (400 naming the field)', async () => {
    const job = await rest(api, api.keys.mine!).post('/jobs', { customer_id: theirs.customer, title: 'x' });
    expect(job.status).toBe(400);
    expect(job.body.errors).toEqual([{ param: 'customer_id', message: 'does not name a record of this organization' }]);
    const invoice = await rest(api, api.keys.mine!).post('/invoices', { customer_id: mine.customer, job_id: theirs.job, currency: 'USD', line_items: [{ description: 'x', quantity: 1, unit_amount: 1 }] });
    expect(invoice.status).toBe(400);
    expect(invoice.body.errors).toEqual([{ param: 'job_id', message: 'does not name a record of this organization' }]);
    expectNothingForeign(invoice.body);
  });

  it('GraphQL items, relations, aggregates and transitions never reach the other organization', async () => {
    const key = api.keys.mine!;
    for (const [field, id] of [['customer', theirs.customer], ['job', theirs.job], ['invoice', theirs.invoice], ['estimate', theirs.estimate], ['proposal', theirs.proposal], ['email', theirs.email]]) {
      const data = await gql(api, key, `query($id: ID!) { ${field}(id: $id) { id } }`, { id });
      expect(data[field!], field).toBeNull();
    }
    const everything = await gql(
      api,
      key,
      `{ customers { data { id jobs { id invoices { id } } invoices { id job { id } } estimates { id } proposals { id } emails { id } } pagination { total } }
         customerCount invoiceSummary { count totalAmount } }`,
    );
    expect(everything.customerCount).toBe(1);
    expect(everything.invoiceSummary).toEqual([{ count: 1, totalAmount: '777' }]);
    expectNothingForeign(everything);
    for (const mutation of ['sendInvoice', 'sendEstimate', 'sendProposal', 'startJob', 'cancelJob']) {
      const id = mutation.endsWith('Invoice') ? theirs.invoice : mutation.endsWith('Estimate') ? theirs.estimate : mutation.endsWith('Proposal') ? theirs.proposal : theirs.job;
      const response = await call(`${api.url}/graphql`, { method: 'POST', key, json: { query: `mutation($id: ID!) { ${mutation}(id: $id) { id } }`, variables: { id } } });
      expect(response.body.errors[0].extensions.code, mutation).toBe('NOT_FOUND');
    }
    // And the other organization's records did not move.
    const untouched = await gql(api, api.keys.theirs!, `query($id: ID!) { invoice(id: $id) { status } }`, { id: theirs.invoice });
    expect(untouched.invoice.status).toBe('draft');
  });
});

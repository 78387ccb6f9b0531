// GraphQL errors as a client meets them: the same answer from the standard and the compiled
// executor, scope errors that fail alone, one HTTP status rule, and no internal fields.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, gql, startApi, type Api } from '../helpers/api.js';
import { DB_KINDS } from '../helpers/databases.js';

/** Runs a document more often than it takes to get compiled; answers status and raw body. */
async function repeat(api: Api, key: string, body: unknown, times = 5) {
  const answers: Array<{ status: number; text: string }> = [];
  for (let i = 0; i < times; i++) {
    const response = await fetch(`${api.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    answers.push({ status: response.status, text: await response.text() });
  }
  return answers;
}

describe.each(DB_KINDS)('GraphQL errors on %s', (kind) => {
  let api: Api;
  let key: string;
  let readOnly: string;

  beforeAll(async () => {
    api = await startApi(kind, { all: { org: 'Acme' }, customersOnly: { org: 'Acme', scopes: 'customers:read' }, writeOnly: { org: 'Acme', scopes: 'jobs:write' } });
    key = api.keys.all!;
    readOnly = api.keys.customersOnly!;
    for (const name of ['Ada Lovelace', 'Grace Hopper']) {
      await gql(api, key, 'mutation($n: String!) { createCustomer(input: { name: $n }) { id } }', { n: name });
    }
  });
  afterAll(() => api.stop());

  const variableErrors: Array<[string, { query: string; variables?: Record<string, unknown> }, RegExp]> = [
    ['a wrong-typed variable', { query: 'query P($l: Int) { customers(limit: $l) { pagination { total } } }', variables: { l: 'x' } }, /\$l.*Int cannot represent/],
    ['a bad enum value', { query: 'query P($s: InvoiceStatus) { invoices(status: $s) { pagination { total } } }', variables: { s: 'overdue' } }, /\$s.*does not exist in "InvoiceStatus"/],
    ['a missing required variable', { query: 'query P($id: ID!) { customer(id: $id) { name } }' }, /\$id.*required type "ID!" was not provided/],
    ['a bad scalar', { query: 'query P($f: DateTime) { invoiceSummary(from: $f) { count } }', variables: { f: 'yesterday' } }, /\$f.*ISO 8601/],
  ];

  it.each(variableErrors)('%s answers 400 BAD_REQUEST, the same before and after the document is compiled', async (_name, body, message) => {
    const answers = await repeat(api, key, body);
    for (const answer of answers) expect(answer).toEqual(answers[0]);
    expect(answers[0]!.status).toBe(400);
    const parsed = JSON.parse(answers[0]!.text);
    expect(parsed.data).toBeUndefined();
    expect(parsed.errors).toHaveLength(1);
    expect(parsed.errors[0].extensions).toEqual({ code: 'BAD_REQUEST' });
    expect(parsed.errors[0].message).toMatch(message);
  });

  it('field errors and key order are the same before and after compiling', async () => {
    const body = { query: '{ customers(limit: 2) { data { name } } jobs { data { id } } customerCount emails { pagination { total } } }' };
    const answers = await repeat(api, readOnly, body);
    for (const answer of answers) expect(answer).toEqual(answers[0]);
    expect(answers[0]!.status).toBe(200);
    const parsed = JSON.parse(answers[0]!.text);
    expect(Object.keys(parsed.data)).toEqual(['customers', 'jobs', 'customerCount', 'emails']);
    expect(parsed.errors.map((e: { path: string[]; locations: unknown[] }) => [e.path, e.locations.length])).toEqual([
      [['jobs'], 1],
      [['emails'], 1],
    ]);
  });

  it('every error logged carries the request id', async () => {
    await repeat(api, key, { query: 'query P($l: Int) { customers(limit: $l) { pagination { total } } }', variables: { l: 'x' } });
    const logged = api.server
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: string; request_id?: string });
    expect(logged.filter((line) => line.level === 'error' || line.level === 'warn').filter((line) => !line.request_id)).toEqual([]);
  });

  it('a field the key may not read fails alone; the rest of the response resolves', async () => {
    const response = await call(`${api.url}/graphql`, {
      method: 'POST',
      key: readOnly,
      json: { query: '{ apiVersion customerCount customers(limit: 2) { data { name jobs { id } } } }' },
    });
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({
      apiVersion: '1',
      customerCount: 2,
      customers: { data: [{ name: 'Grace Hopper', jobs: null }, { name: 'Ada Lovelace', jobs: null }] },
    });
    expect(response.body.errors.map((e: { path: unknown[]; extensions: { code: string } }) => [e.path, e.extensions.code])).toEqual([
      [['customers', 'data', 0, 'jobs'], 'FORBIDDEN'],
      [['customers', 'data', 1, 'jobs'], 'FORBIDDEN'],
    ]);
  });

  it('a create whose answer selects a forbidden field still answers the created record', async () => {
    const customerId = (await gql(api, key, '{ customers(limit: 1) { data { id } } }')).customers.data[0].id;
    const response = await call(`${api.url}/graphql`, {
      method: 'POST',
      key: api.keys.writeOnly!,
      json: { query: 'mutation($c: ID!) { createJob(input: { customerId: $c, title: "Fix" }) { id title customer { name } } }', variables: { c: customerId } },
    });
    expect(response.status).toBe(200);
    expect(response.body.data.createJob).toMatchObject({ id: expect.any(String), title: 'Fix', customer: null });
    expect(response.body.errors[0]).toMatchObject({ path: ['createJob', 'customer'], extensions: { code: 'FORBIDDEN' } });
  });

  it('request errors answer 4xx without data; errors after execution began answer 200 beside the data', async () => {
    const syntax = await call(`${api.url}/graphql`, { method: 'POST', key, json: { query: '{ customers {' } });
    expect(syntax.status).toBe(400);
    const validation = await call(`${api.url}/graphql`, { method: 'POST', key, json: { query: '{ nope }' } });
    expect(validation.status).toBe(400);
    for (const accept of ['application/json', 'application/graphql-response+json']) {
      const rule = await call(`${api.url}/graphql`, { method: 'POST', key, headers: { accept }, json: { query: '{ customers(limit: 500) { pagination { total } } }' } });
      expect(rule.status).toBe(200);
      expect(rule.body).toEqual({ data: { customers: null }, errors: [expect.objectContaining({ path: ['customers'], extensions: expect.objectContaining({ code: 'BAD_REQUEST' }) })] });
      const variable = await call(`${api.url}/graphql`, { method: 'POST', key, headers: { accept }, json: { query: 'query($l: Int) { customers(limit: $l) { pagination { total } } }', variables: { l: 'x' } } });
      expect(variable.status).toBe(400);
    }
  });

  it('introspection alone needs no key (GraphiQL opens without an error; codegen needs none); anything beside it does', async () => {
    const post = (query: string) => call(`${api.url}/graphql`, { method: 'POST', json: { query } });
    const schema = await post('query IntrospectionQuery { __schema { queryType { name } types { name } } }');
    expect(schema.status).toBe(200);
    expect(schema.body.data.__schema.queryType).toEqual({ name: 'Query' });
    expect(schema.body.data.__schema.types.map((t: { name: string }) => t.name)).toContain('CustomerWhere');
    const fragment = await post('{ ...F } fragment F on Query { __type(name: "Customer") { name } }');
    expect(fragment.body.data).toEqual({ __type: { name: 'Customer' } });
    for (const query of ['{ __typename customers { data { id } } }', '{ ...F } fragment F on Query { customers { data { id } } }', 'mutation { __typename }', '{ customers { data { id } } }']) {
      const refused = await post(query);
      expect(refused.status, query).toBe(401);
      expect(refused.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    }
  });

  it('no internal extension field reaches a client', async () => {
    const unauthenticated = await call(`${api.url}/graphql`, { method: 'POST', key: 'svc_live_not-a-key', json: { query: '{ apiVersion }' } });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(unauthenticated.body.errors[0].extensions).toEqual({ code: 'UNAUTHENTICATED' });
    const bounded = await call(`${api.url}/graphql`, { method: 'POST', key, json: { query: '{ a: apiVersion b: apiVersion c: apiVersion d: apiVersion e: apiVersion f: apiVersion g: apiVersion h: apiVersion i: apiVersion j: apiVersion k: apiVersion }' } });
    expect(bounded.status).toBe(400);
    expect(bounded.body.errors[0].extensions).toEqual({ code: 'BAD_REQUEST' });
  });

  it('invoice totals sum exactly, past 32 bits, as a decimal string', async () => {
    const customerId = (await gql(api, key, '{ customers(limit: 1) { data { id } } }')).customers.data[0].id;
    const input = { customerId, currency: 'JPY', lineItems: [{ description: 'Ship', quantity: 1, unitAmount: 2_147_483_647 }] };
    for (let i = 0; i < 3; i++) await gql(api, key, 'mutation($i: CreateInvoiceInput!) { createInvoice(input: $i) { id } }', { i: input });
    const { invoiceSummary } = await gql(api, key, '{ invoiceSummary { currency count totalAmount } }');
    expect(invoiceSummary).toContainEqual({ currency: 'JPY', count: 3, totalAmount: '6442450941' });
  });

  it('a write-only key sees the record its own transition moved, and nothing else of the resource', async () => {
    const customerId = (await gql(api, key, '{ customers(limit: 1) { data { id } } }')).customers.data[0].id;
    const created = await call(`${api.url}/graphql`, {
      method: 'POST',
      key: api.keys.writeOnly!,
      json: { query: 'mutation($c: ID!) { createJob(input: { customerId: $c, title: "Paint" }) { id } }', variables: { c: customerId } },
    });
    const id = created.body.data.createJob.id;
    const moved = await call(`${api.url}/graphql`, { method: 'POST', key: api.keys.writeOnly!, json: { query: 'mutation($id: ID!) { startJob(id: $id) { id status } }', variables: { id } } });
    expect(moved.body).toEqual({ data: { startJob: { id, status: 'in_progress' } } });
    expect((await call(`${api.url}/v1/jobs/${id}`, { key: api.keys.writeOnly! })).status).toBe(403);
    expect((await call(`${api.url}/v1/jobs`, { key: api.keys.writeOnly! })).status).toBe(403);
  });
});

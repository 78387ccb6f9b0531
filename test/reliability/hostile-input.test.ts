// Input built to reach the database or the parser in a shape they cannot take, and cursors
// edited by hand: each is a 4xx naming the parameter, never a 500 and never a silent repair.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, rest, startApi, type Api } from '../helpers/api.js';
import { DB_KINDS } from '../helpers/databases.js';
import { eventReadScopes } from '../../src/schema/event.js';

/** A cursor with one part of its JSON replaced, the signature left as it was. */
function edited(cursor: string, change: (body: Record<string, unknown>) => void): string {
  const body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  change(body);
  return Buffer.from(JSON.stringify(body)).toString('base64url');
}

describe.each(DB_KINDS)('hostile input on %s', (kind) => {
  let api: Api;
  let acme: ReturnType<typeof rest>;
  const graphql = (query: string, variables?: Record<string, unknown>, key = api.keys.acme!) =>
    call(`${api.url}/graphql`, { method: 'POST', key, json: { query, variables } });

  beforeAll(async () => {
    api = await startApi(kind, { acme: { org: 'Acme' }, jobsOnly: { org: 'Acme', scopes: 'jobs:write' }, other: { org: 'Other' } });
    acme = rest(api, api.keys.acme!);
    for (let i = 0; i < 5; i++) expect((await acme.post('/customers', { name: `Customer ${i}` })).status).toBe(201);
  });
  afterAll(() => api.stop());

  it('a NUL character in a query parameter, a path id or a body is a 400 naming it', async () => {
    const type = await acme.get('/events?type=customer.created%00');
    expect(type.status).toBe(400);
    expect(type.body.errors).toContainEqual({ param: 'type', message: expect.stringMatching(/NUL/) });
    const event = await acme.get('/events/evt_%00');
    expect(event.status).toBe(400);
    expect(event.body.errors).toContainEqual({ param: 'id', message: expect.stringMatching(/NUL/) });
    const search = await acme.get('/customers?search=a%00b');
    expect(search.status).toBe(400);
    expect(search.body.errors).toContainEqual({ param: 'search', message: expect.stringMatching(/NUL/) });
    const body = await acme.post('/customers', { name: 'Nul\u0000Name' });
    expect(body.status).toBe(400);
    expect(body.body.errors).toContainEqual({ param: 'name', message: expect.stringMatching(/NUL/) });
    const lines = await acme.post('/invoices', { customer_id: (await acme.get('/customers')).body.data[0].id, currency: 'USD', line_items: [{ description: 'a\u0000', quantity: 1, unit_amount: 1 }] });
    expect(lines.status).toBe(400);
    expect(lines.body.errors).toContainEqual({ param: 'line_items[0].description', message: expect.stringMatching(/NUL/) });
  });

  it('in GraphQL, a NUL in a literal or a variable is BAD_REQUEST naming the argument', async () => {
    const literal = await graphql('{ event(id: "evt_\\u0000") { id } }');
    expect(literal.body.errors[0].extensions).toMatchObject({ code: 'BAD_REQUEST', errors: [{ param: 'id', message: expect.stringMatching(/NUL/) }] });
    const variable = await graphql('query($t: String) { events(type: $t) { data { id } } }', { t: 'a\u0000' });
    expect(variable.body.errors[0].extensions).toMatchObject({ code: 'BAD_REQUEST', errors: [{ param: 't', message: expect.stringMatching(/NUL/) }] });
  });

  it('a lone surrogate in a JSON string is refused, not stored as U+FFFD', async () => {
    // Written by hand: JSON.stringify would escape it the same way, but say so plainly.
    const response = await call(`${api.url}/v1/customers`, { method: 'POST', key: api.keys.acme, headers: { 'content-type': 'application/json' }, body: '{"name":"Lone \\ud800 surrogate"}' });
    expect(response.status).toBe(400);
    expect(response.body.errors).toContainEqual({ param: 'name', message: expect.stringMatching(/lone surrogate/) });
    const pair = await acme.post('/customers', { name: 'Pair \ud83d\ude00' });
    expect(pair.status).toBe(201);
    expect(pair.body.name).toBe('Pair 😀');
    const graphqlVariable = await graphql('mutation($i: CreateCustomerInput!) { createCustomer(input: $i) { id } }', { i: { name: 'x\ud800' } });
    expect(graphqlVariable.body.errors[0].extensions).toMatchObject({ code: 'BAD_REQUEST', errors: [{ param: 'i.name' }] });
  });

  it('a list literal nested 2,000 deep is a 400, not a stack overflow', async () => {
    const query = `{ events(type: ${'['.repeat(2000)}"x"${']'.repeat(2000)}) { data { id } } }`;
    expect(query.length).toBeLessThan(5000);
    const response = await graphql(query);
    expect(response.status).toBe(400);
    expect(response.body.errors[0].message).toMatch(/nests brackets 2002 levels deep; at most 100 are allowed/);
    expect((await graphql('{ apiVersion }')).body.data).toEqual({ apiVersion: '1' });
  });

  it('an edited cursor is refused, whichever part was changed; the cursor as received works', async () => {
    const first = await acme.get('/customers?limit=2');
    const cursor = first.body.pagination.next_cursor as string;
    expect((await acme.get(`/customers?cursor=${cursor}`)).status).toBe(200);
    const edits: Array<(body: Record<string, unknown>) => void> = [
      (b) => (b.p = 1),
      (b) => (b.k = String(b.k).replace(/^\d{4}/, '2099')),
      (b) => (b.t = 1_000_000),
      (b) => (b.f = { search: 'x' }),
      (b) => (b.h = 'AAAAAAAAAAAAAAAAAAAAAA'),
      (b) => delete b.h,
    ];
    for (const edit of edits) {
      const response = await acme.get(`/customers?cursor=${edited(cursor, edit)}`);
      expect(response.status).toBe(400);
      expect(response.body.errors).toEqual([{ param: 'cursor', message: expect.stringMatching(/altered|not a cursor/) }]);
    }
    // Another organization's key cannot use it either.
    expect((await rest(api, api.keys.other!).get(`/customers?cursor=${cursor}`)).status).toBe(400);
  });

  it('a sync or events cursor whose position is pushed past 64 bits is a 400, not a 500', async () => {
    const sync = await acme.get('/customers?include_deleted=true&limit=2');
    const events = await acme.get('/events?after=' + (await acme.get('/events?limit=100')).body.data.at(-1).id + '&limit=1');
    for (const [path, cursor] of [
      ['/customers', sync.body.pagination.next_cursor],
      ['/events', events.body.pagination.next_cursor],
    ] as const) {
      expect(cursor).toEqual(expect.any(String));
      for (const position of ['9223372036854775808', '9999999999999999999']) {
        const response = await acme.get(`${path}?cursor=${edited(cursor, (b) => (b.k = position))}`);
        expect(response.status, `${path} ${position}`).toBe(400);
        expect(response.body.errors[0].param).toBe('cursor');
      }
    }
  });

  it('GET /v1/events?type=unknown is a 400 listing the known types, as the subscription answers', async () => {
    const response = await acme.get('/events?type=customer.exploded');
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([{ param: 'type', message: expect.stringContaining('customer.created') }]);
    const created = (await acme.get('/events?type=customer.created')).body.data as Array<{ type: string }>;
    expect(created.length).toBeGreaterThanOrEqual(5);
    expect(new Set(created.map((e) => e.type))).toEqual(new Set(['customer.created']));
  });

  it('FORBIDDEN on the event log names the scopes that would allow it', async () => {
    const response = await graphql('{ events { data { id } } }', undefined, api.keys.jobsOnly);
    expect(response.body.errors[0].extensions.code).toBe('FORBIDDEN');
    // events:read first, then every resource's read scope.
    expect(response.body.errors[0].message).toContain(`lacks the scope ${eventReadScopes().join(' or ')}`);
    expect(eventReadScopes()).toEqual(expect.arrayContaining(['events:read', 'customers:read', 'jobs:read']));
  });
});

// Hostile input at every route: whatever arrives, the answer is a 4xx (or a success), never
// a 500, and the stored data changes by exactly the records the service said it created.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '../../src/rest/router.js';
import { call, startApi, type Api } from '../helpers/api.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 150);

const hostileString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('\u0000', '%00', '../../etc/passwd', "' OR 1=1 --", '<script>', '9'.repeat(400), '-1', '1e309', 'NaN', '__proto__', 'all', '💥'.repeat(50)),
);

const hostileJson: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    fc.oneof(fc.integer(), fc.double(), fc.constantFrom(2 ** 53, -(2 ** 31) - 1, 2 ** 31, 1e308)),
    hostileString,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(hostileString, fc.constantFrom('name', 'email', 'phone', 'customer_id', 'job_id', 'title', 'currency', 'line_items', 'quantity', 'unit_amount', 'description', 'due_date', 'scheduled_at', '__proto__', 'constructor', 'prototype')), tie('value'), { maxKeys: 6 }),
  ),
})).value;

describe('hostile input', () => {
  let api: Api;
  let customerId: string;
  const totals = async () => {
    const counts: Record<string, number> = {};
    for (const route of ROUTES.filter((r) => r.kind === 'list')) {
      counts[route.resource.path] = (await call(`${api.url}/v1${route.path}`, { key: api.keys.acme })).body.pagination.total;
    }
    return counts;
  };

  beforeAll(async () => {
    api = await startApi('postgres', { acme: { org: 'Acme' } }, { RATE_LIMIT_MAX: '10000', LOG_LEVEL: 'info' });
    customerId = (await call(`${api.url}/v1/customers`, { method: 'POST', key: api.keys.acme, json: { name: 'Fuzz target' } })).body.id;
  });
  afterAll(() => api.stop());

  it('random query strings on every list route get 200 or a 400 problem', async () => {
    const lists = ROUTES.filter((r) => r.kind === 'list');
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...lists), fc.array(fc.tuple(fc.oneof(hostileString, fc.constantFrom('page', 'limit', 'search', 'status', 'type', 'customer_id')), hostileString), { maxLength: 4 }), async (route, pairs) => {
        const query = new URLSearchParams(pairs).toString();
        const response = await call(`${api.url}/v1${route.path}?${query}`, { key: api.keys.acme });
        expect([200, 400]).toContain(response.status);
        if (response.status === 400) {
          expect(response.headers.get('content-type')).toBe('application/problem+json');
          expect(response.body.errors.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('random JSON bodies on every create route never cause a 500 and change data only by what was created', async () => {
    const creates = ROUTES.filter((r) => r.kind === 'create');
    const before = await totals();
    const created: Record<string, number> = {};
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...creates),
        fc.oneof(hostileJson, hostileJson.map((v) => ({ customer_id: customerId, name: 'N', title: 'T', currency: 'USD', ...(typeof v === 'object' && v && !Array.isArray(v) ? v : { extra: v }) }))),
        async (route, body) => {
          const response = await call(`${api.url}/v1${route.path}`, { method: 'POST', key: api.keys.acme, json: body });
          expect(response.status, JSON.stringify(response.body)).toBeLessThan(500);
          if (response.status === 201) created[route.resource.path] = (created[route.resource.path] ?? 0) + 1;
          else expect(response.body.code).toBe('BAD_REQUEST');
        },
      ),
      { numRuns: RUNS },
    );
    const after = await totals();
    for (const [path, total] of Object.entries(before)) expect(after[path], path).toBe(total + (created[path] ?? 0));
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });

  it('random raw bodies and content types are refused cleanly', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 200 }), fc.constantFrom('application/json', 'text/plain', 'application/json; charset=utf-8', '', 'multipart/form-data'), async (body, type) => {
        const response = await call(`${api.url}/v1/customers`, { method: 'POST', key: api.keys.acme, headers: type ? { 'content-type': type } : {}, body });
        expect(response.status).toBeLessThan(500);
        expect(response.status).not.toBe(200);
      }),
      { numRuns: RUNS },
    );
  });

  it('random ids, headers and GraphQL documents get a clean 4xx or a valid answer', async () => {
    await fc.assert(
      fc.asyncProperty(hostileString, hostileString, fc.string({ maxLength: 120 }), async (id, header, document) => {
        const item = await call(`${api.url}/v1/customers/${encodeURIComponent(id)}`, { key: api.keys.acme, headers: { 'x-request-id': header.replace(/[^\x20-\x7e]/g, '') } });
        expect([200, 404]).toContain(item.status);
        const auth = await fetch(`${api.url}/v1/customers`, { headers: { authorization: `Bearer ${header.replace(/[^\x20-\x7e]/g, '')}` } });
        expect([401, 429]).toContain(auth.status);
        const graph = await call(`${api.url}/graphql`, { method: 'POST', key: api.keys.acme, json: { query: document, variables: { x: id } } });
        expect(graph.status).toBeLessThan(500);
        if (graph.body.errors) for (const error of graph.body.errors) expect(['BAD_REQUEST', 'NOT_FOUND', 'FORBIDDEN']).toContain(error.extensions.code);
      }),
      { numRuns: RUNS },
    );
    expect(api.server.output()).not.toContain('"level":"error"');
  });

  it('random GraphQL documents (fragments, variables with defaults, large literals) get a clean answer, bounded in time', async () => {
    const limit = fc.oneof(fc.integer({ min: -5, max: 200 }), fc.constantFrom(2 ** 31, 1e10, '"x"', 'null', '[1,2]'));
    const field = fc.oneof(
      fc.record({ l: limit, inner: limit }).map(({ l, inner }) => `customers(limit: ${l}) { data { name jobs(limit: ${inner}) { title } invoices(limit: ${inner}) { lineItems { description } } } pagination { total } }`),
      hostileString.map((text) => `customerCount(search: ${JSON.stringify(text)})`),
      fc.constantFrom('apiVersion', 'invoiceSummary(from: "2026-02-30T00:00:00Z") { count }', 'invoiceSummary { totalAmount }', `customerCount(search: [${'"a",'.repeat(2000)}"a"])`),
    );
    const wrapped = fc.tuple(field, fc.constantFrom('plain', 'inline', 'spread', 'variable')).map(([text, how]) => ({ text, how }));
    await fc.assert(
      fc.asyncProperty(fc.array(wrapped, { minLength: 1, maxLength: 12 }), limit, async (fields, defaultLimit) => {
        const fragments: string[] = [];
        const selections = fields.map(({ text, how }, i) => {
          const aliased = `f${i}: ${text}`;
          if (how === 'inline') return `... on Query { ${aliased} }`;
          if (how === 'spread') {
            fragments.push(`fragment F${i} on Query { ${aliased} }`);
            return `...F${i}`;
          }
          if (how === 'variable') return `f${i}: customers(limit: $l) { data { invoices(limit: $l) { lineItems { amount } } } }`;
          return aliased;
        });
        const query = `query Q($l: Int = ${defaultLimit}) { ${selections.join(' ')} } ${fragments.join(' ')}`;
        const started = performance.now();
        const graph = await call(`${api.url}/graphql`, { method: 'POST', key: api.keys.acme, json: { query } });
        expect(performance.now() - started).toBeLessThan(5_000);
        expect(graph.status, JSON.stringify(graph.body)).toBeLessThan(500);
        for (const error of graph.body.errors ?? []) expect(['BAD_REQUEST', 'FORBIDDEN', 'RATE_LIMITED']).toContain(error.extensions.code);
      }),
      { numRuns: RUNS },
    );
    expect(api.server.output()).not.toContain('"level":"error"');
  });
});

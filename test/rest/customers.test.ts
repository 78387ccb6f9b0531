import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, rest, startApi, type Api } from '../helpers/api.js';
import { DB_KINDS } from '../helpers/databases.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe.each(DB_KINDS)('REST /v1/customers on %s', (kind) => {
  let api: Api;
  let acme: ReturnType<typeof rest>;
  const created: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    api = await startApi(kind, { acme: { org: 'Acme' }, other: { org: 'Other Co' } });
    acme = rest(api, api.keys.acme!);
    const people = [
      { name: 'Ada Lovelace', email: 'ada@analytical.example', phone: '+441234567890' },
      { name: 'Grace Hopper', email: 'grace@navy.example' },
      { name: 'Alan Turing', email: 'alan@bletchley.example' },
      { name: 'Katherine Johnson' },
      { name: 'Radia Perlman', email: 'radia@SPANNING.example' },
    ];
    for (const person of people) {
      const response = await acme.post('/customers', person);
      expect(response.status).toBe(201);
      created.push(response.body);
    }
    await rest(api, api.keys.other!).post('/customers', { name: 'Ada of Other Co', email: 'ada@other.example' });
  });
  afterAll(() => api.stop());

  it('POST answers 201 with the created customer and its Location', async () => {
    const response = await acme.post('/customers', { name: '  Margaret Hamilton  ', email: 'Margaret@Apollo.Example', phone: '+16175550123' });
    expect(response.status).toBe(201);
    expect(response.headers.get('location')).toBe(`/v1/customers/${response.body.id}`);
    expect(response.body).toEqual({
      id: expect.stringMatching(UUID),
      name: 'Margaret Hamilton',
      email: 'margaret@apollo.example',
      phone: '+16175550123',
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
      version: 1,
      deleted_at: null,
      external_id: null,
      metadata: {},
    });
    const fetched = await acme.get(`/customers/${response.body.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(response.body);
    created.push(response.body);
  });

  it('GET lists newest first with the documented pagination', async () => {
    const response = await acme.get('/customers');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.body.pagination).toEqual({ page: 1, limit: 20, total: created.length, next_cursor: null, has_more: false });
    expect(response.body.data.map((c: { id: string }) => c.id)).toEqual([...created].reverse().map((c) => c.id));
    expect(Object.keys(response.body.data[0]).sort()).toEqual(['created_at', 'deleted_at', 'email', 'external_id', 'id', 'metadata', 'name', 'phone', 'updated_at', 'version']);
  });

  it('pages with page and limit, and a page past the end is empty with the true total', async () => {
    const first = await acme.get('/customers?limit=2');
    const second = await acme.get('/customers?limit=2&page=2');
    expect(first.body.pagination).toEqual({ page: 1, limit: 2, total: created.length, next_cursor: expect.any(String), has_more: true });
    expect(second.body.pagination).toEqual({ page: 2, limit: 2, total: created.length, next_cursor: expect.any(String), has_more: true });
    expect(second.body.data[0].id).toBe(created[created.length - 3]!.id);
    const past = await acme.get('/customers?page=50');
    expect(past.status).toBe(200);
    expect(past.body).toEqual({ data: [], pagination: { page: 50, limit: 20, total: created.length, next_cursor: null, has_more: false } });
  });

  it('search matches a case-insensitive substring of the name or the e-mail', async () => {
    const byName = await acme.get('/customers?search=LOVE');
    expect(byName.body.data.map((c: { name: string }) => c.name)).toEqual(['Ada Lovelace']);
    const byEmail = await acme.get('/customers?search=spanning');
    expect(byEmail.body.data.map((c: { name: string }) => c.name)).toEqual(['Radia Perlman']);
    const both = await acme.get('/customers?search=a');
    expect(both.body.pagination.total).toBe(created.length);
    const none = await acme.get('/customers?search=zzz');
    expect(none.body).toEqual({ data: [], pagination: { page: 1, limit: 20, total: 0, next_cursor: null, has_more: false } });
    // Never another organization's customers.
    const ada = await acme.get('/customers?search=ada');
    expect(ada.body.data.map((c: { name: string }) => c.name)).toEqual(['Ada Lovelace']);
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=1.5', 'limit'],
    ['page=0', 'page'],
    ['page=-1', 'page'],
    ['page=99999999999', 'page'],
    ['sort=name', 'sort'],
    ['search=a&search=b', 'search'],
    ['search=a%00b', 'search'],
    [`search=${'x'.repeat(201)}`, 'search'],
  ])('GET ?%s is a 400 naming %s', async (query, param) => {
    const response = await acme.get(`/customers?${query}`);
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(response.body).toMatchObject({ status: 400, code: 'BAD_REQUEST', title: 'Bad Request' });
    expect(response.body.errors.map((e: { param: string }) => e.param)).toContain(param);
    expect(response.body.request_id).toBe(response.headers.get('x-request-id'));
  });

  it('limit=100 is allowed', async () => {
    const response = await acme.get('/customers?limit=100');
    expect(response.status).toBe(200);
    expect(response.body.pagination.limit).toBe(100);
  });

  it('POST lists every offending field at once', async () => {
    const response = await acme.post('/customers', { name: '   ', email: 'not-an-email', phone: '0123' });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('BAD_REQUEST');
    expect(response.body.errors.map((e: { param: string }) => e.param).sort()).toEqual(['email', 'name', 'phone']);
  });

  it.each([
    [{ email: 'x@y.example' }, ['name']],
    [{ name: 'x'.repeat(201) }, ['name']],
    [{ name: 'Ok', email: `${'a'.repeat(250)}@x.io` }, ['email']],
    [{ name: 'Ok', phone: '+1234567' }, ['phone']],
    [{ name: 'Ok', phone: '+1234567890123456' }, ['phone']],
    [{ name: 'Ok', nickname: 'x', __proto__x: 1 }, ['nickname', '__proto__x']],
    [{ name: 42, email: ['a'] }, ['name', 'email']],
  ])('POST %j is a 400 naming %j', async (body, params) => {
    const response = await acme.post('/customers', body);
    expect(response.status).toBe(400);
    expect(response.body.errors.map((e: { param: string }) => e.param).sort()).toEqual([...params].sort());
  });

  it('POST with a __proto__ key is refused and pollutes nothing', async () => {
    const response = await call(`${api.url}/v1/customers`, {
      method: 'POST',
      key: api.keys.acme,
      headers: { 'content-type': 'application/json' },
      body: '{"name":"Proto","__proto__":{"admin":true}}',
    });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([{ param: '__proto__', message: 'is not a known field' }]);
  });

  it.each([
    ['{"name":', 'body'],
    ['[1,2]', 'body'],
    ['"text"', 'body'],
    ['null', 'body'],
  ])('POST body %s is a 400', async (body, param) => {
    const response = await call(`${api.url}/v1/customers`, { method: 'POST', key: api.keys.acme, headers: { 'content-type': 'application/json' }, body });
    expect(response.status).toBe(400);
    expect(response.body.errors[0].param).toBe(param);
  });

  it('POST without a JSON content type is a 415', async () => {
    const response = await call(`${api.url}/v1/customers`, { method: 'POST', key: api.keys.acme, headers: { 'content-type': 'text/plain' }, body: '{"name":"x"}' });
    expect(response.status).toBe(415);
    expect(response.body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('POST over 1 MiB is a 413 and creates nothing', async () => {
    const before = (await acme.get('/customers')).body.pagination.total;
    const response = await acme.post('/customers', { name: 'Big', note: 'x'.repeat(1024 * 1024) });
    expect(response.status).toBe(413);
    expect(response.body.code).toBe('PAYLOAD_TOO_LARGE');
    expect((await acme.get('/customers')).body.pagination.total).toBe(before);
  });

  it('GET /customers/{id} is a 404 for an absent id, a malformed id and another organization\'s customer', async () => {
    const foreign = (await rest(api, api.keys.other!).get('/customers')).body.data[0].id;
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid', foreign]) {
      const response = await acme.get(`/customers/${id}`);
      expect(response.status, id).toBe(404);
      expect(response.body.code).toBe('NOT_FOUND');
      expect(JSON.stringify(response.body)).not.toContain('Other Co');
    }
  });

  it('serves the same routes under /api/v1 and /v1/api', async () => {
    const main = await acme.get('/customers?limit=3');
    for (const prefix of ['/api/v1', '/v1/api']) {
      const alt = await call(`${api.url}${prefix}/customers?limit=3`, { key: api.keys.acme });
      expect(alt.status).toBe(200);
      expect(alt.body).toEqual(main.body);
    }
    const createdAlt = await call(`${api.url}/api/v1/customers`, { method: 'POST', key: api.keys.acme, json: { name: 'Via alternative prefix' } });
    expect(createdAlt.status).toBe(201);
    expect(createdAlt.headers.get('location')).toBe(`/api/v1/customers/${createdAlt.body.id}`);
    created.push(createdAlt.body);
  });

  it('get-one takes only fields and expand; create routes take no query parameters', async () => {
    const item = await acme.get(`/customers/${created[0]!.id}?expand=jobs&sort=name`);
    expect(item.status).toBe(400);
    expect(item.body.errors).toEqual([
      { param: 'expand', message: 'jobs cannot be expanded: this record refers to no other' },
      { param: 'sort', message: 'is not a parameter of this endpoint (known: fields, expand)' },
    ]);
    const create = await acme.post('/customers?dry_run=1', { name: 'Never created' });
    expect(create.status).toBe(400);
    expect(create.body.errors[0].param).toBe('dry_run');
    expect((await acme.get('/customers?search=never')).body.pagination.total).toBe(0);
  });

  it('an unsupported method is a 405 with Allow', async () => {
    const collection = await call(`${api.url}/v1/customers`, { method: 'DELETE', key: api.keys.acme });
    expect(collection.status).toBe(405);
    expect(collection.headers.get('allow')).toBe('GET, POST');
    const item = await call(`${api.url}/v1/customers/${created[0]!.id}`, { method: 'PUT', key: api.keys.acme });
    expect(item.status).toBe(405);
    expect(item.headers.get('allow')).toBe('GET, PATCH, DELETE');
  });
});

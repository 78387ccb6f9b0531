// GET /v1/request_logs (and GraphQL `requestLogs`): every authenticated API request of the
// organization, newest first, with its method, path (never the query string), status,
// duration, error code and key prefix, and never a body, a query value or a secret;
// filters, paging by cursor, the logs:read scope, and one organization never sees another's.
// A read first writes what the instance still holds, so no test waits on a timer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/auth/passwords.js';
import { call, gql, postLogin, rest, startApi, type Api } from '../helpers/api.js';
import { DB_KINDS } from '../helpers/databases.js';

interface Row {
  request_id: string;
  method: string;
  path: string;
  status: number;
  duration_ms: number;
  error_code: string | null;
  key_prefix: string;
  created_at: string;
}

const LOCAL = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' };

describe.each(DB_KINDS)('request logs on %s', (kind) => {
  let api: Api;
  let acme: ReturnType<typeof rest>;

  beforeAll(async () => {
    api = await startApi(
      kind,
      { acme: { org: 'Acme' }, customersOnly: { org: 'Acme', scopes: 'customers:read' }, other: { org: 'Other Co' } },
      LOCAL,
    );
    acme = rest(api, api.keys.acme!);
  });
  afterAll(() => api.stop());

  const logs = async (query = '', key = api.keys.acme!) => {
    const response = await rest(api, key).get(`/request_logs${query}`);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body as { data: Row[]; pagination: { total: number; has_more: boolean; next_cursor: string | null } };
  };

  it('records each request with its fields, newest first, and no body, query value or secret', async () => {
    const created = await acme.post('/customers', { name: 'Ada', metadata: { password: 'correct-horse-battery-staple' } }, { 'x-request-id': 'req-created-1' });
    expect(created.status).toBe(201);
    const hook = await acme.post('/webhook_endpoints', { url: 'http://127.0.0.1:9/hook' });
    expect(hook.status).toBe(201);
    const secret = hook.body.secret as string;
    expect(secret).toMatch(/^whsec_/);
    const searched = await acme.get('/customers?search=query-value-xyz&limit=5', { 'x-request-id': 'req-search-1' });
    expect(searched.status).toBe(200);
    const missing = await acme.get('/customers/00000000-0000-7000-8000-000000000000', { 'x-request-id': 'req-missing-1' });
    expect(missing.status).toBe(404);
    const graphql = await call(`${api.url}/graphql?token=graphql-query-value`, { method: 'POST', key: api.keys.acme, json: { query: '{ customers { data { id } } }' } });
    expect(graphql.status).toBe(200);

    const page = await logs('?limit=100');
    const [first, second, third, fourth, fifth] = page.data;
    expect([first, second, third, fourth, fifth].map((row) => `${row!.method} ${row!.path} ${row!.status}`)).toEqual([
      'POST /graphql 200',
      'GET /v1/customers/00000000-0000-7000-8000-000000000000 404',
      'GET /v1/customers 200',
      'POST /v1/webhook_endpoints 201',
      'POST /v1/customers 201',
    ]);
    expect(second).toEqual({
      request_id: 'req-missing-1',
      method: 'GET',
      path: '/v1/customers/00000000-0000-7000-8000-000000000000',
      status: 404,
      duration_ms: expect.any(Number),
      error_code: 'NOT_FOUND',
      key_prefix: api.keys.acme!.slice(0, 17),
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
    });
    expect(fifth!.request_id).toBe('req-created-1');
    expect(fifth!.error_code).toBeNull();
    const text = JSON.stringify(page);
    for (const secretText of [api.keys.acme!, api.keys.acme!.slice(17), secret, 'correct-horse', 'query-value-xyz', 'graphql-query-value', 'limit=5', 'Ada']) {
      expect(text.includes(secretText), secretText).toBe(false);
    }
    // The table holds nothing more than the API shows.
    const stored = await api.server.sql.query<Record<string, unknown>>('SELECT * FROM request_logs');
    const storedText = JSON.stringify(stored);
    for (const secretText of [api.keys.acme!, secret, 'correct-horse', 'query-value-xyz', 'graphql-query-value']) expect(storedText.includes(secretText), secretText).toBe(false);
  });

  it('filters by status, status class, method and request id', async () => {
    await acme.get('/customers/not-a-uuid', { 'x-request-id': 'req-filter-404' });
    await acme.post('/customers', { name: '' }, { 'x-request-id': 'req-filter-400' });
    const exact = await logs('?status=404');
    expect(exact.data.length).toBeGreaterThan(0);
    expect(exact.data.every((row) => row.status === 404)).toBe(true);
    const clientErrors = await logs('?status=4xx&limit=100');
    expect(new Set(clientErrors.data.map((row) => row.status))).toEqual(new Set([400, 404]));
    expect(clientErrors.pagination.total).toBe(clientErrors.data.length);
    const invalid = clientErrors.data.find((row) => row.request_id === 'req-filter-400')!;
    expect(invalid).toMatchObject({ method: 'POST', path: '/v1/customers', status: 400, error_code: 'BAD_REQUEST' });
    const posts = await logs('?method=post&limit=100');
    expect(posts.data.length).toBeGreaterThan(0);
    expect(posts.data.every((row) => row.method === 'POST')).toBe(true);
    const one = await logs('?request_id=req-filter-404');
    expect(one.data).toHaveLength(1);
    expect(one.data[0]).toMatchObject({ path: '/v1/customers/not-a-uuid', status: 404 });
    const shaped = await logs('?request_id=req-filter-404&fields=status,path');
    expect(shaped.data).toEqual([{ status: 404, path: '/v1/customers/not-a-uuid' }]);
    const bad = await acme.get('/request_logs?status=4x&method=BREW');
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: { param: string }) => e.param).sort()).toEqual(['method', 'status']);
  });

  it('pages by cursor, newest first, without repeating or skipping a row', async () => {
    const all = await logs('?limit=100');
    expect(all.data.length).toBeGreaterThan(4);
    const seen: string[] = [];
    let next: string | null = null;
    let first = true;
    while (first || next) {
      const page = await logs(first ? '?limit=2' : `?limit=2&cursor=${next}`);
      first = false;
      seen.push(...page.data.map((row) => row.request_id));
      next = page.pagination.next_cursor;
    }
    // The walk began after `all` was read, so it also holds `all`'s own request (and the
    // pages read before it): the rows of `all` are its tail, in the same order.
    expect(seen.slice(-all.data.length)).toEqual(all.data.map((row) => row.request_id));
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('answers GraphQL requestLogs with the same rows', async () => {
    await acme.get('/customers', { 'x-request-id': 'req-graphql-view' });
    const data = await gql(api, api.keys.acme!, '{ requestLogs(requestId: "req-graphql-view") { data { requestId method path status durationMs errorCode keyPrefix createdAt } pagination { total } } }');
    expect(data.requestLogs.data).toEqual([
      { requestId: 'req-graphql-view', method: 'GET', path: '/v1/customers', status: 200, durationMs: expect.any(Number), errorCode: null, keyPrefix: api.keys.acme!.slice(0, 17), createdAt: expect.any(String) },
    ]);
    expect(data.requestLogs.pagination.total).toBe(1);
  });

  it('needs logs:read, and shows an organization only its own requests', async () => {
    const refused = await rest(api, api.keys.customersOnly!).get('/request_logs');
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toContain('logs:read');
    await rest(api, api.keys.other!).get('/customers', { 'x-request-id': 'req-other-org' });
    expect((await logs('?request_id=req-other-org')).data).toEqual([]);
    const theirs = await logs('?limit=100', api.keys.other!);
    expect(theirs.data.map((row) => row.request_id)).toContain('req-other-org');
    expect(theirs.data.every((row) => row.key_prefix === api.keys.other!.slice(0, 17))).toBe(true);
    // The refused request is in Acme's log (it authenticated), with its code.
    const forbidden = await logs('?status=403');
    expect(forbidden.data[0]).toMatchObject({ path: '/v1/request_logs', error_code: 'FORBIDDEN', key_prefix: api.keys.customersOnly!.slice(0, 17) });
  });

  it("shows the organization's latest requests on the account page", async () => {
    await acme.get('/customers/not-a-uuid', { 'x-request-id': 'req-account-page' });
    await rest(api, api.keys.other!).get('/customers', { 'x-request-id': 'req-account-other' });
    // Through the instance's own connection: an embedded database has only that one.
    await api.server.sql.query(
      "INSERT INTO users (id, organization_id, email, password_hash) SELECT gen_random_uuid(), id, $1, $2 FROM organizations WHERE name = 'Acme'",
      ['owner@acme.test', await hashPassword('a long enough password')],
    );
    const { session } = await postLogin(api.url, 'owner@acme.test', 'a long enough password');
    const page = await (await fetch(`${api.url}/settings/api-keys`, { headers: { cookie: session! } })).text();
    const section = page.slice(page.indexOf('<h2 id="request-logs">'));
    expect(section).toContain('Recent API requests');
    expect(section).toMatch(/<td>GET<\/td><td><code>\/v1\/customers\/not-a-uuid<\/code><\/td>\s*<td class="status-revoked">404<\/td>/);
    expect(section).toContain('<code>req-account-page</code>');
    expect(section).not.toContain('req-account-other');
    expect(section.match(/<tr>/g)!.length).toBeLessThanOrEqual(51);
  });

  it('does not record requests that did not authenticate', async () => {
    const anonymous = await call(`${api.url}/v1/customers`, { headers: { 'x-request-id': 'req-anonymous' } });
    expect(anonymous.status).toBe(401);
    // The read writes what the instance held; the anonymous request was not among it.
    expect((await logs('?request_id=req-anonymous')).data).toEqual([]);
    const stored = await api.server.sql.query<{ count: number }>("SELECT count(*)::int AS count FROM request_logs WHERE request_id = 'req-anonymous'");
    expect(stored[0]!.count).toBe(0);
  });
});

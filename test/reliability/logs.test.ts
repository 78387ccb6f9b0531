import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, call, postLogin, startApi, type Api } from '../helpers/api.js';

const PASSWORD = 'a password that must never be logged';

describe('structured logs', () => {
  let api: Api;
  beforeAll(async () => {
    api = await startApi('postgres', { acme: { org: 'Acme' } });
    await addUser(api, 'Acme', 'owner@acme.example', PASSWORD);
  });
  afterAll(() => api.stop());

  it('one JSON line per request with id, method, route, status, duration, organization and key prefix; never a secret', async () => {
    const key = api.keys.acme!;
    await call(`${api.url}/v1/customers?limit=5`, { key, headers: { 'x-request-id': 'logs-list' } });
    await call(`${api.url}/v1/customers`, { method: 'POST', key, json: { name: 'x' }, headers: { 'x-request-id': 'logs-create' } });
    await call(`${api.url}/v1/customers`, { headers: { authorization: 'Bearer svc_live_NOTAREALKEYNOTAREALKEYNOTAREALKE', 'x-request-id': 'logs-bad-key' } });
    const { session: sessionCookie, csrf } = await postLogin(api.url, 'owner@acme.example', PASSWORD);
    const session = sessionCookie!.split('=')[1]!;
    await fetch(`${api.url}/settings/api-keys`, { headers: { cookie: `crm_session=${session}` } });

    const lines = api.server.output().trim().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
    const list = lines.find((l) => l.request_id === 'logs-list');
    expect(list).toMatchObject({ level: 'info', msg: 'request', method: 'GET', path: '/v1/customers', route: 'GET /customers', status: 200, key_prefix: key.slice(0, 17) });
    expect(list.organization_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(typeof list.duration_ms).toBe('number');
    expect(lines.find((l) => l.request_id === 'logs-create')).toMatchObject({ status: 201, route: 'POST /customers' });
    expect(lines.find((l) => l.request_id === 'logs-bad-key')).toMatchObject({ status: 401 });

    const output = api.server.output();
    for (const secret of [key, key.slice(17), PASSWORD, session, 'NOTAREALKEY', csrf]) expect(output).not.toContain(secret);
    expect(output.toLowerCase()).not.toContain('authorization');
    expect(output.toLowerCase()).not.toContain('cookie');
  });
});

// Every REST route that reads a JSON body names the body's unknown fields in one 400 with the
// operation's own faults, and writes nothing. REST finds those faults before the operation
// runs and hands them to it (ctx.inputErrors); a resolver that forgot them would answer
// without them, or write. The routes come from the route table, so a new one is covered.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '../../src/rest/router.js';
import { schema } from '../../src/schema/index.js';
import { registeredResources } from '../../src/schema/registry.js';
import { call, rest, startApi, type Api } from '../helpers/api.js';
import { DB_KINDS } from '../helpers/databases.js';

const BODY_ROUTES = ROUTES.filter((route) => ['create', 'update', 'upsert', 'batch'].includes(route.kind) || (route.kind === 'move' && route.input));
// Routes that take no body: a body sent to them is named, not ignored.
const NO_BODY_ROUTES = ROUTES.filter((route) => route.kind === 'restore' || (route.kind === 'move' && !route.input));
// No record has this id: each operation must report its input's faults before it looks.
const NO_SUCH_ID = '0190a3c4-0000-7000-8000-000000000000';

describe.each(DB_KINDS)('an unknown field in a body, on %s', (kind) => {
  let api: Api;
  // Every table a body route writes: the resources', and those without events.
  const TABLES = [...registeredResources().map((resource) => resource.path), 'events', 'webhook_endpoints', 'webhook_deliveries', 'imports'];
  const rows = async () => (await api.server.sql.query<{ n: number }>(`SELECT ${TABLES.map((table) => `(SELECT count(*) FROM ${table})`).join(' + ')} AS n`))[0]!.n;

  beforeAll(async () => {
    api = await startApi(kind, { acme: { org: 'Acme' } });
  });
  afterAll(() => api?.stop());

  it('is a route table with a body route of every kind', () => {
    expect(new Set(BODY_ROUTES.map((route) => route.kind))).toEqual(new Set(['create', 'update', 'upsert', 'batch', 'move']));
  });

  it.each(BODY_ROUTES.map((route) => ({ route, name: `${route.method} ${route.path}` })))('$name: a 400 naming it with the operation\'s own faults, and nothing written', async ({ route }) => {
    const path = route.path.replace('{id}', route.kind === 'upsert' ? 'ext-1' : NO_SUCH_ID);
    const batch = route.kind === 'batch';
    const before = await rows();
    const response = await call(`${api.url}/v1${path}`, { method: route.method, key: api.keys.acme, json: batch ? { items: [{ op: 'create', data: { colour: 'red' } }] } : { colour: 'red' } });
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    const params = (response.body.errors as Array<{ param: string; message: string }>).map((error) => error.param);
    expect(params, JSON.stringify(response.body)).toContain(batch ? 'items[0].colour' : 'colour');
    // A create's or an upsert's required fields are named beside it: its own check ran too.
    const required = route.kind === 'create' || route.kind === 'upsert' ? Object.values(route.input!.getFields()).filter((field) => String(field.type).endsWith('!')) : [];
    expect(params.length, JSON.stringify(response.body)).toBeGreaterThanOrEqual(1 + required.length);
    expect(await rows()).toBe(before);
  });

  it('an operation that forgets them writes nothing: it runs as a dry run, and the answer is the 400 naming them', async () => {
    // A resolver that drops the faults REST found, as one written without the framework could.
    const field = schema.getMutationType()!.getFields().createCustomer!;
    const resolve = field.resolve!;
    let forgot = 0;
    field.resolve = (root, args, ctx, info) => {
      forgot++;
      return resolve(root, args, { ...ctx, inputErrors: [] }, info);
    };
    try {
      const acme = rest(api, api.keys.acme!);
      const before = await rows();
      const response = await acme.post('/customers', { name: 'Ada Lovelace', colour: 'red' });
      expect(forgot).toBe(1);
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(response.body.errors).toEqual([{ param: 'colour', message: 'is not a known field' }]);
      expect(await rows()).toBe(before);
      expect((await acme.get('/customers?limit=1')).body.pagination.total).toBe(0);
      // Where it refuses the input itself, its faults are named after the body's.
      const both = await acme.post('/customers', { colour: 'red' });
      expect(forgot).toBe(2);
      expect(both.status).toBe(400);
      expect(both.body.errors).toEqual([{ param: 'colour', message: 'is not a known field' }, { param: 'name', message: 'is required' }]);
    } finally {
      field.resolve = resolve;
    }
  });

  it('is a route table with transitions and restores that take no body', () => {
    expect(new Set(NO_BODY_ROUTES.map((route) => route.kind))).toEqual(new Set(['move', 'restore']));
    expect(NO_BODY_ROUTES.map((route) => route.path)).toContain('/invoices/{id}/pay');
  });

  it.each(NO_BODY_ROUTES.map((route) => ({ route, name: `${route.method} ${route.path}` })))('$name takes no body: a field sent to it is a 400 naming it, before the missing record', async ({ route }) => {
    const response = await call(`${api.url}/v1${route.path.replace('{id}', NO_SUCH_ID)}`, { method: route.method, key: api.keys.acme, json: { colour: 'red' } });
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.errors).toEqual([{ param: 'colour', message: 'is not a known field: this operation takes no body' }]);
  });

  it('a transition sent a field is not made; without a body, with an empty one, {}, [] or null it is', async () => {
    const acme = rest(api, api.keys.acme!);
    const customer = (await acme.post('/customers', { name: 'Grace Hopper' })).body;
    const job = (await acme.post('/jobs', { customer_id: customer.id, title: 'Boiler service' })).body;
    const move = (name: string, init: { json?: unknown; body?: string; headers?: Record<string, string> }) => call(`${api.url}/v1/jobs/${job.id}/${name}`, { method: 'POST', key: api.keys.acme, ...init });

    const dated = await move('start', { json: { started_at: '2026-01-01T00:00:00Z' } });
    expect(dated.status).toBe(400);
    expect(dated.body.errors).toEqual([{ param: 'started_at', message: 'is not a known field: this operation takes no body' }]);
    const text = await move('start', { body: 'now please', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(400);
    expect(text.body.errors).toEqual([{ param: 'body', message: 'must be empty: this operation takes no body' }]);
    expect((await acme.get(`/jobs/${job.id}`)).body).toMatchObject({ status: 'scheduled', version: job.version });

    expect((await move('start', { json: {} })).body).toMatchObject({ status: 'in_progress' });
    expect((await move('complete', { body: '', headers: { 'content-type': 'application/json' } })).body).toMatchObject({ status: 'completed' });
    // The body's fault first, then the move's own (a completed job cannot be cancelled).
    expect((await move('cancel', { json: [1] })).body.errors).toEqual([{ param: 'body', message: 'must be empty: this operation takes no body' }, { param: 'status', message: 'is completed' }]);
    expect((await move('cancel', { json: 'now' })).status).toBe(400);
    // Read as no body: the move itself answers.
    for (const nothing of [null, []]) expect((await move('cancel', { body: JSON.stringify(nothing), headers: { 'content-type': 'application/json' } })).status, JSON.stringify(nothing)).toBe(409);
    const deleted = await acme.post('/customers', { name: 'Alan Turing' });
    expect((await call(`${api.url}/v1/customers/${deleted.body.id}`, { method: 'DELETE', key: api.keys.acme })).status).toBe(204);
    expect((await call(`${api.url}/v1/customers/${deleted.body.id}/restore`, { method: 'POST', key: api.keys.acme })).status).toBe(200);
  });
});

// CSV imports (CONTRACT section 10, issue #28): POST /v1/imports?resource=customers&mode=...
// with the file as the body answers 202 { id, status }; the rows are written in the
// background, each with its single call's checks; GET /v1/imports/{id} counts them and names
// each refused row's faults; the import ends with one import.completed event (waited for as
// a webhook, not slept on).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, gql, rest, startApi, type Api } from '../helpers/api.js';
import { DB_KINDS } from '../helpers/databases.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

const LOCAL = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_TIMEOUT_MS: '2000', RATE_LIMIT_MAX: '5000', RATE_LIMIT_WINDOW_SECONDS: '86400' };

describe.each(DB_KINDS)('CSV imports on %s', (kind) => {
  let api: Api;
  let receiver: Receiver;
  let acme: ReturnType<typeof rest>;
  const postCsv = (query: string, csv: string, key = api.keys.acme!, type = 'text/csv') =>
    call(`${api.url}/v1/imports?${query}`, { method: 'POST', key, headers: { 'content-type': type }, body: csv });
  /** Waits for the n-th import.completed webhook and answers its event. */
  const completed = async (n: number) => {
    const received = await receiver.waitFor(n);
    return JSON.parse(received[n - 1]!.body) as { type: string; data: { object: Record<string, unknown> } };
  };

  beforeAll(async () => {
    receiver = await startReceiver();
    api = await startApi(kind, { acme: { org: 'Acme' }, other: { org: 'Other' }, reader: { org: 'Acme', scopes: 'customers:read' } }, LOCAL);
    acme = rest(api, api.keys.acme!);
    const endpoint = await acme.post('/webhook_endpoints', { url: `${receiver.url}/hook`, event_types: ['import.completed'] });
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
  });
  afterAll(async () => {
    await api.stop();
    await receiver.close();
  });

  it('writes the good rows, names each bad row by its number, and ends with import.completed', async () => {
    const csv = [
      'name,email,phone,external_id,metadata.tier',
      'Ada,ada@import.example,,imp-1,gold',
      'Bad Mail,not-an-email,,,',
      '"Quoted, Name",quoted@import.example,+14155550100,,',
      'Too,Few',
      ',blank-name@import.example,,,',
      'Grace,grace@import.example,,imp-1,', // the external id row 1 holds
      '',
    ].join('\r\n');
    const started = await postCsv('resource=customers&mode=create', csv);
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    expect(started.body).toEqual({ id: expect.any(String), status: 'pending' });
    expect(started.headers.get('location')).toBe(`/v1/imports/${started.body.id}`);

    const event = await completed(1);
    expect(event.type).toBe('import.completed');
    expect(event.data.object).toMatchObject({ id: started.body.id, status: 'completed', total: 6, created: 2, updated: 0, failed: 4 });

    // The event log shows it too (events:read), so its seq leaves no gap.
    const { seq, id: eventId } = event as unknown as { seq: number; id: string };
    const logged = (await acme.get(`/events?seq=${seq}`)).body.data;
    expect(logged).toMatchObject([{ id: eventId, type: 'import.completed', data: { object: { id: started.body.id, status: 'completed' } } }]);

    const result = await acme.get(`/imports/${started.body.id}`);
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({ id: started.body.id, status: 'completed', resource: 'customers', mode: 'create', total: 6, created: 2, updated: 0, failed: 4 });
    // Each refused row names what its single call would have named.
    const single = (await acme.post('/customers', { name: 'Bad Mail', email: 'not-an-email' })).body.errors as Array<{ param: string; message: string }>;
    expect(single).toHaveLength(1);
    expect(result.body.errors).toEqual([
      { row: 2, ...single[0] },
      { row: 4, param: null, message: 'has 2 cells; the header has 5 columns' },
      { row: 5, param: 'name', message: 'is required' },
      { row: 6, param: 'external_id', message: expect.stringMatching(/^is already the external id of customer [0-9a-f-]{36}$/) },
    ]);
    const customers = (await acme.get('/customers?search=import.example')).body.data as Array<Record<string, unknown>>;
    expect(customers.map((c) => c.name).sort()).toEqual(['Ada', 'Quoted, Name']);
    expect(customers.find((c) => c.name === 'Ada')).toMatchObject({ external_id: 'imp-1', metadata: { tier: 'gold' } });
    // Each created row wrote its own customer.created event, as its single call would.
    const events = (await acme.get('/events?type=customer.created&limit=100')).body.data as Array<{ data: { object: { id: string } } }>;
    for (const customer of customers) expect(events.filter((e) => e.data.object.id === customer.id)).toHaveLength(1);
  });

  it('mode=upsert updates the record holding each external id and creates the others', async () => {
    const held = await call(`${api.url}/v1/customers/by_external_id/up-1`, { method: 'PUT', key: api.keys.acme, json: { name: 'Before', email: 'before@upsert.example' } });
    expect(held.status).toBe(201);
    const csv = 'external_id,name,email\nup-1,After,after@upsert.example\nup-2,New,new@upsert.example\n,Nobody,nobody@upsert.example\n';
    const started = await postCsv('resource=customers&mode=upsert', csv);
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    await completed(2);
    const result = (await acme.get(`/imports/${started.body.id}`)).body;
    expect(result).toMatchObject({ status: 'completed', total: 3, created: 1, updated: 1, failed: 1 });
    expect(result.errors).toEqual([{ row: 3, param: 'external_id', message: 'is required for an upsert' }]);
    expect((await acme.get(`/customers/${held.body.id}`)).body).toMatchObject({ name: 'After', email: 'after@upsert.example', version: 2 });
    expect((await acme.get('/customers?external_id=up-2')).body.data).toHaveLength(1);
  });

  it('refuses a file it cannot run before anything runs: unknown columns named, the type, the resource', async () => {
    const before = (await acme.get('/customers')).body.pagination.total;
    const unknown = await postCsv('resource=customers', 'name,emial,metadata.ok\nA,a@x.example,1\n');
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors).toEqual([{ param: 'emial', message: expect.stringContaining('is not a column') }]);
    const noKey = await postCsv('resource=customers&mode=upsert', 'name\nA\n');
    expect(noKey.body.errors).toEqual([{ param: 'external_id', message: expect.stringContaining('required column') }]);
    expect((await postCsv('resource=customers', 'email\na@x.example\n')).body.errors).toEqual([{ param: 'name', message: 'is a required column' }]);
    expect((await postCsv('mode=create', 'name\nA\n')).body.errors).toEqual([{ param: 'resource', message: expect.stringContaining('is required') }]);
    expect((await postCsv('resource=jobs', 'name\nA\n')).status).toBe(400);
    expect((await postCsv('resource=customers', 'name\n"A\n')).body.errors).toEqual([{ param: 'csv', message: expect.stringContaining('is not valid CSV') }]);
    expect((await postCsv('resource=customers', 'name\nA\u0000\n')).body.errors).toEqual([{ param: 'csv', message: 'must not contain a NUL character' }]);
    expect((await postCsv('resource=customers', 'name\n')).body.errors).toEqual([{ param: 'csv', message: 'has no data rows below its header' }]);
    expect((await postCsv('resource=customers', '{"name":"A"}', api.keys.acme!, 'application/json')).status).toBe(415);
    expect((await acme.get('/customers')).body.pagination.total).toBe(before);
  });

  it('keeps the first 1,000 errors and counts every failed row; refuses more than 100,000 rows', async () => {
    const rows = Array.from({ length: 1050 }, (_, i) => `Row ${i + 1},bad-${i + 1}`);
    const started = await postCsv('resource=customers', ['name,email', ...rows].join('\n'));
    expect(started.status).toBe(202);
    const event = await completed(3);
    expect(event.data.object).toMatchObject({ id: started.body.id, total: 1050, created: 0, failed: 1050 });
    const result = (await acme.get(`/imports/${started.body.id}`)).body;
    expect(result).toMatchObject({ status: 'completed', total: 1050, created: 0, failed: 1050 });
    expect(result.errors).toHaveLength(1000);
    expect(result.errors.map((e: { row: number }) => e.row)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
    const tooLong = await postCsv('resource=customers', `name\n${'A\n'.repeat(100_001)}`);
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.errors).toEqual([{ param: 'csv', message: 'has more than 100000 rows' }]);
  });

  it('a dry run answers 202 and keeps nothing', async () => {
    const tried = await postCsv('resource=customers', 'name\nDry\n', api.keys.acme!);
    expect(tried.status).toBe(202);
    const dry = await call(`${api.url}/v1/imports?resource=customers`, { method: 'POST', key: api.keys.acme, headers: { 'content-type': 'text/csv', prefer: 'dry-run' }, body: 'name\nDry run\n' });
    expect(dry.status).toBe(202);
    expect(dry.headers.get('dry-run')).toBe('true');
    expect((await acme.get(`/imports/${dry.body.id}`)).status).toBe(404);
    // The next import.completed is the real one's: the dry run's import never existed.
    expect((await completed(4)).data.object.id).toBe(tried.body.id);
    expect((await acme.get(`/imports/${tried.body.id}`)).body).toMatchObject({ status: 'completed', created: 1 });
  });

  it("keeps imports to their organization and to the resource's write scope", async () => {
    const started = await postCsv('resource=customers', 'name\nMine\n');
    expect(started.status).toBe(202);
    await completed(5);
    expect((await rest(api, api.keys.other!).get(`/imports/${started.body.id}`)).status).toBe(404);
    expect((await rest(api, api.keys.reader!).get(`/imports/${started.body.id}`)).status).toBe(403);
    expect((await postCsv('resource=customers', 'name\nNot mine\n', api.keys.reader!)).status).toBe(403);
    expect((await rest(api, api.keys.other!).get('/customers?search=Mine')).body.data).toEqual([]);
    expect((await acme.get('/imports/not-a-uuid')).status).toBe(404);
  });

  it('runs from GraphQL too', async () => {
    const data = await gql(api, api.keys.acme!, 'mutation($csv: String!) { createImport(resource: customers, mode: create, csv: $csv) { id status total } }', { csv: 'name,email\nGraph,graph@import.example\n' });
    expect(data.createImport).toEqual({ id: expect.any(String), status: 'pending', total: 1 });
    await completed(6);
    const read = await gql(api, api.keys.acme!, 'query($id: ID!) { import(id: $id) { status created failed errors { row } } }', { id: data.createImport.id });
    expect(read.import).toEqual({ status: 'completed', created: 1, failed: 0, errors: [] });
  });

  it('an Idempotency-Key covers an import over 1 MiB, and the query is part of the request it names', async () => {
    // One row whose name is too long: over 1 MiB, and quick to refuse.
    const csv = `name,email\n${'x'.repeat(1_100_000)},big@import.example\n`;
    const send = (mode: string) =>
      call(`${api.url}/v1/imports?resource=customers&mode=${mode}`, { method: 'POST', key: api.keys.acme!, headers: { 'content-type': 'text/csv', 'idempotency-key': 'big-import' }, body: csv });
    const first = await send('create');
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    const again = await send('create');
    expect(again.status).toBe(202);
    expect(again.body.id).toBe(first.body.id);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const other = await send('upsert');
    expect(other.status).toBeGreaterThanOrEqual(400);
    expect(other.body.detail).toMatch(/Idempotency-Key/i);
    await expect.poll(async () => (await acme.get(`/imports/${first.body.id}`)).body.status, { timeout: 30_000 }).toBe('completed');
    expect((await acme.get(`/imports/${first.body.id}`)).body).toMatchObject({ total: 1, created: 0, failed: 1 });
  });

  it('an import counts one rate-limit unit per thousand rows', async () => {
    const remaining = async (response: Promise<{ headers: Headers }>) => Number((await response).headers.get('ratelimit-remaining'));
    const before = await remaining(acme.get('/customers?limit=1'));
    // 2,500 rows of which none is valid (no name): quick to refuse, counted as 3 units.
    const csv = `name,email\n${Array.from({ length: 2500 }, () => ',x@import.example').join('\n')}\n`;
    const started = postCsv('resource=customers&mode=create', csv);
    const after = await remaining(started);
    expect((await started).status).toBe(202);
    expect(before - after).toBe(3);
    const id = ((await started).body as { id: string }).id;
    await expect.poll(async () => (await acme.get(`/imports/${id}`)).body.status, { timeout: 60_000 }).toBe('completed');
  });
});

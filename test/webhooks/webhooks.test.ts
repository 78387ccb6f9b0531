// Webhooks over HTTP, as an integration meets them: endpoints (secret shown once, rotation),
// deliveries signed per the Standard Webhooks specification (checked with its reference
// library, not the service's code), retries on a compressed schedule, Retry-After, 410,
// resend, the delivery log, refused private addresses, and a crash mid-delivery.
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { call, gql, makeKeys, rest, serveInProcess, startApi, type Api } from '../helpers/api.js';
import { DB_KINDS, migratedDatabase } from '../helpers/databases.js';
import { startServer } from '../helpers/processes.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

const LOCAL = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_SCHEDULE: '0.2,0.4,0.4', WEBHOOK_TIMEOUT_MS: '2000' };

/** Verifies a delivery with the specification's reference library; answers the event. */
function verified(secret: string, request: { headers: Record<string, unknown>; body: string }) {
  const headers = Object.fromEntries(['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => [name, String(request.headers[name])]));
  return new Webhook(secret).verify(request.body, headers) as { id: string; type: string; data: { object: Record<string, unknown> } };
}

describe.each(DB_KINDS)('webhooks on %s', (kind) => {
  let api: Api;
  let acme: ReturnType<typeof rest>;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    api = await startApi(kind, { acme: { org: 'Acme' }, reader: { org: 'Acme', scopes: 'webhooks:read' }, other: { org: 'Other Co' } }, LOCAL);
    acme = rest(api, api.keys.acme!);
  });
  afterAll(async () => {
    await api.stop();
    await receiver.close();
  });
  // Each test hears only its own endpoints.
  afterEach(async () => {
    receiver.answer(() => ({ status: 204 }));
    for (const { id } of (await acme.get('/webhook_endpoints?limit=100')).body.data) await acme.delete(`/webhook_endpoints/${id}`);
  });

  /** The endpoint's delivery log once it holds `count` attempts (an attempt is logged just after its answer). */
  const logOf = async (id: string, count: number) => {
    for (;;) {
      const log = (await acme.get(`/webhook_endpoints/${id}/deliveries?limit=100`)).body.data as Array<{ event_id: string; status_code: number | null; error: string | null; duration_ms: number }>;
      if (log.length >= count) return log;
    }
  };

  const endpoint = async (body: Record<string, unknown> = {}) => {
    const response = await acme.post('/webhook_endpoints', { url: `${receiver.url}/hook`, ...body });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    return response.body as { id: string; secret: string; url: string; event_types: string[]; enabled: boolean };
  };

  it('an endpoint answers its secret once; reads never show it; scopes webhooks:read and :write', async () => {
    const created = await endpoint({ description: 'Accounting', event_types: ['invoice.paid'] });
    expect(created).toMatchObject({ secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{32}$/), event_types: ['invoice.paid'], enabled: true, description: 'Accounting' });
    const read = await rest(api, api.keys.reader!).get(`/webhook_endpoints/${created.id}`);
    expect(read.status).toBe(200);
    expect(read.body).not.toHaveProperty('secret');
    expect(JSON.stringify((await acme.get('/webhook_endpoints')).body)).not.toContain(created.secret);
    expect((await rest(api, api.keys.reader!).post('/webhook_endpoints', { url: 'https://example.com' })).status).toBe(403);
    expect((await rest(api, api.keys.other!).get(`/webhook_endpoints/${created.id}`)).status).toBe(404);
    const changed = await acme.patch(`/webhook_endpoints/${created.id}`, { enabled: false, event_types: [] });
    expect(changed.body).toMatchObject({ enabled: false, event_types: [] });
    expect((await acme.delete(`/webhook_endpoints/${created.id}`)).status).toBe(204);
    expect((await acme.get(`/webhook_endpoints/${created.id}`)).status).toBe(404);
  });

  it('refuses unknown event types and malformed URLs, naming the field', async () => {
    const response = await acme.post('/webhook_endpoints', { url: 'ftp://example.com/x', event_types: ['invoice.paid', 'invoice.exploded'] });
    expect(response.status).toBe(400);
    expect(response.body.errors.map((e: { param: string }) => e.param).sort()).toEqual(['event_types', 'url']);
    expect(response.body.errors.find((e: { param: string }) => e.param === 'event_types').message).toContain('invoice.exploded');
  });

  it('delivers each event signed over the exact bytes sent, with a stable webhook-id; filters by type', async () => {
    const all = await endpoint();
    const paidOnly = await endpoint({ event_types: ['invoice.paid'] });
    const start = receiver.received.length;
    const customer = (await acme.post('/customers', { name: 'Hooked' })).body;
    const [request] = (await receiver.waitFor(start + 1)).slice(start);
    const event = verified(all.secret, request!);
    expect(event).toMatchObject({ type: 'customer.created', data: { object: customer } });
    expect(request!.headers['webhook-id']).toBe(event.id);
    expect(request!.headers['content-type']).toBe('application/json');
    expect(() => verified(paidOnly.secret, request!)).toThrow();
    expect(Math.abs(Number(request!.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(30);
    expect((await logOf(all.id, 1))[0]).toMatchObject({ event_id: event.id, status_code: 204, error: null, duration_ms: expect.any(Number) });
  });

  it('retries failures on the schedule with the same webhook-id, re-signed each time, and honours Retry-After', async () => {
    const hook = await endpoint();
    const start = receiver.received.length;
    let calls = 0;
    receiver.answer(() => (++calls === 1 ? { status: 500 } : calls === 2 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 200 }));
    await acme.post('/customers', { name: 'Retried' });
    const attempts = (await receiver.waitFor(start + 3)).slice(start, start + 3);
    receiver.answer(() => ({ status: 204 }));
    expect(new Set(attempts.map((a) => a.headers['webhook-id'])).size).toBe(1);
    for (const attempt of attempts) expect(verified(hook.secret, attempt).type).toBe('customer.created');
    // The schedule says 0.4 s after the 429; its Retry-After said 1 s.
    expect(attempts[2]!.at - attempts[1]!.at).toBeGreaterThanOrEqual(900);
    expect((await logOf(hook.id, 3)).map((a) => a.status_code)).toEqual([200, 429, 500]);
  });

  it('a delivery that keeps failing is marked failed after the last attempt, and can be resent by hand', async () => {
    const hook = await endpoint();
    const start = receiver.received.length;
    receiver.answer(() => ({ status: 503 }));
    await acme.post('/customers', { name: 'Unlucky' });
    const attempts = (await receiver.waitFor(start + 4)).slice(start);
    const eventId = String(attempts[0]!.headers['webhook-id']);
    receiver.answer(() => ({ status: 204 }));
    // One first attempt and three retries: then it stops.
    expect((await logOf(hook.id, 4)).map((a) => a.status_code)).toEqual([503, 503, 503, 503]);
    expect(receiver.received.length).toBe(start + 4);
    const resent = await acme.post(`/events/${eventId}/resend`, { endpoint_id: hook.id });
    expect(resent.status).toBe(200);
    expect(resent.body.id).toBe(eventId);
    const [again] = (await receiver.waitFor(start + 5)).slice(start + 4);
    expect(again!.headers['webhook-id']).toBe(eventId);
    expect(verified(hook.secret, again!).id).toBe(eventId);
    expect((await acme.post(`/events/${eventId}/resend`, { endpoint_id: '00000000-0000-4000-8000-000000000000' })).status).toBe(400);
  });

  it('a 410 disables the endpoint', async () => {
    const hook = await endpoint();
    const start = receiver.received.length;
    receiver.answer(() => ({ status: 410 }));
    await acme.post('/customers', { name: 'Gone' });
    await receiver.waitFor(start + 1);
    receiver.answer(() => ({ status: 204 }));
    // The attempt and the endpoint's disabling are recorded together.
    await logOf(hook.id, 1);
    const state = (await acme.get(`/webhook_endpoints/${hook.id}`)).body;
    expect(state).toMatchObject({ enabled: false, disabled_reason: 'The endpoint answered 410 Gone.' });
    await acme.post('/customers', { name: 'Unheard' });
    expect((await logOf(hook.id, 1)).length).toBe(1);
    expect(receiver.received.length).toBe(start + 1);
  });

  it('a rotated secret keeps signing beside the new one for a day', async () => {
    const hook = await endpoint();
    const rotated = await acme.post(`/webhook_endpoints/${hook.id}/rotate_secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(hook.secret);
    const start = receiver.received.length;
    await acme.post('/customers', { name: 'Rotated' });
    const [request] = (await receiver.waitFor(start + 1)).slice(start);
    expect(String(request!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verified(hook.secret, request!).type).toBe('customer.created');
    expect(verified(rotated.body.secret, request!).type).toBe('customer.created');
  });

  it('a create retried with its Idempotency-Key answers the same secret, which is not stored in the clear', async () => {
    const first = await acme.post('/webhook_endpoints', { url: `${receiver.url}/once` }, { 'idempotency-key': 'endpoint-once' });
    const retry = await acme.post('/webhook_endpoints', { url: `${receiver.url}/once` }, { 'idempotency-key': 'endpoint-once' });
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toEqual(first.body);
    expect((await acme.get('/webhook_endpoints')).body.pagination.total).toBe(1);
    if (kind === 'postgres') {
      const client = new pg.Client({ connectionString: api.db.env.DATABASE_URL });
      await client.connect();
      const { rows } = await client.query<{ dump: string }>("SELECT concat_ws(' ', (SELECT string_agg(body, ' ') FROM idempotency_keys), (SELECT string_agg(secret, ' ') FROM webhook_endpoints)) AS dump");
      await client.end();
      expect(rows[0]!.dump).not.toContain(first.body.secret);
      expect(rows[0]!.dump).not.toContain('whsec_');
    }
  });

  it('GraphQL manages endpoints too', async () => {
    const data = await gql(api, api.keys.acme!, `mutation { createWebhookEndpoint(input: { url: "${receiver.url}/gql", eventTypes: ["job.completed"] }) { id secret eventTypes } }`);
    expect(data.createWebhookEndpoint).toMatchObject({ secret: expect.stringMatching(/^whsec_/), eventTypes: ['job.completed'] });
    const listed = await gql(api, api.keys.acme!, '{ webhookEndpoints { data { id url } pagination { total } } }');
    expect(listed.webhookEndpoints.data.map((e: { id: string }) => e.id)).toContain(data.createWebhookEndpoint.id);
    await gql(api, api.keys.acme!, `mutation { deleteWebhookEndpoint(id: "${data.createWebhookEndpoint.id}") { id } }`);
  });
});

describe.each(DB_KINDS)('webhook safety and crashes on %s', (kind) => {
  it('refuses private and loopback addresses when saving, and again at delivery', async () => {
    const receiver = await startReceiver();
    // Saved while private addresses are allowed; then the policy tightens.
    const api = await startApi(kind, { acme: { org: 'Acme' } }, LOCAL);
    let server = api.server;
    try {
      const hook = (await rest(api, api.keys.acme!).post('/webhook_endpoints', { url: `${receiver.url}/x` })).body;
      await server.stop();
      server = await serveInProcess({ ...api.db.env, ...LOCAL, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' });
      const strict = rest({ url: server.url }, api.keys.acme!);
      for (const url of [`${receiver.url}/x`, 'http://10.1.2.3/x', 'http://169.254.169.254/latest/meta-data', 'http://[::1]:8080/x', 'http://localhost/x', 'http://[::127.0.0.1]/x', 'http://[::7f00:1]/x', 'http://[2002:7f00:1::]/x']) {
        const refused = await strict.post('/webhook_endpoints', { url });
        expect(refused.status, url).toBe(400);
        expect(refused.body.errors[0]).toMatchObject({ param: 'url', message: expect.stringContaining('not allowed') });
        // What the host resolved to is the resolver's answer, not the client's business.
        expect(refused.body.errors[0].message, url).not.toMatch(/127\.0\.0\.1|::1|localhost|10\.1\.2\.3/);
      }
      await strict.post('/customers', { name: 'Not for loopback' });
      let log: Array<{ error: string | null }> = [];
      while (log.length === 0) log = (await strict.get(`/webhook_endpoints/${hook.id}/deliveries`)).body.data;
      expect(log[0]!.error).toContain('not allowed');
      expect(log[0]!.error).not.toContain('127.0.0.1');
      expect(receiver.received).toEqual([]);
    } finally {
      await server.stop();
      await api.db.drop();
      await receiver.close();
    }
  }, 60_000);

  it('a process killed mid-delivery leaves the delivery to be sent again, with the same webhook-id', async () => {
    const receiver = await startReceiver();
    const env = { ...LOCAL, WEBHOOK_LEASE_SECONDS: '2' };
    // A process of its own: the test kills it.
    const db = await migratedDatabase(kind);
    const keys = await makeKeys(db, { acme: { org: 'Acme' } });
    const killed = await startServer({ ...db.env, ...env });
    let server: { stop(): Promise<unknown> } = killed;
    const api = { url: killed.url, db, keys };
    try {
      const acme = rest(api, api.keys.acme!);
      const hook = (await acme.post('/webhook_endpoints', { url: `${receiver.url}/crash` })).body;
      // The first request hangs: the server is between sending and recording when it dies.
      receiver.answer(() => new Promise(() => undefined));
      await acme.post('/customers', { name: 'Interrupted' });
      const [first] = await receiver.waitFor(1);
      receiver.answer(() => ({ status: 204 }));
      await killed.stop('SIGKILL');
      // The instance that sends it again serves in this process: only the killed one must be a process.
      server = await serveInProcess({ ...api.db.env, ...env });
      const [, second] = await receiver.waitFor(2, 30_000);
      expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
      expect(verified(hook.secret, second!).type).toBe('customer.created');
    } finally {
      await server.stop();
      await api.db.drop();
      await receiver.close();
    }
  }, 60_000);
});

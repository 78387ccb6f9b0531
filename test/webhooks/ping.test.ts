// POST /v1/webhook_endpoints/{id}/test: a `webhook.ping` sent now, signed as deliveries are
// (checked with the Standard Webhooks reference library), answered with the attempt; scope
// webhooks:write, another organization's endpoint is a 404, the address policy holds, and
// the ping stays out of the event log and the delivery log.
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { gql, rest, serveInProcess, startApi, type Api } from '../helpers/api.js';
import { DB_KINDS } from '../helpers/databases.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

const LOCAL = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_TIMEOUT_MS: '2000' };

interface Ping {
  id: string;
  type: string;
  created_at: string;
  data: { object: { id: string; url: string } };
  request_id: string;
}

function verified(secret: string, request: { headers: Record<string, unknown>; body: string }): Ping {
  const headers = Object.fromEntries(['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => [name, String(request.headers[name])]));
  return new Webhook(secret).verify(request.body, headers) as Ping;
}

describe.each(DB_KINDS)('testing a webhook endpoint on %s', (kind) => {
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
  afterEach(() => receiver.answer(() => ({ status: 204 })));

  const endpoint = async (body: Record<string, unknown> = {}) => {
    const response = await acme.post('/webhook_endpoints', { url: `${receiver.url}/hook`, event_types: ['invoice.paid'], ...body });
    expect(response.status).toBe(201);
    return response.body as { id: string; secret: string; url: string };
  };

  it('sends a signed webhook.ping now and answers the attempt', async () => {
    const created = await endpoint();
    const start = receiver.received.length;
    const answer = await acme.post(`/webhook_endpoints/${created.id}/test`);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ status_code: 204, duration_ms: expect.any(Number), error: null });
    // Answered after the receiver answered: the request is already there.
    const [request] = receiver.received.slice(start);
    expect(receiver.received.length - start).toBe(1);
    const ping = verified(created.secret, request!);
    expect(ping).toEqual({
      id: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
      type: 'webhook.ping',
      created_at: expect.any(String),
      data: { object: { id: created.id, url: created.url, description: null, event_types: ['invoice.paid'], enabled: true } },
      request_id: answer.headers.get('x-request-id'),
    });
    expect(request!.headers['webhook-id']).toBe(ping.id);
    expect(request!.headers['content-type']).toBe('application/json');
    // Not an event of the log, and not a delivery: no seq, not listed, nothing in the delivery log.
    expect(ping).not.toHaveProperty('seq');
    expect((await acme.get(`/events/${ping.id}`)).status).toBe(404);
    expect((await acme.get(`/webhook_endpoints/${created.id}/deliveries`)).body.data).toEqual([]);
  });

  it("answers the receiver's status code: 500 is an attempt that failed", async () => {
    const created = await endpoint();
    receiver.answer(() => ({ status: 500 }));
    const answer = await acme.post(`/webhook_endpoints/${created.id}/test`);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ status_code: 500, duration_ms: expect.any(Number), error: 'the endpoint answered 500' });
  });

  it('reaches a disabled endpoint too, signed with a secret rotated out today as well', async () => {
    const created = await endpoint();
    expect((await acme.patch(`/webhook_endpoints/${created.id}`, { enabled: false })).status).toBe(200);
    const rotated = (await acme.post(`/webhook_endpoints/${created.id}/rotate_secret`)).body as { secret: string };
    const start = receiver.received.length;
    expect((await acme.post(`/webhook_endpoints/${created.id}/test`)).body).toMatchObject({ status_code: 204 });
    const [request] = receiver.received.slice(start);
    expect(verified(rotated.secret, request!).type).toBe('webhook.ping');
    expect(verified(created.secret, request!).type).toBe('webhook.ping');
  });

  it('needs webhooks:write; another organization\'s endpoint or a malformed id is a 404', async () => {
    const created = await endpoint();
    const start = receiver.received.length;
    const forbidden = await rest(api, api.keys.reader!).post(`/webhook_endpoints/${created.id}/test`);
    expect([forbidden.status, forbidden.body.detail]).toEqual([403, 'This API key lacks the scope webhooks:write.']);
    expect((await rest(api, api.keys.other!).post(`/webhook_endpoints/${created.id}/test`)).status).toBe(404);
    expect((await acme.post('/webhook_endpoints/not-an-id/test')).status).toBe(404);
    expect((await acme.get(`/webhook_endpoints/${created.id}/test`)).status).toBe(405);
    expect(receiver.received.length).toBe(start);
  });

  it('is the GraphQL mutation testWebhookEndpoint', async () => {
    const created = await endpoint();
    const data = await gql<{ testWebhookEndpoint: { statusCode: number; durationMs: number; error: null } }>(
      api,
      api.keys.acme!,
      'mutation($id: ID!) { testWebhookEndpoint(id: $id) { statusCode durationMs error } }',
      { id: created.id },
    );
    expect(data.testWebhookEndpoint).toEqual({ statusCode: 204, durationMs: expect.any(Number), error: null });
  });
});

describe('the address policy', () => {
  it('refuses a private address unless private networks are allowed: the attempt says why, nothing is sent', async () => {
    const receiver = await startReceiver();
    // The endpoint is made where local addresses are allowed; a second instance on the same
    // database, configured without WEBHOOK_ALLOW_PRIVATE_NETWORKS, is asked to test it.
    const api = await startApi('postgres', { acme: { org: 'Acme' } }, LOCAL);
    const strict = await serveInProcess({ ...api.db.env, WEBHOOK_ALLOW_HTTP: 'true' });
    try {
      const created = (await rest(api, api.keys.acme!).post('/webhook_endpoints', { url: `${receiver.url}/hook` })).body as { id: string };
      const answer = await rest(strict, api.keys.acme!).post(`/webhook_endpoints/${created.id}/test`);
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ status_code: null, duration_ms: expect.any(Number), error: expect.stringMatching(/private|loopback/) });
      expect(receiver.received).toHaveLength(0);
    } finally {
      await strict.stop();
      await api.stop();
      await receiver.close();
    }
  }, 60_000);
});

// verifyWebhook on fixed vectors: the Standard Webhooks specification's own example, and
// deliveries signed here with node:crypto's HMAC (not the client's Web Crypto code).
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifyWebhook, WebhookVerificationError } from '../src/index.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const OTHER = 'whsec_bm90IHRoZSBzZWNyZXQgb2YgdGhpcyBlbmRwb2ludA==';
const ID = 'evt_0123456789abcdef0123456789abcdef';
const NOW = 1_700_000_000;
const BODY = JSON.stringify({ id: ID, type: 'customer.created', created_at: '2023-11-14T22:13:20.000Z', data: { object: { id: 'c1', name: 'Ada' } }, request_id: 'r1' });

const sign = (secret: string, id: string, timestamp: number, body: string) =>
  `v1,${createHmac('sha256', Buffer.from(secret.replace(/^whsec_/, ''), 'base64')).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
const headers = (signature: string, timestamp = NOW, id = ID) => ({ 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature });
const at = { now: NOW * 1000 };
const refused = (promise: Promise<unknown>) => expect(promise).rejects.toBeInstanceOf(WebhookVerificationError);

describe('verifyWebhook', () => {
  it("verifies the specification's example vector", async () => {
    const example = { 'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek', 'webhook-timestamp': '1614265330', 'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=' };
    expect(await verifyWebhook('{"test": 2432232314}', example, SECRET, { now: new Date(1614265330_000) })).toEqual({ test: 2432232314 });
    await refused(verifyWebhook('{"test": 2432232314}', example, SECRET, { now: new Date(1614265330_000 + 301_000) }));
  });

  it('answers the event of a valid delivery: body as string or bytes, secret with or without whsec_, headers in any case', async () => {
    const signature = sign(SECRET, ID, NOW, BODY);
    expect(await verifyWebhook(BODY, headers(signature), SECRET, at)).toEqual(JSON.parse(BODY));
    expect((await verifyWebhook(new TextEncoder().encode(BODY), headers(signature), SECRET.slice(6), at)).id).toBe(ID);
    expect((await verifyWebhook(Buffer.from(BODY), { 'Webhook-Id': ID, 'WEBHOOK-TIMESTAMP': String(NOW), 'Webhook-Signature': signature }, SECRET, at)).type).toBe('customer.created');
    expect((await verifyWebhook(BODY, new Headers(headers(signature)), SECRET, at)).id).toBe(ID);
    // Within 5 minutes either way.
    expect((await verifyWebhook(BODY, headers(signature), SECRET, { now: (NOW + 299) * 1000 })).id).toBe(ID);
    expect((await verifyWebhook(BODY, headers(signature), SECRET, { now: (NOW - 299) * 1000 })).id).toBe(ID);
  });

  it('refuses a tampered body, another id or timestamp, and the wrong secret', async () => {
    const signature = sign(SECRET, ID, NOW, BODY);
    await refused(verifyWebhook(BODY.replace('Ada', 'Eve'), headers(signature), SECRET, at));
    await refused(verifyWebhook(`${BODY} `, headers(signature), SECRET, at));
    await refused(verifyWebhook(BODY, headers(signature, NOW + 1), SECRET, { now: (NOW + 1) * 1000 }));
    await refused(verifyWebhook(BODY, headers(signature, NOW, 'evt_ffffffffffffffffffffffffffffffff'), SECRET, at));
    await refused(verifyWebhook(BODY, headers(signature), OTHER, at));
    await refused(verifyWebhook(BODY, headers(sign(OTHER, ID, NOW, BODY)), SECRET, at));
  });

  it('refuses a stale or future timestamp, even correctly signed', async () => {
    const old = NOW - 301;
    await refused(verifyWebhook(BODY, headers(sign(SECRET, ID, old, BODY), old), SECRET, at));
    const future = NOW + 301;
    await refused(verifyWebhook(BODY, headers(sign(SECRET, ID, future, BODY), future), SECRET, at));
    await expect(verifyWebhook(BODY, headers(sign(SECRET, ID, old, BODY), old), SECRET, at)).rejects.toThrow(/too old/);
    // Real time by default: a delivery signed 10 minutes ago is refused.
    const stale = Math.floor(Date.now() / 1000) - 600;
    await refused(verifyWebhook(BODY, headers(sign(SECRET, ID, stale, BODY), stale), SECRET));
  });

  it('accepts any of several signatures: two during a rotation, the second one matching', async () => {
    const two = `${sign(OTHER, ID, NOW, BODY)} ${sign(SECRET, ID, NOW, BODY)}`;
    expect((await verifyWebhook(BODY, headers(two), SECRET, at)).id).toBe(ID);
    expect((await verifyWebhook(BODY, headers(two), OTHER, at)).id).toBe(ID);
    // Other versions and malformed entries are skipped, not fatal.
    const mixed = `v2,${sign(SECRET, ID, NOW, BODY).slice(3)} v1,not*base64 v1 ${sign(SECRET, ID, NOW, BODY)}`;
    expect((await verifyWebhook(BODY, headers(mixed), SECRET, at)).id).toBe(ID);
    await refused(verifyWebhook(BODY, headers(`v2,${sign(SECRET, ID, NOW, BODY).slice(3)}`), SECRET, at));
  });

  it('refuses missing or malformed headers; a parsed body or a bad secret is a TypeError', async () => {
    const signature = sign(SECRET, ID, NOW, BODY);
    await refused(verifyWebhook(BODY, { 'webhook-id': ID, 'webhook-timestamp': String(NOW) }, SECRET, at));
    await refused(verifyWebhook(BODY, { ...headers(signature), 'webhook-timestamp': 'soon' }, SECRET, at));
    await refused(verifyWebhook(BODY, { ...headers(signature), 'webhook-signature': '' }, SECRET, at));
    await expect(verifyWebhook(JSON.parse(BODY), headers(signature), SECRET, at)).rejects.toBeInstanceOf(TypeError);
    await expect(verifyWebhook(BODY, headers(signature), 'whsec_', at)).rejects.toBeInstanceOf(TypeError);
    expect(new WebhookVerificationError('x')).toBeInstanceOf(Error);
    expect(new WebhookVerificationError('x').name).toBe('WebhookVerificationError');
  });
});

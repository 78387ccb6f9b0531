// Standard Webhooks signatures: HMAC-SHA256, keyed by the secret's bytes (base64 after
// `whsec_`), over `{webhook-id}.{webhook-timestamp}.{body}`: the exact bytes sent, signed
// again on every attempt (each has its own timestamp). Several secrets (one just rotated
// out) give several space-separated signatures.
import { createHmac } from 'node:crypto';
import { SECRET_PREFIX } from './secrets.js';

export function signature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** The Standard Webhooks headers of one attempt. */
export function webhookHeaders(secrets: string[], id: string, body: string, now = new Date()): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((secret) => signature(secret, id, timestamp, body)).join(' '),
  };
}

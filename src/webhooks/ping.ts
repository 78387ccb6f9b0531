// "Send a test webhook": a `webhook.ping` to one endpoint, now, signed and sent exactly as a
// delivery is (Standard Webhooks headers, the address policy, no redirects, the timeout), and
// answered with the attempt. A ping is not an event of the log: it takes no `seq` (a receiver
// checking for gaps skips it), is not in `GET /v1/events`, and is neither retried nor written
// to the endpoint's delivery log, whose every row names an event of the log. Its answer is
// its record.
import { randomBytes } from 'node:crypto';
import type { AddressPolicy } from './address.js';
import { post, signingSecrets, type Outcome } from './delivery.js';
import type { SecretBox } from './secrets.js';
import { webhookHeaders } from './signature.js';

export const PING_TYPE = 'webhook.ping';

/** The default of WEBHOOK_TIMEOUT_MS, where the caller has no configuration (tests' apps). */
const DEFAULT_TIMEOUT_MS = 10_000;

export interface PingedEndpoint {
  id: string;
  url: string;
  description: string | null;
  eventTypes: string[];
  enabled: boolean;
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
}

/** The ping's body: an event's shape, its object the endpoint as the API shows it. */
export function pingBody(endpoint: PingedEndpoint, requestId: string, now = new Date()) {
  return {
    id: `evt_${randomBytes(16).toString('hex')}`,
    type: PING_TYPE,
    created_at: now.toISOString(),
    data: { object: { id: endpoint.id, url: endpoint.url, description: endpoint.description, event_types: endpoint.eventTypes, enabled: endpoint.enabled } },
    request_id: requestId,
  };
}

/** Sends one ping to the endpoint (enabled or not: it is asked for by name) and answers how it went. */
export async function ping(endpoint: PingedEndpoint, requestId: string, services: { box(): Promise<SecretBox>; policy: AddressPolicy; timeoutMs?: number }): Promise<Outcome> {
  const event = pingBody(endpoint, requestId);
  const body = JSON.stringify(event);
  const headers = { 'content-type': 'application/json', 'user-agent': 'crm-webhooks/1', ...webhookHeaders(signingSecrets(await services.box(), endpoint), event.id, body) };
  return post(endpoint.url, body, headers, services.policy, services.timeoutMs ?? DEFAULT_TIMEOUT_MS);
}

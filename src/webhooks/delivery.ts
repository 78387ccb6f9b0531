// Webhook delivery, inside the service (no extra process). Every instance runs this loop; a
// due delivery is taken by exactly one of them: one UPDATE claims a batch with a lease, its
// candidates read FOR UPDATE SKIP LOCKED, so two instances never take the same row. The
// attempt is recorded when it ends; an instance that dies in between leaves the lease to
// expire, and the delivery is sent again (the same webhook-id) by whichever instance comes
// next. Deliveries of one record reach an endpoint in commit order: one waits while an
// earlier one of the same record and endpoint is still pending. The loop wakes on every
// committed event (NOTIFY) and once a second for retries that come due.
import { startBackgroundLoop } from '../background-loop.js';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { GraphQLSchema } from 'graphql';
import type { WebhookConfig } from '../config.js';
import type { Database } from '../db/connection.js';
import type { EventHub } from '../events/hub.js';
import { formatEvent } from '../events/format.js';
import type { Logger } from '../logger.js';
import { resolveAllowed, type AddressPolicy } from './address.js';
import type { SecretBox } from './secrets.js';
import { webhookHeaders } from './signature.js';

const POLL_MS = 1000;
const BATCH = 16;
/** Response bodies are read this far and dropped: nobody needs more to log a failure. */
const BODY_CAP = 16 * 1024;

interface Claimed {
  organization_id: string;
  id: string;
  endpoint_id: string;
  event_id: string;
  attempts: number;
}

export interface Outcome {
  statusCode?: number;
  error?: string;
  retryAfterSeconds?: number;
  durationMs: number;
}

/** One POST, to the address checked (DNS can change between check and connect), never following redirects. */
export async function post(url: string, body: string, headers: Record<string, string>, policy: AddressPolicy, timeoutMs: number): Promise<Outcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const target = new URL(url);
  const resolved = await resolveAllowed(target.hostname, policy);
  if ('fault' in resolved) return { error: resolved.fault, durationMs: elapsed() };
  const [{ address, family }] = resolved.addresses as [{ address: string; family: number }];
  const lookup = ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) =>
    options.all ? callback(null, [{ address, family }]) : callback(null, address, family)) as unknown as LookupFunction;
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<Outcome>((resolve) => {
    const req = send(target, { method: 'POST', headers: { ...headers, 'content-length': Buffer.byteLength(body) }, lookup, signal: AbortSignal.timeout(timeoutMs) }, (res: IncomingMessage) => {
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > BODY_CAP) res.destroy();
      });
      const done = () => resolve({ statusCode: res.statusCode, retryAfterSeconds: retryAfter(res.headers['retry-after']), durationMs: elapsed() });
      res.on('end', done);
      res.on('close', done);
      res.on('error', done);
    });
    req.on('error', (error: Error) => resolve({ error: error.name === 'TimeoutError' || error.name === 'AbortError' ? `no answer within ${timeoutMs} ms` : error.message, durationMs: elapsed() }));
    req.end(body);
  });
}

function retryAfter(header: string | undefined): number | undefined {
  if (!header) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim());
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - Date.now()) / 1000);
}

/** The secrets an endpoint's requests are signed with: its own, and one rotated out less than a day ago. */
export function signingSecrets(secrets: SecretBox, endpoint: { secret: string; previousSecret: string | null; previousSecretExpiresAt: Date | null }): string[] {
  const signing = [secrets.open(endpoint.secret)];
  if (endpoint.previousSecret && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt > new Date()) signing.push(secrets.open(endpoint.previousSecret));
  return signing;
}

export interface Deliveries {
  /** Looks for due deliveries now (and again until none is left). */
  wake(): void;
  /** Stops taking deliveries; resolves when the attempts under way have been recorded. */
  stop(): Promise<void>;
}

export function startDeliveries({ db, hub, log, schema, box, config }: { db: Pick<Database, 'background'>; hub: EventHub; log: Logger; schema: GraphQLSchema; box: () => Promise<SecretBox>; config: WebhookConfig }): Deliveries {
  // Connections of their own: requests queueing on the pool must not starve deliveries.
  const prisma = db.background;
  const policy: AddressPolicy = { allowHttp: config.allowHttp, allowPrivate: config.allowPrivateNetworks };
  async function claim(): Promise<Claimed[]> {
    return prisma.$queryRaw<Claimed[]>`
      UPDATE webhook_deliveries d
      SET lease_until = now() + make_interval(secs => ${config.leaseSeconds}), attempts = d.attempts + 1, updated_at = now()
      FROM (
        SELECT c.organization_id, c.id FROM webhook_deliveries c
        JOIN webhook_endpoints e ON e.organization_id = c.organization_id AND e.id = c.endpoint_id AND e.enabled
        WHERE c.status = 'pending' AND c.next_attempt_at <= now() AND (c.lease_until IS NULL OR c.lease_until < now())
          AND NOT EXISTS (
            SELECT 1 FROM webhook_deliveries p
            WHERE p.organization_id = c.organization_id AND p.endpoint_id = c.endpoint_id
              AND p.record_id = c.record_id AND p.status = 'pending' AND p.event_seq < c.event_seq)
        ORDER BY c.next_attempt_at, c.event_seq
        LIMIT ${BATCH}
        FOR UPDATE OF c SKIP LOCKED
      ) due
      WHERE d.organization_id = due.organization_id AND d.id = due.id
      RETURNING d.organization_id, d.id, d.endpoint_id, d.event_id, d.attempts`;
  }

  async function deliver(claimed: Claimed): Promise<void> {
    const where = { organizationId_id: { organizationId: claimed.organization_id, id: claimed.id } };
    const [event, endpoint] = await Promise.all([
      prisma.event.findUnique({ where: { organizationId_id: { organizationId: claimed.organization_id, id: claimed.event_id } } }),
      prisma.webhookEndpoint.findUnique({ where: { organizationId_id: { organizationId: claimed.organization_id, id: claimed.endpoint_id } } }),
    ]);
    if (!event || !endpoint) {
      await prisma.webhookDelivery.updateMany({ where: { organizationId: claimed.organization_id, id: claimed.id }, data: { status: 'failed', leaseUntil: null, lastError: 'the event or the endpoint no longer exists' } });
      return;
    }
    const signing = signingSecrets(await box(), endpoint);
    const body = JSON.stringify(formatEvent(schema, event));
    const headers = { 'content-type': 'application/json', 'user-agent': 'crm-webhooks/1', ...webhookHeaders(signing, event.id, body) };
    const outcome = await post(endpoint.url, body, headers, policy, config.timeoutMs);
    const ok = outcome.statusCode !== undefined && outcome.statusCode >= 200 && outcome.statusCode < 300;
    const gone = outcome.statusCode === 410;
    const error = outcome.error ?? (ok ? null : `the endpoint answered ${outcome.statusCode}`);
    const delay = config.retrySchedule[claimed.attempts - 1];
    const last = delay === undefined;
    await prisma.$transaction([
      prisma.webhookAttempt.create({
        data: { organizationId: claimed.organization_id, endpointId: endpoint.id, deliveryId: claimed.id, eventId: event.id, statusCode: outcome.statusCode ?? null, durationMs: outcome.durationMs, error },
      }),
      prisma.webhookDelivery.update({
        where,
        data: {
          status: ok ? 'succeeded' : gone || last ? 'failed' : 'pending',
          leaseUntil: null,
          lastStatusCode: outcome.statusCode ?? null,
          lastError: error,
          ...(ok || gone || last ? {} : { nextAttemptAt: new Date(Date.now() + nextDelayMs(delay!, outcome.retryAfterSeconds)) }),
        },
      }),
      ...(gone
        ? [prisma.webhookEndpoint.update({ where: { organizationId_id: { organizationId: endpoint.organizationId, id: endpoint.id } }, data: { enabled: false, disabledReason: 'The endpoint answered 410 Gone.' } })]
        : []),
    ]);
    if (gone) log.warn('webhook endpoint disabled: it answered 410', { endpoint_id: endpoint.id });
  }

  // A full batch claimed: there may be more due now.
  async function drain(stopped: () => boolean): Promise<void> {
    let full: boolean;
    do {
      const claimed = await claim();
      await Promise.all(claimed.map((one) => deliver(one).catch((error: Error) => log.error('webhook delivery failed', { delivery_id: one.id, error: error.message }))));
      full = claimed.length === BATCH;
    } while (full && !stopped());
  }

  const loop = startBackgroundLoop({ everyMs: POLL_MS, drain, onError: (error) => log.warn('webhook deliveries could not be claimed', { error: error.message }) });
  const unsubscribe = hub.subscribe(loop.wake);
  return {
    wake: loop.wake,
    async stop() {
      unsubscribe();
      await loop.stop();
    },
  };
}

/** A Retry-After is honoured up to a day: an endpoint cannot park its deliveries for longer. */
const MAX_RETRY_AFTER_SECONDS = 86_400;

/** The schedule's delay with ±10% jitter, or the endpoint's Retry-After when that is longer. */
export function nextDelayMs(delaySeconds: number, retryAfterSeconds: number | undefined): number {
  const jittered = delaySeconds * 1000 * (0.9 + Math.random() * 0.2);
  return Math.max(jittered, Math.min(retryAfterSeconds ?? 0, MAX_RETRY_AFTER_SECONDS) * 1000);
}

// Webhook delivery, inside the service (no extra process). Every instance runs this loop; a
// due delivery is taken by exactly one of them, with statements confined to one organization
// (as Citus, which shards by organization, needs): due candidates are read without locks
// across organizations, then each organization's are taken in one statement that sets a
// lease only where none is held (compare and set, on the rows it locks): of two instances
// that read the same candidate, one takes it. The attempt is recorded when it ends; an
// instance that dies in between leaves the lease to expire, and the delivery is sent again
// (the same webhook-id) by whichever instance comes next. Deliveries of one record reach an
// endpoint in commit order: one is not taken while an earlier one of the same record and
// endpoint is pending, so at most one of a record is under way; different records go
// concurrently, up to a bound per endpoint and per instance. Outcomes are recorded in batches
// (one statement per organization for whatever ended meanwhile). The loop wakes on every
// committed event (NOTIFY), whenever a delivery ends, and once a second for retries due.
import { startBackgroundLoop } from '../background-loop.js';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { GraphQLSchema } from 'graphql';
import type { WebhookConfig } from '../config.js';
import type { Database } from '../db/connection.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import type { EventHub } from '../events/hub.js';
import { formatEvent, type EventRow } from '../events/format.js';
import type { Logger } from '../logger.js';
import { resolveAllowed, type AddressPolicy } from './address.js';
import type { SecretBox } from './secrets.js';
import { webhookHeaders } from './signature.js';

const POLL_MS = 1000;
/** Deliveries an instance has under way at once (sending or being recorded). */
const MAX_IN_FLIGHT = 256;
/** Requests an instance has open to one endpoint at once: one slow receiver cannot take every slot. */
const MAX_PER_ENDPOINT = 64;
/** Due deliveries read at once (a backlog is read once for several passes, not once per pass). */
const READ_AHEAD = 1024;
/** Response bodies are read this far and dropped: nobody needs more to log a failure. */
const BODY_CAP = 16 * 1024;

/** A due delivery as read, before it is taken. */
interface Candidate {
  organization_id: string;
  id: string;
  endpoint_id: string;
}

/** A delivery taken, with its event and endpoint (read in the same statement). */
interface ClaimedRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  attempts: number;
  seq: bigint | null;
  type: string | null;
  resource: string | null;
  object: unknown;
  previous: unknown;
  request_id: string | null;
  event_created_at: Date | null;
  url: string | null;
  secret: string | null;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
}

interface Claimed {
  organizationId: string;
  id: string;
  endpointId: string;
  eventId: string;
  /** Counting this one: the delivery's row holds the same number while the lease is this instance's. */
  attempts: number;
  event?: EventRow;
  endpoint?: { url: string; secret: string; previousSecret: string | null; previousSecretExpiresAt: Date | null };
}

/** How an attempt ended, as its delivery's row and the attempt log record it. */
interface Result {
  claimed: Claimed;
  status: 'succeeded' | 'pending' | 'failed';
  statusCode: number | null;
  error: string | null;
  nextAttemptAt: Date | null;
  /** The request's duration; undefined when nothing was sent (no attempt to log). */
  durationMs?: number;
  endedAt: Date;
  /** The endpoint answered 410: it is disabled with the attempt. */
  gone: boolean;
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

/**
 * Due deliveries, oldest due first, read without locks across organizations (taking them is
 * claim's work): pending, not leased, endpoint enabled, no earlier pending delivery of the
 * same record to the same endpoint (the record's later events wait), and not for the
 * endpoints in `busy` (at their bound). The endpoint check is a per-row subquery, so the scan
 * is always of the due deliveries, in the (status, next_attempt_at) index's order: a backlog
 * is read only as far as `limit`, and the plan's estimate stays low enough that PostgreSQL
 * does not compile it (JIT) on every run.
 */
function dueCandidates(prisma: PrismaClient, limit: number, busy: string[]): Promise<Candidate[]> {
  return prisma.$queryRaw<Candidate[]>`
    SELECT c.organization_id, c.id, c.endpoint_id FROM webhook_deliveries c
    WHERE c.status = 'pending' AND c.next_attempt_at <= now() AND (c.lease_until IS NULL OR c.lease_until < now())
      AND c.endpoint_id <> ALL (${busy}::uuid[])
      AND (SELECT e.enabled FROM webhook_endpoints e WHERE e.organization_id = c.organization_id AND e.id = c.endpoint_id)
      AND NOT EXISTS (
        SELECT 1 FROM webhook_deliveries p
        WHERE p.organization_id = c.organization_id AND p.endpoint_id = c.endpoint_id AND p.record_id = c.record_id
          AND p.status = 'pending' AND p.event_seq < c.event_seq)
    ORDER BY c.next_attempt_at
    LIMIT ${limit}`;
}

/**
 * Takes those of `ids` (one organization's) that are still due, each with a lease, and reads
 * their events and endpoints: one statement on the organization's rows. The conditions are
 * the candidates', checked again on the rows as they are locked, so a row another instance
 * leased meanwhile is not taken twice; rows another instance is taking right now are skipped
 * rather than waited for (within one organization, Citus runs FOR UPDATE on its node). A
 * delivery is taken only while no earlier event of its record is pending to its endpoint
 * (the candidates' rule; a resend of a pending event, with the same event_seq, is not held
 * back by its twin waiting for a retry).
 */
async function claim(prisma: PrismaClient, organizationId: string, ids: string[], leaseSeconds: number): Promise<Claimed[]> {
  const rows = await prisma.$queryRaw<ClaimedRow[]>`
    WITH due AS (
      SELECT d.id FROM webhook_deliveries d
      WHERE d.organization_id = ${organizationId}::uuid AND d.id = ANY (${ids}::uuid[])
        AND d.status = 'pending' AND d.next_attempt_at <= now() AND (d.lease_until IS NULL OR d.lease_until < now())
        AND (SELECT e.enabled FROM webhook_endpoints e WHERE e.organization_id = ${organizationId}::uuid AND e.id = d.endpoint_id)
        AND NOT EXISTS (
          SELECT 1 FROM webhook_deliveries p
          WHERE p.organization_id = ${organizationId}::uuid AND p.endpoint_id = d.endpoint_id AND p.record_id = d.record_id
            AND p.status = 'pending' AND p.event_seq < d.event_seq)
      FOR UPDATE OF d SKIP LOCKED),
    claimed AS (
      UPDATE webhook_deliveries d
      SET lease_until = now() + make_interval(secs => ${leaseSeconds}), attempts = d.attempts + 1, updated_at = now()
      FROM due WHERE d.organization_id = ${organizationId}::uuid AND d.id = due.id
      RETURNING d.id, d.endpoint_id, d.event_id, d.attempts)
    SELECT c.id, c.endpoint_id, c.event_id, c.attempts,
      v.seq, v.type, v.resource, v.object, v.previous, v.request_id, v.created_at AS event_created_at,
      w.url, w.secret, w.previous_secret, w.previous_secret_expires_at
    FROM claimed c
    LEFT JOIN events v ON v.organization_id = ${organizationId}::uuid AND v.id = c.event_id
    LEFT JOIN webhook_endpoints w ON w.organization_id = ${organizationId}::uuid AND w.id = c.endpoint_id`;
  return rows.map((row) => ({
    organizationId,
    id: row.id,
    endpointId: row.endpoint_id,
    eventId: row.event_id,
    attempts: row.attempts,
    event:
      row.seq === null
        ? undefined
        : { id: row.event_id, seq: row.seq, type: row.type!, resource: row.resource!, object: row.object, previous: row.previous, requestId: row.request_id, createdAt: row.event_created_at! },
    endpoint:
      row.url === null ? undefined : { url: row.url, secret: row.secret!, previousSecret: row.previous_secret, previousSecretExpiresAt: row.previous_secret_expires_at },
  }));
}

const GONE = 'The endpoint answered 410 Gone.';

/**
 * Records one organization's ended attempts in one statement (so together, and on Citus on
 * the organization's node): the attempt log, each delivery's state (only while its row still
 * counts this attempt: a holder whose lease ran out and was taken over leaves the row to the
 * new holder), and the endpoints that answered 410, disabled.
 */
async function recordResults(prisma: PrismaClient, organizationId: string, results: Result[]): Promise<void> {
  const column = <T>(of: (r: Result) => T) => results.map(of);
  await prisma.$executeRaw`
    WITH o AS (
      SELECT * FROM unnest(
        ${column((r) => r.claimed.id)}::uuid[], ${column((r) => r.claimed.attempts)}::int[], ${column((r) => r.status)}::text[],
        ${column((r) => r.statusCode)}::int[], ${column((r) => r.error)}::text[], ${column((r) => r.nextAttemptAt?.toISOString() ?? null)}::timestamptz[],
        ${column((r) => r.durationMs ?? null)}::int[], ${column((r) => r.endedAt.toISOString())}::timestamptz[],
        ${column((r) => r.claimed.endpointId)}::uuid[], ${column((r) => r.claimed.eventId)}::text[], ${column((r) => r.gone)}::boolean[])
      AS o(id, attempts, status, status_code, error, next_attempt_at, duration_ms, ended_at, endpoint_id, event_id, gone)),
    logged AS (
      INSERT INTO webhook_attempts (id, organization_id, endpoint_id, delivery_id, event_id, status_code, duration_ms, error, created_at)
      SELECT gen_random_uuid(), ${organizationId}::uuid, o.endpoint_id, o.id, o.event_id, o.status_code, o.duration_ms, o.error, o.ended_at
      FROM o WHERE o.duration_ms IS NOT NULL),
    disabled AS (
      UPDATE webhook_endpoints w SET enabled = false, disabled_reason = ${GONE}, updated_at = now()
      WHERE w.organization_id = ${organizationId}::uuid AND w.id IN (SELECT o.endpoint_id FROM o WHERE o.gone))
    UPDATE webhook_deliveries d
    SET status = o.status, lease_until = NULL, last_status_code = o.status_code, last_error = o.error,
      next_attempt_at = coalesce(o.next_attempt_at, d.next_attempt_at), updated_at = now()
    FROM o WHERE d.organization_id = ${organizationId}::uuid AND d.id = ANY (${column((r) => r.claimed.id)}::uuid[]) AND d.id = o.id AND d.attempts = o.attempts`;
}

/**
 * Batches outcomes: whatever ended while the last batch was being written goes in the next,
 * one statement per organization. Resolves each outcome's promise once it is committed.
 */
function resultRecorder(prisma: PrismaClient, log: Logger): (result: Result) => Promise<void> {
  let queued: Array<{ result: Result; done: () => void; failed: (error: Error) => void }> = [];
  let writing = false;
  async function write(): Promise<void> {
    writing = true;
    while (queued.length > 0) {
      const batch = queued;
      queued = [];
      const byOrganization = new Map<string, typeof batch>();
      for (const item of batch) byOrganization.set(item.result.claimed.organizationId, [...(byOrganization.get(item.result.claimed.organizationId) ?? []), item]);
      // One organization after another: the claims need the background pool's other connection.
      for (const [organizationId, items] of byOrganization) {
        try {
          await recordResults(prisma, organizationId, items.map((item) => item.result));
          for (const item of items) item.done();
          for (const endpointId of new Set(items.filter((item) => item.result.gone).map((item) => item.result.claimed.endpointId))) {
            log.warn('webhook endpoint disabled: it answered 410', { endpoint_id: endpointId });
          }
        } catch (error) {
          for (const item of items) item.failed(error as Error);
        }
      }
    }
    writing = false;
  }
  return (result) =>
    new Promise<void>((done, failed) => {
      queued.push({ result, done, failed });
      if (!writing) void write();
    });
}

export function startDeliveries({ db, hub, log, schema, box, config }: { db: Pick<Database, 'background'>; hub: EventHub; log: Logger; schema: GraphQLSchema; box: () => Promise<SecretBox>; config: WebhookConfig }): Deliveries {
  // Connections of their own: requests queueing on the pool must not starve deliveries.
  const prisma = db.background;
  const policy: AddressPolicy = { allowHttp: config.allowHttp, allowPrivate: config.allowPrivateNetworks };
  const record = resultRecorder(prisma, log);
  /** Deliveries under way (sending, then recording), and the requests open to each endpoint. */
  const underWay = new Set<Promise<void>>();
  const perEndpoint = new Map<string, number>();

  async function attempt(claimed: Claimed): Promise<Result> {
    const { event, endpoint } = claimed;
    if (!event || !endpoint) {
      return { claimed, status: 'failed', statusCode: null, error: 'the event or the endpoint no longer exists', nextAttemptAt: null, endedAt: new Date(), gone: false };
    }
    const body = JSON.stringify(formatEvent(schema, event));
    const headers = { 'content-type': 'application/json', 'user-agent': 'crm-webhooks/1', ...webhookHeaders(signingSecrets(await box(), endpoint), event.id, body) };
    const outcome = await post(endpoint.url, body, headers, policy, config.timeoutMs);
    const ok = outcome.statusCode !== undefined && outcome.statusCode >= 200 && outcome.statusCode < 300;
    const gone = outcome.statusCode === 410;
    const delay = config.retrySchedule[claimed.attempts - 1];
    const last = delay === undefined;
    return {
      claimed,
      status: ok ? 'succeeded' : gone || last ? 'failed' : 'pending',
      statusCode: outcome.statusCode ?? null,
      error: outcome.error ?? (ok ? null : `the endpoint answered ${outcome.statusCode}`),
      nextAttemptAt: ok || gone || last ? null : new Date(Date.now() + nextDelayMs(delay!, outcome.retryAfterSeconds)),
      durationMs: outcome.durationMs,
      endedAt: new Date(),
      gone,
    };
  }

  function begin(claimed: Claimed): void {
    perEndpoint.set(claimed.endpointId, (perEndpoint.get(claimed.endpointId) ?? 0) + 1);
    const answered = attempt(claimed).finally(() => {
      const open = perEndpoint.get(claimed.endpointId)!;
      if (open > 1) perEndpoint.set(claimed.endpointId, open - 1);
      else perEndpoint.delete(claimed.endpointId);
      // The endpoint was at its bound: what waits for it may go now.
      if (open === MAX_PER_ENDPOINT) loop.wake();
    });
    const run: Promise<void> = answered
      .then(record)
      .catch((error: Error) => log.error('webhook delivery failed', { delivery_id: claimed.id, error: error.message }))
      .finally(() => {
        underWay.delete(run);
        // A slot is free, and the record's next delivery may be due now.
        loop.wake();
      });
    underWay.add(run);
  }

  // Due deliveries read ahead and not yet taken (each is checked again as it is taken), and
  // when: one read serves several passes through a backlog, never for longer than POLL_MS
  // (then a new read sees what came due since, and leaves out the endpoints at their bound).
  let ahead: Candidate[] = [];
  let readAt = 0;

  /** Takes from `ahead`, in order, up to `room` deliveries whose endpoints have requests to spare; by organization. */
  function pick(room: number): Map<string, string[]> {
    const chosen = new Map<string, string[]>();
    const taking = new Map<string, number>();
    let count = 0;
    ahead = ahead.filter((candidate) => {
      const open = (perEndpoint.get(candidate.endpoint_id) ?? 0) + (taking.get(candidate.endpoint_id) ?? 0);
      if (count >= room || open >= MAX_PER_ENDPOINT) return true;
      taking.set(candidate.endpoint_id, (taking.get(candidate.endpoint_id) ?? 0) + 1);
      chosen.set(candidate.organization_id, [...(chosen.get(candidate.organization_id) ?? []), candidate.id]);
      count++;
      return false;
    });
    return chosen;
  }

  // Takes due deliveries while there is room; those under way wake the loop as they end.
  async function drain(stopped: () => boolean): Promise<void> {
    let misses = 0;
    // The last read found every due delivery: once they are taken, nothing is due until
    // something wakes the loop again (a commit, a delivery ending, the timer).
    let readAll = false;
    while (!stopped()) {
      const room = MAX_IN_FLIGHT - underWay.size;
      if (room <= 0) return;
      if (ahead.length === 0 || performance.now() - readAt > POLL_MS) {
        if (ahead.length === 0 && readAll) return;
        const busy = [...perEndpoint].filter(([, open]) => open >= MAX_PER_ENDPOINT).map(([id]) => id);
        ahead = await dueCandidates(prisma, READ_AHEAD, busy);
        readAt = performance.now();
        readAll = ahead.length < READ_AHEAD;
      }
      const chosen = pick(room);
      // Nothing is due, or what was read waits for its endpoints' requests to end (they wake the loop).
      if (chosen.size === 0) return;
      // What one organization's claim took is sent even when another's failed (its leases would only expire).
      const settled = await Promise.allSettled([...chosen].map(([organizationId, ids]) => claim(prisma, organizationId, ids, config.leaseSeconds)));
      const claimed = settled.flatMap((one) => (one.status === 'fulfilled' ? one.value : []));
      for (const one of claimed) begin(one);
      const failure = settled.find((one) => one.status === 'rejected');
      if (failure) throw failure.reason;
      // None taken: another instance was first; after two such passes, the next wake-up goes on.
      if (claimed.length > 0) misses = 0;
      else if (++misses > 1) return;
    }
  }

  const loop = startBackgroundLoop({ everyMs: POLL_MS, drain, onError: (error) => log.warn('webhook deliveries could not be claimed', { error: error.message }) });
  const unsubscribe = hub.subscribe(loop.wake);
  return {
    wake: loop.wake,
    async stop() {
      unsubscribe();
      await loop.stop();
      await Promise.all(underWay);
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

// What a first request with an Idempotency-Key leaves behind when it ends, recorded on its
// key: its answer (retries replay it), or nothing (the key is released and a retry runs
// the request again). A request that failed with a server error may still have committed
// (the connection died during COMMIT, or after it): the event log says, since a change's
// events commit in its own transaction and name its request. Nothing there: the key is
// released. Something there: the key answers what was committed, never a second write.
//
// The database may be unreachable just when this is to be recorded; the instance then keeps
// trying in the background (and at once when a retry with the key arrives), so a key never
// stays "in progress" after its request has ended, unless its process died.
import type { GraphQLError } from 'graphql';
import { apiError } from '../errors.js';
import { formatEvent, type EventRow } from '../events/format.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import { graphqlErrorResponse } from '../graphql/error-policy.js';
import type { Logger } from '../logger.js';
import { schema } from '../schema/index.js';
import type { SecretBox } from '../webhooks/secrets.js';
import { problemResponse } from './problem.js';

/** A first request's claim on its key: the key, and the creation time its claim stamped. */
export interface Claim {
  organizationId: string;
  key: string;
  claimedAt: Date;
}

/** A response as a key stores and replays it. */
export interface Answer {
  status: number;
  body: string | null;
  contentType: string | null;
  location: string | null;
  etag: string | null;
}

/** How the first request ended: settled, the key holds `answer` or is free again. */
export type Outcome = { answer: Answer } | { released: true };

/** What the request was, to answer what it committed in its own surface's words. */
export interface Asked {
  /** The request's id, which its changes' events carry (undefined: not known). */
  requestId: string | undefined;
  /** A REST request's address, whole (`/v1/customers`) and past the API's base (`/customers`); undefined for GraphQL. */
  rest: { pathname: string; path: string } | undefined;
}

// Retries of the recording: soon at first (a connection reset heals at once), then every
// few seconds while the database stays away.
const RETRY_DELAYS_MS = [250, 1_000, 2_000, 5_000];
const PERSIST_PAUSE_MS = 50;
// An event is stamped by the database's clock, the claim by this instance's.
const CLOCK_SLACK_MS = 60_000;

export function keyOutcomes(prisma: PrismaClient, log: Logger, box: () => Promise<SecretBox>, abandonedMs: number) {
  const claimed = (claim: Claim) => ({ organizationId: claim.organizationId, key: claim.key, createdAt: claim.claimedAt, status: null });

  async function store(claim: Claim, answer: Answer): Promise<Outcome> {
    const body = answer.body === null ? null : (await box()).seal(answer.body);
    await prisma.idempotencyKey.updateMany({ where: claimed(claim), data: { ...answer, body } });
    return { answer };
  }

  async function release(claim: Claim): Promise<Outcome> {
    await prisma.idempotencyKey.deleteMany({ where: claimed(claim) });
    return { released: true };
  }

  /** The answer to what the request committed, or undefined when it committed nothing. */
  async function committed(claim: Claim, asked: Asked): Promise<Answer | undefined> {
    if (asked.requestId === undefined) return undefined;
    const events = await prisma.$transaction(async (tx) => {
      // A COMMIT whose answer was lost may still be on its way through PostgreSQL (sent, not
      // yet run): looking now could miss it and free a key whose request is about to commit.
      // Every change holds its organization's counters row until it ends (inserts it, the
      // first time): wait for that row first.
      await tx.$executeRaw`SET LOCAL lock_timeout = '2s'`;
      await tx.$executeRaw`INSERT INTO organization_counters (organization_id) VALUES (${claim.organizationId}::uuid) ON CONFLICT DO NOTHING`;
      await tx.$queryRaw`SELECT 1 FROM organization_counters WHERE organization_id = ${claim.organizationId}::uuid FOR SHARE`;
      return tx.event.findMany({
        where: { organizationId: claim.organizationId, requestId: asked.requestId, createdAt: { gte: new Date(claim.claimedAt.getTime() - CLOCK_SLACK_MS) } },
        orderBy: { seq: 'asc' },
      });
    });
    if (events.length === 0) return undefined;
    return (asked.rest && restAnswer(asked.rest, events)) || tookEffect(events, asked);
  }

  /** Settles a request that answered a server error (or threw): did it commit anything? */
  async function check(claim: Claim, asked: Asked): Promise<Outcome> {
    const answer = await committed(claim, asked);
    return answer ? store(claim, answer) : release(claim);
  }

  // The attempt to record each key's outcome that has not succeeded yet, by key.
  const unsettled = new Map<string, () => Promise<Outcome>>();
  const id = (claim: Pick<Claim, 'organizationId' | 'key'>) => `${claim.organizationId}\n${claim.key}`;

  /**
   * Records a first request's outcome (`task`): the outcome if that succeeds within
   * `waitMs`, undefined otherwise; then in the background until it does, for as long as a
   * retry could still be told "in progress". A retry of the key on this instance waits for
   * it (`pending`).
   */
  function settle(claim: Claim, task: () => Promise<Outcome>, waitMs: number): Promise<Outcome | undefined> {
    let current: Promise<Outcome> | undefined;
    let settled = false;
    // One attempt at a time, shared by the background loop and waiting retries.
    const attempt = () =>
      (current ??= task().then(
        (outcome) => {
          settled = true;
          if (unsettled.get(id(claim)) === attempt) unsettled.delete(id(claim));
          return outcome;
        },
        (error: unknown) => {
          current = undefined;
          throw error;
        },
      ));
    unsettled.set(id(claim), attempt);
    const giveUpAt = claim.claimedAt.getTime() + abandonedMs;
    const retry = (round: number) => {
      if (settled) return;
      if (Date.now() > giveUpAt) {
        if (unsettled.get(id(claim)) === attempt) unsettled.delete(id(claim));
        log.warn('gave up recording the outcome of an idempotent request', { organization_id: claim.organizationId });
        return;
      }
      const delay = RETRY_DELAYS_MS[Math.min(round, RETRY_DELAYS_MS.length - 1)]!;
      setTimeout(() => void attempt().catch(() => retry(round + 1)), delay).unref();
    };
    const first = persist(attempt, waitMs);
    first.catch((error: Error) => {
      log.warn('could not record the outcome of an idempotent request yet; retrying', { organization_id: claim.organizationId, error: error.message });
      retry(0);
    });
    return within(first, waitMs);
  }

  /** Waits (up to `waitMs`) for this instance to record the outcome of the key's first request. */
  async function pending(organizationId: string, key: string, waitMs: number): Promise<'none' | 'settled' | 'unsettled'> {
    const attempt = unsettled.get(id({ organizationId, key }));
    if (!attempt) return 'none';
    return (await within(persist(attempt, waitMs), waitMs)) ? 'settled' : 'unsettled';
  }

  return { store, release, check, settle, pending };
}

/**
 * Attempts again and again for `ms`: just after a reset the pool may still hold connections
 * whose end it has not noticed yet (each failed attempt takes one out), and an attempt
 * already under way may have begun before the database came back.
 */
async function persist<T>(attempt: () => Promise<T>, ms: number): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (Date.now() + PERSIST_PAUSE_MS >= until) throw error;
      await new Promise((resolve) => setTimeout(resolve, PERSIST_PAUSE_MS));
    }
  }
}

/** `promise`'s value if it settles successfully within `ms`, else undefined. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, ms, undefined);
  });
  try {
    return await Promise.race([promise.catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}

interface CommittedEvent extends EventRow {
  recordId: string;
}

/**
 * A REST write's answer rebuilt from the event its change committed, as the route would
 * have answered: 201 with Location for a create, 204 for a delete, 200 with the record
 * otherwise. The event's object is the record as REST shows it (events/format.ts).
 */
function restAnswer(rest: { pathname: string; path: string }, events: CommittedEvent[]): Answer | undefined {
  // `/customers` (a create) or `/customers/{id}[/verb]`.
  const itemId = rest.path.split('/')[2];
  const latest = [...events].reverse();
  const event = itemId ? latest.find((e) => e.recordId === itemId) : latest.find((e) => e.type.endsWith('.created'));
  if (!event) return undefined;
  const record = formatEvent(schema, event).data.object;
  const etag = typeof record.version === 'number' ? `"${record.version}"` : null;
  if (event.type.endsWith('.deleted')) return { status: 204, body: null, contentType: null, location: null, etag };
  const created = !itemId;
  return {
    status: created ? 201 : 200,
    body: JSON.stringify(record),
    contentType: 'application/json',
    location: created ? `${rest.pathname}/${event.recordId}` : null,
    etag,
  };
}

/** The answer when the committed result cannot be shown as the request would have: what changed. */
async function tookEffect(events: CommittedEvent[], asked: Asked): Promise<Answer> {
  const records = events.map((e) => ({ type: e.resource, id: e.recordId, event: e.type }));
  const list = records.map((r) => `${r.event} ${r.id}`).join(', ');
  const error: GraphQLError = apiError('CONFLICT', `This request took effect (${list}), but its answer was lost; read those records for their current state.`, {
    details: { records },
  });
  const response = asked.rest ? problemResponse(error, asked.requestId ?? '') : graphqlErrorResponse(error);
  return { status: response.status, body: await response.text(), contentType: response.headers.get('content-type'), location: null, etag: null };
}

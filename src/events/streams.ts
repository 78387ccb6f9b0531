// This instance's open subscriptions: opened within their limits, fed, and ended.
//
// - Fan-out: an organization with open streams is followed by seq (handed out in commit
//   order, so passing seq N means every earlier event was seen): its new events are read
//   once per instance (one statement for every organization due), after a NOTIFY of it (a
//   write that queued a webhook delivery) and every `pollMs` while a stream is open (writes
//   send no NOTIFY otherwise: see the notify_with_deliveries migration); each stream then
//   takes an event or not by its key's scopes and its types, in memory.
// - Limits: open streams per API key (across instances, see key-slots.ts) and per instance,
//   one more is a 429; and what may wait for a slow reader (stream.ts), past which it ends.
// - Ends: a key revoked, deleted or expired ends its streams within a second on every
//   instance (the api_key_changes notice, and a timer for expiry); a lost LISTEN connection,
//   or an event that could not be loaded, ends the streams that may have missed events;
//   shutdown ends them all. Each says why and where to catch up from (`GET /v1/events?after=`).
import type { Scope } from '../auth/scopes.js';
import type { Auth, KeyChangeWatcher } from '../auth/authenticate.js';
import type { Database } from '../db/connection.js';
import type { Subscription } from '../db/notifications.js';
import { apiError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { EventRow } from './format.js';
import { keySlots, type KeySlots, type Slot } from './key-slots.js';
import { EventStream, type EndReason } from './stream.js';

export interface StreamLimits {
  /** Open subscriptions per API key (on PostgreSQL, across every instance). */
  perKey: number;
  /** Open subscriptions per instance (each cluster worker is one). */
  perInstance: number;
  /** Events that may wait for one reader, and their bytes (as JSON), before it is ended. */
  backlogEvents: number;
  backlogBytes: number;
  /** How often (ms) the organizations with open streams are read for new events. */
  pollMs: number;
}

/** The documented limits (docs/API.md, Subscriptions). */
export const STREAM_LIMITS: StreamLimits = { perKey: 20, perInstance: 1000, backlogEvents: 100, backlogBytes: 128 * 1024, pollMs: 100 };

/** How long an open waits for this instance's LISTEN (just started, or reconnecting). */
const READY_WAIT_MS = 2000;
/** How long taking a key's slot may take before the open is refused (503). */
const SLOT_TIMEOUT_MS = 2000;
/** Events loaded by one statement at most. */
const LOAD_BATCH = 500;
/** A key change heard this recently is checked again for a stream that opens (it may have raced it). */
const CHANGE_RACE_MS = 10_000;
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A NOTIFY on the events channel: the organization has new events (and webhook deliveries). */
export interface EventNotice {
  organizationId: string;
}

export interface OpenOptions {
  auth: Auth;
  /** Only events of these types; undefined: all. */
  types?: readonly string[];
  /** The resources a key with these scopes may read events of (asked again when its scopes change). */
  readable(scopes: ReadonlySet<Scope>): readonly string[];
  /** Aborted when the subscriber's connection closes. */
  signal?: AbortSignal;
}

export interface Streams extends KeyChangeWatcher {
  /** Opens a stream, or throws the API error that refuses it (429, 503). */
  open(options: OpenOptions): Promise<EventStream>;
  /** How many are open on this instance. */
  count(): number;
  /** Ends every stream (shutdown): each says so, then completes; no more are opened. */
  endAll(): void;
}

/** What the streams need of the hub's LISTEN connection. */
export interface Listening {
  /** Waits (at most `ms`) until notifications arrive; whether they do. */
  ready(ms: number): Promise<boolean>;
  live(): boolean;
  subscription(): Subscription | undefined;
}

interface Open {
  stream: EventStream;
  keyId: string;
  organizationId: string;
  slot: Slot;
  resources: Set<string>;
  types: Set<string> | undefined;
  readable: OpenOptions['readable'];
}

interface KeyState {
  organizationId: string;
  streams: Set<Open>;
  expiresAt: Date | null;
  timer?: NodeJS.Timeout;
}

const catchUp = (last: string | undefined) => (last ? `GET /v1/events?after=${last}` : 'GET /v1/events?after=<the last event id you received>');
const ending = (code: 'UNAUTHENTICATED' | 'FORBIDDEN' | 'UNAVAILABLE', reason: string, message: (catchUp: string) => string): EndReason => (last) =>
  apiError(code, message(catchUp(last)), { details: { reason, lastEventId: last ?? null } });

export const END_REASONS = {
  revoked: ending('UNAUTHENTICATED', 'KEY_REVOKED', () => 'The API key of this subscription was revoked or deleted; the stream has ended.'),
  expired: ending('UNAUTHENTICATED', 'KEY_EXPIRED', () => 'The API key of this subscription expired; the stream has ended.'),
  unverified: ending('UNAVAILABLE', 'KEY_UNVERIFIED', (c) => `The API key of this subscription changed and could not be checked again (the database is unreachable). Reconnect shortly, then catch up with ${c}.`),
  unreadable: ending('FORBIDDEN', 'SCOPE_REMOVED', () => 'The API key of this subscription no longer has a scope that reads events; the stream has ended.'),
  interrupted: ending('UNAVAILABLE', 'EVENTS_INTERRUPTED', (c) => `This server lost its connection to the database and may have missed events. Reconnect, then catch up with ${c}.`),
  shutdown: ending('UNAVAILABLE', 'SHUTTING_DOWN', (c) => `This server is shutting down. Reconnect, then catch up with ${c}.`),
  slowReader: (limits: StreamLimits) =>
    ending('UNAVAILABLE', 'SLOW_READER', (c) =>
      `This subscription fell behind: more than ${limits.backlogEvents} events (or ${limits.backlogBytes / 1024} KiB of them) waited for the client to read them. Reconnect, then catch up with ${c}.`,
    ),
};

/** The size of an event as the stream will send it, near enough to bound a backlog. */
const sizeOf = (row: EventRow) => JSON.stringify(row.object).length + (row.previous ? JSON.stringify(row.previous).length : 0) + 200;

export function createStreams({ db, log, listening, limits }: { db: Pick<Database['background'], 'event' | 'apiKey'>; log: Logger; listening: Listening; limits: StreamLimits }): Streams & FedStreams {
  const byOrganization = new Map<string, Set<Open>>();
  const byKey = new Map<string, KeyState>();
  let open = 0;
  let closing = false;
  let slots = keySlots(limits.perKey, undefined);
  let slotsFor: Subscription | undefined;
  const recentChanges = new Map<string, number>();
  const slowReader = END_REASONS.slowReader(limits);

  /** The slots of the current listening connection (PostgreSQL: held on it). */
  function currentSlots() {
    const subscription = listening.subscription();
    if (subscription !== slotsFor) {
      slotsFor = subscription;
      slots = keySlots(limits.perKey, subscription?.query?.bind(subscription));
    }
    return slots;
  }

  function all(): Open[] {
    return [...byOrganization.values()].flatMap((set) => [...set]);
  }

  function detach(entry: Open) {
    open--;
    const organization = byOrganization.get(entry.organizationId);
    organization?.delete(entry);
    if (organization?.size === 0) byOrganization.delete(entry.organizationId);
    unfollowIfUnwatched(entry.organizationId);
    const key = byKey.get(entry.keyId);
    key?.streams.delete(entry);
    if (key?.streams.size === 0) {
      clearTimeout(key.timer);
      byKey.delete(entry.keyId);
    }
    slots.release(entry.slot);
  }

  function endKey(keyId: string, reason: EndReason) {
    for (const entry of [...(byKey.get(keyId)?.streams ?? [])]) entry.stream.end(reason, { drop: true });
  }

  /** Ends the key's streams when it expires (a long wait is taken in steps a timer can hold). */
  function armExpiry(keyId: string, state: KeyState) {
    clearTimeout(state.timer);
    if (!state.expiresAt) return;
    const left = state.expiresAt.getTime() - Date.now();
    if (left <= 0) return endKey(keyId, END_REASONS.expired);
    state.timer = setTimeout(() => armExpiry(keyId, state), Math.min(left, MAX_TIMER_MS)).unref();
  }

  // Re-checks run one after another, in the order the changes were heard: a later change's
  // outcome (a stream ended) then also means every earlier change has been applied.
  let rechecks = Promise.resolve();
  function recheck(keyIds: string[]) {
    rechecks = rechecks
      .then(() => checkAgain(keyIds))
      .catch((error: Error) => log.warn('could not check changed API keys again', { error: error.message }));
  }

  /** Checks the keys again after a change: ends the streams of those no longer valid, re-scopes the others. */
  async function checkAgain(keyIds: string[]) {
    let rows: Array<{ id: string; organizationId: string; scopes: string[]; revokedAt: Date | null; expiresAt: Date | null }>;
    try {
      rows = await db.apiKey.findMany({ where: { id: { in: keyIds } }, select: { id: true, organizationId: true, scopes: true, revokedAt: true, expiresAt: true } });
    } catch (error) {
      log.warn('could not check changed API keys again; their subscriptions end', { error: (error as Error).message });
      for (const keyId of keyIds) endKey(keyId, END_REASONS.unverified);
      return;
    }
    const found = new Map(rows.map((row) => [row.id, row]));
    for (const keyId of keyIds) {
      const state = byKey.get(keyId);
      if (!state) continue;
      const row = found.get(keyId);
      if (!row || row.revokedAt || row.organizationId !== state.organizationId) {
        endKey(keyId, END_REASONS.revoked);
        continue;
      }
      state.expiresAt = row.expiresAt;
      armExpiry(keyId, state);
      const scopes = new Set(row.scopes as Scope[]);
      for (const entry of [...state.streams]) {
        entry.resources = new Set(entry.readable(scopes));
        if (entry.resources.size === 0) entry.stream.end(END_REASONS.unreadable, { drop: true });
      }
    }
  }

  // Fan-out: per organization with open streams, the seq of the last event handed to them;
  // the organizations due for a read (a NOTIFY, the timer), read by one loop.
  const positions = new Map<string, bigint>();
  const due = new Set<string>();
  let loading = false;
  let poller: NodeJS.Timeout | undefined;

  async function drain() {
    if (loading) return;
    loading = true;
    try {
      while (due.size > 0) {
        const organizations = [...due].filter((id) => positions.has(id));
        due.clear();
        if (organizations.length === 0) break;
        let rows: Array<EventRow & { organizationId: string }>;
        try {
          rows = (await db.event.findMany({
            where: { OR: organizations.map((organizationId) => ({ organizationId, seq: { gt: positions.get(organizationId)! } })) },
            orderBy: [{ organizationId: 'asc' }, { seq: 'asc' }],
            take: LOAD_BATCH,
          })) as unknown as Array<EventRow & { organizationId: string }>;
        } catch (error) {
          // Their streams would miss these events: they end, saying where to catch up from.
          log.warn('could not load committed events; their subscriptions end', { error: (error as Error).message });
          for (const organizationId of organizations) {
            for (const entry of [...(byOrganization.get(organizationId) ?? [])]) entry.stream.end(END_REASONS.interrupted);
          }
          continue;
        }
        for (const row of rows) {
          const position = positions.get(row.organizationId);
          // Its streams all ended while the statement ran (or a new one started it again).
          if (position === undefined || row.seq <= position) continue;
          positions.set(row.organizationId, row.seq);
          deliver(row.organizationId, row);
        }
        // A full batch may have left some of them behind: they are read again.
        if (rows.length === LOAD_BATCH) for (const id of organizations) due.add(id);
      }
    } finally {
      loading = false;
    }
  }

  /** Reads every followed organization's new events now. */
  function poll() {
    for (const id of positions.keys()) due.add(id);
    void drain();
  }

  /**
   * Follows an organization from its latest event, unless it is followed already. The caller
   * registers its stream right after, with no wait between: a followed organization always
   * has a stream (the last one to end stops following it).
   */
  const starting = new Map<string, Promise<void>>();
  async function follow(organizationId: string) {
    while (!positions.has(organizationId)) {
      let start = starting.get(organizationId);
      if (!start) {
        start = db.event
          .findFirst({ where: { organizationId }, orderBy: { seq: 'desc' }, select: { seq: true } })
          .then((latest) => {
            if (positions.has(organizationId)) return;
            positions.set(organizationId, latest?.seq ?? 0n);
            poller ??= setInterval(poll, limits.pollMs).unref();
          })
          .finally(() => starting.delete(organizationId));
        starting.set(organizationId, start);
      }
      await start;
    }
  }

  /** Stops following an organization none of whose streams is open. */
  function unfollowIfUnwatched(organizationId: string) {
    if (byOrganization.has(organizationId)) return;
    positions.delete(organizationId);
    if (positions.size === 0) {
      clearInterval(poller);
      poller = undefined;
    }
  }

  function deliver(organizationId: string, row: EventRow) {
    const streams = byOrganization.get(organizationId);
    if (!streams) return;
    let bytes: number | undefined;
    for (const entry of streams) {
      if (!entry.resources.has(row.resource) || (entry.types && !entry.types.has(row.type))) continue;
      bytes ??= sizeOf(row);
      if (!entry.stream.offer(row, bytes)) entry.stream.end(slowReader, { drop: true });
    }
  }

  return {
    async open({ auth, types, readable, signal }) {
      if (closing) throw apiError('UNAVAILABLE', 'The server is shutting down; retry.', { headers: { 'Retry-After': '1' } });
      if (!(await listening.ready(READY_WAIT_MS))) throw notListening();
      if (open >= limits.perInstance) {
        throw apiError('RATE_LIMITED', `This server has ${limits.perInstance} open subscriptions, the most it takes; retry shortly.`, { headers: { 'Retry-After': '5' } });
      }
      open++;
      let slot: Slot | undefined;
      try {
        slot = await withTimeout(currentSlots(), auth.keyId);
      } catch (error) {
        open--;
        log.warn('could not count the subscriptions of a key', { error: (error as Error).message });
        throw notListening();
      }
      try {
        if (slot) await follow(auth.organizationId);
      } catch (error) {
        open--;
        slots.release(slot!);
        log.warn('could not read the latest event of an organization', { error: (error as Error).message });
        throw notListening();
      }
      // From here to the stream's registration nothing waits (see follow).
      if (!slot || closing || !listening.live()) {
        open--;
        if (slot) slots.release(slot);
        unfollowIfUnwatched(auth.organizationId);
        if (closing) throw apiError('UNAVAILABLE', 'The server is shutting down; retry.', { headers: { 'Retry-After': '1' } });
        if (!listening.live()) throw notListening();
        throw apiError('RATE_LIMITED', `This API key already has ${limits.perKey} open subscriptions, the most a key may have at once; close one first.`);
      }
      const entry: Open = {
        keyId: auth.keyId,
        organizationId: auth.organizationId,
        slot,
        resources: new Set(readable(auth.scopes)),
        types: types?.length ? new Set(types) : undefined,
        readable,
        stream: new EventStream({ events: limits.backlogEvents, bytes: limits.backlogBytes }, () => detach(entry)),
      };
      let organization = byOrganization.get(auth.organizationId);
      if (!organization) byOrganization.set(auth.organizationId, (organization = new Set()));
      organization.add(entry);
      const known = byKey.get(auth.keyId);
      const key = known ?? { organizationId: auth.organizationId, streams: new Set(), expiresAt: auth.expiresAt };
      byKey.set(auth.keyId, key);
      key.streams.add(entry);
      if (!known) armExpiry(auth.keyId, key);
      // The key may have changed between its authentication and now: check it once more.
      if (Date.now() - (recentChanges.get(auth.keyId) ?? -Infinity) < CHANGE_RACE_MS) recheck([auth.keyId]);
      // The subscriber left: nothing more is sent (a connection closed is seen here at once,
      // whereas the response stream would only notice at its next write).
      if (signal?.aborted) entry.stream.end(undefined, { drop: true });
      signal?.addEventListener('abort', () => entry.stream.end(undefined, { drop: true }), { once: true });
      return entry.stream;
    },
    count: () => open,
    endAll() {
      closing = true;
      for (const entry of all()) entry.stream.end(END_REASONS.shutdown);
    },
    keyChanged(keyId) {
      const now = Date.now();
      for (const [id, at] of recentChanges) if (now - at >= CHANGE_RACE_MS) recentChanges.delete(id);
      recentChanges.set(keyId, now);
      if (byKey.has(keyId)) recheck([keyId]);
    },
    keyChangesResumed() {
      if (byKey.size > 0) recheck([...byKey.keys()]);
    },
    heard(notice: EventNotice) {
      if (!positions.has(notice.organizationId)) return;
      due.add(notice.organizationId);
      void drain();
    },
    interrupted() {
      due.clear();
      for (const entry of all()) entry.stream.end(END_REASONS.interrupted);
      slots.reset();
    },
  };
}

/** What the hub calls: an event heard, or the notifications lost. */
export interface FedStreams {
  heard(notice: EventNotice): void;
  interrupted(): void;
}

function notListening() {
  return apiError('UNAVAILABLE', 'This server is not receiving events from the database right now; retry shortly.', { headers: { 'Retry-After': '1' } });
}

async function withTimeout(slots: KeySlots, keyId: string): Promise<Slot | undefined> {
  const attempt = slots.acquire(keyId);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${SLOT_TIMEOUT_MS} ms`)), SLOT_TIMEOUT_MS);
  });
  try {
    return await Promise.race([attempt, timeout]);
  } catch (error) {
    // Taken after all, too late: given back.
    void attempt.then((slot) => slot && slots.release(slot), () => undefined);
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

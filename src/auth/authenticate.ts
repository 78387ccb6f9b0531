// Turns an Authorization header into the caller's organization and scopes. Every failure
// (missing, malformed, unknown, revoked, expired) is the same 401, so a caller cannot
// probe which keys exist.
//
// Valid keys are remembered for a minute, so most requests skip a database round trip.
// A change to a key (revoked, expired, re-scoped, deleted) is announced by a trigger on
// api_keys (NOTIFY api_key_changes) to every instance, which forgets that key at once, says
// so to whoever changed it (auth/key-changes.ts), and tells its open subscriptions, which
// check the key again; while the listening connection is down nothing is remembered at all.
import { timingSafeEqual } from 'node:crypto';
import type { Database } from '../db/connection.js';
import type { Subscription } from '../db/notifications.js';
import type { Logger } from '../logger.js';
import { apiError } from '../errors.js';
import { hashKey, KEY_PATTERN } from './api-keys.js';
import { confirmKeyChange, KEY_CHANGES_CHANNEL } from './key-changes.js';
import type { Scope } from './scopes.js';

export interface Auth {
  keyId: string;
  keyPrefix: string;
  organizationId: string;
  scopes: ReadonlySet<Scope>;
  /** When the key stops working (open subscriptions end then); null: never. */
  expiresAt: Date | null;
}

/** Told of the key changes this instance hears (open subscriptions check their key again). */
export interface KeyChangeWatcher {
  keyChanged(keyId: string): void;
  /** The notifications were lost and are back: any key may have changed meanwhile. */
  keyChangesResumed(): void;
}

export const UNAUTHENTICATED_MESSAGE = 'A valid API key is required: send "Authorization: Bearer svc_live_...".';

export function unauthenticated() {
  return apiError('UNAUTHENTICATED', UNAUTHENTICATED_MESSAGE, { headers: { 'WWW-Authenticate': 'Bearer' } });
}

// last_used_at is informational: write it at most once a minute per key per instance.
const LAST_USED_INTERVAL_MS = 60_000;
const CACHE_TTL_MS = 60_000;
const CACHE_MAX_KEYS = 10_000;

interface Remembered {
  auth: Auth;
  expiresAt: number;
  until: number;
}

export interface Authenticator {
  (authorization: string | null): Promise<Auth>;
  /** Forgets a key at once (this instance changed it; the others hear of it by NOTIFY). */
  forget(keyId: string): void;
}

/** The subscription is closed with the database. */
export function createAuthenticator(db: Pick<Database, 'prisma' | 'listen'>, log: Logger, watcher?: KeyChangeWatcher): Authenticator {
  const { prisma } = db;
  const lastUsedWrites = new Map<string, number>();
  const remembered = new Map<string, Remembered>();
  // Bumped on every change notice, so a lookup that raced one is not remembered.
  let generation = 0;
  const forget = (keyId: string) => {
    generation++;
    for (const [hash, entry] of remembered) if (entry.auth.keyId === keyId) remembered.delete(hash);
  };
  // Until the subscription is in place, nothing is remembered.
  let changes: Subscription | undefined;
  db.listen(KEY_CHANGES_CHANNEL, {
    notify(keyId) {
      forget(keyId);
      confirmKeyChange(changes, keyId);
      watcher?.keyChanged(keyId);
    },
    lost() {
      generation++;
      remembered.clear();
      log.warn('lost the key-change notifications; API keys are looked up on every request until they return');
    },
    restored() {
      log.info('key-change notifications are back');
      watcher?.keyChangesResumed();
    },
  }).then(
    (subscription) => (changes = subscription),
    (error: Error) => log.warn('cannot listen for key changes; API keys are looked up on every request', { error: error.message }),
  );
  const live = () => changes?.live() ?? false;

  function remember(hash: string, auth: Auth, expiresAt: Date | null, lookedUpAt: number) {
    if (lookedUpAt !== generation || !live()) return;
    if (remembered.size >= CACHE_MAX_KEYS) remembered.delete(remembered.keys().next().value!);
    remembered.set(hash, { auth, expiresAt: expiresAt?.getTime() ?? Infinity, until: Date.now() + CACHE_TTL_MS });
  }

  function recall(hash: string): Auth | undefined {
    const entry = remembered.get(hash);
    if (!entry) return undefined;
    const now = Date.now();
    if (!live() || entry.until <= now || entry.expiresAt <= now) {
      remembered.delete(hash);
      return undefined;
    }
    return entry.auth;
  }

  function touch(keyId: string) {
    const now = Date.now();
    if (now - (lastUsedWrites.get(keyId) ?? 0) < LAST_USED_INTERVAL_MS) return;
    lastUsedWrites.set(keyId, now);
    prisma.apiKey
      .update({ where: { id: keyId }, data: { lastUsedAt: new Date(now) } })
      .catch((error: Error) => log.warn('could not record key use', { key_id: keyId, error: error.message }));
  }

  async function authenticate(authorization: string | null): Promise<Auth> {
    const match = /^Bearer +(\S+) *$/i.exec(authorization ?? '');
    const key = match?.[1];
    if (!key || !KEY_PATTERN.test(key)) throw unauthenticated();
    const hash = hashKey(key);
    const known = recall(hash);
    if (known) {
      touch(known.keyId);
      return known;
    }
    const lookedUpAt = generation;
    const record = await prisma.apiKey.findUnique({ where: { hash } });
    if (
      !record ||
      // The lookup is by hash; comparing again in constant time keeps timing flat.
      !timingSafeEqual(Buffer.from(record.hash), Buffer.from(hash)) ||
      record.revokedAt ||
      (record.expiresAt && record.expiresAt.getTime() <= Date.now())
    ) {
      throw unauthenticated();
    }
    touch(record.id);
    const auth: Auth = {
      keyId: record.id,
      keyPrefix: record.prefix,
      organizationId: record.organizationId,
      scopes: new Set(record.scopes as Scope[]),
      expiresAt: record.expiresAt,
    };
    remember(hash, auth, record.expiresAt, lookedUpAt);
    return auth;
  }

  return Object.assign(authenticate, { forget });
}

// Turns an Authorization header into the caller's organization and scopes. Every failure
// (missing, malformed, unknown, revoked, expired) is the same 401, so a caller cannot
// probe which keys exist.
import { timingSafeEqual } from 'node:crypto';
import type { PrismaClient } from '../generated/prisma/client.js';
import type { Logger } from '../logger.js';
import { apiError } from '../errors.js';
import { hashKey, KEY_PATTERN } from './api-keys.js';
import type { Scope } from './scopes.js';

export interface Auth {
  keyId: string;
  keyPrefix: string;
  organizationId: string;
  scopes: ReadonlySet<Scope>;
}

export const UNAUTHENTICATED_MESSAGE = 'A valid API key is required: send "Authorization: Bearer svc_live_...".';

export function unauthenticated() {
  return apiError('UNAUTHENTICATED', UNAUTHENTICATED_MESSAGE, { headers: { 'WWW-Authenticate': 'Bearer' } });
}

// last_used_at is informational: write it at most once a minute per key per instance.
const LAST_USED_INTERVAL_MS = 60_000;

export function createAuthenticator(prisma: PrismaClient, log: Logger) {
  const lastUsedWrites = new Map<string, number>();

  function touch(keyId: string) {
    const now = Date.now();
    if (now - (lastUsedWrites.get(keyId) ?? 0) < LAST_USED_INTERVAL_MS) return;
    lastUsedWrites.set(keyId, now);
    prisma.apiKey
      .update({ where: { id: keyId }, data: { lastUsedAt: new Date(now) } })
      .catch((error: Error) => log.warn('could not record key use', { key_id: keyId, error: error.message }));
  }

  return async function authenticate(authorization: string | null): Promise<Auth> {
    const match = /^Bearer +(\S+) *$/i.exec(authorization ?? '');
    const key = match?.[1];
    if (!key || !KEY_PATTERN.test(key)) throw unauthenticated();
    const hash = hashKey(key);
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
    return {
      keyId: record.id,
      keyPrefix: record.prefix,
      organizationId: record.organizationId,
      scopes: new Set(record.scopes as Scope[]),
    };
  };
}

export type Authenticate = ReturnType<typeof createAuthenticator>;

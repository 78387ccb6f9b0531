// API keys: `svc_live_` (or `svc_test_`, test mode: see modes.ts) + 32 base62 characters
// (~190 random bits). Only a SHA-256 of the
// key is stored (the key has far more entropy than a password, so a fast hash is the
// standard choice), plus a short display prefix.
import { createHash, randomBytes } from 'node:crypto';
import type { Prisma, PrismaClient } from '../generated/prisma/client.js';
import type { Mode } from './modes.js';
import type { Scope } from './scopes.js';

export const KEY_PREFIX = 'svc_live_';
const PREFIXES: Record<Mode, string> = { live: KEY_PREFIX, test: 'svc_test_' };
const SECRET_LENGTH = 32;
const DISPLAY_LENGTH = KEY_PREFIX.length + 8;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const KEY_PATTERN = new RegExp(`^svc_(live|test)_[0-9A-Za-z]{${SECRET_LENGTH}}$`);

/** A key's mode, read from its prefix. */
export const modeOfKey = (key: string): Mode => (key.startsWith(PREFIXES.test) ? 'test' : 'live');

export function generateKey(mode: Mode = 'live'): string {
  let secret = '';
  while (secret.length < SECRET_LENGTH) {
    for (const byte of randomBytes(64)) {
      // Rejection sampling keeps every character equally likely.
      if (byte < 248 && secret.length < SECRET_LENGTH) secret += BASE62[byte % 62];
    }
  }
  return PREFIXES[mode] + secret;
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function displayPrefix(key: string): string {
  return key.slice(0, DISPLAY_LENGTH);
}

export interface NewKey {
  organizationId: string;
  name: string;
  scopes: Scope[];
  expiresAt?: Date | null;
  /** Its organization's mode (a test twin's keys are svc_test_). */
  mode?: Mode;
}

/** Creates a key and returns it with the secret: the only time the secret exists. */
export async function createApiKey(prisma: Prisma.TransactionClient, input: NewKey) {
  const key = generateKey(input.mode);
  const record = await prisma.apiKey.create({
    data: {
      organizationId: input.organizationId,
      name: input.name,
      scopes: input.scopes,
      expiresAt: input.expiresAt ?? null,
      prefix: displayPrefix(key),
      hash: hashKey(key),
    },
  });
  return { key, record };
}

/**
 * Finds a key by the whole key, its display prefix or its id. A display prefix that
 * matches several keys is refused rather than guessed.
 */
export async function findApiKey(prisma: PrismaClient, ref: string) {
  if (KEY_PATTERN.test(ref)) return prisma.apiKey.findUnique({ where: { hash: hashKey(ref) } });
  if (/^[0-9a-f-]{36}$/i.test(ref)) return prisma.apiKey.findUnique({ where: { id: ref.toLowerCase() } });
  const matches = await prisma.apiKey.findMany({ where: { prefix: ref }, take: 2 });
  if (matches.length > 1) throw new Error(`several keys share the prefix ${ref}; give the key id instead`);
  return matches[0] ?? null;
}

// Webhook signing secrets: made here (`whsec_` and 24 random bytes, base64, as the Standard
// Webhooks specification writes them), shown once, and stored encrypted (AES-256-GCM), as
// are the answers kept for Idempotency-Key replays (one may carry a secret). The key is
// WEBHOOK_SECRET_KEY when configured, so that a copy of the database alone cannot sign
// webhooks; without it, a key the service made for itself and kept in `service_keys`.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { PrismaClient } from '../generated/prisma/client.js';
import { lazyServiceKey, serviceKey } from '../db/service-keys.js';

export const SECRET_PREFIX = 'whsec_';
/** How a sealed value begins. */
export const SEALED = 'v1.';

export function newSecret(): string {
  return SECRET_PREFIX + randomBytes(24).toString('base64');
}

export interface SecretBox {
  seal(secret: string): string;
  open(sealed: string): string;
}

function box(key: Buffer): SecretBox {
  return {
    seal(secret) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      return SEALED + [iv.toString('base64'), cipher.getAuthTag().toString('base64'), sealed.toString('base64')].join('.');
    },
    open(sealed) {
      const [, iv, tag, data] = sealed.split('.');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv!, 'base64'));
      decipher.setAuthTag(Buffer.from(tag!, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(data!, 'base64')), decipher.final()]).toString('utf8');
    },
  };
}

/** The box of this deployment: from WEBHOOK_SECRET_KEY, or the service's own stored key. */
export async function secretBox(prisma: PrismaClient, configured: string | undefined): Promise<SecretBox> {
  return box(configured ? createHash('sha256').update(configured).digest() : await serviceKey(prisma, 'webhook-secrets'));
}

/** The box, made on first use and then shared. */
export function lazySecretBox(prisma: PrismaClient, configured: string | undefined): () => Promise<SecretBox> {
  if (configured) {
    const made = Promise.resolve(box(createHash('sha256').update(configured).digest()));
    return () => made;
  }
  const key = lazyServiceKey(prisma, 'webhook-secrets');
  return async () => box(await key());
}

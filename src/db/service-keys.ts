// Keys the service makes for itself, one per purpose, kept in `service_keys` so that every
// instance of a deployment uses the same one (webhook secrets' encryption, cursor signatures).
import { randomBytes } from 'node:crypto';
import type { PrismaClient } from '../generated/prisma/client.js';

export async function serviceKey(prisma: PrismaClient, name: string): Promise<Buffer> {
  // Several instances may start at once: the first key written wins, and all read it.
  await prisma.serviceKey.createMany({ data: [{ name, value: randomBytes(32).toString('base64') }], skipDuplicates: true });
  const stored = await prisma.serviceKey.findUniqueOrThrow({ where: { name } });
  return Buffer.from(stored.value, 'base64');
}

/** The key, read on first use and then shared; a failed read is tried again next time. */
export function lazyServiceKey(prisma: PrismaClient, name: string): () => Promise<Buffer> {
  let made: Promise<Buffer> | undefined;
  return () => {
    made ??= serviceKey(prisma, name).catch((error: unknown) => {
      made = undefined;
      throw error;
    });
    return made;
  };
}

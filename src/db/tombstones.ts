// Deleted records stay as tombstones, so a syncing client learns of the deletion; after the
// retention (TOMBSTONE_RETENTION_DAYS, 90 by default) they are removed for good, in the
// background, never on a request's path. Records that refer to others go first (invoice
// and estimate lines go with their record).
import type { PrismaClient } from '../generated/prisma/client.js';
import type { Logger } from '../logger.js';

const PURGE_EVERY_MS = 3_600_000;
const ORDER = ['invoice', 'estimate', 'proposal', 'email', 'job', 'customer'] as const;

type Purgeable = { deleteMany(args: { where: { deletedAt: { lt: Date } } }): Promise<{ count: number }> };

export async function purgeTombstones(prisma: PrismaClient, retentionDays: number, log: Logger): Promise<void> {
  const before = new Date(Date.now() - retentionDays * 86_400_000);
  for (const model of ORDER) {
    try {
      const { count } = await (prisma[model] as unknown as Purgeable).deleteMany({ where: { deletedAt: { lt: before } } });
      if (count > 0) log.info('tombstones purged', { resource: model, count });
    } catch (error) {
      log.warn('tombstone purge failed', { resource: model, error: (error as Error).message });
    }
  }
}

/** Purges now and every hour; unref'd, so it never keeps a stopping process alive. Answers how to stop. */
export function scheduleTombstonePurge(prisma: PrismaClient, retentionDays: number, log: Logger): () => void {
  void purgeTombstones(prisma, retentionDays, log);
  const timer = setInterval(() => void purgeTombstones(prisma, retentionDays, log), PURGE_EVERY_MS).unref();
  return () => clearInterval(timer);
}

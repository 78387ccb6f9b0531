// Events are kept EVENT_RETENTION_DAYS (30 by default), then removed in the background in
// small batches, each its own short statement, so writes (which add events) never wait on
// it; their deliveries go with them, and so does the delivery log of that age.
import type { PrismaClient } from '../generated/prisma/client.js';
import type { Logger } from '../logger.js';
import { runNowAndEvery } from '../background-loop.js';

const PURGE_EVERY_MS = 3_600_000;
const BATCH = 1000;

export async function purgeEvents(prisma: PrismaClient, retentionDays: number, log: Logger): Promise<void> {
  const before = new Date(Date.now() - retentionDays * 86_400_000);
  let total = 0;
  try {
    for (;;) {
      const removed = await prisma.$executeRaw`
        DELETE FROM events WHERE (organization_id, id) IN (
          SELECT organization_id, id FROM events WHERE created_at < ${before} LIMIT ${BATCH})`;
      total += removed;
      if (removed < BATCH) break;
    }
    // The delivery log goes with them (pending deliveries already went, with their events).
    await prisma.webhookAttempt.deleteMany({ where: { createdAt: { lt: before } } });
    if (total > 0) log.info('old events purged', { count: total });
  } catch (error) {
    log.warn('event purge failed', { error: (error as Error).message });
  }
}

/** Purges now and every hour; unref'd, so it never keeps a stopping process alive. Answers how to stop. */
export function scheduleEventPurge(prisma: PrismaClient, retentionDays: number, log: Logger): () => void {
  return runNowAndEvery(PURGE_EVERY_MS, () => purgeEvents(prisma, retentionDays, log));
}

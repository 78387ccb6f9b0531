// Request logs are kept REQUEST_LOG_RETENTION_DAYS (7) and at most ROWS_PER_ORGANIZATION per
// organization (the newest), removed in the background like events (events/retention.ts):
// small batches, each its own short statement, never on a request's path.
import type { PrismaClient } from '../generated/prisma/client.js';
import type { Logger } from '../logger.js';
import { runNowAndEvery } from '../background-loop.js';

export const REQUEST_LOG_RETENTION_DAYS = 7;
export const ROWS_PER_ORGANIZATION = 10_000;
const PURGE_EVERY_MS = 600_000;
const BATCH = 1000;

export interface RequestLogRetention {
  days?: number;
  rowsPerOrganization?: number;
}

export async function purgeRequestLogs(prisma: PrismaClient, log: Logger, { days = REQUEST_LOG_RETENTION_DAYS, rowsPerOrganization = ROWS_PER_ORGANIZATION }: RequestLogRetention = {}): Promise<void> {
  const before = new Date(Date.now() - days * 86_400_000);
  let total = 0;
  try {
    for (;;) {
      const removed = await prisma.$executeRaw`
        DELETE FROM request_logs WHERE id IN (SELECT id FROM request_logs WHERE created_at < ${before} LIMIT ${BATCH})`;
      total += removed;
      if (removed < BATCH) break;
    }
    // Organizations over their cap keep their newest rows (read on the list's own index).
    const over = await prisma.$queryRaw<{ organization_id: string }[]>`
      SELECT organization_id FROM request_logs GROUP BY organization_id HAVING count(*) > ${rowsPerOrganization}`;
    for (const { organization_id: organizationId } of over) {
      total += await prisma.$executeRaw`
        DELETE FROM request_logs WHERE organization_id = ${organizationId}::uuid AND (created_at, id) < (
          SELECT created_at, id FROM request_logs WHERE organization_id = ${organizationId}::uuid
          ORDER BY created_at DESC, id DESC OFFSET ${rowsPerOrganization - 1} LIMIT 1)`;
    }
    if (total > 0) log.info('old request logs purged', { count: total });
  } catch (error) {
    log.warn('request log purge failed', { error: (error as Error).message });
  }
}

/** Purges now and every ten minutes; unref'd, so it never keeps a stopping process alive. Answers how to stop. */
export function scheduleRequestLogPurge(prisma: PrismaClient, log: Logger): () => void {
  return runNowAndEvery(PURGE_EVERY_MS, () => purgeRequestLogs(prisma, log));
}

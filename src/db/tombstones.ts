// Deleted records stay as tombstones, so a syncing client learns of the deletion; after the
// retention (TOMBSTONE_RETENTION_DAYS, 90 by default) they are removed for good, in the
// background, never on a request's path. Records that refer to others go first (invoice
// and estimate lines go with their record).
import type { PrismaClient } from '../generated/prisma/client.js';
import { getDatamodel } from '../generated/pothos-prisma-types.js';
import type { Logger } from '../logger.js';
import { runNowAndEvery } from '../background-loop.js';

const PURGE_EVERY_MS = 3_600_000;

/**
 * The order to purge in, read from the Prisma schema: every softly deleted model, each
 * before the models it refers to (a relation with its own foreign key), so no purge trips
 * on a foreign key that a later one would have freed. Prisma delegate names: `invoice`.
 */
export function purgeOrder(models = getDatamodel().datamodel.models): string[] {
  const deletable = Object.keys(models).filter((name) => models[name]!.fields.some((field) => field.name === 'deletedAt'));
  // model -> the softly deleted models it refers to.
  const refersTo = new Map(
    deletable.map((name) => [
      name,
      new Set(models[name]!.fields.filter((field) => field.kind === 'object' && field.relationFromFields?.length && field.type !== name && deletable.includes(field.type)).map((field) => field.type)),
    ]),
  );
  // Kahn's order, in rounds: the models nothing left refers to (in schema order), then those
  // only they referred to, and so on: every referring model goes before any model it refers to.
  const order: string[] = [];
  const left = new Set(deletable);
  while (left.size > 0) {
    const round = [...left].filter((name) => ![...left].some((other) => refersTo.get(other)!.has(name)));
    if (round.length === 0) throw new Error(`Softly deleted models refer to each other in a cycle: ${[...left].join(', ')}; purge order undefined`);
    for (const name of round) {
      order.push(name);
      left.delete(name);
    }
  }
  return order.map((name) => `${name.charAt(0).toLowerCase()}${name.slice(1)}`);
}

// Read once, at load: a cycle fails the start (and every test), not an hourly purge.
const ORDER = purgeOrder();

type Purgeable = { deleteMany(args: { where: { deletedAt: { lt: Date } } }): Promise<{ count: number }> };

export async function purgeTombstones(prisma: PrismaClient, retentionDays: number, log: Logger): Promise<void> {
  const before = new Date(Date.now() - retentionDays * 86_400_000);
  for (const model of ORDER) {
    try {
      const { count } = await (prisma[model as keyof PrismaClient] as unknown as Purgeable).deleteMany({ where: { deletedAt: { lt: before } } });
      if (count > 0) log.info('tombstones purged', { resource: model, count });
    } catch (error) {
      log.warn('tombstone purge failed', { resource: model, error: (error as Error).message });
    }
  }
}

/** Purges now and every hour; unref'd, so it never keeps a stopping process alive. Answers how to stop. */
export function scheduleTombstonePurge(prisma: PrismaClient, retentionDays: number, log: Logger): () => void {
  return runNowAndEvery(PURGE_EVERY_MS, () => purgeTombstones(prisma, retentionDays, log));
}

// How many subscriptions one API key has open, counted where every instance sees the same
// count. On PostgreSQL each open stream holds one of its key's numbered slots: a session
// advisory lock taken on the instance's listening connection, so the count spans every
// instance and worker, and an instance that dies or loses that connection (its streams end
// then) gives its slots back with it. PGlite is one process: the count is kept in memory.
import { createHash } from 'node:crypto';
import type { Subscription } from '../db/notifications.js';

/** One slot held by one stream. */
export interface Slot {
  keyId: string;
  number: number;
  /** The connection it was taken on (see reset). */
  generation: number;
}

export interface KeySlots {
  /** Takes a free slot of the key's `perKey`: undefined when they are all taken. */
  acquire(keyId: string): Promise<Slot | undefined>;
  release(slot: Slot): void;
  /** The connection holding the slots is gone, and they with it. */
  reset(): void;
}

/** `query`: the listening connection's (PostgreSQL), or none (PGlite: this process alone). */
export function keySlots(perKey: number, query: Subscription['query'] | undefined): KeySlots {
  const held = new Map<string, Set<number>>();
  let generation = 0;
  // One operation at a time: a slot chosen as free must not be taken twice by this instance
  // (a session may take its own advisory lock again).
  let chain: Promise<unknown> = Promise.resolve();
  const serially = <T>(operation: () => Promise<T>): Promise<T> => {
    const next = chain.then(operation, operation);
    chain = next.catch(() => undefined);
    return next;
  };
  const heldBy = (keyId: string) => held.get(keyId) ?? new Set<number>();

  return {
    acquire: (keyId) =>
      serially(async () => {
        const taken = heldBy(keyId);
        const free = Array.from({ length: perKey }, (_, n) => n).filter((n) => !taken.has(n));
        if (free.length === 0) return undefined;
        const at = generation;
        let number: number | undefined = free[0];
        if (query) {
          // Tries the free slots in order and stops at the first lock it gets.
          const rows = await query('SELECT s FROM unnest($2::int[]) AS s WHERE pg_try_advisory_lock($1::int, s) LIMIT 1', [lockKey(keyId), free]);
          number = rows[0]?.s as number | undefined;
        }
        if (number === undefined) return undefined;
        if (at !== generation) return undefined;
        held.set(keyId, taken.add(number));
        return { keyId, number, generation };
      }),
    release(slot) {
      if (slot.generation !== generation || !held.get(slot.keyId)?.delete(slot.number)) return;
      if (held.get(slot.keyId)!.size === 0) held.delete(slot.keyId);
      if (query) void serially(() => query('SELECT pg_advisory_unlock($1::int, $2::int)', [lockKey(slot.keyId), slot.number])).catch(() => undefined);
    },
    reset() {
      generation++;
      held.clear();
    },
  };
}

/** The key's advisory lock class: 32 bits of a hash of its id (the slot is the other 32). */
function lockKey(keyId: string): number {
  return createHash('sha256').update(`crm subscription ${keyId}`).digest().readInt32BE(0);
}

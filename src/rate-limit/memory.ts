// The allowance counted in this process's memory: one Map entry per identity that has used
// part of its allowance, dropped once its bucket has drained, so memory follows the keys
// active within one window, not every key ever seen.
import { charge, drainMs, type Charge, type Policy } from './allowance.js';

const SWEEP_MS = 60_000;

interface Bucket {
  level: number;
  /** Date.now() of the last charge. */
  at: number;
}

export class MemoryCounter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly sweeper = setInterval(() => this.sweep(Date.now()), SWEEP_MS).unref();

  constructor(private readonly policy: Policy) {}

  charge(identity: string, units: number): Charge {
    const now = Date.now();
    const bucket = this.buckets.get(identity);
    const result = charge(this.policy, bucket?.level ?? 0, bucket ? now - bucket.at : 0, units);
    if (result.admitted && units > 0) {
      if (bucket) {
        bucket.level = result.level;
        bucket.at = now;
      } else this.buckets.set(identity, { level: result.level, at: now });
    }
    return result;
  }

  /** Forgets the buckets that are empty at `now`; returns how many are left. */
  sweep(now: number): number {
    for (const [identity, bucket] of this.buckets) if (bucket.at + drainMs(this.policy, bucket.level) <= now) this.buckets.delete(identity);
    return this.buckets.size;
  }

  close(): void {
    clearInterval(this.sweeper);
  }
}

// Bounds password guessing per account and per client address within a window. An attempt
// is counted before its password is checked, so parallel guesses cannot all be checked
// before any is counted; a successful login gives its attempt back. The memory is bounded:
// when full, ended windows go first, then the least-tried ones; windows that have reached
// the limit are kept until they end, so a flood of fresh names cannot wipe a lockout.
// In a cluster the counts live in the primary (cluster/shared.ts), so `attempt` may be async.
export interface Throttle {
  /** Counts an attempt for every key; false (counting nothing) when one is over the limit. */
  attempt(keys: string[]): boolean | Promise<boolean>;
  /** Gives back an attempt that succeeded. */
  succeeded(keys: string[]): void;
}

/** Counted in this process: answers at once. */
export interface LocalThrottle extends Throttle {
  attempt(keys: string[]): boolean;
}

export interface ThrottleOptions {
  max?: number;
  windowMs?: number;
  capacity?: number;
}

/** Makes the throttle called `name` (one per purpose: per account, per address). */
export type ThrottleFactory = (name: string, options: ThrottleOptions) => Throttle;

export const localThrottles: ThrottleFactory = (_name, options) => createLoginThrottle(options);

export function createLoginThrottle({ max = 10, windowMs = 15 * 60_000, capacity = 100_000 }: ThrottleOptions = {}): LocalThrottle {
  const windows = new Map<string, { count: number; resetAt: number }>();

  function makeRoom(now: number) {
    for (const [key, window] of windows) if (window.resetAt <= now) windows.delete(key);
    if (windows.size < capacity) return;
    for (const [key, window] of windows) {
      if (window.count < max) windows.delete(key);
      if (windows.size < capacity) return;
    }
  }

  function current(key: string, now: number) {
    const window = windows.get(key);
    return window && window.resetAt > now ? window : undefined;
  }

  return {
    attempt(keys) {
      const now = Date.now();
      if (keys.some((key) => (current(key, now)?.count ?? 0) >= max)) return false;
      for (const key of keys) {
        const window = current(key, now);
        if (window) window.count++;
        else {
          if (windows.size >= capacity) makeRoom(now);
          windows.set(key, { count: 1, resetAt: now + windowMs });
        }
      }
      return true;
    },
    succeeded(keys) {
      const now = Date.now();
      for (const key of keys) {
        const window = current(key, now);
        if (window && window.count > 0) window.count--;
      }
    },
  };
}

// Bounds password guessing: failed logins per account and per client address within a
// window. Successful logins do not count.
export interface Throttle {
  blocked(keys: string[]): boolean;
  fail(keys: string[]): void;
}

export function createLoginThrottle({ max = 10, windowMs = 15 * 60_000 } = {}): Throttle {
  const failures = new Map<string, { count: number; resetAt: number }>();
  const entry = (key: string) => {
    const now = Date.now();
    let current = failures.get(key);
    if (!current || current.resetAt <= now) {
      current = { count: 0, resetAt: now + windowMs };
      failures.set(key, current);
    }
    if (failures.size > 100_000) failures.clear();
    return current;
  };
  return {
    blocked: (keys) => keys.some((key) => entry(key).count >= max),
    fail: (keys) => keys.forEach((key) => entry(key).count++),
  };
}

import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { createRateLimiter, rateLimitHeaders, type RateLimiter } from '../../src/rate-limit.js';
import { MemoryCounter } from '../../src/rate-limit/memory.js';
import { redisKey } from '../../src/rate-limit/redis.js';

const log = createLogger('silent');
const REDIS_URL = 'redis://127.0.0.1:6379';

describe('the limiter in memory', () => {
  afterEach(() => vi.useRealTimers());

  it('admits exactly RATE_LIMIT_MAX=100000 requests at one instant, then refuses with Retry-After', async () => {
    vi.useFakeTimers({ now: 1_800_000_000_000 });
    const limiter = createRateLimiter({ max: 100_000, windowSeconds: 60, log });
    let last;
    for (let i = 0; i < 100_000; i++) last = await limiter.consume('key:busy');
    expect(last).toEqual({ limit: 100_000, remaining: 0, resetSeconds: 60, limited: false });
    const refused = await limiter.consume('key:busy');
    expect(refused).toEqual({ limit: 100_000, remaining: 0, resetSeconds: 1, limited: true });
    expect(rateLimitHeaders(refused)).toMatchObject({ 'Retry-After': '1', 'RateLimit-Remaining': '0' });
    expect(await limiter.consume('key:other')).toMatchObject({ remaining: 99_999, limited: false });
    await limiter.close();
  });

  it('charges several units all or nothing: a charge that does not fit is refused and not counted', async () => {
    vi.useFakeTimers({ now: 1_800_000_000_000 });
    const limiter = createRateLimiter({ max: 10, windowSeconds: 60, log });
    expect(await limiter.consume('key:a', 8)).toMatchObject({ remaining: 2, limited: false, resetSeconds: 48 });
    // 3 units need one more unit of room: it drains in 6 s.
    expect(await limiter.consume('key:a', 3)).toEqual({ limit: 10, remaining: 2, resetSeconds: 6, limited: true });
    expect(await limiter.consume('key:a', 2)).toMatchObject({ remaining: 0, limited: false });
    expect(await limiter.peek('key:a')).toMatchObject({ remaining: 0, limited: true });
    await limiter.close();
  });

  it('gives the allowance back as the window passes: one unit per window / max', async () => {
    vi.useFakeTimers({ now: 1_800_000_000_000 });
    const limiter = createRateLimiter({ max: 60, windowSeconds: 60, log });
    for (let i = 0; i < 60; i++) await limiter.consume('key:a');
    const refused = await limiter.consume('key:a');
    expect(refused).toMatchObject({ limited: true, resetSeconds: 1 });
    vi.advanceTimersByTime(refused.resetSeconds * 1000);
    expect(await limiter.consume('key:a')).toMatchObject({ limited: false, remaining: 0 });
    vi.advanceTimersByTime(30_000);
    expect(await limiter.consume('key:a')).toMatchObject({ limited: false, remaining: 29 });
    await limiter.close();
  });

  it('keeps an identity only until its allowance is whole again', () => {
    vi.useFakeTimers({ now: 1_800_000_000_000 });
    const counter = new MemoryCounter({ max: 100, windowMs: 10_000 });
    counter.charge('key:a', 100); // empty in 10 s
    counter.charge('key:b', 10); // empty in 1 s
    counter.charge('key:c', 0); // a look charges nothing and keeps nothing
    expect(counter.sweep(Date.now())).toBe(2);
    expect(counter.sweep(Date.now() + 1_000)).toBe(1);
    expect(counter.sweep(Date.now() + 10_000)).toBe(0);
    counter.close();
  });
});

describe('the limiter over Redis', () => {
  const limiters: RateLimiter[] = [];
  /**
   * A limiter whose first connection to Redis is made, as a server's is before it listens:
   * requests sent while it was still being made (over half a second on a loaded machine)
   * counted in each instance's memory, and two instances admitted 40 of a limit of 20.
   */
  const over = async (max: number, windowSeconds: number, prefix: string) => {
    const limiter = createRateLimiter({ max, windowSeconds, redisUrl: REDIS_URL, redisKeyPrefix: prefix, log });
    limiters.push(limiter);
    await limiter.ready;
    return limiter;
  };
  afterEach(async () => {
    await Promise.all(limiters.splice(0).map((l) => l.close()));
  });

  it('admits exactly the limit out of 300 concurrent requests from two instances', async () => {
    const prefix = `test:${randomUUID()}:`;
    const [one, two] = await Promise.all([over(20, 3600, prefix), over(20, 3600, prefix)]);
    const states = await Promise.all(Array.from({ length: 300 }, (_, i) => (i % 2 ? one : two).consume('key:shared')));
    expect(states.filter((s) => !s.limited)).toHaveLength(20);
    expect(new Set(states.filter((s) => !s.limited).map((s) => s.remaining))).toEqual(new Set(Array.from({ length: 20 }, (_, i) => i)));
    for (const s of states.filter((s) => s.limited)) expect(s).toMatchObject({ remaining: 0, limit: 20 });
    expect(Math.min(...states.filter((s) => s.limited).map((s) => s.resetSeconds))).toBeGreaterThanOrEqual(1);
  });

  it('charges units atomically: of ten concurrent 7-unit charges under a limit of 20, two pass', async () => {
    const limiter = await over(20, 3600, `test:${randomUUID()}:`);
    const states = await Promise.all(Array.from({ length: 10 }, () => limiter.consume('key:units', 7)));
    expect(states.filter((s) => !s.limited)).toHaveLength(2);
    expect(await limiter.peek('key:units')).toMatchObject({ remaining: 6, limited: false });
  });

  it('counts RATE_LIMIT_MAX=100000 in one key', async () => {
    const limiter = await over(100_000, 86_400, `test:${randomUUID()}:`);
    expect(await limiter.consume('key:big', 99_999)).toMatchObject({ limit: 100_000, remaining: 1, limited: false });
    expect(await limiter.consume('key:big')).toMatchObject({ remaining: 0, limited: false });
    const refused = await limiter.consume('key:big', 2);
    expect(refused).toMatchObject({ remaining: 0, limited: true });
    expect(refused.resetSeconds).toBeGreaterThanOrEqual(1);
    expect(refused.resetSeconds).toBeLessThanOrEqual(2); // two units drain in 1.7 s
  });

  it('lets a key expire in Redis once its allowance is whole again', async () => {
    const prefix = `test:${randomUUID()}:`;
    const limiter = await over(10, 60, prefix);
    await limiter.consume('key:brief', 3); // 3 of 10 units drain in 18 s
    const { Redis } = await import('ioredis');
    const redis = new Redis(REDIS_URL);
    try {
      const ttl = await redis.pttl(redisKey(prefix, 'key:brief'));
      expect(ttl).toBeGreaterThan(17_000);
      expect(ttl).toBeLessThanOrEqual(18_000);
    } finally {
      redis.disconnect();
    }
  });
});

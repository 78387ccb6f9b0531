import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { createRateLimiter, MemoryStore } from '../../src/rate-limit.js';

const identity = (name: string) => ({ contextIdentity: name, fieldIdentity: 'requests' });

describe('the in-memory rate-limit store', () => {
  afterEach(() => vi.useRealTimers());

  it('keeps a window until it ends, then forgets it', () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const store = new MemoryStore();
    store.setForIdentity(identity('key:a'), [1_000_000], 60_000);
    store.setForIdentity(identity('key:b'), [1_000_000, 1_000_000], 5_000);
    expect(store.getForIdentity(identity('key:a'))).toEqual([1_000_000]);
    expect(store.getForIdentity(identity('key:c'))).toEqual([]);

    vi.setSystemTime(1_005_000);
    expect(store.getForIdentity(identity('key:b'))).toEqual([]);
    expect(store.sweep(Date.now())).toBe(1); // only key:a's window is left
    vi.setSystemTime(1_060_000);
    expect(store.sweep(Date.now())).toBe(0);
    store.close();
  });

  it('drops an identity whose window is emptied', () => {
    const store = new MemoryStore();
    store.setForIdentity(identity('key:a'), [Date.now()], 60_000);
    store.setForIdentity(identity('key:a'), [], 60_000);
    expect(store.sweep(0)).toBe(0);
    store.close();
  });

  it('counts a window of the largest allowed size exactly, one key apart from another', async () => {
    const limiter = createRateLimiter({ max: 10_000, windowSeconds: 60, log: createLogger('silent') });
    let last;
    for (let i = 0; i < 10_000; i++) last = await limiter.consume('key:busy');
    expect(last).toMatchObject({ limit: 10_000, remaining: 0, limited: false });
    expect(await limiter.consume('key:busy')).toMatchObject({ remaining: 0, limited: true });
    expect(await limiter.consume('key:other')).toMatchObject({ remaining: 9_999, limited: false });
    await limiter.close();
  });
});

// Background work gives way to requests (src/http/foreground.ts): an import waits before its
// next chunk until no request has been in flight for a moment, but never longer than the
// cap, so it goes on under steady traffic. On a fake clock: each expectation names the
// millisecond the wait ends.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { countsAsForeground, createForeground } from '../../src/http/foreground.js';

describe('foreground', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** When `wait` resolves, in fake milliseconds (the clock runs 1 ms at a time). */
  const endOf = async (wait: Promise<void>) => {
    let ended: number | undefined;
    void wait.then(() => (ended = Date.now()));
    for (let i = 0; i < 1000 && ended === undefined; i++) await vi.advanceTimersByTimeAsync(1);
    return ended;
  };

  it('lets the work go at once when no request is in flight', async () => {
    const foreground = createForeground(() => Date.now());
    expect(await endOf(foreground.quiet({ settleMs: 5, maxWaitMs: 100 }))).toBe(0);
  });

  it('waits for the requests in flight to end, and then for the settling time', async () => {
    const foreground = createForeground(() => Date.now());
    const first = foreground.enter();
    const second = foreground.enter();
    setTimeout(first, 20);
    setTimeout(second, 30);
    // The first ending leaves one in flight: only the second's end starts the settling.
    expect(await endOf(foreground.quiet({ settleMs: 5, maxWaitMs: 100 }))).toBe(35);
  });

  it('starts the settling over when a request begins and ends meanwhile', async () => {
    const foreground = createForeground(() => Date.now());
    setTimeout(foreground.enter(), 10);
    setTimeout(() => setTimeout(foreground.enter(), 3), 12);
    expect(await endOf(foreground.quiet({ settleMs: 5, maxWaitMs: 100 }))).toBe(20);
  });

  it('goes on after the cap under steady traffic', async () => {
    const foreground = createForeground(() => Date.now());
    foreground.enter();
    expect(await endOf(foreground.quiet({ settleMs: 5, maxWaitMs: 40 }))).toBe(40);
  });

  it('is busy while a request is in flight and for a while after the last one ended', async () => {
    const foreground = createForeground(() => Date.now());
    expect(foreground.busy(100)).toBe(false);
    const leave = foreground.enter();
    expect(foreground.busy(100)).toBe(true);
    await vi.advanceTimersByTimeAsync(500);
    leave();
    await vi.advanceTimersByTimeAsync(99);
    expect(foreground.busy(100)).toBe(true);
    await vi.advanceTimersByTimeAsync(1);
    expect(foreground.busy(100)).toBe(false);
  });

  it('counts a request once however often its end is reported', async () => {
    const foreground = createForeground(() => Date.now());
    const leave = foreground.enter();
    foreground.enter();
    leave();
    leave();
    expect(await endOf(foreground.quiet({ settleMs: 5, maxWaitMs: 50 }))).toBe(50);
  });

  it('does not count a stream, which stays open while its client listens', () => {
    expect(countsAsForeground('text/event-stream')).toBe(false);
    expect(countsAsForeground('application/json, text/event-stream')).toBe(false);
    expect(countsAsForeground('application/json')).toBe(true);
    expect(countsAsForeground(undefined)).toBe(true);
  });
});

// Rate limiting, in one place, for REST and GraphQL alike: a sliding window per API key
// (and, for requests that fail authentication, per client address), counted by
// graphql-rate-limit in memory or, with REDIS_URL, in Redis so every instance shares it. In
// Redis one script reads, trims and counts the window atomically, in one round trip, so
// concurrent requests can never admit more than the limit. When Redis fails, the limiter
// counts in this instance's memory for a while without asking Redis again (a hung Redis
// must not slow every request), probes it in the background, and returns to it once it
// answers (each switch logged once).
import type { GraphQLResolveInfo } from 'graphql';
import { getGraphQLRateLimiter, type Store } from 'graphql-rate-limit';
import { Redis } from 'ioredis';
import type { Logger } from './logger.js';

export interface RateState {
  limit: number;
  remaining: number;
  /** Seconds until the window has room again. */
  resetSeconds: number;
  limited: boolean;
}

export interface RateLimiter {
  /** Counts `units` against `identity` and tells where it stands. */
  consume(identity: string, units?: number): Promise<RateState>;
  close(): Promise<void>;
}

export interface RateLimitOptions {
  max: number;
  windowSeconds: number;
  redisUrl?: string;
  log: Logger;
}

const FIELD = 'requests';
const SWEEP_MS = 60_000;
/** After a Redis failure: how often Redis is probed while this instance counts in memory. */
const PROBE_MS = 500;

/**
 * The sliding window in a sorted set, in one atomic step: drop what left the window, refuse
 * if `units` more would pass the limit (refusals are not counted), otherwise add them.
 * Returns the count in the window and the time of its oldest entry.
 */
const SLIDING_WINDOW_SCRIPT = `
local now, window, max, units = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
local limited = 0
if count + units > max then
  limited = 1
else
  for i = 1, units do redis.call('ZADD', KEYS[1], now, ARGV[5] .. i) end
  count = count + units
  redis.call('PEXPIRE', KEYS[1], window)
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2] or now
return { count, limited, tonumber(oldest) }
`;

type Identity = Parameters<Store['getForIdentity']>[0];
const keyOf = (identity: Identity) => `${identity.contextIdentity}:${identity.fieldIdentity}`;

/**
 * graphql-rate-limit's Store in this process's memory. Its own InMemoryStore copies every
 * identity's state on each write and never forgets an identity, so its cost and size grow
 * with every key and address ever seen; here a window is one Map entry, dropped once it ends.
 */
export class MemoryStore implements Store {
  private readonly windows = new Map<string, { timestamps: readonly number[]; endsAt: number }>();
  private readonly sweeper = setInterval(() => this.sweep(Date.now()), SWEEP_MS).unref();

  getForIdentity(identity: Identity): readonly number[] {
    const window = this.windows.get(keyOf(identity));
    return window && window.endsAt > Date.now() ? window.timestamps : [];
  }

  setForIdentity(identity: Identity, timestamps: readonly number[], windowMs = 0): void {
    if (timestamps.length === 0) this.windows.delete(keyOf(identity));
    else this.windows.set(keyOf(identity), { timestamps, endsAt: Date.now() + windowMs });
  }

  /** Forgets the windows that ended before `now`; returns how many are left. */
  sweep(now: number): number {
    for (const [key, window] of this.windows) if (window.endsAt <= now) this.windows.delete(key);
    return this.windows.size;
  }

  close(): void {
    clearInterval(this.sweeper);
  }
}

/**
 * One limiter call on `store`, remembering the timestamps it read or wrote: graphql-rate-limit
 * answers only "limited or not", and reading the window again for the headers would cost a
 * second round trip to Redis on every request.
 */
async function limitOnce(store: Store, identity: string, units: number, options: { max: number; window: string }) {
  let seen: readonly number[] = [];
  const recording: Store = {
    async getForIdentity(id) {
      return (seen = await store.getForIdentity(id));
    },
    async setForIdentity(id, timestamps, windowMs) {
      seen = timestamps;
      await store.setForIdentity(id, timestamps, windowMs);
    },
  };
  const limiter = getGraphQLRateLimiter({ identifyContext: (ctx: { identity: string }) => ctx.identity, store: recording });
  const message = await limiter(
    { parent: undefined, args: { units: new Array(units) }, context: { identity }, info: { fieldName: FIELD } as GraphQLResolveInfo },
    { ...options, arrayLengthField: 'units', uncountRejected: true },
  );
  return { message, timestamps: seen };
}

export function createRateLimiter({ max, windowSeconds, redisUrl, log }: RateLimitOptions): RateLimiter {
  const windowMs = windowSeconds * 1000;
  const memory = new MemoryStore();
  const redis = redisUrl
    ? new Redis(redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 500, connectTimeout: 2000, lazyConnect: false })
    : undefined;
  redis?.on('error', () => undefined); // reported below, once per outage
  redis?.defineCommand('slidingWindow', { numberOfKeys: 1, lua: SLIDING_WINDOW_SCRIPT });
  let probe: NodeJS.Timeout | undefined;

  const state = (count: number, oldest: number, limited: boolean, now: number): RateState => ({
    limit: max,
    remaining: Math.max(0, max - count),
    resetSeconds: count > 0 ? Math.max(1, Math.ceil((oldest + windowMs - now) / 1000)) : windowSeconds,
    limited,
  });

  async function inMemory(identity: string, units: number): Promise<RateState> {
    const { message, timestamps } = await limitOnce(memory, identity, units, { max, window: `${windowSeconds}s` });
    const now = Date.now();
    let count = 0;
    let oldest = now;
    for (const t of timestamps) {
      if (t + windowMs <= now) continue;
      count++;
      if (t < oldest) oldest = t;
    }
    return state(count, oldest, message !== undefined, now);
  }

  async function inRedis(client: Redis, identity: string, units: number): Promise<RateState> {
    const now = Date.now();
    const member = `${now}:${Math.random().toString(36).slice(2)}:`;
    const run = (client as unknown as { slidingWindow(...args: Array<string | number>): Promise<[number, number, number]> }).slidingWindow;
    const [count, limited, oldest] = await run.call(client, `rate:${identity}`, now, windowMs, max, units, member);
    return state(count, oldest, limited === 1, now);
  }

  /** Counts in memory until a background probe finds Redis answering again. */
  function degrade(client: Redis, error: unknown) {
    if (probe) return;
    log.warn("Redis is unreachable: counting rate limits in this instance's memory until it returns", { error: (error as Error).message });
    probe = setInterval(() => {
      client.ping().then(
        () => {
          clearInterval(probe);
          probe = undefined;
          log.warn('rate limits are shared through Redis again');
        },
        () => undefined,
      );
    }, PROBE_MS).unref();
  }

  return {
    async consume(identity, units = 1) {
      if (!redis || probe) return inMemory(identity, units);
      try {
        return await inRedis(redis, identity, units);
      } catch (error) {
        degrade(redis, error);
        return inMemory(identity, units);
      }
    },
    async close() {
      clearInterval(probe);
      memory.close();
      redis?.disconnect();
    },
  };
}

export function rateLimitHeaders(state: RateState): Record<string, string> {
  return {
    'RateLimit-Limit': String(state.limit),
    'RateLimit-Remaining': String(state.remaining),
    'RateLimit-Reset': String(state.resetSeconds),
    ...(state.limited ? { 'Retry-After': String(state.resetSeconds) } : {}),
  };
}

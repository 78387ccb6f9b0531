// Rate limiting, in one place, for REST and GraphQL alike: a sliding window per API key
// (and, for requests without a valid key, per client address), counted by
// graphql-rate-limit in memory or, with REDIS_URL, in Redis so every instance shares it.
// When Redis is unreachable the limiter falls back to this instance's memory (logged),
// and returns to Redis as soon as it answers again.
import type { GraphQLResolveInfo } from 'graphql';
import { getGraphQLRateLimiter, RedisStore, type Store } from 'graphql-rate-limit';
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
  /** Where `identity` stands, without counting anything. */
  peek(identity: string): Promise<RateState>;
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
async function limitOnce(store: Store, identity: string, units: number, options: { max: number; window: string; readOnly: boolean }) {
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
  const stores: Store[] = redis ? [new RedisStore(redis), memory] : [memory];
  let degraded = false;

  async function run(identity: string, units: number, readOnly: boolean): Promise<RateState> {
    for (let i = 0; i < stores.length; i++) {
      try {
        const { message, timestamps } = await limitOnce(stores[i]!, identity, units, { max, window: `${windowSeconds}s`, readOnly });
        const now = Date.now();
        let recent = 0;
        let oldest = now;
        for (const t of timestamps) {
          if (t + windowMs <= now) continue;
          recent++;
          if (t < oldest) oldest = t;
        }
        if (i === 0 && degraded) {
          degraded = false;
          log.warn('rate limits are shared through Redis again');
        }
        return {
          limit: max,
          remaining: Math.max(0, max - recent),
          resetSeconds: recent > 0 ? Math.max(1, Math.ceil((oldest + windowMs - now) / 1000)) : windowSeconds,
          limited: message !== undefined || (readOnly && recent >= max),
        };
      } catch (error) {
        if (i === stores.length - 1) throw error;
        if (!degraded) {
          degraded = true;
          log.warn('Redis is unreachable: counting rate limits in this instance\'s memory until it returns', { error: (error as Error).message });
        }
      }
    }
    throw new Error('unreachable');
  }

  return {
    consume: (identity, units = 1) => run(identity, units, false),
    peek: (identity) => run(identity, 0, true),
    async close() {
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

// Rate limiting, in one place, for REST and GraphQL alike: an allowance per API key (and,
// for requests without a valid key, per client address), a leaky bucket (./rate-limit/
// allowance.ts) counted in memory or, with REDIS_URL, in Redis so every instance shares it.
// When Redis fails or hangs, a circuit breaker counts in this instance's memory and probes
// Redis in the background, so an outage costs one timeout, not one per request. Redis may
// be one server or a Redis Cluster (./rate-limit/connection.ts).
import type { Logger } from './logger.js';
import { standing, type Charge, type Policy, type RateState } from './rate-limit/allowance.js';
import { RedisConnection } from './rate-limit/connection.js';
import { MemoryCounter } from './rate-limit/memory.js';
import { RATE_LIMIT_SCRIPTS, RedisCounter } from './rate-limit/redis.js';

/** How long a request waits for Redis before the breaker opens. */
const COMMAND_TIMEOUT_MS = 500;
/** How long the first connection to Redis (a cluster: learning its slots) may take before it counts as failed. */
const CONNECT_TIMEOUT_MS = 2000;
/** How often Redis is probed while the limiter counts in memory. */
const PROBE_MS = 1000;

// Made by the allowance (./rate-limit/allowance.ts), which this module composes.
export type { RateState } from './rate-limit/allowance.js';

export interface RateLimiter {
  /** Charges `units` to `identity` if they fit (all or nothing) and tells where it stands. */
  consume(identity: string, units?: number): Promise<RateState>;
  /** Where `identity` stands, without charging anything: limited when not one unit fits. */
  peek(identity: string): Promise<RateState>;
  /**
   * Settles once the first Redis connection is made (on a cluster node: the cluster's slots
   * are known) or has failed (at once without Redis).
   * A server listens after it: a request that found the connection still opening would take
   * it for an outage and count in this instance's memory until the next probe.
   */
  ready: Promise<void>;
  close(): Promise<void>;
}

/** Where counts are kept without Redis (or while it is down): this process, or a cluster's primary. */
export interface LocalCounter {
  charge(identity: string, units: number): Charge | Promise<Charge>;
  close(): void;
}

export interface RateLimitOptions {
  max: number;
  windowSeconds: number;
  /** Default: this process's memory. */
  local?: (policy: Policy) => LocalCounter;
  redisUrl?: string;
  /** Prefix of the Redis keys (one per identity). */
  redisKeyPrefix?: string;
  log: Logger;
}

export function createRateLimiter({ max, windowSeconds, redisUrl, redisKeyPrefix = 'rate-limit:', local = (p) => new MemoryCounter(p), log }: RateLimitOptions): RateLimiter {
  const policy: Policy = { max, windowMs: windowSeconds * 1000 };
  const memory = local(policy);
  const redis = redisUrl ? new RedisConnection(redisUrl, { connectTimeoutMs: CONNECT_TIMEOUT_MS, scripts: RATE_LIMIT_SCRIPTS, log }) : undefined;
  const shared = redis && new RedisCounter(redis, policy, redisKeyPrefix);
  // The first connection: made, or failed (an error, or no answer within the connect timeout).
  const connected: Promise<void> = redis ? redis.ready : Promise.resolve();
  // A request that comes before it waits for it as for a command, rather than taking the
  // first requests after a start for an outage.
  let connecting: Promise<void> | undefined =
    redis && Promise.race([connected, new Promise<void>((resolve) => setTimeout(resolve, COMMAND_TIMEOUT_MS).unref())]).then(() => (connecting = undefined));
  let prober: NodeJS.Timeout | undefined; // set while the breaker is open (counting in memory)

  /** `identity`: the one whose charge failed. */
  function open(error: unknown, identity: string) {
    if (prober) return;
    log.warn("Redis is unreachable: counting rate limits in this instance's memory until it returns", { error: (error as Error).message });
    // The probe looks at that identity's count (charging nothing): on a cluster it goes to the
    // node that failed, not to one that answers while the failed one is still out. One probe
    // at a time, with no deadline: while Redis hangs, it waits, and its answer ends the outage.
    let probing = false;
    prober = setInterval(() => {
      if (probing) return;
      probing = true;
      shared!
        .charge(identity, 0)
        .then(() => {
          clearInterval(prober);
          prober = undefined;
          log.warn('rate limits are shared through Redis again');
        })
        .catch(() => undefined)
        .finally(() => (probing = false));
    }, PROBE_MS).unref();
  }

  async function count(identity: string, units: number): Promise<Charge> {
    if (connecting) await connecting;
    if (shared && !prober) {
      try {
        return await shared.charge(identity, units, COMMAND_TIMEOUT_MS);
      } catch (error) {
        open(error, identity);
      }
    }
    return memory.charge(identity, units);
  }

  const run = async (identity: string, units: number) => standing(policy, await count(identity, units), units);
  return {
    consume: (identity, units = 1) => run(identity, units),
    peek: (identity) => run(identity, 0),
    ready: connected,
    async close() {
      clearInterval(prober);
      memory.close();
      redis?.close();
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

// The allowance counted in Redis, shared by every instance: one Lua script per charge reads,
// drains, checks and writes the identity's bucket atomically (a read, then a write from
// Node would let concurrent requests all see the same room), in one round trip. Redis's own
// clock drives the drain, so instances with skewed clocks agree. On a Redis Cluster the
// script's one key sits in one slot, and so on one node, which runs it atomically.
import type { Charge, Policy } from './allowance.js';
import type { RedisClient, RedisConnection } from './connection.js';

/**
 * Same rule as `charge` in ./allowance.ts. Times in microseconds: TIME's integer seconds and
 * microseconds stay exact in Lua's doubles. The key expires once its bucket has drained.
 * Returns { admitted 0/1, level } with the level as a string (Redis truncates Lua numbers).
 */
const CHARGE_SCRIPT = `
local max = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local units = tonumber(ARGV[3])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local level = 0
local saved = redis.call('HMGET', KEYS[1], 'level', 'at')
if saved[1] then
  level = math.max(0, tonumber(saved[1]) - math.max(0, now - tonumber(saved[2])) * max / window)
end
local admitted = level + math.max(units, 1) <= max
if admitted and units > 0 then
  level = level + units
  redis.call('HSET', KEYS[1], 'level', string.format('%.17g', level), 'at', string.format('%.0f', now))
  redis.call('PEXPIRE', KEYS[1], math.max(1, math.ceil(level * window / max / 1000)))
end
return { admitted and 1 or 0, string.format('%.17g', level) }
`;

/** The commands every Redis client of the limiter defines (ioredis sends EVALSHA, and EVAL once where a node lacks the script). */
export const RATE_LIMIT_SCRIPTS = { rateLimitCharge: { numberOfKeys: 1, lua: CHARGE_SCRIPT } };

type Charging = RedisClient & { rateLimitCharge(key: string, max: number, windowUs: number, units: number): Promise<[number, string]> };

/**
 * The Redis key of an identity's bucket. The identity is a hash tag: its slot (on a cluster)
 * is decided by the identity alone, whatever the prefix, so identities spread over the nodes.
 */
export const redisKey = (prefix: string, identity: string) => `${prefix}{${identity}}`;

export class RedisCounter {
  constructor(
    private readonly redis: RedisConnection,
    private readonly policy: Policy,
    private readonly prefix: string,
  ) {}

  /** Rejects when Redis has not answered in `timeoutMs` (without one, waits for its answer). */
  async charge(identity: string, units: number, timeoutMs?: number): Promise<Charge> {
    const key = redisKey(this.prefix, identity);
    const send = (client: RedisClient) => (client as Charging).rateLimitCharge(key, this.policy.max, this.policy.windowMs * 1000, units);
    const answer = this.redis.run(send);
    const [admitted, level] = await (timeoutMs === undefined ? answer : deadline(answer, timeoutMs));
    return { admitted: admitted === 1, level: Number(level) };
  }
}

/**
 * `promise`, or a rejection after `ms`. Unlike ioredis's commandTimeout, a busy event loop is
 * not taken for a slow Redis: timers run before the loop reads its sockets, so the verdict
 * waits one turn (setImmediate runs after the reads), and a reply already received wins.
 */
function deadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => setImmediate(() => reject(new Error(`Redis did not answer in ${ms} ms`))), ms);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

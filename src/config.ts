// Configuration is read from the environment once, at start, and validated here; a bad
// value stops the process with a message naming the variable.
import { availableParallelism } from 'node:os';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Config {
  port: number;
  host: string;
  /** Unset: the embedded database in `dataDir`. */
  databaseUrl: string | undefined;
  /** Connections each instance keeps to PostgreSQL. */
  poolSize: number;
  /** PostgreSQL streaming replicas that serve reads (db/replicas.ts); unset: none. */
  replicaUrls: string[] | undefined;
  dataDir: string;
  /** Unset: rate limits are counted in memory, per instance. */
  redisUrl: string | undefined;
  rateLimitMax: number;
  rateLimitWindowSeconds: number;
  logLevel: LogLevel;
  /** How many reverse proxies in front add to X-Forwarded-For (0: the socket's address is the client's). */
  trustProxy: number;
  /** Origins whose pages may call the API from a browser; `*` for any. */
  corsOrigins: string[] | '*';
  /** On the embedded default only: fill a fresh data folder with the demo and print a key. */
  seedOnFirstStart: boolean;
  /** Days a deleted record is kept as a tombstone for syncing clients before it is purged. */
  tombstoneRetentionDays: number;
  /** Server processes sharing the port (node:cluster); 1: one process, no cluster. PostgreSQL only. */
  webConcurrency: number;
  /** Whether WEB_CONCURRENCY was set (otherwise webConcurrency is the number of cores). */
  webConcurrencySet: boolean;
  /** Days events are kept. */
  eventRetentionDays: number;
  webhooks: WebhookConfig;
  /** How long an idle client connection is kept open (longer than a proxy in front keeps its own). */
  keepAliveSeconds: number;
  /** Memory each process keeps REST answers in (rest/response-cache.ts); 0: none. */
  responseCacheBytes: number;
}

export interface WebhookConfig {
  /** Endpoints may be http:// (local development and tests). */
  allowHttp: boolean;
  /** Endpoints may resolve to private, loopback or link-local addresses (tests, local development). */
  allowPrivateNetworks: boolean;
  /** Seconds before each retry; the last attempt is the one after the last delay. */
  retrySchedule: number[];
  /** How long an attempt may take. */
  timeoutMs: number;
  /** How long a claimed delivery stays with its instance before another may take it (a crash). */
  leaseSeconds: number;
  /** Key of the stored signing secrets; unset: a key the service keeps in its database. */
  secretKey: string | undefined;
}

/** About three days: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, then every 12 h. */
export const DEFAULT_RETRY_SCHEDULE = [5, 300, 1800, 7200, 18000, 36000, 43200, 43200, 43200, 43200, 43200];

function schedule(env: Env): number[] {
  const raw = (env.WEBHOOK_RETRY_SCHEDULE ?? '').trim();
  if (raw === '') return DEFAULT_RETRY_SCHEDULE;
  const delays = raw.split(',').map((part) => Number(part.trim()));
  if (delays.length > 50 || delays.some((d) => !Number.isFinite(d) || d < 0 || d > 604_800)) {
    throw new ConfigError('WEBHOOK_RETRY_SCHEDULE', `must be up to 50 comma-separated delays in seconds, each from 0 to 604800 (got "${raw}")`);
  }
  return delays;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable} ${message}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(name, `must be an integer from ${min} to ${max} (got "${raw}")`);
  }
  return Number(raw);
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const schemes = `${protocols.slice(0, -1).join(', ')} or ${protocols.at(-1)}`;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be a URL starting with ${schemes}`);
  }
  if (!protocols.includes(parsed.protocol.slice(0, -1))) {
    throw new ConfigError(name, `must be a URL starting with ${schemes} (got ${parsed.protocol}//...)`);
  }
  return raw;
}

/** TRUST_PROXY: unset or false, true (one proxy), or the number of proxies in front. */
function proxies(env: Env): number {
  const raw = (env.TRUST_PROXY ?? '').trim().toLowerCase();
  if (raw === '' || raw === 'false' || raw === '0') return 0;
  if (raw === 'true') return 1;
  if (/^\d+$/.test(raw) && Number(raw) <= 10) return Number(raw);
  throw new ConfigError('TRUST_PROXY', `must be false, true or the number of proxies in front, 1 to 10 (got "${env.TRUST_PROXY}")`);
}

/** CORS_ORIGINS: `*` (the default) or a comma-separated list of origins (`https://app.example.com`). */
function origins(env: Env): string[] | '*' {
  const raw = (env.CORS_ORIGINS ?? '').trim();
  if (raw === '' || raw === '*') return '*';
  return raw.split(',').map((entry) => {
    const origin = entry.trim();
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || parsed.origin !== origin) {
      throw new ConfigError('CORS_ORIGINS', `must be * or origins such as https://app.example.com, separated by commas (got "${origin}")`);
    }
    return origin;
  });
}

/**
 * DATABASE_REPLICA_URLS: comma-separated PostgreSQL URLs of streaming replicas of
 * DATABASE_URL. The positions of each key's last write are shared between processes through
 * Redis, so several server processes need REDIS_URL (several instances do too, which this
 * cannot see: the README says so).
 */
function replicas(env: Env, databaseUrl: string | undefined, redisUrl: string | undefined, processes: number): string[] | undefined {
  const raw = (env.DATABASE_REPLICA_URLS ?? '').trim();
  if (raw === '') return undefined;
  const name = 'DATABASE_REPLICA_URLS';
  if (!databaseUrl) throw new ConfigError(name, 'needs DATABASE_URL: replicas are of a PostgreSQL primary, and the embedded database has none');
  if (processes > 1 && !redisUrl) {
    throw new ConfigError(name, `needs REDIS_URL when more than one server process runs (WEB_CONCURRENCY is ${processes}): the processes share where each key's last write is through Redis; set REDIS_URL, or WEB_CONCURRENCY=1`);
  }
  return raw.split(',').map((entry, index) => {
    const url = entry.trim();
    let protocol: string | undefined;
    try {
      protocol = new URL(url).protocol;
    } catch {
      protocol = undefined;
    }
    // The entry is not quoted back: it may hold a password.
    if (protocol !== 'postgres:' && protocol !== 'postgresql:') {
      throw new ConfigError(name, `must be postgres:// URLs separated by commas (entry ${index + 1} is not one)`);
    }
    return url;
  });
}

function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = (env[name] ?? '').trim().toLowerCase();
  if (raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(name, `must be true or false (got "${env[name]}")`);
}

export function loadConfig(env: Env = process.env): Config {
  const logLevel = (env.LOG_LEVEL || 'info').toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')} (got "${env.LOG_LEVEL}")`);
  }
  const host = env.HOST || '0.0.0.0';
  if (/\s/.test(host)) throw new ConfigError('HOST', `must be a host name or address (got "${host}")`);
  const databaseUrl = url(env, 'DATABASE_URL', ['postgres', 'postgresql']);
  // redis+cluster:// (rediss+cluster://): a Redis Cluster; a redis:// node that is one is found at start.
  const redisUrl = url(env, 'REDIS_URL', ['redis', 'rediss', 'redis+cluster', 'rediss+cluster']);
  // Default: one process per core the machine (or its CPU quota) allows.
  const webConcurrency = integer(env, 'WEB_CONCURRENCY', Math.min(64, availableParallelism()), 1, 64);
  return {
    port: integer(env, 'PORT', 3000, 0, 65535),
    host,
    databaseUrl,
    poolSize: integer(env, 'DATABASE_POOL_SIZE', 10, 1, 1000),
    replicaUrls: replicas(env, databaseUrl, redisUrl, webConcurrency),
    dataDir: env.DATA_DIR || './data',
    redisUrl,
    // No cap: the limiter's cost per request does not depend on the limit.
    rateLimitMax: integer(env, 'RATE_LIMIT_MAX', 600, 1, Number.MAX_SAFE_INTEGER),
    rateLimitWindowSeconds: integer(env, 'RATE_LIMIT_WINDOW_SECONDS', 60, 1, 86_400),
    logLevel: logLevel as LogLevel,
    trustProxy: proxies(env),
    corsOrigins: origins(env),
    seedOnFirstStart: flag(env, 'SEED_ON_FIRST_START', true),
    tombstoneRetentionDays: integer(env, 'TOMBSTONE_RETENTION_DAYS', 90, 1, 36_500),
    webConcurrency,
    webConcurrencySet: (env.WEB_CONCURRENCY ?? '') !== '',
    eventRetentionDays: integer(env, 'EVENT_RETENTION_DAYS', 30, 1, 36_500),
    keepAliveSeconds: integer(env, 'HTTP_KEEP_ALIVE_SECONDS', 75, 1, 3600),
    responseCacheBytes: integer(env, 'RESPONSE_CACHE_MB', 32, 0, 4096) * 2 ** 20,
    webhooks: {
      allowHttp: flag(env, 'WEBHOOK_ALLOW_HTTP', false),
      allowPrivateNetworks: flag(env, 'WEBHOOK_ALLOW_PRIVATE_NETWORKS', false),
      retrySchedule: schedule(env),
      timeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 60_000),
      leaseSeconds: integer(env, 'WEBHOOK_LEASE_SECONDS', 60, 1, 3600),
      secretKey: env.WEBHOOK_SECRET_KEY || undefined,
    },
  };
}

// Configuration is read from the environment once, at start, and validated here; a bad
// value stops the process with a message naming the variable.

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Config {
  port: number;
  host: string;
  /** Unset: the embedded database in `dataDir`. */
  databaseUrl: string | undefined;
  /** Connections each instance keeps to PostgreSQL. */
  poolSize: number;
  dataDir: string;
  /** Unset: rate limits are counted in memory, per instance. */
  redisUrl: string | undefined;
  rateLimitMax: number;
  rateLimitWindowSeconds: number;
  logLevel: LogLevel;
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
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be a URL starting with ${protocols.join(' or ')}`);
  }
  if (!protocols.includes(parsed.protocol.slice(0, -1))) {
    throw new ConfigError(name, `must be a URL starting with ${protocols.join(' or ')} (got ${parsed.protocol}//...)`);
  }
  return raw;
}

export function loadConfig(env: Env = process.env): Config {
  const logLevel = (env.LOG_LEVEL || 'info').toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')} (got "${env.LOG_LEVEL}")`);
  }
  const host = env.HOST || '0.0.0.0';
  if (/\s/.test(host)) throw new ConfigError('HOST', `must be a host name or address (got "${host}")`);
  return {
    port: integer(env, 'PORT', 3000, 0, 65535),
    host,
    databaseUrl: url(env, 'DATABASE_URL', ['postgres', 'postgresql']),
    poolSize: integer(env, 'DATABASE_POOL_SIZE', 10, 1, 1000),
    dataDir: env.DATA_DIR || './data',
    redisUrl: url(env, 'REDIS_URL', ['redis', 'rediss']),
    // No cap: the limiter's cost per request does not depend on the limit.
    rateLimitMax: integer(env, 'RATE_LIMIT_MAX', 600, 1, Number.MAX_SAFE_INTEGER),
    rateLimitWindowSeconds: integer(env, 'RATE_LIMIT_WINDOW_SECONDS', 60, 1, 86_400),
    logLevel: logLevel as LogLevel,
  };
}

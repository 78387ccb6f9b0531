import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { runNpm } from './helpers/processes.js';

describe('configuration', () => {
  it('has the documented defaults', () => {
    expect(loadConfig({})).toEqual({
      port: 3000,
      host: '0.0.0.0',
      databaseUrl: undefined,
      poolSize: 10,
      dataDir: './data',
      redisUrl: undefined,
      rateLimitMax: 600,
      rateLimitWindowSeconds: 60,
      logLevel: 'info',
      trustProxy: 0,
      corsOrigins: '*',
      seedOnFirstStart: true,
      tombstoneRetentionDays: 90,
      webConcurrency: Math.min(64, availableParallelism()),
      webConcurrencySet: false,
      eventRetentionDays: 30,
      keepAliveSeconds: 75,
      responseCacheBytes: 32 * 2 ** 20,
      webhooks: {
        allowHttp: false,
        allowPrivateNetworks: false,
        retrySchedule: [5, 300, 1800, 7200, 18000, 36000, 43200, 43200, 43200, 43200, 43200],
        timeoutMs: 10_000,
        leaseSeconds: 60,
        secretKey: undefined,
      },
    });
  });

  it('reads the webhook settings, and refuses a malformed retry schedule naming it', () => {
    const config = loadConfig({ WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_RETRY_SCHEDULE: '0.5, 2,10', WEBHOOK_SECRET_KEY: 'k'.repeat(40) });
    expect(config.webhooks).toMatchObject({ allowHttp: true, retrySchedule: [0.5, 2, 10], secretKey: 'k'.repeat(40) });
    expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: '5,soon' })).toThrow(/^WEBHOOK_RETRY_SCHEDULE must be/);
    expect(() => loadConfig({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'maybe' })).toThrow(/^WEBHOOK_ALLOW_PRIVATE_NETWORKS must be true or false/);
  });

  it.each([
    ['1', 1],
    ['2', 2],
    ['64', 64],
  ])('reads WEB_CONCURRENCY=%s as %i server processes', (value, processes) => {
    expect(loadConfig({ WEB_CONCURRENCY: value })).toMatchObject({ webConcurrency: processes, webConcurrencySet: true });
  });

  it('reads RESPONSE_CACHE_MB in MiB (0 keeps no answers), and refuses what is not a size naming it', () => {
    expect(loadConfig({ RESPONSE_CACHE_MB: '0' }).responseCacheBytes).toBe(0);
    expect(loadConfig({ RESPONSE_CACHE_MB: '256' }).responseCacheBytes).toBe(256 * 2 ** 20);
    expect(() => loadConfig({ RESPONSE_CACHE_MB: 'lots' })).toThrow(/^RESPONSE_CACHE_MB must be/);
    expect(() => loadConfig({ RESPONSE_CACHE_MB: '-1' })).toThrow(/^RESPONSE_CACHE_MB must be/);
  });

  it('reads CORS_ORIGINS as a list of origins', () => {
    expect(loadConfig({ CORS_ORIGINS: 'https://app.example.com, http://localhost:5173' }).corsOrigins).toEqual(['https://app.example.com', 'http://localhost:5173']);
  });

  it.each([
    ['false', 0],
    ['true', 1],
    ['2', 2],
  ])('reads TRUST_PROXY=%s as %i proxies in front', (value, proxies) => {
    expect(loadConfig({ TRUST_PROXY: value }).trustProxy).toBe(proxies);
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '127.0.0.1',
      DATABASE_URL: 'postgres://u@db:5432/crm',
      DATA_DIR: '/var/lib/crm',
      REDIS_URL: 'redis://cache:6379',
      RATE_LIMIT_MAX: '100',
      RATE_LIMIT_WINDOW_SECONDS: '10',
      LOG_LEVEL: 'WARN',
    });
    expect(config).toMatchObject({ port: 8080, host: '127.0.0.1', dataDir: '/var/lib/crm', rateLimitMax: 100, rateLimitWindowSeconds: 10, logLevel: 'warn' });
    expect(config.databaseUrl).toBe('postgres://u@db:5432/crm');
    expect(config.redisUrl).toBe('redis://cache:6379');
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '-1'],
    ['DATABASE_URL', 'mysql://db/crm'],
    ['DATABASE_URL', 'not a url'],
    ['REDIS_URL', 'http://cache'],
    ['DATABASE_POOL_SIZE', '0'],
    ['RATE_LIMIT_MAX', '0'],
    ['RATE_LIMIT_MAX', '1.5'],
    ['RATE_LIMIT_MAX', '9007199254740992'],
    ['RATE_LIMIT_WINDOW_SECONDS', 'ten'],
    ['LOG_LEVEL', 'loud'],
    ['TRUST_PROXY', 'yes'],
    ['TRUST_PROXY', '11'],
    ['CORS_ORIGINS', 'app.example.com'],
    ['SEED_ON_FIRST_START', 'maybe'],
    ['CORS_ORIGINS', 'https://app.example.com/path'],
    ['WEB_CONCURRENCY', '0'],
    ['WEB_CONCURRENCY', '65'],
    ['WEB_CONCURRENCY', '1.5'],
    ['WEB_CONCURRENCY', 'max'],
    ['WEB_CONCURRENCY', '-2'],
  ])('refuses %s=%s, naming the variable', (variable, value) => {
    expect(() => loadConfig({ [variable]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [variable]: value })).toThrow(new RegExp(`^${variable} `));
  });

  // `npm start` as a process: what is tested is its exit code and what it prints.
  it('stops the process with a one-line message naming the variable', async () => {
    const result = await runNpm('start', [], { PORT: 'eighty' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Invalid configuration: PORT must be an integer from 0 to 65535 (got "eighty")');
    expect(result.stdout).not.toContain('listening');
  });

  it('stops the process naming WEB_CONCURRENCY when it is out of range, before forking anything', async () => {
    const result = await runNpm('start', [], { WEB_CONCURRENCY: '100', DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^Invalid configuration: WEB_CONCURRENCY must be an integer from 1 to 64 \(got "100"\)$/m);
    expect(result.stdout).toBe('');
  });
});

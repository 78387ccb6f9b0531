// The app in-process on a fresh PostgreSQL database reached through a TCP proxy the test
// controls (tcp-proxy.ts), with an organization and a key with every scope: for faults of
// the link between the service and its database (cut, blackhole, a lost answer).
import { createApiKey } from '../../src/auth/api-keys.js';
import { allScopes } from '../../src/auth/scopes.js';
import '../../src/schema/index.js';
import { openDatabase, type Database } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrator.js';
import { createLogger } from '../../src/logger.js';
import { createRateLimiter } from '../../src/rate-limit.js';
import { createApp } from '../../src/server.js';
import { migratedDatabase, POSTGRES_ADMIN_URL } from './databases.js';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

export interface Answer {
  status: number;
  headers: Headers;
  body: any;
  ms: number;
}

export interface AppBehindProxy {
  proxy: TcpProxy;
  /** A direct connection (not through the proxy), to look at what the database holds. */
  direct: Database;
  /** The log lines written so far. */
  output(): string;
  call(method: string, path: string, options?: { json?: unknown; headers?: Record<string, string> }): Promise<Answer>;
  stop(): Promise<void>;
}

export async function startAppBehindProxy(): Promise<AppBehindProxy> {
  const test = await migratedDatabase('postgres');
  const target = new URL(POSTGRES_ADMIN_URL);
  const proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
  const viaProxy = new URL(test.env.DATABASE_URL!);
  viaProxy.host = `127.0.0.1:${proxy.port}`;
  const direct = await openDatabase({ databaseUrl: test.env.DATABASE_URL, dataDir: '' });
  await migrate(direct.sql);
  const organization = await direct.prisma.organization.create({ data: { name: 'Acme' } });
  const { key } = await createApiKey(direct.prisma, { organizationId: organization.id, name: 'test', scopes: allScopes() });
  const db = await openDatabase({ databaseUrl: viaProxy.toString(), dataDir: '' });
  let output = '';
  const log = createLogger('info', (line) => (output += line));
  const app = createApp({ db, log, rateLimiter: createRateLimiter({ max: 1_000_000, windowSeconds: 60, log }) });
  return {
    proxy,
    direct,
    output: () => output,
    async call(method, path, options = {}) {
      const started = performance.now();
      const headers: Record<string, string> = { authorization: `Bearer ${key}`, ...options.headers };
      if (options.json !== undefined) headers['content-type'] = 'application/json';
      const response = await app.fetch(new Request(`http://test${path}`, { method, headers, body: options.json === undefined ? undefined : JSON.stringify(options.json) }));
      const text = await response.text();
      return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined, ms: performance.now() - started };
    },
    async stop() {
      proxy.restore();
      await db.close().catch(() => undefined);
      await proxy.close();
      await direct.close();
      await test.drop();
    },
  };
}

// The app in this process on a fresh database (as query-count.test.ts sets it up), with an
// event hub of the test's limits, keys made on demand, and events committed by SQL.
import { createServer } from 'node:http';
import { createApiKey } from '../../src/auth/api-keys.js';
import { allScopes, type Scope } from '../../src/auth/scopes.js';
import '../../src/schema/index.js';
import { openDatabase, type Database } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrator.js';
import { createEventHub, type EventHub } from '../../src/events/hub.js';
import type { StreamLimits } from '../../src/events/streams.js';
import { createLogger } from '../../src/logger.js';
import { createRateLimiter } from '../../src/rate-limit.js';
import { createApp } from '../../src/server.js';
import { migratedDatabase, type DbKind } from '../helpers/databases.js';

export interface InProcess {
  db: Database;
  events: EventHub;
  organizationId: string;
  fetch(url: string, init?: RequestInit): Promise<Response>;
  /** A new key of the organization (default: every scope). */
  key(scopes?: Scope[], expiresAt?: Date): Promise<{ key: string; id: string }>;
  /** Commits `count` customer.created events in one statement; answers their customers' names. */
  createCustomers(count: number, name?: string): Promise<void>;
  /** Serves the same app on a port of its own (real sockets, real backpressure). */
  listen(): Promise<{ url: string; close(): Promise<void> }>;
  /** Every SQL statement Prisma ran since the last call. */
  statements(): string[];
  stop(): Promise<void>;
}

export async function inProcess(kind: DbKind, limits: Partial<StreamLimits> = {}): Promise<InProcess> {
  const test = await migratedDatabase(kind);
  let statements: string[] = [];
  const db = await openDatabase({ databaseUrl: test.env.DATABASE_URL, dataDir: test.env.DATA_DIR ?? '', onQuery: (sql) => statements.push(sql) });
  await migrate(db.sql);
  const organization = await db.prisma.organization.create({ data: { name: 'Acme' } });
  const log = createLogger('silent');
  const events = createEventHub(db, log, limits);
  const app = createApp({ db, log, rateLimiter: createRateLimiter({ max: 1_000_000, windowSeconds: 60, log }), events });
  return {
    db,
    events,
    organizationId: organization.id,
    fetch: (url, init = {}) => app.fetch(url, init) as Promise<Response>,
    async key(scopes = allScopes(), expiresAt) {
      const { key, record } = await createApiKey(db.prisma, { organizationId: organization.id, name: 'test', scopes, expiresAt });
      return { key, id: record.id };
    },
    async createCustomers(count, name = 'Customer') {
      // One INSERT of rows listed (Prisma's createMany): on Citus it goes to the organization's
      // node alone, where an INSERT ... SELECT would run over several connections, in two
      // phases, which the event trigger's NOTIFY refuses.
      await db.prisma.customer.createMany({ data: Array.from({ length: count }, (_, i) => ({ organizationId: organization.id, name: `${name}${i + 1}` })) });
    },
    async listen() {
      const server = createServer(app);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as { port: number };
      return {
        url: `http://127.0.0.1:${port}`,
        close: () => {
          server.closeAllConnections();
          return new Promise<void>((resolve) => server.close(() => resolve()));
        },
      };
    },
    statements() {
      const seen = statements;
      statements = [];
      return seen;
    },
    async stop() {
      await events.close();
      await db.close();
      await test.drop();
    },
  };
}

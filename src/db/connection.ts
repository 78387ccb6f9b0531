// Chooses the database from configuration: PostgreSQL when DATABASE_URL is set, otherwise
// the embedded PGlite in DATA_DIR. Both get the same generated client and migrations.
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import type { SqlDriverAdapterFactory, SqlQuery } from '@prisma/driver-adapter-utils';
import { PrismaClient } from '../generated/prisma/client.js';
import { createLogger, type Logger } from '../logger.js';
import { lockDataDir } from './data-dir-lock.js';
import { pgliteListen, postgresListen, type Handlers, type Subscription } from './notifications.js';
import { boundQueries } from './query-deadline.js';
import { nameRequestsOnBegin } from './request-naming.js';
import { openReplicas, type ReadReplicas } from './replicas.js';
import { poolRead, type Read } from './plain-reads.js';
import { pgliteSql, poolSql, type Sql } from './sql.js';
import { statementNames } from './statement-names.js';

export interface Database {
  kind: 'pglite' | 'postgres';
  prisma: PrismaClient;
  /**
   * A client for background work (webhook deliveries, purges) with connections of its own,
   * so a burst of requests queueing on the pool cannot starve it, nor its waits on locks hold
   * the pool's connections (the same client on PGlite).
   */
  background: PrismaClient;
  sql: Sql;
  /** Plain reads on the primary's pool, written without Prisma (db/plain-reads.ts); PostgreSQL only. */
  read?: Read;
  /** Where reads may go instead of the primary (DATABASE_REPLICA_URLS; see db/replicas.ts). */
  replicas?: ReadReplicas;
  /** Subscribes to NOTIFY on `channel`; closed with the database. */
  listen(channel: string, handlers: Handlers): Promise<Subscription>;
  close(): Promise<void>;
}

/** The subscriptions opened through `listen`, closed before the database itself. */
function subscriptions(open: (channel: string, handlers: Handlers) => Promise<Subscription>) {
  const all = new Set<Subscription>();
  return {
    async listen(channel: string, handlers: Handlers) {
      const opened = await open(channel, handlers);
      const subscription: Subscription = {
        ...opened,
        close: () => {
          all.delete(subscription);
          return opened.close();
        },
      };
      all.add(subscription);
      return subscription;
    },
    closeAll: () => Promise.all([...all].map((s) => s.close())),
  };
}

export interface DatabaseOptions {
  databaseUrl?: string;
  dataDir: string;
  /** Pool size per instance, PostgreSQL only. */
  poolSize?: number;
  /** Called with each SQL statement Prisma runs (tests count them). */
  onQuery?: (sql: string) => void;
  /** Streaming replicas of `databaseUrl` that serve reads, PostgreSQL only. */
  replicaUrls?: string[];
  /** Where the replicas' routing shares each key's last write with other instances; unset: memory. */
  redisUrl?: string;
  /** Where the replicas' routing says that one was lost or is back. */
  log?: Logger;
}

// Creates wait for the organization's numbering row lock; under a burst of concurrent
// creates that wait can exceed Prisma's 2 s default before a transaction starts.
const TRANSACTION_OPTIONS = { maxWait: 10_000, timeout: 15_000 };
/** The longest an API statement may run on PostgreSQL (cancelled past it: 503, retry). */
export const STATEMENT_TIMEOUT_MS = 5_000;
/**
 * The longest the service waits for any answer on a connection (see db/query-deadline.ts):
 * a little past the server's own cancellation, which a live connection answers first.
 */
export const QUERY_DEADLINE_MS = STATEMENT_TIMEOUT_MS + 500;
/** The longest a request waits for a connection, new or from the pool. */
const CONNECT_TIMEOUT_MS = 5_000;
/** Connections of the background client (webhook deliveries, purges), beside DATABASE_POOL_SIZE. */
const BACKGROUND_POOL_SIZE = 2;
/** A replica's reads fall back to the primary: waiting long for one of its connections only adds latency. */
const REPLICA_CONNECT_TIMEOUT_MS = 1_000;

function createClient(adapter: SqlDriverAdapterFactory, onQuery?: (sql: string) => void): PrismaClient {
  if (!onQuery) return new PrismaClient({ adapter, transactionOptions: TRANSACTION_OPTIONS });
  const client = new PrismaClient({ adapter, transactionOptions: TRANSACTION_OPTIONS, log: [{ level: 'query', emit: 'event' }] });
  client.$on('query', (event) => onQuery(event.query));
  return client;
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.databaseUrl ? openPostgres(options.databaseUrl, options) : openEmbedded(options.dataDir, options.onQuery);
}

async function openPostgres(connectionString: string, options: DatabaseOptions): Promise<Database> {
  const { poolSize: max = 10, onQuery, replicaUrls = [] } = options;
  // The adapter's type wants a name for every statement; undefined leaves one unnamed (pg).
  const statementNameGenerator = statementNames() as (query: SqlQuery) => string;
  // No statement may hold a connection for long: one tenant's slow queries would otherwise
  // take the whole pool from the others, and a hung database would hold every request.
  const openPool = (size: number, url = connectionString, connectTimeoutMs = CONNECT_TIMEOUT_MS) => {
    const pool = new pg.Pool({ connectionString: url, max: size, connectionTimeoutMillis: connectTimeoutMs, statement_timeout: STATEMENT_TIMEOUT_MS });
    boundQueries(pool, QUERY_DEADLINE_MS);
    nameRequestsOnBegin(pool);
    // An idle client losing its connection (database restart) must not crash the process.
    pool.on('error', () => undefined);
    return pool;
  };
  const pool = openPool(max);
  const adapter = (from: pg.Pool) => new PrismaPg(from, { statementNameGenerator });
  const prisma = createClient(adapter(pool), onQuery);
  const backgroundPool = openPool(BACKGROUND_POOL_SIZE);
  const background = createClient(adapter(backgroundPool), onQuery);
  // Each replica gets a pool the size of the primary's: the reads it takes leave the primary's.
  const replicaPools = replicaUrls.map((url) => openPool(max, url, REPLICA_CONNECT_TIMEOUT_MS));
  const replicaClients = replicaPools.map((replicaPool) => createClient(adapter(replicaPool), onQuery));
  const replicas = replicaUrls.length
    ? openReplicas({
        primary: poolSql(pool),
        replicas: replicaUrls.map((url, i) => ({ url, prisma: replicaClients[i]!, sql: poolSql(replicaPools[i]!), read: poolRead(replicaPools[i]!, statementNameGenerator, onQuery) })),
        redisUrl: options.redisUrl,
        log: options.log ?? createLogger('silent'),
      })
    : undefined;
  const listeners = subscriptions(async (channel, handlers) => postgresListen(connectionString, channel, handlers));
  return {
    kind: 'postgres',
    prisma,
    background,
    sql: poolSql(pool, onQuery),
    read: poolRead(pool, statementNameGenerator, onQuery),
    replicas,
    listen: listeners.listen,
    async close() {
      await listeners.closeAll();
      await replicas?.close();
      await Promise.all([prisma.$disconnect(), background.$disconnect(), ...replicaClients.map((client) => client.$disconnect())]);
      await Promise.all([pool.end(), backgroundPool.end(), ...replicaPools.map((replicaPool) => replicaPool.end())]);
    },
  };
}

/**
 * PGlite answers in this thread, through promises alone: statement after statement (an
 * import's chunks, a purge's batches) never let the event loop reach its I/O, and the server
 * answered no request until the loop ended. Each statement and transaction begun on the
 * returned client first lets pending I/O in (one turn of the event loop); those inside a
 * transaction do not, as the transaction holds the database anyway.
 */
function takingTurns<T extends object>(db: T): T {
  const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
  return new Proxy(db, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      if (property === 'query' || property === 'exec' || property === 'transaction') {
        return async (...args: unknown[]) => {
          await turn();
          return value.apply(target, args);
        };
      }
      return value.bind(target);
    },
  });
}

/**
 * The embedded database serves this one process, but PostgreSQL's defaults size its shared
 * memory for a server: 128 MB of buffer cache and 100 connections, which PGlite allocates
 * and zero-fills in WebAssembly at every open. The data folder's files stay in the operating
 * system's page cache either way. `npm run bench -- embedded` (10,000 customers): the
 * server's memory at rest went from 362 to 231 MB, list, get and create as fast or faster;
 * an open took 300-400 ms of CPU with the defaults, 200-230 ms with these.
 */
const EMBEDDED_SETTINGS = ['-c', 'shared_buffers=16MB', '-c', 'max_connections=10'];

async function openEmbedded(dataDir: string, onQuery?: (sql: string) => void): Promise<Database> {
  const unlock = lockDataDir(dataDir);
  try {
    // Loaded only when embedded: PGlite is ~45 MB of memory a PostgreSQL deployment never uses.
    const [{ PGlite }, { pg_trgm }, { PrismaPGlite }] = await Promise.all([
      import('@electric-sql/pglite'),
      import('@electric-sql/pglite/contrib/pg_trgm'),
      import('pglite-prisma-adapter'),
    ]);
    const db = await PGlite.create(dataDir, { extensions: { pg_trgm }, startParams: [...PGlite.defaultStartParams, ...EMBEDDED_SETTINGS] });
    const turning = takingTurns(db);
    const prisma = createClient(new PrismaPGlite(turning), onQuery);
    const listeners = subscriptions((channel, handlers) => pgliteListen(db, channel, handlers));
    return {
      kind: 'pglite',
      prisma,
      background: prisma,
      sql: pgliteSql(turning),
      listen: listeners.listen,
      async close() {
        await listeners.closeAll();
        await prisma.$disconnect();
        await db.close();
        unlock();
      },
    };
  } catch (error) {
    unlock();
    throw error;
  }
}

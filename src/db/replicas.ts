// Read replicas (DATABASE_REPLICA_URLS) with read-your-writes per API key. A GraphQL query
// (every REST GET is one) runs on a streaming replica only when that replica has replayed
// its key's last write; mutations, subscriptions, dry runs and everything outside GraphQL
// (authentication, idempotency, account pages, background work) stay on the primary.
//
// After a mutation, the primary's WAL insert position (past the mutation's commit) becomes
// its key's position: in this process's memory, or in Redis (REDIS_URL), where every
// instance reads it. A replica's replay position is read at most every REFRESH_MS, off the
// request path: a read compares against the last one read, so it costs no round trip to the
// replica (one to Redis when positions are shared). A replica whose read fails is taken out
// until it answers again, and the read runs again on the primary: a replica that is behind
// or gone costs latency, never a stale answer to its own writer or an error.
import { getOperationAST, GraphQLError, type DocumentNode, type ExecutionResult } from 'graphql';
// Types only: loading graphql-yoga takes half a second, which the CLI (connection.ts imports
// this) does not need.
import type { Plugin } from 'graphql-yoga';
import { isErrorCode } from '../errors.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import { errorFields, type Logger } from '../logger.js';
import { RedisConnection, type RedisClient } from '../rate-limit/connection.js';
import type { Sql } from './sql.js';
import type { Read } from './plain-reads.js';
import { tenantClients, type TenantClient } from './tenant.js';

/** How stale a replica's replay position may be before a read asks for it again. */
const REFRESH_MS = 100;
/** How often the primary's position is sampled for the floor. */
const SAMPLE_MS = 1_000;
/** How long a key's position is kept after its last write. */
const POSITION_TTL_MS = 10 * 60_000;
/**
 * Positions expire (and memory ones die with their process), so a replica must also have
 * replayed the oldest sample of the primary's position taken within this window: a key
 * without a position wrote before it. Shorter than the TTL by a margin for clocks (Redis's,
 * this process's) that do not run at quite the same rate.
 */
const FLOOR_WINDOW_MS = POSITION_TTL_MS - 60_000;
/** A Redis that does not answer in this long sends the read to the primary. */
const REDIS_TIMEOUT_MS = 250;
/** How long requests leave Redis alone after it failed one. */
const REDIS_ASIDE_MS = 1_000;
/** A write whose position the primary did not tell: its key reads on the primary until it expires. */
const UNKNOWN = (1n << 64n) - 1n;

type Lsn = bigint;

/** `16/B374D848` as a number. */
function parseLsn(text: string): Lsn {
  const [high = '', low = ''] = text.split('/');
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
}

/** 16 hex digits, which compare as strings in the order of the positions (Lua compares strings). */
const hex = (lsn: Lsn) => lsn.toString(16).padStart(16, '0');

const bigger = (a: Lsn | undefined, b: Lsn | undefined) => (a === undefined ? b : b === undefined || a > b ? a : b);

/** Each API key's last write position. */
interface Positions {
  /** The key's position if it wrote within the TTL; rejects when that cannot be known. */
  get(keyId: string): Promise<Lsn | undefined>;
  /** Raises the key's position to at least `lsn`; never rejects. */
  raise(keyId: string, lsn: Lsn): Promise<void>;
  /** Housekeeping, on each refresh. */
  tick(): Promise<void>;
  close(): void;
}

function memoryPositions(): Positions {
  // In the order of their last write, so the expired ones are at the front.
  const positions = new Map<string, { lsn: Lsn; at: number }>();
  return {
    async get(keyId) {
      const entry = positions.get(keyId);
      return entry && Date.now() - entry.at < POSITION_TTL_MS ? entry.lsn : undefined;
    },
    async raise(keyId, lsn) {
      const before = positions.get(keyId)?.lsn;
      positions.delete(keyId);
      positions.set(keyId, { lsn: bigger(before, lsn)!, at: Date.now() });
    },
    async tick() {
      const expired = Date.now() - POSITION_TTL_MS;
      for (const [keyId, entry] of positions) {
        if (entry.at > expired) break;
        positions.delete(keyId);
      }
    },
    close: () => undefined,
  };
}

/** Keeps the larger of the stored and the given position, for the TTL from now. */
const RAISE_SCRIPT = `
local current = redis.call('GET', KEYS[1])
if current and current > ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
else
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
end
return 1
`;

type Raising = RedisClient & { raiseReplicaPosition(key: string, lsn: string, ttlMs: number): Promise<number> };

function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`Redis did not answer in ${ms} ms`)), ms)));
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

function redisPositions(url: string, log: Logger): Positions {
  // Connected on first use: the command line opens the database too, and never reads through here.
  let connection: RedisConnection | undefined;
  const redis = async () => {
    connection ??= new RedisConnection(url, { connectTimeoutMs: 2_000, scripts: { raiseReplicaPosition: { numberOfKeys: 1, lua: RAISE_SCRIPT } }, log });
    await connection.ready;
    return connection;
  };
  // After a failure, requests leave Redis alone for a while (their reads go to the primary at
  // once) rather than each waiting for a Redis that may hang; the ticks keep trying.
  let asideUntil = 0;
  const guarded = async <T>(command: (client: RedisClient) => Promise<T>): Promise<T> => {
    try {
      return await within((await redis()).run(command), REDIS_TIMEOUT_MS);
    } catch (error) {
      asideUntil = Date.now() + REDIS_ASIDE_MS;
      throw error;
    }
  };
  const keyOf = (keyId: string) => `crm:replica-position:{${keyId}}`;
  const store = (keyId: string, lsn: Lsn) => guarded((client) => (client as Raising).raiseReplicaPosition(keyOf(keyId), hex(lsn), POSITION_TTL_MS));
  // Positions Redis has not taken yet: stored again on each tick, and read beside Redis's meanwhile.
  const pending = new Map<string, Lsn>();
  return {
    async get(keyId) {
      if (Date.now() < asideUntil) throw new Error('Redis is set aside after a failure');
      const stored = await guarded((client) => client.get(keyOf(keyId)));
      return bigger(stored === null ? undefined : BigInt(`0x${stored}`), pending.get(keyId));
    },
    async raise(keyId, lsn) {
      try {
        if (Date.now() < asideUntil) throw new Error('Redis is set aside after a failure');
        await store(keyId, lsn);
      } catch (error) {
        if (pending.size === 0) log.warn('Redis did not take a write position for read replicas; it is stored later, and reads go to the primary meanwhile', errorFields(error));
        pending.set(keyId, bigger(pending.get(keyId), lsn)!);
      }
    },
    async tick() {
      for (const [keyId, lsn] of pending) {
        try {
          await store(keyId, lsn);
        } catch {
          return;
        }
        if (pending.get(keyId) === lsn) pending.delete(keyId);
        asideUntil = 0; // it answers again
      }
    },
    close: () => connection?.close(),
  };
}

export interface ReplicaOptions {
  primary: Sql;
  /** `read`: the replica's plain reads (db/plain-reads.ts). */
  replicas: Array<{ url: string; prisma: PrismaClient; sql: Sql; read?: Read }>;
  /** Shares positions between instances; unset: this process's memory. */
  redisUrl?: string;
  log: Logger;
}

/** A read given to a replica. */
export interface ReplicaRead {
  /** The replica's client, bound to the caller's organization. */
  prisma: TenantClient;
  /** The read failed there: the replica takes no reads until it answers again. */
  failed(error: unknown): void;
}

export interface ReadReplicas {
  /** A replica that has replayed `keyId`'s last write; none: read on the primary. */
  reader(keyId: string, organizationId: string): Promise<ReplicaRead | undefined>;
  /** Records where the primary is after a write by `keyId` (committed, or given up); never rejects. */
  wrote(keyId: string): Promise<void>;
  close(): Promise<void>;
}

interface Replica {
  name: string;
  sql: Sql;
  tenants: (organizationId: string) => TenantClient;
  /** What it had replayed when last asked; undefined: not known, or it takes no reads. */
  replayed: Lsn | undefined;
  /** Taken out (so losing it and getting it back are logged once each). */
  lost: boolean;
}

/** The replica's address for the log, without credentials. */
function nameOf(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || 5432}${parsed.pathname}`;
}

export function openReplicas({ primary, replicas: configured, redisUrl, log }: ReplicaOptions): ReadReplicas {
  const replicas: Replica[] = configured.map(({ url, prisma, sql, read }) => ({ name: nameOf(url), sql, tenants: tenantClients(prisma, { read }), replayed: undefined, lost: false }));
  const positions = redisUrl ? redisPositions(redisUrl, log) : memoryPositions();
  // The primary's position over the floor window, oldest first.
  const samples: Array<{ at: number; lsn: Lsn }> = [];
  let refreshedAt = -Infinity;
  let refreshing: Promise<void> | undefined;
  let turn = 0;

  const primaryPosition = async () => parseLsn((await primary.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn'))[0]!.lsn);

  function floor(): Lsn | undefined {
    const since = Date.now() - FLOOR_WINDOW_MS;
    while (samples.length > 0 && samples[0]!.at < since) samples.shift();
    return samples[0]?.lsn;
  }

  /** `how`: what found it out (a read that failed there, or asking where it is). */
  function lose(replica: Replica, how: 'read' | 'position', error: unknown) {
    replica.replayed = undefined;
    if (replica.lost) return;
    replica.lost = true;
    log.warn('read replica lost: its reads go to the primary until it answers', { replica: replica.name, found_by: how, ...errorFields(error) });
  }

  async function poll(replica: Replica) {
    try {
      const [row] = await replica.sql.query<{ lsn: string | null }>('SELECT pg_last_wal_replay_lsn()::text AS lsn');
      if (!row?.lsn) return lose(replica, 'position', new Error('not a standby: pg_last_wal_replay_lsn() is null'));
      replica.replayed = parseLsn(row.lsn);
      if (replica.lost) {
        replica.lost = false;
        log.info('read replica answers again: it takes reads', { replica: replica.name });
      }
    } catch (error) {
      lose(replica, 'position', error);
    }
  }

  async function sample() {
    const at = Date.now(); // before asking: the position is at least what was written by then
    try {
      samples.push({ at, lsn: await primaryPosition() });
    } catch {
      // The primary is not answering: its reads and writes fail anyway; the samples taken stand.
    }
  }

  function refreshSoon() {
    if (refreshing || Date.now() - refreshedAt < REFRESH_MS) return;
    refreshedAt = Date.now();
    const last = samples.at(-1);
    const due = !last || refreshedAt - last.at >= SAMPLE_MS;
    refreshing = Promise.all([due ? sample() : undefined, ...replicas.map(poll), positions.tick()]).then(
      () => (refreshing = undefined),
      () => (refreshing = undefined),
    );
  }

  return {
    async reader(keyId, organizationId) {
      refreshSoon();
      const least = floor();
      if (least === undefined || !replicas.some((r) => r.replayed !== undefined && r.replayed >= least)) return undefined;
      let position: Lsn | undefined;
      try {
        position = await positions.get(keyId);
      } catch {
        return undefined;
      }
      const needed = bigger(position, least)!;
      const ready = replicas.filter((r) => r.replayed !== undefined && r.replayed >= needed);
      const replica = ready[turn++ % Math.max(ready.length, 1)];
      return replica && { prisma: replica.tenants(organizationId), failed: (error) => lose(replica, 'read', error) };
    },
    async wrote(keyId) {
      let lsn = UNKNOWN;
      try {
        lsn = await primaryPosition();
      } catch {
        // Whether and where it committed is unknown: its key reads on the primary for a while.
      }
      await positions.raise(keyId, lsn);
    },
    async close() {
      await refreshing;
      positions.close();
    },
  };
}

/** What of the GraphQL context the routing reads (context.ts's Context has it). */
interface RoutedContext {
  auth: { keyId: string; organizationId: string };
  dryRun: boolean;
}

/**
 * Whether a failed read may be the replica's doing (a connection lost, a statement cancelled
 * by a conflict with recovery): any error but the API's own answers (not found, invalid input).
 */
function mayBeReplicaFault(error: GraphQLError): boolean {
  let cause: unknown = error;
  while (cause instanceof GraphQLError && !isErrorCode(cause.extensions?.code) && cause.originalError) cause = cause.originalError;
  if (!(cause instanceof GraphQLError)) return true;
  const code = cause.extensions?.code;
  return code === 'UNAVAILABLE' || code === 'INTERNAL';
}

/**
 * Queries on a replica when one has replayed the caller's last write (again on the primary
 * if it fails there), and each mutation's position recorded for its key. Installed after
 * the plugins that choose the executor, so it wraps the chosen one.
 */
export function useReplicaReads(replicas: ReadReplicas): Plugin<RoutedContext> {
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const ctx = args.contextValue as RoutedContext;
      // A dry run runs in a primary transaction it rolls back (graphql/dry-run.ts).
      if (ctx.dryRun) return;
      const operation = getOperationAST(args.document as DocumentNode, args.operationName)?.operation;
      if (operation === 'mutation') {
        setExecuteFn(async (execution) => {
          try {
            return await executeFn(execution);
          } finally {
            // Before the answer leaves: the caller's next read may come at once.
            await replicas.wrote(ctx.auth.keyId);
          }
        });
      } else if (operation === 'query') {
        setExecuteFn(async (execution) => {
          const read = await replicas.reader(ctx.auth.keyId, ctx.auth.organizationId);
          if (!read) return executeFn(execution);
          let failure: unknown;
          try {
            const result = await executeFn({ ...execution, contextValue: { ...ctx, prisma: read.prisma } });
            const error = Symbol.asyncIterator in Object(result) ? undefined : (result as ExecutionResult).errors?.find(mayBeReplicaFault);
            if (!error) return result;
            failure = error.originalError ?? error;
          } catch (error) {
            failure = error;
          }
          read.failed(failure);
          // A query only reads: running it again on the primary is safe.
          return executeFn(execution);
        });
      }
    },
  };
}

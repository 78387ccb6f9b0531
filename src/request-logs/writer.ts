// The request log's writer: the server hands it one entry per authenticated API request and
// goes on; entries are inserted in batches in the background, never on the request's path.
// It is bounded: at most MAX_PENDING entries wait in memory (a flood beyond that is dropped
// and counted, never queued), and one flush inserts at most MAX_PER_FLUSH rows, one flush at
// a time, so the table grows at most that much per FLUSH_EVERY_MS per instance (the
// retention then keeps it to 7 days and a number of rows per organization).
import { timeOrderedIds } from '../db/insert-rows.js';
import type { Sql } from '../db/sql.js';
import type { Logger } from '../logger.js';

export interface RequestLogEntry {
  organizationId: string;
  requestId: string;
  method: string;
  /** The path alone, never the query string. */
  path: string;
  status: number;
  durationMs: number;
  errorCode: string | null;
  keyPrefix: string;
  createdAt: Date;
}

export interface RequestLogWriter {
  record(entry: RequestLogEntry): void;
  /** Writes what is pending now (the reader calls it: a client sees its own earlier requests). */
  flush(): Promise<void>;
  /** Entries dropped because the buffer was full, since the writer started. */
  dropped(): number;
  /** Writes what is pending and stops the timer. */
  stop(): Promise<void>;
}

export interface WriterLimits {
  maxPending?: number;
  maxPerFlush?: number;
  flushEveryMs?: number;
}

const MAX_PENDING = 5_000;
const MAX_PER_FLUSH = 1_000;
const FLUSH_EVERY_MS = 500;
// Stored lengths are capped: a path or request id is the client's to choose.
const MAX_PATH = 500;
const MAX_REQUEST_ID = 200;

// The writers of this process, so a read of the log can first write what this process
// still holds (GraphQL's context does not carry the writer; every instance registers here).
const live = new Set<RequestLogWriter>();

/** Writes every writer's pending entries in this process (before the log is read). */
export async function flushRequestLogs(): Promise<void> {
  await Promise.all([...live].map((writer) => writer.flush()));
}

/**
 * A batch is one statement whatever its size: the columns as arrays, unnested. Prisma's
 * createMany compiled a new plan for every batch size and encoded each of its up to 10,000
 * parameters; under load that was more of a request's CPU than answering it (bench `one`).
 */
const INSERT_BATCH = `INSERT INTO request_logs (id, organization_id, request_id, method, path, status, duration_ms, error_code, key_prefix, created_at)
  SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::int[], $7::int[], $8::text[], $9::text[], $10::timestamptz[])`;

/** The ids Prisma's `@default(uuid(7))` would give, in the order of the requests. */
const newId = timeOrderedIds();

function batchParams(batch: RequestLogEntry[]): unknown[] {
  const column = <T>(value: (entry: RequestLogEntry) => T) => batch.map(value);
  return [
    column((entry) => newId(entry.createdAt.getTime())),
    column((entry) => entry.organizationId),
    column((entry) => entry.requestId.slice(0, MAX_REQUEST_ID)),
    column((entry) => entry.method),
    column((entry) => entry.path.slice(0, MAX_PATH)),
    column((entry) => entry.status),
    column((entry) => entry.durationMs),
    column((entry) => entry.errorCode),
    column((entry) => entry.keyPrefix),
    column((entry) => entry.createdAt.toISOString()),
  ];
}

export function createRequestLogWriter(sql: Sql, log: Logger, limits: WriterLimits = {}): RequestLogWriter {
  const maxPending = limits.maxPending ?? MAX_PENDING;
  const maxPerFlush = limits.maxPerFlush ?? MAX_PER_FLUSH;
  let pending: RequestLogEntry[] = [];
  let dropped = 0;
  let droppedReported = 0;
  // The flush under way: the next one waits for it, so batches never race each other.
  let running: Promise<void> = Promise.resolve();

  async function writeBatch(): Promise<void> {
    if (dropped > droppedReported) {
      log.warn('request log entries dropped: the buffer was full', { count: dropped - droppedReported });
      droppedReported = dropped;
    }
    if (pending.length === 0) return;
    const batch = pending.slice(0, maxPerFlush);
    pending = pending.slice(batch.length);
    try {
      await sql.query(INSERT_BATCH, batchParams(batch));
    } catch (error) {
      // The log is informational: a batch that failed is lost, the requests it describes were served.
      log.warn('request log write failed', { count: batch.length, error: (error as Error).message });
    }
  }

  const flush = () => (running = running.then(writeBatch));
  const timer = setInterval(() => void flush(), limits.flushEveryMs ?? FLUSH_EVERY_MS).unref();

  const writer: RequestLogWriter = {
    record(entry) {
      if (pending.length >= maxPending) {
        dropped++;
        return;
      }
      pending.push(entry);
    },
    async flush() {
      // What is pending now, in as many batches as that takes (not what a flood adds meanwhile).
      const batches = Math.max(1, Math.ceil(pending.length / maxPerFlush));
      for (let i = 0; i < batches; i++) await flush();
    },
    dropped: () => dropped,
    async stop() {
      clearInterval(timer);
      live.delete(writer);
      await writer.flush();
    },
  };
  live.add(writer);
  return writer;
}

// Runs imports in the background, inside the service (no extra process). Every instance runs
// this loop, woken by a new import's NOTIFY (and every second, for one whose holder died);
// an import is taken by one of them at a time: due imports are read without locks,
// then one is taken by a statement on its own row that sets a lease only where none is held
// (as webhook deliveries are; each statement stays within one organization, as Citus needs),
// so of two instances that read the same import, one takes it. Its rows are written
// CHUNK_ROWS at a time, each chunk a partial batch (schema/bulk.ts: each row its single
// call's checks, version and event) in a transaction that also commits the import's progress. An
// instance that dies mid-chunk leaves nothing of that chunk; whichever instance takes the
// import next (when the lease runs out) resumes at the first row not committed, so each row
// is written once, in mode create too. A chunk checks, holding the import's row, that the
// progress it started from is still the committed one, so even an instance that outlived its
// lease cannot write a chunk twice. The last chunk ends the import, and with it the
// `import.completed` event (a trigger, see the imports migration).
import { startBackgroundLoop } from '../background-loop.js';
import type { GraphQLSchema } from 'graphql';
import type { Context } from '../context.js';
import type { Database } from '../db/connection.js';
import { nestedClient } from '../db/nested-transactions.js';
import { tenantClient } from '../db/tenant.js';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import type { Logger } from '../logger.js';
import { restParam } from '../rest/names.js';
import { MAX_BATCH, runBatch } from '../schema/bulk.js';
import { readRecord } from './csv.js';
import { columnsOf, createInputOf, IMPORTABLE, rowItem, type ImportMode, type RowItem } from './plan.js';
import type { FieldError } from '../errors.js';
import type { Foreground } from '../http/foreground.js';

/**
 * Rows per chunk, by where the database runs. Between chunks the import gives way to the
 * instance's requests (http/foreground.ts), and a chunk holds the organization's change
 * counter until it commits, so its size is what a request or a writer of the same
 * organization may find in its way.
 * - PostgreSQL: 500 rows, some 60 ms. Each chunk also pays a transaction, the progress
 *   update and a statement's fixed costs: 500-row chunks imported 20,000 customers at 7.8k
 *   to 8.6k rows/s where 100-row ones ran at 6.0k (`npm run bench -- bulk`); 1,000 were no faster.
 * - Embedded: a batch's maximum (schema/bulk.ts MAX_BATCH), some 20 ms: the statement runs in
 *   the server's own thread, so a request that arrives mid-chunk waits for all of it.
 * While the instance serves requests, chunks are of BUSY_CHUNK_ROWS: a request that comes
 * mid-chunk waits less.
 */
export const CHUNK_ROWS: Record<Database['kind'], number> = { postgres: 500, pglite: MAX_BATCH };
export const BUSY_CHUNK_ROWS = 25;
/** Errors an import keeps; `failed` counts every failed row. */
export const MAX_IMPORT_ERRORS = 1000;
/** How long a claim lasts without a committed chunk; each chunk renews it. */
export const IMPORT_LEASE_SECONDS = 60;
/** Claims in a row without a committed chunk before an import is given up (status failed). */
const MAX_ATTEMPTS = 5;
const POLL_MS = 1000;

/** A claimed import, as its holder keeps it while it writes (the file is read once per claim). */
export interface ImportJob {
  organizationId: string;
  id: string;
  resource: string;
  mode: ImportMode;
  csv: string;
  total: number;
  nextRow: number;
  nextOffset: number;
  attempts: number;
  requestId: string | null;
  errorCount: number;
}

export interface ImportError {
  row: number;
  param: string | null;
  message: string;
}

/** Thrown when the import's committed progress is not the one this holder started from. */
class ImportTakenOver extends Error {}

interface Claimed {
  organization_id: string;
  id: string;
  resource: string;
  mode: string;
  csv: string;
  total: number;
  next_row: number;
  next_offset: number;
  attempts: number;
  request_id: string | null;
  error_count: number;
}

const jobOf = (row: Claimed): ImportJob => ({
  organizationId: row.organization_id,
  id: row.id,
  resource: row.resource,
  mode: row.mode as ImportMode,
  csv: row.csv,
  total: row.total,
  nextRow: row.next_row,
  nextOffset: row.next_offset,
  attempts: row.attempts,
  requestId: row.request_id,
  errorCount: row.error_count,
});

/** Takes an import that is due (pending, or running with an expired lease), or the one named. */
export async function claimImport(prisma: Pick<PrismaClient, '$queryRaw'>, leaseSeconds = IMPORT_LEASE_SECONDS, only?: { organizationId: string; id: string }): Promise<ImportJob | undefined> {
  if (only) return take(prisma, only, leaseSeconds);
  // Candidates another instance takes first are leased when read again: each round has fewer.
  for (let round = 0; round < 3; round++) {
    const due = await prisma.$queryRaw<Array<{ organization_id: string; id: string }>>`
      SELECT organization_id::text, id::text FROM imports
      WHERE status IN ('pending', 'running') AND (lease_until IS NULL OR lease_until < now())
      ORDER BY created_at
      LIMIT 8`;
    if (due.length === 0) return undefined;
    for (const candidate of due) {
      const job = await take(prisma, { organizationId: candidate.organization_id, id: candidate.id }, leaseSeconds);
      if (job) return job;
    }
  }
  return undefined;
}

/**
 * Leases one import if it is still due (compare and set on its lease): undefined when another
 * instance holds it, or is writing a chunk of it right now (its row is locked: skipped, not
 * waited for; within one organization, Citus runs FOR UPDATE on its node).
 */
async function take(prisma: Pick<PrismaClient, '$queryRaw'>, { organizationId, id }: { organizationId: string; id: string }, leaseSeconds: number): Promise<ImportJob | undefined> {
  const [row] = await prisma.$queryRaw<Claimed[]>`
    WITH due AS (
      SELECT c.id FROM imports c
      WHERE c.organization_id = ${organizationId}::uuid AND c.id = ${id}::uuid
        AND c.status IN ('pending', 'running') AND (c.lease_until IS NULL OR c.lease_until < now())
      FOR UPDATE SKIP LOCKED)
    UPDATE imports i
    SET status = 'running', attempts = i.attempts + 1, lease_until = now() + make_interval(secs => ${leaseSeconds}), updated_at = now()
    FROM due WHERE i.organization_id = ${organizationId}::uuid AND i.id = due.id
    RETURNING i.organization_id::text, i.id::text, i.resource, i.mode, i.csv, i.total, i.next_row, i.next_offset, i.attempts, i.request_id,
      jsonb_array_length(i.errors) AS error_count`;
  return row && jobOf(row);
}

/** Gives up an import that failed too often: it ends `failed` (the trigger writes import.failed). */
async function giveUp(prisma: PrismaClient, job: ImportJob): Promise<void> {
  await prisma.$executeRaw`
    UPDATE imports SET status = 'failed', lease_until = NULL, csv = '', completed_at = now(), updated_at = now()
    WHERE organization_id = ${job.organizationId}::uuid AND id = ${job.id}::uuid AND status = 'running'`;
}

/** Lets another instance take the import at once (this one is stopping). */
async function release(prisma: PrismaClient, job: ImportJob): Promise<void> {
  await prisma.$executeRaw`
    UPDATE imports SET lease_until = NULL, attempts = greatest(attempts - 1, 0)
    WHERE organization_id = ${job.organizationId}::uuid AND id = ${job.id}::uuid AND status = 'running' AND next_row = ${job.nextRow}`;
}

/**
 * What a row's writes run as: the organization's client inside the chunk's transaction, the
 * resource's write scope, and the request that posted the import (its events name it). Rows
 * are writes, nothing else: no rate allowance, event hub, webhooks or cursors are used.
 */
function rowContext(tx: ReturnType<typeof nestedClient>, job: ImportJob, log: Logger): Context {
  const auth = { keyId: `import:${job.id}`, keyPrefix: 'import', organizationId: job.organizationId, expiresAt: null, scopes: new Set([IMPORTABLE[job.resource]!.write]) };
  return { requestId: job.requestId ?? job.id, auth, prisma: tx, log, inputErrors: [], dryRun: false } as Partial<Context> as Context;
}

export interface ChunkHooks {
  /** Runs in the chunk's transaction after its writes, before it commits (tests: a crash there). */
  beforeCommit?: (job: ImportJob) => Promise<void> | void;
}

/** What every instance's loop runs its chunks with: empty, except in tests that crash one mid-chunk. */
export const chunkHooks: ChunkHooks = {};

/**
 * Writes the next chunk of the job's rows and commits it with the import's progress. Answers
 * whether the import has ended. Throws ImportTakenOver when another holder moved it on.
 */
export async function runChunk(prisma: PrismaClient, schema: GraphQLSchema, job: ImportJob, log: Logger, size: number, hooks: ChunkHooks = {}, leaseSeconds = IMPORT_LEASE_SECONDS): Promise<boolean> {
  const { type } = IMPORTABLE[job.resource]!;
  const columns = columnsOf(readRecord(job.csv, 0)!.cells, createInputOf(schema, job.resource), job.mode);
  const rows: Array<{ row: number; cells: string[] }> = [];
  let offset = job.nextOffset;
  while (rows.length < size) {
    const record = readRecord(job.csv, offset);
    if (!record) break;
    rows.push({ row: job.nextRow + rows.length, cells: record.cells });
    offset = record.end;
  }
  const ended = readRecord(job.csv, offset) === undefined;
  const errors: ImportError[] = [];
  const items: Array<{ row: number; item: RowItem }> = [];
  const faults: FieldError[] = [];
  for (const { row, cells } of rows) {
    const planned = rowItem(columns, cells, job.mode);
    if ('fault' in planned) {
      errors.push({ row, param: null, message: planned.fault });
      continue;
    }
    faults.push(...planned.faults.map((fault) => ({ param: `items[${items.length}].${fault.param}`, message: fault.message })));
    items.push({ row, item: planned.item });
  }
  let failed = errors.length;
  let created = 0;
  let updated = 0;
  await tenantClient(prisma, job.organizationId).$transaction(
    async (tx) => {
      const [current] = await tx.$queryRaw<Array<{ next_row: number; status: string }>>`
        SELECT next_row, status FROM imports WHERE organization_id = ${job.organizationId}::uuid AND id = ${job.id}::uuid FOR UPDATE`;
      if (!current || current.status !== 'running' || current.next_row !== job.nextRow) throw new ImportTakenOver();
      if (items.length > 0) {
        const { results } = await runBatch({ ...rowContext(nestedClient(tx), job, log), inputErrors: faults }, schema, type, items.map(({ item }) => item), 'partial', size);
        for (const result of results) {
          const { row } = items[result.index]!;
          if (result.error) {
            failed++;
            const named = result.error.errors.length > 0 ? result.error.errors.map((e) => ({ row, param: restParam(e.param), message: e.message })) : [{ row, param: null, message: result.error.message }];
            errors.push(...named);
          } else if (result.status === 201) created++;
          else updated++;
        }
      }
      errors.sort((a, b) => a.row - b.row);
      const kept = errors.slice(0, Math.max(0, MAX_IMPORT_ERRORS - job.errorCount));
      // The end written as it is, not chosen by CASE in SQL: Citus allows no function but an
      // immutable one in a CASE of an UPDATE on a distributed table, nor a volatile one such as
      // clock_timestamp() anywhere in it.
      const progress = ended
        ? Prisma.sql`status = 'completed', completed_at = statement_timestamp(), lease_until = NULL, csv = ''`
        : Prisma.sql`status = 'running', lease_until = now() + make_interval(secs => ${leaseSeconds})`;
      await tx.$executeRaw`
        UPDATE imports SET
          next_row = ${job.nextRow + rows.length}, next_offset = ${offset},
          created = created + ${created}, updated = updated + ${updated}, failed = failed + ${failed},
          errors = errors || ${JSON.stringify(kept)}::jsonb, attempts = 0, ${progress}, updated_at = statement_timestamp()
        WHERE organization_id = ${job.organizationId}::uuid AND id = ${job.id}::uuid`;
      await hooks.beforeCommit?.(job);
      job.errorCount += kept.length;
    },
    { timeout: 120_000 },
  );
  job.nextRow += rows.length;
  job.nextOffset = offset;
  return ended;
}

/** Writes a claimed import to its end (or until `stopped` says so, or another holder takes it over). */
export async function runImport(
  prisma: PrismaClient,
  schema: GraphQLSchema,
  job: ImportJob,
  log: Logger,
  { database, stopped = () => false, leaseSeconds = IMPORT_LEASE_SECONDS, hooks = {}, foreground }: { database: Database['kind']; stopped?: () => boolean; leaseSeconds?: number; hooks?: ChunkHooks; foreground?: Foreground },
): Promise<'ended' | 'stopped' | 'taken'> {
  if (job.attempts > MAX_ATTEMPTS) {
    log.error('import given up: no chunk committed in its last attempts', { import_id: job.id, attempts: job.attempts - 1 });
    await giveUp(prisma, job);
    return 'ended';
  }
  try {
    while (!stopped()) {
      if (await runChunk(prisma, schema, job, log, foreground?.busy() ? BUSY_CHUNK_ROWS : CHUNK_ROWS[database], hooks, leaseSeconds)) return 'ended';
      // One turn of the event loop first, so the requests that arrived during the chunk have
      // begun and are counted (on the embedded database, whose chunk ran in this thread, none
      // could begin meanwhile).
      await new Promise((resolve) => setImmediate(resolve));
      await foreground?.quiet();
    }
    await release(prisma, job);
    return 'stopped';
  } catch (error) {
    if (error instanceof ImportTakenOver) return 'taken';
    throw error;
  }
}

export interface Imports {
  /** Looks for due imports now. */
  wake(): void;
  /** Stops after the chunk under way (committed) and lets another instance take the import at once. */
  stop(): Promise<void>;
}

/** What a new import NOTIFYs (the statement_triggers migration): every instance looks at once. */
export const IMPORTS_CHANNEL = 'crm_imports';

export function startImports({ db, log, schema, leaseSeconds = IMPORT_LEASE_SECONDS, pollMs = POLL_MS, foreground }: {
  db: Pick<Database, 'kind' | 'background' | 'listen'>;
  log: Logger;
  schema: GraphQLSchema;
  leaseSeconds?: number;
  pollMs?: number;
  /** This instance's requests, which its imports give way to between chunks. */
  foreground?: Foreground;
}): Imports {
  // The background connections: requests queueing on the pool must not starve imports.
  const prisma = db.background;
  // One import at a time per instance: the others wait for it or for another instance.
  async function drain(stopped: () => boolean): Promise<void> {
    while (!stopped()) {
      const job = await claimImport(prisma, leaseSeconds);
      if (!job) return;
      log.info('import claimed', { import_id: job.id, next_row: job.nextRow, total: job.total });
      const outcome = await runImport(prisma, schema, job, log, { database: db.kind, stopped, leaseSeconds, hooks: chunkHooks, foreground }).catch((error: Error) => {
        // Its lease runs out and it is taken again (up to MAX_ATTEMPTS claims without progress).
        log.error('import chunk failed', { import_id: job.id, next_row: job.nextRow, error: error.message });
        return 'failed';
      });
      log.info(`import ${outcome}`, { import_id: job.id, next_row: job.nextRow });
    }
  }

  const loop = startBackgroundLoop({ everyMs: pollMs, drain, onError: (error) => log.warn('imports could not be claimed', { error: error.message }) });
  // Without the notification (lost, or not yet listening) the loop's own timer still finds them.
  const announced = db.listen(IMPORTS_CHANNEL, { notify: () => loop.wake(), lost: () => undefined }).catch((error: Error) => {
    log.warn('new imports are found by polling only: LISTEN failed', { error: error.message });
    return undefined;
  });
  return {
    wake: loop.wake,
    async stop() {
      await loop.stop();
      await (await announced)?.close();
    },
  };
}

// Rows of one model in one INSERT: a plain create's, and a batch's creates together. Prisma's
// createManyAndReturn compiles and interprets every call: for 100 customers it took about three
// times the INSERT itself (bench `bulk`), so the statement is written here, from the model's
// fields and the table's own column types, and Prisma runs it raw in the caller's transaction.
// What Prisma fills in on a create is filled in here: a new UUID v7 id (every model declares
// `@default(uuid(7))`), and the time of the write for `@updatedAt` and `@default(now())`
// (Prisma sets both to the same instant); any other value a row leaves out is the column's
// DEFAULT.
//
// A plain create can also send its INSERT and COMMIT in one message (insertCommitted). Sent
// apart, the organization's change-sequence row, which the INSERT's trigger locks, stayed
// locked while the INSERT's answer travelled to this process and its COMMIT came back;
// creates into one organization queued on it for as long as the event loop took to send it.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { getDatamodel } from '../generated/pothos-prisma-types.js';
import { setRequestIdSql } from './request-naming.js';
import type { Sql } from './sql.js';
import type { Tx } from './tenant.js';

interface Column {
  field: string;
  column: string;
  /** The column's type as PostgreSQL spells it, to cast each parameter to. */
  type: string;
  /** `@updatedAt` or `@default(now())`: the time of the write, the same in both, as Prisma sets them. */
  now: boolean;
}

/** Columns are named as their fields in snake case (the schema's convention; `columnsOf` checks it). */
const snake = (name: string) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

const known = new Map<string, Promise<Column[]>>();

/** The model's scalar fields and their columns, read from the catalog once per table. */
function columnsOf(tx: Pick<Tx, '$queryRawUnsafe'>, model: string, table: string): Promise<Column[]> {
  const cached = known.get(table);
  if (cached) return cached;
  const columns = (async () => {
    const rows = await tx.$queryRawUnsafe<Array<{ name: string; type: string }>>(
      // The type by its name, without a length: a cast to char(3) would cut a longer value
      // that the column itself refuses (char(3) is named `bpchar`).
      `SELECT a.attname::text AS name, quote_ident(n.nspname) || '.' || quote_ident(t.typname) AS type
         FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid JOIN pg_namespace n ON n.oid = t.typnamespace
        WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped`,
      quoted(table),
    );
    const types = new Map(rows.map((row) => [row.name, row.type]));
    return getDatamodel().datamodel.models[model]!.fields.filter((field) => field.kind !== 'object').map((field) => {
      const type = types.get(snake(field.name));
      if (!type) throw new Error(`${model}.${field.name} has no column ${snake(field.name)} in ${table}`);
      // Parameters are strings, numbers, Dates and JSON; these would need encodings of their own.
      if (field.isList || field.type === 'Decimal' || field.type === 'Bytes') throw new Error(`${model}.${field.name} (${field.type}${field.isList ? '[]' : ''}) cannot be written by insertRows`);
      return { field: field.name, column: snake(field.name), type, now: field.isUpdatedAt === true || (field.type === 'DateTime' && field.hasDefaultValue === true) };
    });
  })();
  known.set(table, columns);
  // A failed read (the transaction was aborted) is tried again by the next batch.
  columns.catch(() => known.delete(table));
  return columns;
}

/**
 * Time-ordered UUIDs (RFC 9562 version 7), as Prisma's `uuid(7)` makes them: the time in
 * milliseconds, a 12-bit sequence that grows within a millisecond (so the ids of one batch,
 * which share their creation time, keep their order in a list), and random bits (those of a
 * version 4 UUID: Node draws them from a pool). Each source keeps its own last id.
 */
export function timeOrderedIds(): (now?: number) => string {
  let last = { ms: 0, sequence: 0 };
  return (now = Date.now()) => {
    // Never behind the last id: a clock that steps back, or a sequence that runs out, borrows the next millisecond.
    if (now > last.ms) last = { ms: now, sequence: Math.floor(Math.random() * 0x800) };
    else if (last.sequence < 0xfff) last = { ms: last.ms, sequence: last.sequence + 1 };
    else last = { ms: last.ms + 1, sequence: 0 };
    const time = last.ms.toString(16).padStart(12, '0');
    return `${time.slice(0, 8)}-${time.slice(8)}-7${last.sequence.toString(16).padStart(3, '0')}-${randomUUID().slice(19)}`;
  };
}

const uuidV7 = timeOrderedIds();

const parameter = (value: unknown) => (value !== null && typeof value === 'object' && !(value instanceof Date) ? JSON.stringify(value) : value);

/** `rows` with what Prisma fills in on a create: an id, and the time of the write. */
function filledRows(columns: Column[], rows: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  const now = new Date();
  const stamps = Object.fromEntries(columns.filter((c) => c.now).map((c) => [c.field, now]));
  return rows.map((row): Record<string, unknown> => ({ ...stamps, ...row, id: row.id ?? uuidV7(now.getTime()) }));
}

/** The INSERT of `rows`, each value written by `value` (as a parameter or a literal) with its column's type. */
function insertStatement(table: string, columns: Column[], rows: Array<Record<string, unknown>>, value: (cell: unknown, column: Column) => string): string {
  const written = columns.filter((c) => rows.some((row) => row[c.field] !== undefined));
  const values = rows.map((row) => `(${written.map((c) => (row[c.field] === undefined ? 'DEFAULT' : value(row[c.field], c))).join(', ')})`);
  return `INSERT INTO ${quoted(table)} (${written.map((c) => quoted(c.column)).join(', ')}) VALUES ${values.join(', ')} RETURNING ${columns.map((c) => quoted(c.column)).join(', ')}`;
}

/** The records RETURNING answered, by field name, in the order of `rows` (RETURNING's order is PostgreSQL's to choose). */
function inOrder(table: string, columns: Column[], rows: Array<Record<string, unknown>>, inserted: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  const byId = new Map(inserted.map((record) => [String(record.id), Object.fromEntries(columns.map((c) => [c.field, record[c.column]]))]));
  if (byId.size !== rows.length) throw new Error(`INSERT into ${table} answered ${byId.size} of ${rows.length} rows`);
  return rows.map((row) => byId.get(String(row.id).toLowerCase())!);
}

/** Inserts `rows` (by field name) into the model's table and answers the records, by field name, in the order of `rows`. */
export async function insertRows(tx: Pick<Tx, '$queryRawUnsafe'>, model: string, table: string, rows: Array<Record<string, unknown>>): Promise<Array<Record<string, unknown>>> {
  const columns = await columnsOf(tx, model, table);
  const filled = filledRows(columns, rows);
  const params: unknown[] = [];
  const statement = insertStatement(table, columns, filled, (cell, c) => {
    params.push(parameter(cell));
    return `$${params.length}::${c.type}`;
  });
  return inOrder(table, columns, filled, await tx.$queryRawUnsafe<Array<Record<string, unknown>>>(statement, ...params));
}

/**
 * A value as an SQL literal, for a message that carries no parameters: always quoted (pg's
 * escapeLiteral, which also doubles backslashes) and cast to its column's type, as a
 * parameter is.
 */
function literal(cell: unknown, column: Column): string {
  if (cell === null) return `NULL::${column.type}`;
  const value = parameter(cell);
  const text = value instanceof Date ? value.toISOString() : String(value);
  // A message is a C string: a NUL would end it early. Inputs refuse NUL (graphql/text-inputs.ts).
  if (text.includes('\u0000')) throw new Error(`${column.field}: a NUL character cannot be written`);
  if (typeof cell === 'number' && !Number.isFinite(cell)) throw new Error(`${column.field}: ${cell} is not a number to write`);
  return `${pg.escapeLiteral(text)}::${column.type}`;
}

/**
 * A column's value as Prisma's raw queries answer it, from what pg's text parsers made of it:
 * a bigint for int8 (pg gives a string), and a date at midnight UTC (pg gives local midnight).
 */
function asPrisma(value: unknown, column: Column): unknown {
  if (value === null) return null;
  if (column.type === 'pg_catalog.int8') return BigInt(value as string);
  if (column.type === 'pg_catalog.date') {
    const local = value as Date;
    return new Date(Date.UTC(local.getFullYear(), local.getMonth(), local.getDate()));
  }
  return value;
}

/**
 * One row inserted and committed with its INSERT and COMMIT in one message, on a connection
 * of its own: first `BEGIN; SET LOCAL crm.request_id = ...` (the request its events record;
 * Citus passes SET LOCAL on to its workers only as a message of its own), then `holds`, if
 * any (statements that lock the records the row refers to FOR SHARE, values written in;
 * schema/references.ts), then `INSERT ... RETURNING ...; COMMIT`. The row's triggers do the
 * rest (the change number, the counts, the event at COMMIT). Answers the record as
 * insertRows does, or undefined, with nothing written, where a hold found no record.
 */
export async function insertCommitted(db: Pick<Tx, '$queryRawUnsafe'>, session: NonNullable<Sql['session']>, requestId: string, model: string, table: string, row: Record<string, unknown>, holds: string[] = []): Promise<Record<string, unknown> | undefined> {
  const columns = await columnsOf(db, model, table);
  const filled = filledRows(columns, [row]);
  const insert = insertStatement(table, columns, filled, literal);
  return session(async (send) => {
    await send(`BEGIN; ${setRequestIdSql(requestId)}`);
    if (holds.length > 0 && (await send(holds.join('; '))).some((rows) => rows.length === 0)) {
      await send('ROLLBACK');
      return undefined;
    }
    const [inserted] = await send(`${insert}; COMMIT`);
    return inOrder(table, columns, filled, inserted!.map((record) => Object.fromEntries(columns.map((c) => [c.column, asPrisma(record[c.column], c)]))))[0];
  });
}

// Rows of one model in one INSERT: a plain create's, and a batch's creates together. Prisma's
// createManyAndReturn compiles and interprets every call: for 100 customers it took about three
// times the INSERT itself (bench `bulk`), so the statement is written here, from the model's
// fields and the table's own column types, and Prisma runs it raw in the caller's transaction.
// What Prisma fills in on a create is filled in here: a new UUID v7 id (every model declares
// `@default(uuid(7))`), and the time of the write for `@updatedAt` and `@default(now())`
// (Prisma sets both to the same instant); any other value a row leaves out is the column's
// DEFAULT.
import { randomUUID } from 'node:crypto';
import { getDatamodel } from '../generated/pothos-prisma-types.js';
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

/** Inserts `rows` (by field name) into the model's table and answers the records, by field name, in the order of `rows`. */
export async function insertRows(tx: Pick<Tx, '$queryRawUnsafe'>, model: string, table: string, rows: Array<Record<string, unknown>>): Promise<Array<Record<string, unknown>>> {
  const columns = await columnsOf(tx, model, table);
  const now = new Date();
  const stamps = Object.fromEntries(columns.filter((c) => c.now).map((c) => [c.field, now]));
  const filled = rows.map((row): Record<string, unknown> => ({ ...stamps, ...row, id: row.id ?? uuidV7(now.getTime()) }));
  const written = columns.filter((c) => filled.some((row) => row[c.field] !== undefined));
  const params: unknown[] = [];
  const values = filled.map((row) => {
    const cells = written.map((c) => {
      if (row[c.field] === undefined) return 'DEFAULT';
      params.push(parameter(row[c.field]));
      return `$${params.length}::${c.type}`;
    });
    return `(${cells.join(', ')})`;
  });
  const inserted = await tx.$queryRawUnsafe<Array<Record<string, unknown>>>(
    `INSERT INTO ${quoted(table)} (${written.map((c) => quoted(c.column)).join(', ')}) VALUES ${values.join(', ')} RETURNING ${columns.map((c) => quoted(c.column)).join(', ')}`,
    ...params,
  );
  // RETURNING's order is PostgreSQL's to choose: the rows are put back in order by their ids.
  const byId = new Map(inserted.map((record) => [String(record.id), Object.fromEntries(columns.map((c) => [c.field, record[c.column]]))]));
  if (byId.size !== filled.length) throw new Error(`INSERT into ${table} answered ${byId.size} of ${filled.length} rows`);
  return filled.map((row) => byId.get(String(row.id).toLowerCase())!);
}

// Plain reads, written as SQL here instead of by Prisma's query builder. A list page of
// scalar columns cost Prisma 2.4 times the CPU the same statement costs here, and its raw
// SQL 1.6 times (npm run bench -- cpu: 0.36 and 0.25 against 0.15 ms for a page of 21
// customers), on the path every list page takes. A findMany whose arguments are plain (scalar columns; equalities, ranges,
// sets and nulls joined by AND and OR; an order of columns; skip and take) is written as one
// statement, prepared on the same pool, and answered in Prisma's shape (its field names,
// Date, BigInt, parsed JSON). Any other shape, and any statement PostgreSQL refuses for
// its values, goes to Prisma as before, which then answers as it always did.
import pg from 'pg';
import type { RuntimeDataModel } from '@prisma/client/runtime/client';
import type { SqlQuery } from '@prisma/driver-adapter-utils';

/** A row as Prisma answers it: field names, JavaScript values. */
export type Row = Record<string, unknown>;

/** Runs one read: a prepared statement and its values, answered in Prisma's types. */
export type Read = (text: string, values: unknown[]) => Promise<Row[]>;

interface Column {
  name: string;
  column: string;
  type: string;
}

interface Table {
  name: string;
  columns: Map<string, Column>;
  scalars: Column[];
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** The models' tables and scalar columns, from the client's own data model. */
export function tablesOf(datamodel: RuntimeDataModel): Map<string, Table> {
  return new Map(
    Object.entries(datamodel.models).map(([model, { dbName, fields }]) => {
      const scalars = fields
        .filter((field) => field.kind === 'scalar' || field.kind === 'enum')
        .map((field) => ({ name: field.name, column: field.dbName ?? field.name, type: field.type }));
      return [model, { name: `"public".${quote(dbName ?? model)}`, columns: new Map(scalars.map((c) => [c.name, c])), scalars }];
    }),
  );
}

/** Not a plain read: Prisma runs it. Thrown often (every list of invoices, with their lines): no stack to capture. */
const NOT_PLAIN = Symbol('not a plain read');
const notPlain = (): never => {
  throw NOT_PLAIN;
};

/** A value as a statement parameter: times as UTC instants (a DATE column takes their date), big integers as text. */
function parameter(value: unknown): unknown {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? notPlain() : value.toISOString();
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  return notPlain();
}

const RANGES: Record<string, string> = { lt: '<', lte: '<=', gt: '>', gte: '>=' };

class Statement {
  /** `values`: another statement's, when this one is a part of it. */
  constructor(
    private readonly table: Table,
    readonly values: unknown[] = [],
  ) {}

  bind(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }

  column(name: string): string {
    const column = this.table.columns.get(name);
    // Json filters and relations have semantics of their own.
    if (!column || column.type === 'Json') return notPlain();
    return quote(column.column);
  }

  /** A `where` as SQL; `TRUE` when it filters nothing. */
  where(where: unknown): string {
    if (where === undefined) return 'TRUE';
    if (where === null || typeof where !== 'object' || Array.isArray(where)) return notPlain();
    const parts: string[] = [];
    for (const [key, value] of Object.entries(where)) {
      if (value === undefined) continue;
      if (key === 'AND') parts.push(...(Array.isArray(value) ? value : [value]).map((part) => `(${this.where(part)})`));
      else if (key === 'OR') parts.push(Array.isArray(value) && value.length > 0 ? `(${value.map((part) => `(${this.where(part)})`).join(' OR ')})` : 'FALSE');
      else parts.push(this.condition(this.column(key), value));
    }
    return parts.length > 0 ? parts.join(' AND ') : 'TRUE';
  }

  private condition(column: string, filter: unknown): string {
    if (filter === null) return `${column} IS NULL`;
    if (typeof filter !== 'object' || filter instanceof Date) return `${column} = ${this.bind(parameter(filter))}`;
    const parts: string[] = [];
    for (const [operator, operand] of Object.entries(filter)) {
      if (operand === undefined) continue;
      if (operator === 'equals') parts.push(operand === null ? `${column} IS NULL` : `${column} = ${this.bind(parameter(operand))}`);
      else if (operator in RANGES && operand !== null) parts.push(`${column} ${RANGES[operator]} ${this.bind(parameter(operand))}`);
      else if (operator === 'in' && Array.isArray(operand)) parts.push(`${column} = ANY(${this.bind(operand.map(parameter))})`);
      // `not: value` also keeps NULLs in Prisma's hands; only `not: null` is plain.
      else if (operator === 'not' && operand === null) parts.push(`${column} IS NOT NULL`);
      else notPlain();
    }
    return parts.length > 0 ? parts.join(' AND ') : 'TRUE';
  }

  orderBy(orderBy: unknown): string {
    if (orderBy === undefined) return '';
    const keys = (Array.isArray(orderBy) ? orderBy : [orderBy]).flatMap((key: unknown) => (key && typeof key === 'object' ? Object.entries(key) : notPlain()));
    if (keys.length === 0) return '';
    return ` ORDER BY ${keys.map(([name, direction]) => (direction === 'asc' || direction === 'desc' ? `${this.column(name)} ${direction.toUpperCase()}` : notPlain())).join(', ')}`;
  }
}

const ARGUMENTS = new Set(['select', 'include', 'where', 'orderBy', 'skip', 'take']);
const UNREAD_TYPES = new Set(['Decimal', 'Bytes']);

/** A number summed over another model's rows, read beside a page (a list's maintained total). */
export interface Sum {
  model: string;
  where: object;
  field: string;
}

/** The column a page's rows carry their `Sum` in. */
export const TOTAL_COLUMN = '__total';

/**
 * The statement of a plain findMany, with the fields it answers; undefined for any other.
 * `sum`: a scalar sub-select beside the columns (`TOTAL_COLUMN`), so a page and its total
 * are one statement, one round trip; PostgreSQL runs it once (it refers to no row).
 */
export function plainFindMany(tables: Map<string, Table>, model: string, args: Record<string, unknown>, sum?: Sum): { text: string; values: unknown[] } | undefined {
  const table = tables.get(model);
  const summed = sum && tables.get(sum.model);
  if (!table || (sum && !summed)) return undefined;
  try {
    for (const [key, value] of Object.entries(args)) if (value !== undefined && !ARGUMENTS.has(key)) notPlain();
    const { select, include, where, orderBy, skip, take } = args;
    if (include !== undefined && (typeof include !== 'object' || include === null || Object.keys(include).length > 0)) notPlain();
    let fields = table.scalars;
    if (select !== undefined) {
      if (typeof select !== 'object' || select === null) notPlain();
      const chosen = Object.entries(select as object).filter(([, on]) => (on === true ? true : on === false || on === undefined ? false : notPlain()));
      fields = chosen.map(([name]) => table.columns.get(name) ?? notPlain());
      if (fields.length === 0) notPlain();
    }
    // Prisma answers these in classes of its own (Decimal, Uint8Array); pg in strings and Buffers.
    if (fields.some((field) => UNREAD_TYPES.has(field.type))) notPlain();
    const statement = new Statement(table);
    const columns = fields.map((field) => (field.column === field.name ? quote(field.name) : `${quote(field.column)} AS ${quote(field.name)}`));
    if (sum && summed) {
      const of = new Statement(summed, statement.values);
      columns.push(`(SELECT COALESCE(SUM(${of.column(sum.field)}), 0) FROM ${summed.name} WHERE ${of.where(sum.where)}) AS ${quote(TOTAL_COLUMN)}`);
    }
    const condition = statement.where(where);
    const order = statement.orderBy(orderBy);
    const count = (value: unknown) => (value === undefined || value === 0 ? undefined : Number.isInteger(value) && (value as number) > 0 ? statement.bind(value) : notPlain());
    const limit = count(take);
    const offset = count(skip);
    const text = `SELECT ${columns.join(', ')} FROM ${table.name} WHERE ${condition}${order}${limit ? ` LIMIT ${limit}` : take === 0 ? ' LIMIT 0' : ''}${offset ? ` OFFSET ${offset}` : ''}`;
    return { text, values: statement.values };
  } catch (error) {
    if (error === NOT_PLAIN) return undefined;
    throw error;
  }
}

/**
 * A timestamptz as PostgreSQL writes it (`2026-11-29 05:32:46.123+00`, any offset) read with
 * arithmetic; any other form (years before 100 or past 9999, BC, infinity) by `otherwise`.
 * pg's parser matches three regular expressions per value: with three times to a record,
 * it was the largest part of reading a page, and most of the garbage a page left.
 */
export function parseTimestamptz(value: string, otherwise: (value: string) => unknown): unknown {
  const n = value.length;
  if (n < 22 || value.charCodeAt(4) !== 45 || value.charCodeAt(10) !== 32 || value.charCodeAt(19) === 32) return otherwise(value);
  const year = two(value, 0) * 100 + two(value, 2);
  let at = 19;
  let ms = 0;
  if (value.charCodeAt(at) === 46) {
    // Fractions past the millisecond are dropped, as a Date does.
    for (let scale = 100; ++at < n && value.charCodeAt(at) >= 48 && value.charCodeAt(at) <= 57; scale /= 10) if (scale >= 1) ms += (value.charCodeAt(at) - 48) * scale;
  }
  const sign = value.charCodeAt(at) === 43 ? 1 : value.charCodeAt(at) === 45 ? -1 : 0;
  let offset = two(value, at + 1) * 3600;
  at += 3;
  for (let unit = 60; at < n && value.charCodeAt(at) === 58 && unit >= 1; unit /= 60, at += 3) offset += two(value, at + 1) * unit;
  if (sign === 0 || at !== n || year < 100) return otherwise(value);
  const time = Date.UTC(year, two(value, 5) - 1, two(value, 8), two(value, 11), two(value, 14), two(value, 17), ms) - sign * offset * 1000;
  return Number.isFinite(time) ? new Date(time) : otherwise(value);
}

/** The two digits at `at`, as a number. */
const two = (value: string, at: number) => (value.charCodeAt(at) - 48) * 10 + value.charCodeAt(at + 1) - 48;

/**
 * Results in Prisma's types: 64-bit integers as BigInt and DATE columns as UTC midnight
 * (pg's own parsers give text and local midnight); the rest as pg parses them (timestamps
 * as Date, JSON parsed, arrays as arrays).
 */
function prismaTypes(): pg.CustomTypesConfig {
  const { types } = pg;
  const timestamptz = types.getTypeParser(types.builtins.TIMESTAMPTZ, 'text');
  return {
    getTypeParser: ((oid: number, format?: string) => {
      if (oid === types.builtins.INT8) return (value: string) => BigInt(value);
      if (oid === types.builtins.DATE) return (value: string) => new Date(`${value}T00:00:00Z`);
      if (oid === types.builtins.TIMESTAMPTZ && format !== 'binary') return (value: string) => parseTimestamptz(value, timestamptz);
      return types.getTypeParser(oid, format as 'text');
    }) as pg.CustomTypesConfig['getTypeParser'],
  };
}

/**
 * Reads on `pool`, each statement prepared once per connection, named by `names`: the pool's
 * Prisma adapter's own generator, so one bound covers every statement a connection keeps
 * (db/statement-names.ts). `onSend` hears each.
 */
export function poolRead(pool: pg.Pool, names: (query: SqlQuery) => string | undefined, onSend?: (text: string) => void): Read {
  const parsers = prismaTypes();
  return async (text, values) => {
    onSend?.(text);
    const name = names({ sql: text, args: values, argTypes: [] });
    return (await pool.query({ name, text, values, types: parsers })).rows as Row[];
  };
}

/** An SQLSTATE of class 22 (a value PostgreSQL cannot take: not a UUID, out of range): Prisma reports those its own way. */
export const isDataException = (error: unknown): boolean => typeof (error as { code?: unknown })?.code === 'string' && (error as { code: string }).code.startsWith('22');

// Plain reads, written as SQL here instead of by Prisma's query builder. A list page of
// scalar columns cost Prisma 2.4 times the CPU the same statement costs here, and its raw
// SQL 1.6 times (npm run bench -- cpu: 0.36 and 0.25 against 0.15 ms for a page of 21
// customers), on the path every list page takes. A findMany whose arguments are plain (scalar columns; equalities, ranges,
// sets and nulls joined by AND and OR; an order of columns; skip and take; relations
// included with the same arguments) is written as one statement, prepared on the same pool,
// and answered in Prisma's shape (its field names, Date, BigInt, parsed JSON). An included
// relation is a sub-select beside the columns that PostgreSQL answers as JSON (a to-many one
// as an array of rows, each row an array of its values), as Prisma's own relation joins do.
// Any other shape, and any statement PostgreSQL refuses for its values, goes to Prisma as
// before, which then answers as it always did.
import pg from 'pg';
import type { PothosPrismaDatamodel } from '@pothos/plugin-prisma';
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

/** A relation of a table: the model it reaches, whether to many, and its join's column pairs. */
interface Relation {
  model: string;
  list: boolean;
  join: Array<{ target: string; parent: string }>;
}

interface Table {
  name: string;
  columns: Map<string, Column>;
  scalars: Column[];
  relations: Map<string, Relation>;
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * The models' tables and scalar columns, from the client's own data model; with `relations`
 * (Pothos's copy of the schema, which names each relation's fields), their relations too.
 * A relation joins its fields to the other model's primary key, in order, as every relation
 * of this schema does.
 */
export function tablesOf(datamodel: RuntimeDataModel, relations?: PothosPrismaDatamodel): Map<string, Table> {
  const tables = new Map<string, Table>(
    Object.entries(datamodel.models).map(([model, { dbName, fields }]) => {
      const scalars = fields
        .filter((field) => field.kind === 'scalar' || field.kind === 'enum')
        .map((field) => ({ name: field.name, column: field.dbName ?? field.name, type: field.type }));
      return [model, { name: `"public".${quote(dbName ?? model)}`, columns: new Map(scalars.map((c) => [c.name, c])), scalars, relations: new Map() }];
    }),
  );
  const models = relations?.datamodel.models ?? {};
  const keyOf = (model: string) => models[model]?.primaryKey?.fields ?? models[model]?.fields.filter((field) => field.isId).map((field) => field.name) ?? [];
  const columnOf = (model: string, field: string) => tables.get(model)?.columns.get(field)?.column;
  for (const [model, table] of tables) {
    for (const field of models[model]?.fields ?? []) {
      if (field.kind !== 'object' || !field.relationName) continue;
      const own = field.relationFromFields ?? [];
      // The foreign key is this model's (to one), or the other model's field of the same relation.
      const other = own.length > 0 ? undefined : models[field.type]?.fields.find((candidate) => candidate.relationName === field.relationName && (candidate.relationFromFields?.length ?? 0) > 0);
      const [from, to, fromModel, toModel] = own.length > 0 ? [own, keyOf(field.type), model, field.type] : [other?.relationFromFields ?? [], keyOf(model), field.type, model];
      if (from.length === 0 || from.length !== to.length) continue;
      const pairs = from.map((name, i) => ({ fromColumn: columnOf(fromModel, name), toColumn: columnOf(toModel, to[i]!) }));
      if (pairs.some((pair) => !pair.fromColumn || !pair.toColumn)) continue;
      // target: the column of the included model's table; parent: the including row's.
      const join = pairs.map(({ fromColumn, toColumn }) => (own.length > 0 ? { target: toColumn!, parent: fromColumn! } : { target: fromColumn!, parent: toColumn! }));
      table.relations.set(field.name, { model: field.type, list: field.isList, join });
    }
  }
  return tables;
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

  /** `take` and `skip` as LIMIT and OFFSET (positive counts only: a negative take reads backwards in Prisma). */
  page(take: unknown, skip: unknown): string {
    const count = (value: unknown) => (value === undefined || value === 0 ? undefined : Number.isInteger(value) && (value as number) > 0 ? this.bind(value) : notPlain());
    const limit = count(take);
    const offset = count(skip);
    return `${limit ? ` LIMIT ${limit}` : take === 0 ? ' LIMIT 0' : ''}${offset ? ` OFFSET ${offset}` : ''}`;
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

/** A plain findMany as one statement: its text, its values, and what turns its rows into Prisma's answer. */
export interface PlainStatement {
  text: string;
  values: unknown[];
  /** The rows with their included relations (sent as JSON) in Prisma's shape; absent when none are included. */
  finish?: (rows: Row[]) => Row[];
}

/** One level of an answer: its scalar fields, then its relations, in the order of its values. */
interface Shape {
  fields: Column[];
  relations: Array<{ name: string; list: boolean; shape: Shape }>;
}

const RELATED_ARGUMENTS = new Set(['select', 'include']);
/** json_build_array takes at most 100 arguments. */
const MAX_VALUES = 100;

/** A statement's parts for one table: its fields and included relations as SQL, with their shape. */
class Level {
  /** `values`: the statement's, which the relations' own conditions bind into. */
  constructor(
    private readonly tables: Map<string, Table>,
    private readonly values: unknown[],
  ) {}

  private aliases = 0;

  /** The scalar fields chosen and the relations included, with their arguments. */
  static chosen(table: Table, select: unknown, include: unknown): { fields: Column[]; included: Array<[string, Relation, Record<string, unknown>]> } {
    if (select !== undefined && include !== undefined) notPlain();
    const picked = select ?? include;
    if (picked !== undefined && (typeof picked !== 'object' || picked === null || Array.isArray(picked))) notPlain();
    const fields: Column[] = select === undefined ? [...table.scalars] : [];
    const included: Array<[string, Relation, Record<string, unknown>]> = [];
    for (const [name, on] of Object.entries((picked ?? {}) as object)) {
      if (on === false || on === undefined) continue;
      const relation = table.relations.get(name);
      if (relation && (on === true || (typeof on === 'object' && on !== null && !Array.isArray(on)))) included.push([name, relation, on === true ? {} : (on as Record<string, unknown>)]);
      else if (on === true && select !== undefined) fields.push(table.columns.get(name) ?? notPlain());
      else notPlain();
    }
    if (fields.length === 0 && included.length === 0) notPlain();
    // Prisma answers these in classes of its own (Decimal, Uint8Array); pg in strings and Buffers.
    if (fields.some((field) => UNREAD_TYPES.has(field.type))) notPlain();
    return { fields, included };
  }

  /** The relations `included` of the row `parent` (an alias), each a JSON sub-select, with their shapes in the same order. */
  relations(parent: string, included: Array<[string, Relation, Record<string, unknown>]>): { sql: string[]; relations: Shape['relations'] } {
    const sql: string[] = [];
    const relations = included.map(([name, relation, args]) => {
      const read = this.related(parent, relation, args);
      sql.push(read.sql);
      return { name, list: relation.list, shape: read.shape };
    });
    return { sql, relations };
  }

  /** A relation of the row `parent` (an alias) as a JSON sub-select, and its shape. */
  private related(parent: string, relation: Relation, args: Record<string, unknown>): { sql: string; shape: Shape } {
    const table = this.tables.get(relation.model) ?? notPlain();
    for (const [key, value] of Object.entries(args)) if (value !== undefined && !(relation.list ? ARGUMENTS : RELATED_ARGUMENTS).has(key)) notPlain();
    const { fields, included } = Level.chosen(table, args.select, args.include);
    const alias = quote(`r${++this.aliases}`);
    // Unqualified, the columns of the relation's own conditions name its table (the innermost).
    const own = new Statement(table, this.values);
    const join = relation.join.map(({ target, parent: column }) => `${alias}.${quote(target)} = ${parent}.${quote(column)}`).join(' AND ');
    const nested = this.relations(alias, included);
    const values = [...fields.map((field) => `${alias}.${quote(field.column)}${field.type === 'BigInt' ? '::text' : ''}`), ...nested.sql];
    if (values.length > MAX_VALUES) notPlain();
    const shape: Shape = { fields, relations: nested.relations };
    if (!relation.list) return { sql: `(SELECT json_build_array(${values.join(', ')}) FROM ${table.name} AS ${alias} WHERE ${join})`, shape };
    const condition = own.where(args.where);
    const order = own.orderBy(args.orderBy);
    const rows = `SELECT * FROM ${table.name} AS ${alias} WHERE ${join} AND ${condition}${order}${own.page(args.take, args.skip)}`;
    // The aggregate keeps the sub-select's order, as Prisma's own relation joins rely on.
    return { sql: `(SELECT COALESCE(json_agg(json_build_array(${values.join(', ')})), '[]'::json) FROM (${rows}) AS ${alias})`, shape };
  }
}

/** A value as JSON carries it, in Prisma's type: times (and dates, at UTC midnight) as Date, 64-bit integers (sent as text) as BigInt. */
function fromJson(value: unknown, type: string): unknown {
  if (value === null) return null;
  if (type === 'DateTime') return new Date(value as string);
  if (type === 'BigInt') return BigInt(value as string);
  return value;
}

function record(values: unknown[], shape: Shape): Row {
  const row: Row = {};
  const { fields, relations } = shape;
  for (let i = 0; i < fields.length; i++) row[fields[i]!.name] = fromJson(values[i], fields[i]!.type);
  for (let i = 0; i < relations.length; i++) row[relations[i]!.name] = related(values[fields.length + i], relations[i]!);
  return row;
}

function related(value: unknown, relation: Shape['relations'][number]): unknown {
  if (relation.list) return (value as unknown[][]).map((values) => record(values, relation.shape));
  return value === null ? null : record(value as unknown[], relation.shape);
}

/**
 * The statement of a plain findMany; undefined for any other.
 * `sum`: a scalar sub-select beside the columns (`TOTAL_COLUMN`), so a page and its total
 * are one statement, one round trip; PostgreSQL runs it once (it refers to no row).
 */
export function plainFindMany(tables: Map<string, Table>, model: string, args: Record<string, unknown>, sum?: Sum): PlainStatement | undefined {
  const table = tables.get(model);
  const summed = sum && tables.get(sum.model);
  if (!table || (sum && !summed)) return undefined;
  try {
    for (const [key, value] of Object.entries(args)) if (value !== undefined && !ARGUMENTS.has(key)) notPlain();
    const { select, include, where, orderBy, skip, take } = args;
    const { fields, included } = Level.chosen(table, select, include);
    if (fields.length === 0) notPlain();
    const statement = new Statement(table);
    const root = quote('r0');
    const level = new Level(tables, statement.values);
    const columns = fields.map((field) => (field.column === field.name ? quote(field.name) : `${quote(field.column)} AS ${quote(field.name)}`));
    const { sql, relations } = level.relations(root, included);
    columns.push(...sql.map((read, i) => `${read} AS ${quote(relations[i]!.name)}`));
    if (sum && summed) {
      const of = new Statement(summed, statement.values);
      columns.push(`(SELECT COALESCE(SUM(${of.column(sum.field)}), 0) FROM ${summed.name} WHERE ${of.where(sum.where)}) AS ${quote(TOTAL_COLUMN)}`);
    }
    const condition = statement.where(where);
    const order = statement.orderBy(orderBy);
    const from = relations.length > 0 ? `${table.name} AS ${root}` : table.name;
    const text = `SELECT ${columns.join(', ')} FROM ${from} WHERE ${condition}${order}${statement.page(take, skip)}`;
    if (relations.length === 0) return { text, values: statement.values };
    const finish = (rows: Row[]) => {
      for (const row of rows) for (const relation of relations) row[relation.name] = related(row[relation.name], relation);
      return rows;
    };
    return { text, values: statement.values, finish };
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

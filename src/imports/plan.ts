// What an import file means: its header names fields of the resource's create input (in
// REST's snake_case, `metadata.<key>` for a metadata key), and each data row becomes one
// batch item (schema/bulk.ts), create or upsert by external id. The file is judged whole
// when it is posted (columns, CSV syntax, row count), so nothing runs on a file that cannot
// be read; each row's own faults are that row's errors when it runs.
import { getNamedType, isNonNullType, type GraphQLInputField, type GraphQLInputObjectType, type GraphQLSchema } from 'graphql';
import type { Scope } from '../auth/scopes.js';
import { invalidInput, type FieldError } from '../errors.js';
import { snakeCase } from '../rest/names.js';
import { queryValue } from '../rest/body.js';
import type { ResourceType } from '../schema/changes.js';
import { CsvError, readRecord, withoutBom } from './csv.js';

/** Data rows an import may hold. */
export const MAX_IMPORT_ROWS = 100_000;

/**
 * The body cap of POST /v1/imports: 100,000 rows at up to ~500 bytes each. Every other body
 * stays under MAX_BODY_BYTES (1 MiB, http/read-body.ts), which would hold only ~5,000 rows.
 * The file is read once into memory and stored with the import until it ends.
 */
export const MAX_IMPORT_BYTES = 50 * 1024 * 1024;

export type ImportMode = 'create' | 'upsert';

/** What can be imported: the resource's record type and the scope its writes need. */
export const IMPORTABLE: Record<string, { type: ResourceType; write: Scope }> = {
  customers: { type: 'Customer', write: 'customers:write' },
};

/** A batch item of schema/bulk.ts. */
export interface RowItem {
  op: ImportMode;
  externalId?: string;
  data: Record<string, unknown>;
}

export interface Column {
  /** As the header names it. */
  name: string;
  field?: GraphQLInputField;
  /** `metadata.<key>`: the key. */
  metadataKey?: string;
}

export const createInputOf = (schema: GraphQLSchema, resource: string) => schema.getType(`Create${IMPORTABLE[resource]!.type}Input`) as GraphQLInputObjectType;

/** The header's columns, or a 400 naming every unknown, repeated or missing column. */
export function columnsOf(header: string[], input: GraphQLInputObjectType, mode: ImportMode): Column[] {
  const fields = new Map(Object.values(input.getFields()).map((field) => [snakeCase(field.name), field]));
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  const known = [...fields.keys()].map((name) => (name === 'metadata' ? 'metadata.<key>' : name)).join(', ');
  const columns = header.map((raw): Column => {
    const name = raw.trim();
    if (seen.has(name)) errors.push({ param: name, message: 'is a repeated column' });
    seen.add(name);
    const key = /^metadata\.(.+)$/.exec(name)?.[1];
    if (key !== undefined && fields.has('metadata')) return { name, metadataKey: key };
    const field = fields.get(name);
    if (!field || name === 'metadata') errors.push({ param: name || `column ${header.indexOf(raw) + 1}`, message: `is not a column of this resource (columns: ${known})` });
    return { name, field };
  });
  for (const [name, field] of fields) {
    if (isNonNullType(field.type) && !seen.has(name)) errors.push({ param: name, message: 'is a required column' });
  }
  if (mode === 'upsert' && !seen.has('external_id')) errors.push({ param: 'external_id', message: 'is a required column for mode=upsert (rows are matched by it)' });
  if (errors.length > 0) throw invalidInput(errors);
  return columns;
}

/** The file's header and its number of data rows; a 400 when it cannot be read or is too long. */
export function readFile(csv: string): { header: string[]; dataStart: number; total: number } {
  const fault = (message: string) => invalidInput([{ param: 'csv', message }]);
  // The database's text cannot hold NUL (requests are refused it by graphql/text-inputs.ts; the CLI reads files itself).
  if (csv.includes('\u0000')) throw fault('must not contain a NUL character');
  try {
    const head = readRecord(csv, 0);
    if (!head) throw fault('is empty: the first line names the columns');
    let total = 0;
    for (let at = head.end, record = readRecord(csv, at); record; at = record.end, record = readRecord(csv, at)) {
      if (++total > MAX_IMPORT_ROWS) throw fault(`has more than ${MAX_IMPORT_ROWS} rows`);
    }
    if (total === 0) throw fault('has no data rows below its header');
    return { header: head.cells, dataStart: head.end, total };
  } catch (error) {
    if (error instanceof CsvError) throw fault(`is not valid CSV: ${error.message}`);
    throw error;
  }
}

/**
 * One data row as a batch item: each non-empty cell read as its field's type (an empty cell
 * leaves the field out), the faults found doing so (by GraphQL field name, as the item's
 * writer reports its own), or the row's own fault (a wrong number of cells).
 */
export function rowItem(columns: Column[], cells: string[], mode: ImportMode): { item: RowItem; faults: FieldError[] } | { fault: string } {
  if (cells.length !== columns.length) return { fault: `has ${cells.length} cells; the header has ${columns.length} columns` };
  const data: Record<string, unknown> = {};
  const faults: FieldError[] = [];
  let metadata: Record<string, string> | undefined;
  columns.forEach((column, i) => {
    const cell = cells[i]!;
    if (cell === '') return;
    if (column.metadataKey !== undefined) {
      (metadata ??= {})[column.metadataKey] = cell;
      return;
    }
    const field = column.field!;
    const { value, fault } = queryValue(cell, getNamedType(field.type));
    if (fault) faults.push({ param: field.name, message: fault });
    else data[field.name] = value;
  });
  if (metadata) data.metadata = metadata;
  const { externalId, ...rest } = data;
  return { item: { op: mode, ...(typeof externalId === 'string' ? { externalId } : {}), data: rest }, faults };
}

/**
 * A new import's stored fields, once its file has been judged (a 400 naming every fault in
 * the header, or the file's): the file without a byte order mark, its row count, and where
 * its first data row begins.
 */
export function newImport(schema: GraphQLSchema, resource: string, mode: ImportMode, file: string) {
  const csv = withoutBom(file);
  const { header, dataStart, total } = readFile(csv);
  columnsOf(header, createInputOf(schema, resource), mode);
  return { resource, mode, csv, total, nextOffset: dataStart };
}

// An event as the API shows it (REST, GraphQL, webhooks alike): `{ id, seq, type, created_at,
// data: { object, previous_attributes? }, request_id }`, where `object` is the record as
// REST shows it. The log stores the record's columns as the change wrote them (a trigger
// cannot know the API's names); this turns them into the REST record of the schema's type.
import { getNamedType, getNullableType, isLeafType, isListType, isObjectType, type GraphQLObjectType, type GraphQLSchema } from 'graphql';
import { snakeCase } from '../rest/names.js';

export interface EventRow {
  id: string;
  /** The organization's change number the change took (dense: 1, 2, 3, ... in commit order). */
  seq: bigint;
  type: string;
  resource: string;
  object: unknown;
  previous: unknown;
  requestId: string | null;
  createdAt: Date;
}

export interface ApiEvent {
  id: string;
  seq: number;
  type: string;
  created_at: string;
  data: { object: Record<string, unknown>; previous_attributes?: Record<string, unknown> };
  request_id: string | null;
}

type Columns = Record<string, unknown>;

/** The record's GraphQL type: `invoice` -> Invoice. */
const typeOf = (schema: GraphQLSchema, resource: string) => schema.getType(resource.charAt(0).toUpperCase() + resource.slice(1)) as GraphQLObjectType;

/** A column's value as REST shows it: timestamps in UTC with a Z, everything else as stored. */
function valueOf(type: string, raw: unknown): unknown {
  if (raw === null || raw === undefined) return null;
  return type === 'DateTime' ? new Date(raw as string).toISOString() : raw;
}

interface FieldMap {
  /** REST name -> column and leaf type, or the embedded record type. */
  rest: string;
  column: string;
  leaf?: string;
  embedded?: GraphQLObjectType;
}

const maps = new WeakMap<GraphQLObjectType, FieldMap[]>();

/** How each REST field of a type is stored: `from` is the column `from_address`. */
function fieldsOf(type: GraphQLObjectType): FieldMap[] {
  let map = maps.get(type);
  if (!map) {
    map = Object.values(type.getFields()).flatMap((field): FieldMap[] => {
      const exposed = (field.extensions as { pothosExposedField?: string }).pothosExposedField ?? field.name;
      const named = getNamedType(field.type);
      const base = { rest: snakeCase(field.name), column: snakeCase(exposed) };
      if (isLeafType(named)) return [{ ...base, leaf: named.name }];
      // An object list the log stored with the record (an invoice's `line_items`) is part of
      // it; other relations are not stored, so record() finds no column for them.
      return isListType(getNullableType(field.type)) && isObjectType(named) ? [{ ...base, embedded: named }] : [];
    });
    maps.set(type, map);
  }
  return map;
}

function record(type: GraphQLObjectType, columns: Columns): Record<string, unknown> {
  return Object.fromEntries(
    fieldsOf(type)
      .filter((field) => field.column in columns)
      .map((field) => [
        field.rest,
        field.embedded ? (columns[field.column] as Columns[]).map((line) => record(field.embedded!, line)) : valueOf(field.leaf!, columns[field.column]),
      ]),
  );
}

export function formatEvent(schema: GraphQLSchema, row: EventRow): ApiEvent {
  const type = typeOf(schema, row.resource);
  const previous = row.previous as Columns | null;
  return {
    id: row.id,
    seq: Number(row.seq),
    type: row.type,
    created_at: row.createdAt.toISOString(),
    data: { object: record(type, row.object as Columns), ...(previous ? { previous_attributes: record(type, previous) } : {}) },
    request_id: row.requestId,
  };
}

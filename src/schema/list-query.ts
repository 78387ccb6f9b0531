// What a list can be asked, declared once per resource (defineResource's `list`): the fields
// it sorts by, the ranges, sets and exact values it filters by, the columns its `search`
// reads, and one level of relations. From that declaration come the GraphQL `<Type>Where`
// and `<Type>OrderBy` arguments, their Prisma `where` and `orderBy`, and the keyset a sorted
// cursor resumes from. REST reads the same types from the schema (rest/list-params.ts).
import type { EnumRef, InputObjectRef } from '@pothos/core';
import type { Scope } from '../auth/scopes.js';
import type { Context } from '../context.js';
import { apiError, invalidInput } from '../errors.js';
import { getDatamodel } from '../generated/pothos-prisma-types.js';
import { builder, type Types } from './builder.js';
import type { ResourceType } from './changes.js';
import { enumOf } from './enums.js';
import { dayFields } from './record-object.js';
import { resourceOf } from './registry.js';
import { isUuid } from './validation.js';

type SchemaTypes = PothosSchemaTypes.ExtendDefaultTypes<Types>;

export type FieldKind = 'text' | 'id' | 'boolean' | 'enum' | 'int' | 'date' | 'datetime' | 'metadata';

export interface ListField {
  kind: FieldKind;
  /** The Prisma field, where it differs from the GraphQL one (an e-mail's `from` is `fromAddress`). */
  column?: string;
  nullable?: boolean;
  /** Sortable (`orderBy`); int, date and datetime fields are ranges, enum fields sets. */
  sort?: boolean;
  /** Filterable by exact value (text, id and boolean fields). */
  exact?: boolean;
  /** An enum field's GraphQL enum and its values in declared order (the order it sorts in). */
  enum?: { ref: EnumRef<SchemaTypes, string, string>; name: string; values: readonly string[] };
}

export interface ListSpec {
  /** By GraphQL field name; `createdAt` and `updatedAt` are added to every list. */
  fields: Record<string, ListField>;
  /** Columns `search` matches: a case-insensitive substring of any. */
  search: { columns: string[]; description: string };
  /** One level of relation filters: a customer's `invoices` (has at least one), an invoice's `customer`. */
  relations?: Record<string, { type: ResourceType; many: boolean }>;
}

/**
 * A list as a resource declares it: its fields by name, in the order given. Each field's kind
 * and nullability are its Prisma model field's (an enum field's values, in their sort order,
 * its Prisma enum's; a day's, its object's: record-object.ts), so a declaration says only
 * what the list does with them.
 */
export interface ListDeclaration {
  /** Fields it sorts by; each also filters (ranges for numbers and times, sets for enums). */
  sort?: string[];
  /** Fields it filters by without sorting. */
  filter?: string[];
  /** Text fields filtered by their exact value. */
  exact?: string[];
  search: ListSpec['search'];
}

const KINDS: Record<string, FieldKind> = { String: 'text', Int: 'int', DateTime: 'datetime', Boolean: 'boolean' };
const EXACT_KINDS = new Set<FieldKind>(['text', 'id', 'boolean']);

/** A declaration's fields, read from the resource's Prisma model. */
export function listOf(type: ResourceType, declared: ListDeclaration): ListSpec {
  const model = getDatamodel().datamodel.models[type]!;
  const fields: Record<string, ListField> = {};
  for (const role of Object.keys(declared)) {
    if (role !== 'sort' && role !== 'filter' && role !== 'exact') continue;
    for (const name of declared[role]!) {
      const field = model.fields.find((f) => f.name === name);
      if (!field || field.kind === 'object') throw new Error(`${type}.${name}: the list names a field its Prisma model does not hold`);
      const kind = field.kind === 'enum' ? 'enum' : dayFields(type).has(name) ? 'date' : KINDS[field.type];
      if (!kind) throw new Error(`${type}.${name}: a ${field.type} field cannot be listed`);
      fields[name] ??= { kind, ...(field.isRequired ? {} : { nullable: true }), ...(kind === 'enum' ? { enum: { ...enumOf(field.type), name: field.type } } : {}) };
      if (role === 'sort') fields[name].sort = true;
      if (role === 'exact') fields[name].exact = true;
      // What declareList would leave out without a word.
      if (role === 'exact' && !EXACT_KINDS.has(kind)) throw new Error(`${type}.${name}: a ${kind} field filters by ranges or sets, not by an exact value`);
      if (role === 'filter' && EXACT_KINDS.has(kind)) throw new Error(`${type}.${name}: a ${kind} field filters by its exact value (exact)`);
    }
  }
  return { fields, search: declared.search };
}

export const MAX_SEARCH = 200;

const COMMON: Record<string, ListField> = {
  createdAt: { kind: 'datetime', sort: true },
  updatedAt: { kind: 'datetime', sort: true },
  externalId: { kind: 'text', exact: true },
  metadata: { kind: 'metadata' },
};

/** A list's declaration with the common fields, by resource type. */
const lists = new Map<ResourceType, ListSpec>();

export function listSpecOf(type: ResourceType): ListSpec {
  const spec = lists.get(type);
  if (!spec) throw new Error(`${type} declares no list`);
  return spec;
}

const CONSTANT = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase();

/** `DUE_DATE_DESC` -> `{ field: 'dueDate', direction: 'desc' }`, per list. */
const orderValues = new Map<ResourceType, Map<string, { field: string; direction: 'asc' | 'desc' }>>();

const RANGE_OPERATORS = ['gt', 'gte', 'lt', 'lte'] as const;

function rangeType(name: string, scalar: 'DateTime' | 'Date' | 'Int', what: string) {
  return builder.inputType(name, {
    description: `A range of ${what}: each bound given narrows it; a record without a value matches none.`,
    fields: (t) => ({
      gt: t.field({ type: scalar, description: 'Greater than.' }),
      gte: t.field({ type: scalar, description: 'Greater than or equal to.' }),
      lt: t.field({ type: scalar, description: 'Less than.' }),
      lte: t.field({ type: scalar, description: 'Less than or equal to.' }),
    }),
  });
}

const RANGES = {
  datetime: rangeType('DateTimeRange', 'DateTime', 'timestamps'),
  date: rangeType('DateRange', 'Date', 'calendar dates'),
  int: rangeType('IntRange', 'Int', 'integers (money in minor units)'),
};

const sets = new Map<string, InputObjectRef<SchemaTypes, { in?: string[] | null }>>();

function setType(enumeration: NonNullable<ListField['enum']>) {
  let set = sets.get(enumeration.name);
  if (!set) {
    set = builder.inputType(`${enumeration.name}Set`, {
      description: `Any of a set of ${enumeration.name} values.`,
      fields: (t) => ({ in: t.field({ type: [enumeration.ref], description: 'Matches records with any of these values.' }) }),
    });
    sets.set(enumeration.name, set);
  }
  return set;
}

const relatedRefs = new Map<ResourceType, ReturnType<typeof builder.inputRef<Where>>>();

/**
 * `<Type>RelatedWhere`: a related record's filters, `<Type>Where` without relations. Relation
 * filters go one level deep, and input types never refer to themselves (graphql-jit, which
 * compiles hot documents, loops forever on a recursive input type). Implemented by that
 * type's declareList; a relation may name it first.
 */
function relatedRef(type: ResourceType) {
  let ref = relatedRefs.get(type);
  if (!ref) {
    ref = builder.inputRef<Where>(`${type}RelatedWhere`);
    relatedRefs.set(type, ref);
  }
  return ref;
}

export type Where = Record<string, unknown>;

type Relation = NonNullable<ListSpec['relations']>[string];

/**
 * Relations a list gets from its children's declarations: a job's `customer` gives the
 * customer list its `jobs` filter. Read when the schema is built and on each request, so a
 * child may be declared before or after its parent.
 */
const childRelations = new Map<ResourceType, Record<string, Relation>>();

export function addChildRelation(parent: ResourceType, name: string, relation: Relation): void {
  childRelations.set(parent, { ...childRelations.get(parent), [name]: relation });
}

export const relationsOf = (type: ResourceType): Record<string, Relation> => ({ ...listSpecOf(type).relations, ...childRelations.get(type) });

/** Declares `<Type>Where` and `<Type>OrderBy` for `type`'s list; answers their refs. */
export function declareList(type: ResourceType, declared: ListSpec) {
  const spec: ListSpec = { ...declared, fields: { ...declared.fields, ...COMMON } };
  for (const [name, field] of Object.entries(spec.fields)) {
    // A cursor walks sort keys by ranges, which true and false have none of.
    if (field.kind === 'boolean' && field.sort) throw new Error(`${type}.${name}: a boolean list field filters by its exact value; it cannot sort`);
  }
  lists.set(type, spec);
  const own = (t: PothosSchemaTypes.InputFieldBuilder<SchemaTypes, 'InputObject'>) => ({
    search: t.string({ description: spec.search.description }),
    ...Object.fromEntries(
      Object.entries(spec.fields).flatMap(([name, field]): Array<[string, unknown]> => {
        if (field.kind === 'enum') return [[name, t.field({ type: setType(field.enum!) })]];
        if (field.kind === 'metadata') return [[name, t.field({ type: 'JSON', description: 'Records whose metadata has each of these keys with exactly this value: `{ "key": "value" }`.' })]];
        if (field.kind === 'text' || field.kind === 'id') return field.exact ? [[name, t.field({ type: field.kind === 'id' ? 'ID' : 'String', description: 'Exactly this value.' })]] : [];
        if (field.kind === 'boolean') return field.exact ? [[name, t.field({ type: 'Boolean', description: 'Exactly this value: true or false.' })]] : [];
        return [[name, t.field({ type: RANGES[field.kind] })]];
      }),
    ),
  });
  relatedRef(type).implement({
    description: `Filters of a related ${type}: every filter given must hold.`,
    fields: (t) => own(t),
  });
  const where = builder.inputType(`${type}Where`, {
    description: `Filters of ${type} records: every filter given must hold; relation filters go one level deep.`,
    fields: (t) => ({
      ...own(t),
      ...Object.fromEntries(
        Object.entries(relationsOf(type)).map(([name, relation]) => [
          name,
          t.field({ type: relatedRef(relation.type), description: relation.many ? `Has at least one live ${name.replace(/s$/, '')} matching these filters.` : `Its ${name} matches these filters.` }),
        ]),
      ),
    }),
  });
  const values = new Map<string, { field: string; direction: 'asc' | 'desc' }>();
  for (const [field, declaration] of Object.entries(spec.fields)) {
    if (!declaration.sort) continue;
    values.set(`${CONSTANT(field)}_ASC`, { field, direction: 'asc' });
    values.set(`${CONSTANT(field)}_DESC`, { field, direction: 'desc' });
  }
  orderValues.set(type, values);
  const orderBy = builder.enumType(`${type}OrderBy`, {
    description: 'A sort key: ascending or descending; nulls sort last either way, enumerations in their declared order, and `id` breaks ties.',
    values: Object.fromEntries([...values.keys()].map((value) => [value, { value }])),
  });
  return { where, orderBy };
}

/** A scope refusal naming the scope a relation needs. */
function lacking(scope: Scope, what: string) {
  return apiError('FORBIDDEN', `This API key lacks the scope ${scope}, required ${what}.`, { details: { scopes: [scope] } });
}

export function readScopeOf(type: ResourceType): Scope {
  return resourceOf(type).read;
}

/** Where a range's bound is a date: GraphQL coerced it; a cursor's copy carries it as text. */
const asValue = (kind: FieldKind, value: unknown) => ((kind === 'date' || kind === 'datetime') && !(value instanceof Date) ? new Date(String(value)) : value);

function searchWhere(columns: string[], term: string, param: string): object | undefined {
  const text = term.trim();
  if (!text) return undefined;
  if (text.length > MAX_SEARCH) throw invalidInput([{ param, message: `must be at most ${MAX_SEARCH} characters` }]);
  // Prisma passes `contains` to ILIKE as it is: escaped, `%` and `_` match themselves.
  const literal = text.replace(/[\\%_]/g, '\\$&');
  return { OR: columns.map((column) => ({ [column]: { contains: literal, mode: 'insensitive' as const } })) };
}

/**
 * The Prisma `where` of a `<Type>Where` (as GraphQL coerced it, or as a cursor carries it).
 * `param` names the argument in errors (`where`); relations need their resource's read scope
 * and match only the caller's own organization's live records.
 */
export function prismaWhere(ctx: Pick<Context, 'auth'>, type: ResourceType, where: Where | null | undefined, param = 'where', depth = 0): object[] {
  if (!where) return [];
  const spec = listSpecOf(type);
  const relations = relationsOf(type);
  const at = (name: string) => (param ? `${param}.${name}` : name);
  const and: object[] = [];
  for (const [name, value] of Object.entries(where)) {
    if (value === null || value === undefined) continue;
    if (name === 'search') {
      const search = searchWhere(spec.search.columns, String(value), at('search'));
      if (search) and.push(search);
      continue;
    }
    const relation = relations[name];
    if (relation) {
      if (depth > 0) throw invalidInput([{ param: at(name), message: 'relation filters go one level deep' }]);
      const scope = readScopeOf(relation.type);
      if (!ctx.auth.scopes.has(scope)) throw lacking(scope, `to filter by ${name}`);
      const inner = { organizationId: ctx.auth.organizationId, deletedAt: null, AND: prismaWhere(ctx, relation.type, value as Where, at(name), depth + 1) };
      and.push({ [name]: relation.many ? { some: inner } : { is: inner } });
      continue;
    }
    const field = spec.fields[name]!;
    const column = field.column ?? name;
    if (field.kind === 'enum') {
      const { in: values } = value as { in?: string[] | null };
      if (values) and.push({ [column]: { in: values } });
    } else if (field.kind === 'metadata') {
      const pairs = typeof value === 'object' && !Array.isArray(value) ? Object.entries(value as object) : [];
      if (pairs.length === 0 || pairs.some(([, v]) => typeof v !== 'string')) throw invalidInput([{ param: at(name), message: 'must be an object of string values: { "key": "value" }' }]);
      for (const [key, v] of pairs) and.push({ [column]: { path: [key], equals: v } });
    } else if (field.kind === 'boolean') {
      and.push({ [column]: value === true });
    } else if (field.kind === 'text' || field.kind === 'id') {
      // A blank exact value is a mistake, not "no filter" (an integration looking up `external_id=` of nothing).
      if (!String(value).trim()) throw invalidInput([{ param: at(name), message: 'must not be blank' }]);
      if (field.kind === 'id' && !isUuid(String(value))) throw invalidInput([{ param: at(name), message: 'must be a UUID' }]);
      and.push({ [column]: field.kind === 'id' ? String(value).toLowerCase() : value });
    } else {
      const bounds = Object.fromEntries(RANGE_OPERATORS.flatMap((op) => {
        const bound = (value as Record<string, unknown>)[op];
        return bound === null || bound === undefined ? [] : [[op, asValue(field.kind, bound)]];
      }));
      if (Object.keys(bounds).length > 0) and.push({ [column]: bounds });
    }
  }
  return and;
}

/** Whether a where names anything (empty sets included: they match nothing). */
export function isEmptyWhere(where: Where | null | undefined): boolean {
  return !where || Object.entries(where).every(([name, v]) => v === null || v === undefined || (name === 'search' && typeof v === 'string' && !v.trim()));
}

/** The value of a filter, with its keys in order and nulls left out: how a cursor carries it. */
export function canonical(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .filter((key) => (value as Record<string, unknown>)[key] !== null && (value as Record<string, unknown>)[key] !== undefined)
        .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}

export interface SortKey {
  column: string;
  direction: 'asc' | 'desc';
  kind: FieldKind;
  nullable: boolean;
  /** An enum's values in declared order. */
  values?: readonly string[];
}

/** The sort keys of an `orderBy` (its values, comma-joined as a cursor carries them). */
export function sortKeys(type: ResourceType, orderBy: readonly string[], param = 'orderBy'): SortKey[] {
  const values = orderValues.get(type)!;
  const spec = listSpecOf(type);
  const seen = new Set<string>();
  const keys: SortKey[] = [];
  for (const value of orderBy) {
    const key = values.get(value);
    if (!key) throw invalidInput([{ param, message: `${value} is not a sort key of this list` }]);
    if (seen.has(key.field)) throw invalidInput([{ param, message: `sorts by ${key.field} twice` }]);
    seen.add(key.field);
    const field = spec.fields[key.field]!;
    keys.push({ column: field.column ?? key.field, direction: key.direction, kind: field.kind, nullable: field.nullable ?? false, values: field.enum?.values });
  }
  return keys;
}

/** Prisma's `orderBy` for the keys: nulls last, then `id` in the last key's direction. */
export function prismaOrderBy(keys: SortKey[]): object[] {
  return [
    ...keys.map((k) => ({ [k.column]: k.nullable ? { sort: k.direction, nulls: 'last' as const } : k.direction })),
    { id: keys.at(-1)!.direction },
  ];
}

/** Where a sorted page ended: the last record's sort values, then its id (dates as text). */
export function positionOf(keys: SortKey[], record: Record<string, unknown>): string {
  return JSON.stringify([...keys.map((k) => canonical(record[k.column] ?? null)), record.id]);
}

/** A position back as values, or undefined when it does not fit the keys. */
export function readPosition(keys: SortKey[], position: string): unknown[] | undefined {
  let values: unknown;
  try {
    values = JSON.parse(position);
  } catch {
    return undefined;
  }
  if (!Array.isArray(values) || values.length !== keys.length + 1 || typeof values.at(-1) !== 'string') return undefined;
  return [...keys.map((k, i) => (values[i] === null ? null : asValue(k.kind, values[i]))), values.at(-1)];
}

/**
 * The records past `value` in this key's order, as index ranges in that order: later values
 * (an enumeration's one by one: a set of them is no range), then the nulls (which sort last).
 */
function pastSegments(key: SortKey, value: unknown): object[] {
  if (value === null) return [];
  const segments: object[] = [];
  if (key.values) {
    const at = key.values.indexOf(String(value));
    const later = key.direction === 'asc' ? key.values.slice(at + 1) : key.values.slice(0, at).reverse();
    for (const next of later) segments.push({ [key.column]: next });
  } else {
    segments.push({ [key.column]: { [key.direction === 'asc' ? 'gt' : 'lt']: value } });
  }
  if (key.nullable) segments.push({ [key.column]: null });
  return segments;
}

/**
 * The records after a position in the keys' order (keyset pagination), as segments in that
 * order, each an index range: equal on every key and past the id; then, from the last key to
 * the first, equal on the keys before it and past it. Read one after the other until a page
 * is full, a page costs the same however deep (one condition of OR'ed branches made the
 * database walk every earlier row of a nullable or enumerated key).
 */
export function keysetSegments(keys: SortKey[], values: unknown[]): object[] {
  const equal = (n: number) => keys.slice(0, n).map((k, j) => ({ [k.column]: values[j] }));
  const segments: object[] = [{ AND: [...equal(keys.length), { id: { [keys.at(-1)!.direction === 'asc' ? 'gt' : 'lt']: values[keys.length] } }] }];
  for (let i = keys.length - 1; i >= 0; i--) {
    for (const past of pastSegments(keys[i]!, values[i])) segments.push({ AND: [...equal(i), past] });
  }
  return segments;
}

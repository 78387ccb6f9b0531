// A REST query string as the GraphQL variables of its row: paging (`page`, `limit`,
// `cursor`, `updated_since`, `include_deleted`), `order_by`, every filter of the list's
// `<Type>Where` in REST's words (`due_date[lt]=`, `status=sent,paid`, `customer[search]=`),
// and the record's shape (`fields=`, `expand=`, on items too). Read from the schema's types,
// so a resource's list declaration is all REST needs. Every fault is named as sent, at once.
import {
  getNamedType,
  isInputObjectType,
  isListType,
  isObjectType,
  getNullableType,
  type GraphQLEnumType,
  type GraphQLInputObjectType,
  type GraphQLInputType,
  type GraphQLObjectType,
} from 'graphql';
import { apiError, type FieldError } from '../errors.js';
import { queryValue } from './body.js';
import { camelCase, snakeCase } from './names.js';
import type { Route } from './routes.js';

export interface Shape {
  /** `fields=`: the record's fields to answer (`id` always). */
  fields?: string[];
  /** `expand=`: references to answer as objects beside their ids. */
  expand?: string[];
}

export interface RestQuery {
  variables: Record<string, unknown>;
  shape: Shape;
  /** The parameter as sent, by the GraphQL argument path it became (`where.customer.search`). */
  sent: Map<string, string>;
}

const RANGE = ['gt', 'gte', 'lt', 'lte'];

/** `due_date[lt]` -> `due_date`, `['lt']`; `expand[]` -> `expand`, `['']`. */
function parseName(name: string): { base: string; path: string[] } | undefined {
  const parts = /^([a-z][a-z0-9_]*)((?:\[[A-Za-z0-9_-]*\])*)$/.exec(name);
  if (!parts) return undefined;
  return { base: parts[1]!, path: [...parts[2]!.matchAll(/\[([A-Za-z0-9_-]*)\]/g)].map((m) => m[1]!) };
}

/** The record's references: object fields that are neither embedded nor lists. */
export function expandable(route: Route): string[] {
  return Object.values(route.record.getFields())
    .filter((field) => isObjectType(getNullableType(field.type)) && !route.resource.embedded?.includes(field.name))
    .map((field) => field.name);
}

/** The fields `fields=` may name: leaf fields and embedded objects, in snake_case. */
function selectable(record: GraphQLObjectType, embedded: string[] = []): string[] {
  return Object.values(record.getFields())
    .filter((field) => !isObjectType(getNamedType(field.type)) || embedded.includes(field.name))
    .map((field) => snakeCase(field.name));
}

const list = (raw: string) => raw.split(',').map((v) => v.trim()).filter((v) => v !== '');

type Sink = { errors: FieldError[]; sent: Map<string, string> };

/** Sets `value` at `path` of `target`, making objects on the way (ranges merge: `[gte]` and `[lt]`). */
function setAt(target: Record<string, unknown>, path: string[], value: unknown) {
  let at = target;
  for (const part of path.slice(0, -1)) at = (at[part] ??= {}) as Record<string, unknown>;
  const last = path.at(-1)!;
  at[last] = typeof value === 'object' && value && !Array.isArray(value) ? { ...(at[last] as object), ...value } : value;
}

/**
 * One filter parameter against a `<Type>Where`: `name` (its GraphQL field), the bracketed
 * rest, the raw value. Answers where in the where object it goes and its value, or a fault.
 */
function filterOf(where: GraphQLInputObjectType, name: string, path: string[], raw: string, depth: number): { at: string[]; value: unknown } | { fault: string } | undefined {
  const field = where.getFields()[name];
  if (!field) return { fault: 'is not a filter of this list' };
  const type = getNamedType(field.type);
  if (isInputObjectType(type) && type.getFields().search) {
    // A relation: `customer[search]=`, `invoices[status]=`, `invoices[due_date][lt]=`.
    if (depth > 0) return { fault: 'relation filters go one level deep' };
    if (path.length === 0) return { fault: `names a relation: filter by one of its fields, such as ${snakeCase(name)}[search]=` };
    const inner = filterOf(type, camelCase(path[0]!), path.slice(1), raw, depth + 1);
    return inner && 'at' in inner ? { at: [name, ...inner.at], value: inner.value } : inner;
  }
  if (isInputObjectType(type) && type.getFields().in) {
    // A set: `status=sent,paid`; `all` is no filter.
    if (path.length > 1 || (path.length === 1 && path[0] !== 'in')) return { fault: 'takes a comma-separated set of values, such as status=sent,paid' };
    if (raw === 'all') return undefined;
    const item = getNullableType((type.getFields().in!.type as GraphQLInputType)) as GraphQLInputType;
    const values = list(raw);
    const faults = values.map((v) => queryValue(v, isListType(item) ? (item.ofType as GraphQLInputType) : item).fault).filter(Boolean);
    if (values.length === 0) return { fault: 'must name at least one value' };
    if (faults.length > 0) return { fault: `${faults[0]!.replace('must be one of ', 'each must be one of ')} (or all, alone, for no filter)` };
    return { at: [name], value: { in: values } };
  }
  if (isInputObjectType(type) && type.getFields().gt) {
    // A range: `due_date[lt]=`; without an operator, exactly that value.
    if (path.length > 1 || (path.length === 1 && !RANGE.includes(path[0]!))) return { fault: `is not an operator of this filter (operators: ${RANGE.join(', ')})` };
    const { value, fault } = queryValue(raw, type.getFields().gt!.type);
    if (fault) return { fault };
    return { at: [name], value: path.length === 1 ? { [path[0]!]: value } : { gte: value, lte: value } };
  }
  if (type.name === 'JSON') {
    // `metadata[key]=value`: that key with exactly that value.
    if (path.length !== 1 || !path[0]) return { fault: `takes a key: ${snakeCase(name)}[key]=value` };
    return { at: [name], value: { [path[0]]: raw } };
  }
  if (path.length > 0) return { fault: 'takes no operator: it matches exactly' };
  const { value, fault } = queryValue(raw, field.type);
  return fault ? { fault } : { at: [name], value };
}

/** Query parameters as the row's variables; a 400 naming every fault. */
export function restQuery(url: URL, route: Route): RestQuery {
  const sink: Sink = { errors: [], sent: new Map() };
  const { errors, sent } = sink;
  const variables: Record<string, unknown> = {};
  const where: Record<string, unknown> = {};
  const shape: Shape = {};
  const paging = new Map(route.params.map((p) => [p.name, p]));
  const shaped = route.kind === 'list' || route.kind === 'sync' || route.kind === 'item';
  const seen = new Set<string>();
  const known = () => {
    const names = [...paging.keys(), ...(route.orderBy ? ['order_by'] : []), ...(route.where ? Object.keys(route.where.getFields()).map(snakeCase) : []), ...(shaped ? ['fields', 'expand'] : [])];
    return names.length > 0 ? ` (known: ${names.join(', ')})` : '';
  };
  for (const [name, raw] of url.searchParams) {
    const parsed = parseName(name);
    const fail = (message: string) => errors.push({ param: name, message });
    if (seen.has(name) && name !== 'expand[]') {
      fail('must not be repeated');
      continue;
    }
    seen.add(name);
    if (!parsed) {
      fail(`is not a parameter of this endpoint${known()}`);
      continue;
    }
    const { base, path } = parsed;
    if (shaped && base === 'fields' && path.length === 0) {
      const allowed = selectable(route.record, route.resource.embedded);
      const unknown = list(raw).filter((f) => !allowed.includes(f));
      if (unknown.length > 0) fail(`${unknown.join(', ')} ${unknown.length > 1 ? 'are not fields' : 'is not a field'} of ${route.resource.type} (fields: ${allowed.join(', ')})`);
      else shape.fields = list(raw);
    } else if (shaped && base === 'expand' && (path.length === 0 || (path.length === 1 && path[0] === ''))) {
      const allowed = expandable(route).map(snakeCase);
      const unknown = list(raw).filter((f) => !allowed.includes(f));
      if (unknown.length > 0) fail(`${unknown.join(', ')} cannot be expanded${allowed.length ? ` (expandable: ${allowed.join(', ')})` : ': this record refers to no other'}`);
      else shape.expand = [...new Set([...(shape.expand ?? []), ...list(raw).map(camelCase)])];
    } else if (route.orderBy && base === 'order_by' && path.length === 0) {
      const order = orderOf(route.orderBy, raw);
      if ('fault' in order) fail(order.fault);
      else variables.orderBy = order.values;
    } else if (paging.has(name)) {
      const param = paging.get(name)!;
      // REST's own rule: `all` is no filter.
      if (param.kind === 'enum' && raw === 'all') continue;
      const { value, fault } = queryValue(raw, param.type);
      if (fault) fail(param.kind === 'enum' ? fault.replace('must be one of ', 'must be one of all, ') : fault);
      else variables[param.variable] = value;
    } else if (route.where && route.where.getFields()[camelCase(base)]) {
      const filter = filterOf(route.where, camelCase(base), path, raw, 0);
      if (!filter) continue;
      if ('fault' in filter) fail(filter.fault);
      else {
        setAt(where, filter.at, filter.value);
        sent.set(['where', ...filter.at].join('.'), name);
      }
    } else {
      fail(`is not a parameter of this endpoint${known()}`);
    }
  }
  if (errors.length > 0) throw apiError('BAD_REQUEST', `Invalid query parameters: ${errors.map((e) => e.param).join(', ')}.`, { errors });
  if (Object.keys(where).length > 0) variables.where = where;
  return { variables, shape, sent };
}

/** `order_by=due_date,-total_amount` as `[DUE_DATE_ASC, TOTAL_AMOUNT_DESC]`. */
function orderOf(type: GraphQLEnumType, raw: string): { values: string[] } | { fault: string } {
  const values = type.getValues().map((v) => v.name);
  const sortable = values.filter((v) => v.endsWith('_ASC')).map((v) => v.slice(0, -4).toLowerCase());
  const keys = list(raw);
  if (keys.length === 0) return { fault: `must name a field (sortable: ${sortable.join(', ')})` };
  const chosen: string[] = [];
  for (const key of keys) {
    const field = key.replace(/^-/, '');
    // The enum value of a snake_case field: `due_date` -> DUE_DATE_ASC.
    const value = `${field.toUpperCase()}_${key.startsWith('-') ? 'DESC' : 'ASC'}`;
    if (!/^[a-z_]+$/.test(field) || !values.includes(value)) return { fault: `cannot sort by ${field} (sortable: ${sortable.join(', ')}; - before a field sorts descending)` };
    if (chosen.some((c) => c.replace(/_(ASC|DESC)$/, '') === value.replace(/_(ASC|DESC)$/, ''))) return { fault: `names ${field} twice` };
    chosen.push(value);
  }
  return { values: chosen };
}

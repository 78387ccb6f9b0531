// The route table: one row per REST endpoint, read from the GraphQL schema: the fields a
// resource declaration marked with a `rest` extension (schema/resource.ts). A row says which
// GraphQL operation runs, which scope it needs (the field's own authScopes), which query
// parameters it takes (the list field's arguments, in snake_case) and which body it takes
// (the create mutation's input type).
import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isLeafType,
  isObjectType,
  type GraphQLEnumType,
  type GraphQLInputObjectType,
  type GraphQLInputType,
  type GraphQLObjectType,
  type DocumentNode,
  type GraphQLSchema,
  parse,
} from 'graphql';
import type { GraphQLField } from 'graphql';
import type { Scope } from '../auth/scopes.js';
import type { RestExtension } from '../schema/resource.js';
import { snakeCase } from './names.js';

/** What a row knows of its resource. */
export interface Resource {
  /** URL segment: /v1/{path} and /v1/{path}/{id}. */
  path: string;
  /** GraphQL object type of one record. */
  type: string;
  /** Object-valued fields that are part of the record (not links to other records). */
  embedded?: string[];
}

export interface QueryParam {
  /** As in the URL: `customer_id`. */
  name: string;
  /** As in GraphQL: `customerId`. */
  variable: string;
  kind: 'integer' | 'string' | 'id' | 'enum';
  /** Allowed values of an enum filter (`all` is accepted too and means no filter). */
  values?: string[];
  /** The argument's GraphQL type, which judges the value. */
  type: GraphQLInputType;
  description?: string;
}

/**
 * A row's kind: a resource declaration's (RestExtension); `import`: POST /v1/{path} whose
 * body is a CSV file, its query parameters the field's other arguments (schema/imports.ts);
 * or `sync`: GET /v1/{path}/sync, the list in change order with its tombstones, made for
 * every list that can sync.
 */
export type RowKind = RestExtension['kind'] | 'import' | 'sync';

export interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** `/customers`, `/customers/{id}` or `/customers/{id}/restore`. */
  path: string;
  kind: RowKind;
  resource: Resource;
  scope: Scope;
  document: string;
  /** `document`, parsed once when the table is built. */
  parsed: DocumentNode;
  params: QueryParam[];
  input?: GraphQLInputObjectType;
  record: GraphQLObjectType;
  /** A move's verb (`send`); an update's list of them (a status changes only through them). */
  verb?: string;
  moves?: string[];
  /** The GraphQL field the row runs. */
  field: string;
  /** A list's `<Type>Where` and `<Type>OrderBy` (REST's filters and order_by, rest/list-params.ts). */
  where?: GraphQLInputObjectType;
  orderBy?: GraphQLEnumType;
  /** The row's document with another selection of the record (fields=, expand=). */
  template: (selection: string) => string;
  /** A batch's item inputs: the create input (create, upsert) and the update input. */
  inputs?: { create?: GraphQLInputObjectType; update?: GraphQLInputObjectType };
  /** The item row of the same resource (a refused change answers the current record). */
  item?: Route;
}

/** Rows that change one record: they take If-Match and an Idempotency-Key. */
export const CHANGES: ReadonlySet<RowKind> = new Set(['update', 'delete', 'restore', 'move']);

/** The record's fields (those of `only`, by REST name, when given), aliased to snake_case: `created_at: createdAt`. */
export function selectionOf(type: GraphQLObjectType, embedded: string[] = [], only?: ReadonlySet<string>): string {
  const fields = Object.values(type.getFields()).flatMap((field) => {
    if (only && !only.has(snakeCase(field.name))) return [];
    const named = getNamedType(field.type);
    const alias = snakeCase(field.name) === field.name ? field.name : `${snakeCase(field.name)}: ${field.name}`;
    if (isLeafType(named)) return [alias];
    if (isObjectType(named) && embedded.includes(field.name)) return [`${alias} { ${selectionOf(named)} }`];
    return [];
  });
  return fields.join(' ');
}

function paramKind(typeName: string, schema: GraphQLSchema): Pick<QueryParam, 'kind' | 'values'> {
  if (typeName === 'Int') return { kind: 'integer' };
  if (typeName === 'ID') return { kind: 'id' };
  const type = schema.getType(typeName);
  if (type && isEnumType(type)) return { kind: 'enum', values: (type as GraphQLEnumType).getValues().map((v) => v.name) };
  return { kind: 'string' };
}

export function buildRoutes(schema: GraphQLSchema): Route[] {
  const routes: Route[] = rowsOf(schema).map((row) => ({ ...row, parsed: parse(row.document) }));
  for (const route of routes) route.item = routes.find((r) => r.kind === 'item' && r.resource.path === route.resource.path);
  return routes;
}

type Declared = Omit<RestExtension, 'kind'> & { kind: RowKind };

interface FieldExtensions {
  rest?: Declared;
  pothosOptions?: { authScopes?: { scope?: Scope } };
}

/** The REST declaration and the scope of a field, when it has a REST row. */
function restOf(field: GraphQLField<unknown, unknown>): { rest: Declared; scope: Scope } | undefined {
  const extensions = field.extensions as FieldExtensions;
  const scope = extensions.rest?.scope ?? extensions.pothosOptions?.authScopes?.scope;
  if (!extensions.rest) return undefined;
  if (!scope) throw new Error(`${field.name} has a REST row but no scope`);
  return { rest: extensions.rest, scope };
}

/** Rows that answer a page `{ data, pagination }`. */
const PAGES: ReadonlySet<RowKind> = new Set(['list', 'related', 'view']);

/** The record type of a list field (its page's `data` items) or an item field. */
function recordOf(field: GraphQLField<unknown, unknown>, kind: RowKind): GraphQLObjectType {
  const named = getNamedType(field.type) as GraphQLObjectType;
  if (PAGES.has(kind)) return getNamedType(named.getFields().data!.type) as GraphQLObjectType;
  // A batch answers `{ results: [{ index, status, record, error }] }`: its record is the resource's.
  if (kind === 'batch') return getNamedType((getNamedType(named.getFields().results!.type) as GraphQLObjectType).getFields().record!.type) as GraphQLObjectType;
  return named;
}

/** Where each kind of row answers, below /v1. */
const ADDRESS: Record<RowKind, { method: Route['method']; path: (rest: Declared) => string }> = {
  list: { method: 'GET', path: (rest) => `/${rest.path}` },
  create: { method: 'POST', path: (rest) => `/${rest.path}` },
  item: { method: 'GET', path: (rest) => `/${rest.path}/{id}` },
  update: { method: 'PATCH', path: (rest) => `/${rest.path}/{id}` },
  delete: { method: 'DELETE', path: (rest) => `/${rest.path}/{id}` },
  restore: { method: 'POST', path: (rest) => `/${rest.path}/{id}/restore` },
  move: { method: 'POST', path: (rest) => `/${rest.path}/{id}/${rest.verb!}` },
  related: { method: 'GET', path: (rest) => `/${rest.path}/{id}/${rest.verb!}` },
  view: { method: 'GET', path: (rest) => `/${rest.path}/${rest.verb!}` },
  upsert: { method: 'PUT', path: (rest) => `/${rest.path}/by_external_id/{id}` },
  batch: { method: 'POST', path: (rest) => `/${rest.path}/batch` },
  sync: { method: 'GET', path: (rest) => `/${rest.path}/sync` },
  import: { method: 'POST', path: (rest) => `/${rest.path}` },
};

type Row = Omit<Route, 'parsed' | 'item'>;

/** A list argument REST reads through `where` instead (`status=` is `where.status`). */
function coveredByWhere(arg: string, where: GraphQLInputObjectType | undefined): boolean {
  return !!where && (arg === 'where' || arg === 'orderBy' || arg in where.getFields());
}

function rowsOf(schema: GraphQLSchema): Row[] {
  const rows: Row[] = [];
  const fields = [...Object.values(schema.getQueryType()!.getFields()), ...Object.values(schema.getMutationType()!.getFields())];
  // A create answers the record as the resource's list declares it.
  const embeddedOf = new Map(fields.flatMap((field) => (restOf(field)?.rest.kind === 'list' ? [[restOf(field)!.rest.path, restOf(field)!.rest.embedded]] : [])));
  for (const field of fields) {
    const declared = restOf(field);
    if (!declared) continue;
    const { rest, scope } = declared;
    const record = recordOf(field, rest.kind);
    const resource: Resource = { path: rest.path, type: record.name, embedded: rest.embedded ?? embeddedOf.get(rest.path) };
    const selection = selectionOf(record, resource.embedded);
    const declarations = field.args.map((arg) => `$${arg.name}: ${String(arg.type)}`).join(', ');
    const passing = field.args.map((arg) => `${arg.name}: $${arg.name}`).join(', ');
    const { method, path } = ADDRESS[rest.kind];
    const base = { method, path: path(rest), kind: rest.kind, resource, scope, params: [], record, verb: rest.verb, moves: rest.moves, field: field.name };
    const whereArg = getNamedType(field.args.find((arg) => arg.name === 'where')?.type);
    const orderArg = getNamedType(field.args.find((arg) => arg.name === 'orderBy')?.type);
    const where = isInputObjectType(whereArg) ? whereArg : undefined;
    const orderBy = isEnumType(orderArg) ? orderArg : undefined;
    if (PAGES.has(rest.kind)) {
      const pagination = 'pagination { page limit total next_cursor: nextCursor has_more: hasMore }';
      const template = (selection: string) => `query List(${declarations}) { result: ${field.name}(${passing}) { data { ${selection} } ${pagination} } }`;
      const row = { ...base, where, orderBy, template };
      const params = field.args.filter((arg) => arg.name !== 'id' && !coveredByWhere(arg.name, where)).map((arg) => ({
        name: snakeCase(arg.name),
        variable: arg.name,
        description: arg.description ?? undefined,
        type: arg.type,
        ...paramKind(getNamedType(arg.type).name, schema),
      }));
      rows.push({ ...row, params, document: template(selection) });
      // A list that can sync has a sync of its own address, so that its answer is typed as
      // records or tombstones and the plain list's as records (a generated client's
      // `data.map((c) => c.name)` compiles). It is the list with `include_deleted=true`,
      // always in change order: no page, no order_by.
      if (rest.kind === 'list' && params.some((p) => p.name === 'include_deleted')) {
        const sync = params.filter((p) => p.name !== 'page' && p.name !== 'include_deleted');
        rows.push({ ...row, kind: 'sync', path: ADDRESS.sync.path(rest), orderBy: undefined, params: sync, document: template(selection) });
      }
    } else if (rest.kind === 'batch') {
      const template = (record: string) =>
        `mutation Batch(${declarations}) { result: ${field.name}(${passing}) { results { index status record { ${record} } error { code message errors { param message } } } } }`;
      const input = (name: string) => {
        const type = schema.getType(name);
        return isInputObjectType(type) ? type : undefined;
      };
      rows.push({ ...base, template, document: template(selection), inputs: { create: input(`Create${record.name}Input`), update: input(`Update${record.name}Input`) } });
    } else if (rest.kind === 'import') {
      // The CSV body is the `csv` argument (rest/handler.ts); the others are query parameters.
      // It answers what the contract names: `{ id, status }`.
      const template = () => `mutation Import(${declarations}) { result: ${field.name}(${passing}) { id status } }`;
      const params = field.args.filter((arg) => arg.name !== 'csv').map((arg) => ({ name: snakeCase(arg.name), variable: arg.name, description: arg.description ?? undefined, type: arg.type, ...paramKind(getNamedType(arg.type).name, schema) }));
      rows.push({ ...base, params, template, document: template() });
    } else if (rest.kind === 'item') {
      const template = (selection: string) => `query Item(${declarations}) { result: ${field.name}(${passing}) { ${selection} } }`;
      rows.push({ ...base, template, document: template(selection) });
    } else {
      const template = (selection: string) => `mutation Change(${declarations}) { result: ${field.name}(${passing}) { ${selection} } }`;
      const row = { ...base, template };
      const document = template(selection);
      const input = getNamedType(field.args.find((arg) => arg.name === 'input')?.type);
      if ((rest.kind === 'create' || rest.kind === 'update' || rest.kind === 'upsert') && !isInputObjectType(input)) throw new Error(`${field.name}(input) must take an input object`);
      rows.push({ ...row, document, input: isInputObjectType(input) ? input : undefined });
    }
  }
  return rows;
}

const shapes = new Map<string, Route>();
const MAX_SHAPES = 1000;

/**
 * The row answering the record shape asked (`fields=`, `expand=`): its document made and
 * parsed once per shape, a bounded number of shapes kept.
 */
export function shapedRoute(route: Route, shape: { fields?: string[]; expand?: string[] }): Route {
  if (!shape.fields && !shape.expand) return route;
  const key = `${route.method} ${route.path}|${shape.fields?.join(',') ?? '*'}|${shape.expand?.join(',') ?? ''}`;
  let shaped = shapes.get(key);
  if (!shaped) {
    // The version and deletion stamp come along whatever was asked: the ETag and a sync's
    // tombstones are made of them (the handler leaves them out of the body if not asked).
    const only = shape.fields ? new Set(['id', 'version', 'deleted_at', ...shape.fields]) : undefined;
    const expanded = (shape.expand ?? []).map((name) => {
      const referenced = getNamedType(route.record.getFields()[name]!.type) as GraphQLObjectType;
      const alias = snakeCase(name) === name ? name : `${snakeCase(name)}: ${name}`;
      return `${alias} { ${selectionOf(referenced)} }`;
    });
    const document = route.template([selectionOf(route.record, route.resource.embedded, only), ...expanded].join(' '));
    if (shapes.size >= MAX_SHAPES) shapes.clear();
    shaped = { ...route, document, parsed: parse(document) };
    shapes.set(key, shaped);
  }
  return shaped;
}

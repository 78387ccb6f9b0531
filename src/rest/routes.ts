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

export interface Route {
  method: 'GET' | 'POST';
  /** `/customers` or `/customers/{id}`. */
  path: string;
  kind: 'list' | 'item' | 'create';
  resource: Resource;
  scope: Scope;
  document: string;
  /** `document`, parsed once when the table is built. */
  parsed: DocumentNode;
  params: QueryParam[];
  input?: GraphQLInputObjectType;
  record: GraphQLObjectType;
}

/** The record's fields, aliased to snake_case: `created_at: createdAt`. */
export function selectionOf(type: GraphQLObjectType, embedded: string[] = []): string {
  const fields = Object.values(type.getFields()).flatMap((field) => {
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
  return rowsOf(schema).map((row) => ({ ...row, parsed: parse(row.document) }));
}

interface FieldExtensions {
  rest?: RestExtension;
  pothosOptions?: { authScopes?: { scope?: Scope } };
}

/** The REST declaration and the scope of a field, when it has a REST row. */
function restOf(field: GraphQLField<unknown, unknown>): { rest: RestExtension; scope: Scope } | undefined {
  const extensions = field.extensions as FieldExtensions;
  const scope = extensions.pothosOptions?.authScopes?.scope;
  if (!extensions.rest) return undefined;
  if (!scope) throw new Error(`${field.name} has a REST row but no scope`);
  return { rest: extensions.rest, scope };
}

/** The record type of a list field (its page's `data` items) or an item field. */
function recordOf(field: GraphQLField<unknown, unknown>, kind: RestExtension['kind']): GraphQLObjectType {
  const named = getNamedType(field.type) as GraphQLObjectType;
  return kind === 'list' ? (getNamedType(named.getFields().data!.type) as GraphQLObjectType) : named;
}

function rowsOf(schema: GraphQLSchema): Array<Omit<Route, 'parsed'>> {
  const rows: Array<Omit<Route, 'parsed'>> = [];
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
    if (rest.kind === 'list') {
      const params = field.args.map((arg) => ({
        name: snakeCase(arg.name),
        variable: arg.name,
        description: arg.description ?? undefined,
        type: arg.type,
        ...paramKind(getNamedType(arg.type).name, schema),
      }));
      const document = `query List(${declarations}) { result: ${field.name}(${passing}) { data { ${selection} } pagination { page limit total } } }`;
      rows.push({ method: 'GET', path: `/${rest.path}`, kind: 'list', resource, scope, params, record, document });
    } else if (rest.kind === 'item') {
      const document = `query Item(${declarations}) { result: ${field.name}(${passing}) { ${selection} } }`;
      rows.push({ method: 'GET', path: `/${rest.path}/{id}`, kind: 'item', resource, scope, params: [], record, document });
    } else {
      const input = getNamedType(field.args.find((arg) => arg.name === 'input')?.type);
      if (!input || !isInputObjectType(input)) throw new Error(`${field.name}(input) must take an input object`);
      const document = `mutation Create(${declarations}) { result: ${field.name}(${passing}) { ${selection} } }`;
      rows.push({ method: 'POST', path: `/${rest.path}`, kind: 'create', resource, scope, params: [], input, record, document });
    }
  }
  return rows;
}

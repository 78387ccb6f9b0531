// The route table: one row per REST endpoint, derived from RESOURCES and the GraphQL
// schema. A row says which GraphQL operation runs, which query parameters it takes (the
// list field's arguments, in snake_case) and which body it takes (the create mutation's
// input type).
import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isLeafType,
  isObjectType,
  type GraphQLEnumType,
  type GraphQLInputObjectType,
  type GraphQLObjectType,
  type DocumentNode,
  type GraphQLSchema,
  parse,
} from 'graphql';
import type { Scope } from '../auth/scopes.js';
import { snakeCase } from './names.js';
import { RESOURCES, type Resource } from './resources.js';

export interface QueryParam {
  /** As in the URL: `customer_id`. */
  name: string;
  /** As in GraphQL: `customerId`. */
  variable: string;
  kind: 'integer' | 'string' | 'id' | 'enum';
  /** Allowed values of an enum filter (`all` is accepted too and means no filter). */
  values?: string[];
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

function rowsOf(schema: GraphQLSchema): Array<Omit<Route, 'parsed'>> {
  const query = schema.getQueryType()!.getFields();
  const mutation = schema.getMutationType()!.getFields();
  return RESOURCES.flatMap((resource) => {
    const record = schema.getType(resource.type) as GraphQLObjectType;
    const selection = selectionOf(record, resource.embedded);
    const listField = query[resource.list]!;
    const params = listField.args.map((arg) => ({
      name: snakeCase(arg.name),
      variable: arg.name,
      description: arg.description ?? undefined,
      ...paramKind(getNamedType(arg.type).name, schema),
    }));
    const declarations = listField.args.map((arg) => `$${arg.name}: ${String(arg.type)}`).join(', ');
    const passing = listField.args.map((arg) => `${arg.name}: $${arg.name}`).join(', ');
    const routes: Array<Omit<Route, 'parsed'>> = [
      {
        method: 'GET',
        path: `/${resource.path}`,
        kind: 'list',
        resource,
        scope: resource.read,
        params,
        record,
        document: `query List(${declarations}) { result: ${resource.list}(${passing}) { data { ${selection} } pagination { page limit total } } }`,
      },
      {
        method: 'GET',
        path: `/${resource.path}/{id}`,
        kind: 'item',
        resource,
        scope: resource.read,
        params: [],
        record,
        document: `query Item($id: ID!) { result: ${resource.item}(id: $id) { ${selection} } }`,
      },
    ];
    if (resource.create && resource.write) {
      const inputArg = mutation[resource.create]!.args.find((arg) => arg.name === 'input')!;
      const input = getNamedType(inputArg.type);
      if (!isInputObjectType(input)) throw new Error(`${resource.create}(input) must take an input object`);
      routes.push({
        method: 'POST',
        path: `/${resource.path}`,
        kind: 'create',
        resource,
        scope: resource.write,
        params: [],
        input,
        record,
        document: `mutation Create($input: ${String(inputArg.type)}) { result: ${resource.create}(input: $input) { ${selection} } }`,
      });
    }
    return routes;
  });
}

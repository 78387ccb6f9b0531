// Records made from the examples their creates declare (defineCreate's `example`), as a REST
// client sends them: what a suite over every resource, or a test that needs a record of
// every list, creates without knowing the resources.
import { getNamedType, isNonNullType, type GraphQLInputObjectType, type GraphQLInputType } from 'graphql';
import { expect } from 'vitest';
import { purgeOrder } from '../../src/db/tombstones.js';
import { snakeCase } from '../../src/rest/names.js';
import { referencesOf } from '../../src/schema/references.js';
import { schema } from '../../src/schema/index.js';
import { registeredResources, resourceOf, type RegisteredResource } from '../../src/schema/registry.js';
/** What the helpers call: a REST client's `post` (test/helpers/api.ts, or an in-process one). */
type Client = { post(path: string, body?: unknown): Promise<{ status: number; body: any }> };

/** A GraphQL input value as a REST body writes it: snake_case names, dates as ISO 8601 text. */
function restValue(value: unknown, type: GraphQLInputType): unknown {
  const named = getNamedType(type);
  if (value instanceof Date) return named.name === 'Date' ? value.toISOString().slice(0, 10) : value.toISOString();
  if (Array.isArray(value)) return value.map((item) => restValue(item, named as GraphQLInputType));
  if (value && typeof value === 'object' && 'getFields' in named) {
    const fields = (named as GraphQLInputObjectType).getFields();
    return Object.fromEntries(Object.entries(value).map(([name, inner]) => [snakeCase(name), restValue(inner, fields[name]!.type)]));
  }
  return value;
}

/**
 * The REST body of a create from the resource's example, the records it must refer to made
 * first; `refer` gives records to refer to instead (`{ customerId }`), optional references too.
 */
export async function exampleBody(client: Client, resource: RegisteredResource, refer: Record<string, string> = {}): Promise<Record<string, unknown>> {
  expect(resource.example, `${resource.type} declares an example with its create`).toBeDefined();
  const input = schema.getType(`Create${resource.type}Input`) as GraphQLInputObjectType;
  const body = restValue(resource.example, input) as Record<string, unknown>;
  for (const { key, type } of referencesOf(resource.type)) {
    const declared = input.getFields()[key]!;
    if (refer[key]) body[snakeCase(key)] = refer[key];
    else if (isNonNullType(declared.type)) body[snakeCase(key)] = (await createExample(client, resourceOf(type))).id;
  }
  return body;
}

/** A record of the resource, created from its example (201 expected). */
export async function createExample<T = Record<string, any> & { id: string; version: number }>(client: Client, resource: RegisteredResource, refer: Record<string, string> = {}): Promise<T> {
  const created = await client.post(`/${resource.path}`, await exampleBody(client, resource, refer));
  expect(created.status, `POST /${resource.path}: ${JSON.stringify(created.body)}`).toBe(201);
  return created.body;
}

/** Every registered resource, each after the ones it refers to (the purge order, reversed). */
export function parentsFirst(): RegisteredResource[] {
  return purgeOrder()
    .reverse()
    .flatMap((item) => registeredResources().filter((resource) => resource.item === item));
}

/** What makes a create refer to these records (by item): `{ customerId, jobId }`, for `refer`. */
export const referTo = (records: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(records).map(([item, id]) => [`${item}Id`, id]));

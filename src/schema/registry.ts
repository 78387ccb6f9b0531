// The resources the schema declares, as `defineResource` registers them: what every list of
// resources elsewhere is read from (the event resources and their read scopes, the guard
// tests over scopes and routes), so adding a resource is declaring it, nothing more.
// Filled while the schema modules load (schema/index.ts imports them all), so it is read
// at call time, never at another module's load.
import type { Scope } from '../auth/scopes.js';
import { Prisma } from '../generated/prisma/client.js';
import type { ResourceType } from './resource-type.js';
import type { Move } from './transitions.js';

export interface RegisteredResource {
  /** The Prisma model: `Customer`. */
  type: ResourceType;
  /** REST path and list field: `customers`. */
  path: string;
  /** Item field, Prisma delegate and event resource: `customer` (events are `customer.created`, ...). */
  item: string;
  read: Scope;
  /** The scope of its create and its changes (an e-mail's is customers:write). */
  write: Scope;
  /** Its transitions (`POST /v1/{path}/{id}/{verb}`), none for a resource without a status. */
  moves: readonly Move<string>[];
  /**
   * A valid create input (GraphQL names), its references (customerId, jobId) left out: what
   * the suites that run over every resource create it with (test/resources).
   */
  example?: Readonly<Record<string, unknown>>;
}

const registered = new Map<ResourceType, RegisteredResource>();

export function registerResource(resource: RegisteredResource): void {
  for (const other of registered.values()) {
    if (other.type === resource.type || other.path === resource.path || other.item === resource.item) {
      throw new Error(`Resource ${resource.type} (/${resource.path}) is declared twice, or clashes with ${other.type} (/${other.path})`);
    }
  }
  registered.set(resource.type, Object.freeze({ ...resource }));
}

/** Records a resource's create example; its create is declared after the resource. */
export function registerExample(type: ResourceType, example: Record<string, unknown>): void {
  const resource = registered.get(type);
  if (!resource) throw new Error(`${type}'s create is declared before its resource (defineResource first)`);
  registered.set(type, Object.freeze({ ...resource, example: Object.freeze({ ...example }) }));
}

/** The declared resource of a type (its path, scopes, item name). */
export function resourceOf(type: ResourceType): RegisteredResource {
  const resource = registered.get(type);
  if (!resource) throw new Error(`${type} is not a registered resource (defineResource)`);
  return resource;
}

/** A resource's table, for raw SQL: named as its REST path (test/structure/registry.test.ts checks it). */
export const tableOf = (type: ResourceType) => Prisma.raw(`"${resourceOf(type).path}"`);

/** Every declared resource, in declaration order. Throws if none is: the schema was not loaded. */
export function registeredResources(): readonly RegisteredResource[] {
  if (registered.size === 0) throw new Error('No resource is registered yet: import the schema (src/schema/index.ts) before reading the registry');
  return [...registered.values()];
}

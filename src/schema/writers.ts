// The resolvers of every record write, by mutation name (`createCustomer`, `updateCustomer`,
// `deleteCustomer`, ...), as defineResource and defineCreate declare them: what an upsert
// and a batch (schema/bulk.ts) run, so each item takes the same path as its single call.
import type { GraphQLError } from 'graphql';
import type { Context } from '../context.js';
import type { ResourceType } from './changes.js';

export interface WriteArgs {
  id?: string;
  expectedVersion?: number | null;
  input?: Record<string, unknown>;
}

export type Write = (args: WriteArgs, ctx: Context, query: object) => Promise<unknown>;

const writes = new Map<string, Write>();

export function registerWrite(mutation: string, write: Write): void {
  if (writes.has(mutation)) throw new Error(`${mutation} is declared twice`);
  writes.set(mutation, write);
}

/** The write behind a mutation, if the schema declares it. */
export function writeOf(mutation: string): Write | undefined {
  return writes.get(mutation);
}

/**
 * Creates many records of a type in one statement, in the caller's transaction: each input
 * checked as its single create checks it, the records answered in input order. With
 * `partial`, an input its checks refuse (a 4xx) is answered in its place and the others are
 * still written together; otherwise the first refusal is thrown. Declared by resources whose
 * create writes only the record's own row (defineCreate without `create`).
 */
export type CreateMany = (ctx: Context, inputs: Array<Record<string, unknown>>, options?: { partial?: boolean }) => Promise<Array<{ record: unknown } | { refused: GraphQLError }>>;

const manyWrites = new Map<ResourceType, CreateMany>();

export function registerCreateMany(type: ResourceType, write: CreateMany): void {
  manyWrites.set(type, write);
}

/** The one-statement create of a type, if its create is plain. */
export function createManyOf(type: ResourceType): CreateMany | undefined {
  return manyWrites.get(type);
}

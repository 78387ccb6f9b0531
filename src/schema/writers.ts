// The resolvers of every record write, by mutation name (`createCustomer`, `updateCustomer`,
// `deleteCustomer`, ...), as defineResource and defineCreate declare them: what an upsert
// and a batch (schema/bulk.ts) run, so each item takes the same path as its single call.
import type { GraphQLError } from 'graphql';
import type { Context } from '../context.js';
import { isRefusal } from '../errors.js';
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
export type CreateMany = (ctx: Context, inputs: Array<Record<string, unknown>>, options?: { partial?: boolean }) => Promise<Array<Created<unknown>>>;

/** An item of a partial write: what was written for it, or its refusal. */
export type Created<R> = { record: R } | { refused: GraphQLError };

/**
 * A partial write's items, each through `check`, the accepted ones written together by
 * `write` (not called when none is), and each answered in its place. A refusal of an item's
 * input (a 4xx) is its answer when `partial`; any other error, or a refusal otherwise, is thrown.
 */
export async function writeAccepted<I, T, R>(
  items: readonly I[],
  partial: boolean,
  check: (item: I, index: number) => T | Promise<T>,
  write: (accepted: T[]) => Promise<Array<Created<R>>>,
): Promise<Array<Created<R>>> {
  const checked: Array<{ value: T } | { refused: GraphQLError }> = [];
  for (const [index, item] of items.entries()) {
    try {
      checked.push({ value: await check(item, index) });
    } catch (error) {
      if (!partial || !isRefusal(error)) throw error;
      checked.push({ refused: error });
    }
  }
  const accepted = checked.flatMap((entry) => ('value' in entry ? [entry.value] : []));
  const written = accepted.length > 0 ? await write(accepted) : [];
  let next = 0;
  return checked.map((entry) => ('value' in entry ? written[next++]! : entry));
}

const manyWrites = new Map<ResourceType, CreateMany>();

export function registerCreateMany(type: ResourceType, write: CreateMany): void {
  manyWrites.set(type, write);
}

/** The one-statement create of a type, if its create is plain. */
export function createManyOf(type: ResourceType): CreateMany | undefined {
  return manyWrites.get(type);
}

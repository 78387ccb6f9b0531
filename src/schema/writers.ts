// The resolvers of every record write, by mutation name (`createCustomer`, `updateCustomer`,
// `deleteCustomer`, ...), as defineResource and defineCreate declare them: what an upsert
// and a batch (schema/bulk.ts) run, so each item takes the same path as its single call.
import type { Context } from '../context.js';

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

// Dry runs execute the operation in one database transaction that is always rolled back:
// every write takes its real code path (validation, rules, 409/412, numbering, change
// sequences, counts), and nothing it wrote is kept. Events and deliveries are written by
// triggers in the transaction and NOTIFY is sent at commit, so none exists after a rollback; the
// request's Idempotency-Key is not recorded (server.ts). No second code path to keep true.
import type { Plugin } from 'graphql-yoga';
import type { Context } from '../context.js';
import { nestedClient } from '../db/nested-transactions.js';

const ROLLBACK = Symbol('dry run');

/** Runs a dry run's operation in a transaction it rolls back. Installed last: it wraps the executor the others chose. */
export function useDryRun(): Plugin<Context> {
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const ctx = args.contextValue as Context;
      if (!ctx.dryRun) return;
      setExecuteFn(async (execution) => {
        let result: unknown;
        try {
          await ctx.prisma.$transaction(async (tx) => {
            result = await executeFn({ ...execution, contextValue: { ...ctx, prisma: nestedClient(tx) } });
            throw ROLLBACK;
            // As long as the longest write it may hold (a batch's transaction).
          }, { timeout: 60_000 });
        } catch (error) {
          if (error !== ROLLBACK) throw error;
        }
        return result as Awaited<ReturnType<typeof executeFn>>;
      });
    },
  };
}

// Dry runs execute the operation in one database transaction that is always rolled back:
// every write takes its real code path (validation, rules, 409/412, numbering, change
// sequences, counts), and nothing it wrote is kept. Events, deliveries and notifications
// are written by triggers and NOTIFY at commit, so none exists after a rollback; the
// request's Idempotency-Key is not recorded (server.ts). No second code path to keep true.
import type { Plugin } from 'graphql-yoga';
import type { Context } from '../context.js';
import type { TenantClient, Tx } from '../db/tenant.js';

const ROLLBACK = Symbol('dry run');

/**
 * The transaction as the client resolvers use: `$transaction(fn)` runs `fn` in it, so a
 * write's own transaction (schema/changes.ts `writing`) becomes part of the dry run's.
 */
function flattened(tx: Tx): TenantClient {
  return new Proxy(tx, {
    get: (target, property, receiver) =>
      property === '$transaction' ? (run: (tx: Tx) => Promise<unknown>) => run(receiver as Tx) : Reflect.get(target, property, receiver),
  }) as unknown as TenantClient;
}

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
            result = await executeFn({ ...execution, contextValue: { ...ctx, prisma: flattened(tx) } });
            throw ROLLBACK;
          });
        } catch (error) {
          if (error !== ROLLBACK) throw error;
        }
        return result as Awaited<ReturnType<typeof executeFn>>;
      });
    },
  };
}

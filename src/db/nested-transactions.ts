// A transaction that resolvers can use as their client: a write's own `$transaction(fn)`
// runs inside it as a savepoint, so a dry run (graphql/dry-run.ts) or a batch
// (schema/bulk.ts) holds many writes in one transaction, and a write that fails is undone
// alone: the transaction stays usable (PostgreSQL refuses every statement after an error
// until the savepoint is rolled back), e.g. to name the record an external id clashed with.
import type { TenantClient, Tx } from './tenant.js';

let savepointCount = 0;

/**
 * `savepoints: false` runs a nested transaction as part of the outer one, without a savepoint:
 * for a transaction that is all or nothing anyway (an atomic batch's first try), where
 * savepoints only cost statements (and, on the organization's row, lock bookkeeping).
 */
export function nestedClient(tx: Tx, { savepoints = true }: { savepoints?: boolean } = {}): TenantClient {
  const client: TenantClient = new Proxy(tx, {
    get: (target, property, receiver) => {
      if (property !== '$transaction') return Reflect.get(target, property, receiver);
      if (!savepoints) return (run: (tx: TenantClient) => Promise<unknown>) => run(client);
      return async (run: (tx: TenantClient) => Promise<unknown>) => {
        const name = `nested_${++savepointCount}`;
        await tx.$executeRawUnsafe(`SAVEPOINT ${name}`);
        try {
          const result = await run(client);
          await tx.$executeRawUnsafe(`RELEASE SAVEPOINT ${name}`);
          return result;
        } catch (error) {
          await tx.$executeRawUnsafe(`ROLLBACK TO SAVEPOINT ${name}`);
          throw error;
        }
      };
    },
  }) as unknown as TenantClient;
  return client;
}

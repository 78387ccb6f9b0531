// A write names its request in its transaction (`SET LOCAL crm.request_id`: the events its
// changes write record it). On PostgreSQL under Node 24 the name of a write in a Prisma
// transaction (schema/changes.ts `writing`) goes out with its BEGIN, in one round trip (a
// simple query of two statements), instead of a statement of its own: an update is then BEGIN,
// UPDATE, COMMIT. The pool's connections read the name to send from the write's async context;
// an embedded database (no pool), and older Node (NAMES_ON_BEGIN), get the statement.
import { AsyncLocalStorage } from 'node:async_hooks';
import type pg from 'pg';

interface Naming {
  requestId: string;
  /** Set once BEGIN carried the name: the transaction needs no statement of its own. */
  sent: boolean;
}

const naming = new AsyncLocalStorage<Naming>();

/**
 * Whether a write's BEGIN carries its request's name. That reads the name from an
 * AsyncLocalStorage, which Node 24 carries in its async context frame at little cost; before
 * 24 its first use turns on async hooks for every promise of the process, reads included: four
 * files of API tests in process took 18% more CPU on Node 20 with it (29.6 against 25.0 CPU-s)
 * than with a statement of its own per write.
 */
export const NAMES_ON_BEGIN = Number(process.versions.node.split('.')[0]) >= 24;

// SET LOCAL, not set_config(): Citus passes SET LOCAL on to the node that runs the tenant's
// triggers. SET takes no parameters; request ids are [A-Za-z0-9._:-] (http/request-id.ts).
export const setRequestIdSql = (requestId: string) => `SET LOCAL crm.request_id = '${requestId.replaceAll("'", "''")}'`;

/**
 * Runs `begin` (which starts a transaction) with `requestId` to send with its BEGIN;
 * `named()` then says, inside the transaction, whether it went.
 */
export function namingRequest<T>(requestId: string, begin: (named: () => boolean) => Promise<T>): Promise<T> {
  if (!NAMES_ON_BEGIN) return begin(() => false);
  const store: Naming = { requestId, sent: false };
  return naming.run(store, () => begin(() => store.sent));
}

type Query = (...args: unknown[]) => unknown;

/** Makes each connection of `pool` send a pending request name with the BEGIN that starts its write. */
export function nameRequestsOnBegin(pool: pg.Pool): void {
  if (!NAMES_ON_BEGIN) return;
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as Query;
    const withName: Query = (...args) => {
      const store = naming.getStore();
      const config = args[0] as { text?: string; values?: unknown[] } | undefined;
      // Only a BEGIN without parameters: a simple query, which may hold two statements.
      if (store && !store.sent && config?.text === 'BEGIN' && !config.values?.length) {
        store.sent = true;
        args[0] = { ...config, text: `BEGIN; ${setRequestIdSql(store.requestId)}` };
      }
      return query(...args);
    };
    client.query = withName as typeof client.query;
  });
}

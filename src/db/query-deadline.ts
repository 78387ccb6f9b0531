// A client-side deadline on every statement a pool's connections run. The server's own
// statement_timeout cancels a slow statement, but a connection whose peer has gone silent
// (a hung network, a frozen server) never answers, not even with that cancellation: the
// request would wait as long as the TCP connection lives. Past the deadline the connection
// is closed, so the statement (and whatever waits behind it on that connection) fails at
// once with "Connection terminated", an outage the API answers as 503, and the pool opens
// a fresh connection for the next request instead of reusing the dead one.
import type pg from 'pg';

type Callback = (error: Error | null, result?: unknown) => void;
type Query = (...args: unknown[]) => unknown;

/** The query method without a deadline, for connections that may wait on purpose (migrations). */
const UNBOUNDED = Symbol('unbounded query');

/** Puts a deadline of `limitMs` on each statement of each connection `pool` opens. */
export function boundQueries(pool: pg.Pool, limitMs: number): void {
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as Query;
    (client as unknown as Record<symbol, Query>)[UNBOUNDED] = query;
    // A connection closed under a checked-out client reports an error event too; the
    // statement's own error is what the caller handles.
    client.on('error', () => undefined);
    const bounded: Query = (...args) => {
      const timer = setTimeout(() => client.connection.stream.destroy(), limitMs);
      const done = () => clearTimeout(timer);
      const last = args.length - 1;
      // pg-pool's pool.query passes a callback; Prisma's transactions await a promise.
      if (typeof args[last] === 'function') {
        const callback = args[last] as Callback;
        args[last] = (error: Error | null, result?: unknown) => {
          done();
          callback(error, result);
        };
        return query(...args);
      }
      const result = query(...args);
      if (result instanceof Promise) result.then(done, done);
      else done();
      return result;
    };
    client.query = bounded as typeof client.query;
  });
}

/** `client`'s statements without the deadline (a migration may run, or wait for a lock, for long). */
export function unboundedQuery(client: pg.PoolClient): pg.PoolClient['query'] {
  return ((client as unknown as Record<symbol, Query>)[UNBOUNDED] ?? client.query.bind(client)) as pg.PoolClient['query'];
}

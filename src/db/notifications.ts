// LISTEN/NOTIFY over either driver: how one instance hears of a change another process
// made (a key revoked through the CLI, the account page of another instance, or SQL).
import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';

export interface Subscription {
  /** Whether notifications are arriving now; while false some may be missed. */
  live(): boolean;
  close(): Promise<void>;
}

export interface Handlers {
  /** A NOTIFY on the channel, with its payload. */
  notify(payload: string): void;
  /** The listening connection dropped: whatever was learned before may be stale now. */
  lost(): void;
  /** Listening again after a loss. */
  restored?(): void;
}

const RECONNECT_MS = 1000;

/** PGlite runs in this process; its notifications cannot be missed. */
export async function pgliteListen(db: PGlite, channel: string, handlers: Handlers): Promise<Subscription> {
  const unlisten = await db.listen(channel, (payload) => handlers.notify(payload));
  return { live: () => true, close: () => unlisten() };
}

/**
 * PostgreSQL: a connection of its own (a pooled one would be handed to queries), opened
 * again a second after it drops, for as long as the subscription is open.
 */
export function postgresListen(connectionString: string, channel: string, handlers: Handlers): Subscription {
  let client: pg.Client | null = null;
  let live = false;
  let closed = false;
  let everLost = false;
  let retry: NodeJS.Timeout | undefined;

  function drop(dropped: pg.Client) {
    if (dropped !== client) return;
    client = null;
    if (live) {
      live = false;
      everLost = true;
      handlers.lost();
    }
    dropped.end().catch(() => undefined);
    if (!closed) retry = setTimeout(connect, RECONNECT_MS).unref();
  }

  function connect() {
    const next = new pg.Client({ connectionString, connectionTimeoutMillis: 5000 });
    client = next;
    next.on('error', () => drop(next));
    next.on('end', () => drop(next));
    next.on('notification', (message) => {
      if (message.channel === channel) handlers.notify(message.payload ?? '');
    });
    next
      .connect()
      .then(() => next.query(`LISTEN "${channel}"`))
      .then(() => {
        if (client !== next || closed) return;
        live = true;
        if (everLost) handlers.restored?.();
      })
      .catch(() => drop(next));
  }

  connect();
  return {
    live: () => live,
    async close() {
      closed = true;
      live = false;
      clearTimeout(retry);
      const current = client;
      client = null;
      await current?.end().catch(() => undefined);
    },
  };
}

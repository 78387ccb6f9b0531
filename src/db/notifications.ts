// LISTEN/NOTIFY over either driver: how one instance hears of a change another process
// made (a key revoked through the CLI, the account page of another instance, or SQL).
import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';

export interface Subscription {
  /** Whether notifications are arriving now; while false some may be missed. */
  live(): boolean;
  /**
   * PostgreSQL: runs a statement on the listening connection itself (subscriptions hold
   * their per-key advisory locks there, so they go with it). Absent on PGlite.
   */
  query?(text: string, values?: unknown[]): Promise<Array<Record<string, unknown>>>;
  close(): Promise<void>;
}

export interface Handlers {
  /** A NOTIFY on the channel, with its payload. */
  notify(payload: string): void;
  /** The listening connection dropped: whatever was learned before may be stale now. */
  lost(): void;
  /** Listening again after a loss. */
  restored?(): void;
  /** Listening: the first time, and again after each loss. */
  listening?(): void;
}

const RECONNECT_MS = 1000;

/** PGlite runs in this process; its notifications cannot be missed. */
export async function pgliteListen(db: PGlite, channel: string, handlers: Handlers): Promise<Subscription> {
  const unlisten = await db.listen(channel, (payload) => handlers.notify(payload));
  handlers.listening?.();
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
    // Named, so an operator (or a test) can tell the listening connections apart. The server
    // probes it (TCP keep-alive) so that an instance that vanished without closing it (host
    // down, network cut) has its session, and the locks it holds, ended within ~90 s.
    const next = new pg.Client({
      connectionString,
      connectionTimeoutMillis: 5000,
      application_name: `crm listen ${channel}`,
      options: '-c tcp_keepalives_idle=60 -c tcp_keepalives_interval=10 -c tcp_keepalives_count=3',
    });
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
        handlers.listening?.();
        if (everLost) handlers.restored?.();
      })
      .catch(() => drop(next));
  }

  connect();
  return {
    live: () => live,
    async query(text, values) {
      if (!client || !live) throw new Error('Connection terminated: not listening');
      return (await client.query(text, values)).rows as Array<Record<string, unknown>>;
    },
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

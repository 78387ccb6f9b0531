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

/** The application_name of a session listening on `channel`, set once it listens (auth/key-changes.ts counts them). */
export const listenerName = (channel: string) => `crm listen ${channel}`;

/** PGlite runs in this process; its notifications cannot be missed. */
export async function pgliteListen(db: PGlite, channel: string, handlers: Handlers): Promise<Subscription> {
  const unlisten = await db.listen(channel, (payload) => handlers.notify(payload));
  handlers.listening?.();
  return { live: () => true, close: () => unlisten() };
}

/**
 * PostgreSQL, or a Citus coordinator. On Citus a tenant's triggers run on the worker that
 * holds its shards, and a NOTIFY is heard only on the node that sent it, so every worker the
 * coordinator names is listened to as well; the subscription is live while every node's
 * connection is (a loss on any is a loss: listeners then catch up, as after any loss).
 */
export function postgresListen(connectionString: string, channel: string, handlers: Handlers): Subscription {
  const nodes: Subscription[] = [];
  let workersKnown = false;
  let reportedLive = false;
  let everLost = false;
  let closed = false;
  let discovering: Promise<void> | undefined;
  let retry: NodeJS.Timeout | undefined;
  const settle = () => {
    const live = workersKnown && nodes.every((node) => node.live());
    if (live && !reportedLive) {
      reportedLive = true;
      handlers.listening?.();
      if (everLost) handlers.restored?.();
    } else if (!live && reportedLive) {
      reportedLive = false;
      everLost = true;
      handlers.lost();
    }
  };
  const each: Handlers = { notify: handlers.notify, lost: settle, listening: settle };
  async function discover(): Promise<void> {
    // On a connection of its own: the listening one shows its LISTEN to an operator.
    const client = new pg.Client({ connectionString, connectionTimeoutMillis: 5000 });
    // A connection lost meanwhile fails the query below; unheard, its error event would end the process.
    client.on('error', () => undefined);
    try {
      await client.connect();
      const citus = await client.query("SELECT 1 FROM pg_extension WHERE extname = 'citus'");
      const { rows: workers } = citus.rowCount ? await client.query("SELECT nodename, nodeport FROM pg_dist_node WHERE groupid > 0 AND noderole = 'primary' AND isactive") : { rows: [] };
      if (closed) return;
      for (const worker of workers) {
        const url = new URL(connectionString);
        url.hostname = String(worker.nodename);
        url.port = String(worker.nodeport);
        nodes.push(listenOn(url.toString(), channel, each));
      }
      workersKnown = true;
      settle();
    } catch {
      if (!closed) retry = setTimeout(findWorkers, RECONNECT_MS).unref();
    } finally {
      await client.end().catch(() => undefined);
    }
  }
  function findWorkers() {
    if (!workersKnown) discovering ??= discover().finally(() => (discovering = undefined));
  }
  const coordinator = listenOn(connectionString, channel, {
    ...each,
    listening() {
      findWorkers();
      settle();
    },
  });
  nodes.push(coordinator);
  return {
    live: () => workersKnown && nodes.every((node) => node.live()),
    query: coordinator.query,
    async close() {
      closed = true;
      clearTimeout(retry);
      await Promise.all(nodes.map((node) => node.close()));
    },
  };
}

/**
 * One node: a connection of its own (a pooled one would be handed to queries), opened
 * again a second after it drops, for as long as the subscription is open.
 */
function listenOn(connectionString: string, channel: string, handlers: Handlers): Subscription {
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
    // Named once it listens, so an operator can tell the listening connections apart and a
    // key change knows which sessions will hear it (auth/key-changes.ts). The server probes
    // it (TCP keep-alive) so that an instance that vanished without closing it (host down,
    // network cut) has its session, and the locks it holds, ended within ~90 s.
    const next = new pg.Client({
      connectionString,
      connectionTimeoutMillis: 5000,
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
      .then(() => next.query(`LISTEN "${channel}"; SET application_name TO '${listenerName(channel)}'`))
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

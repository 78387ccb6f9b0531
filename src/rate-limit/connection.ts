// The connection to Redis: one server, or a Redis Cluster. A single-server client sent to a
// cluster node gets a MOVED redirect for every key another node holds; taken for an outage,
// that would unshare the limits. So the cluster client is used when the URL says so
// (redis+cluster://, rediss+cluster://), when the server named says it is a cluster node
// (INFO cluster, once connected), and from the first redirect on, whenever it comes.
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { Logger } from '../logger.js';

export type RedisClient = Redis | Cluster;

export interface ConnectionOptions {
  /** How long a connection (or, for a cluster, learning its slots) may take before it counts as failed. */
  connectTimeoutMs: number;
  /** Lua commands to define on every client (see ioredis's `scripts`). */
  scripts: NonNullable<RedisOptions['scripts']>;
  log: Logger;
}

/** A reply that only a cluster node gives: the key lives on another node, or the cluster is down. */
const isClusterReply = (error: unknown) => error instanceof Error && /^(MOVED|ASK|CLUSTERDOWN) /.test(error.message);

export class RedisConnection {
  private server: Redis | undefined;
  private cluster: Cluster | undefined;
  /** Settles when the cluster client knows the slots (or its connect timeout has passed). */
  private clusterReady: Promise<void> | undefined;
  /** Settles once the first connection is made (a cluster's slots known) or has failed. */
  readonly ready: Promise<void>;

  constructor(
    private readonly url: string,
    private readonly options: ConnectionOptions,
  ) {
    const { connectTimeoutMs, scripts } = options;
    if (/^rediss?\+cluster:/i.test(url)) {
      this.ready = this.toCluster();
      return;
    }
    // enableOfflineQueue off: a command while disconnected fails at once (an outage) rather than
    // waiting to run late, after the request has been counted in memory.
    const server = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: connectTimeoutMs, scripts });
    this.server = server;
    server.on('error', () => undefined); // the limiter reports outages, once each
    this.ready = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, connectTimeoutMs).unref();
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      server.once('error', done).once('ready', () => {
        // Whenever the first connection comes (Redis may be down at start): a cluster node says
        // so here, before the first request. Later changes show as redirects (`run`).
        server
          .info('cluster')
          .then((info) => (/^cluster_enabled:1\s*$/m.test(info) ? this.toCluster() : undefined))
          .catch(() => undefined)
          .finally(done);
      });
    });
  }

  /** The client commands go to now. */
  private get client(): RedisClient {
    return (this.cluster ?? this.server)!;
  }

  /** Runs `command`; a cluster reply to the single-server client moves to the cluster client and runs it there. */
  async run<T>(command: (client: RedisClient) => Promise<T>): Promise<T> {
    const client = this.client;
    try {
      return await command(client);
    } catch (error) {
      if (client === this.cluster || !isClusterReply(error)) throw error;
      await this.toCluster();
      return command(this.client);
    }
  }

  close(): void {
    this.server?.disconnect();
    this.cluster?.disconnect();
  }

  /** Switches to the cluster client, seeded with the node the URL names (it finds the others). */
  private toCluster(): Promise<void> {
    if (this.clusterReady) return this.clusterReady;
    const { connectTimeoutMs, scripts, log } = this.options;
    const parsed = new URL(this.url);
    const node = { host: parsed.hostname.replace(/^\[|\]$/g, ''), port: Number(parsed.port || 6379) };
    const options: ClusterOptions = {
      enableOfflineQueue: false,
      scripts,
      slotsRefreshTimeout: connectTimeoutMs,
      redisOptions: {
        username: decodeURIComponent(parsed.username) || undefined,
        password: decodeURIComponent(parsed.password) || undefined,
        tls: /^rediss/i.test(parsed.protocol) ? {} : undefined,
        connectTimeout: connectTimeoutMs,
        maxRetriesPerRequest: 1,
      },
    };
    const cluster = new Cluster([node], options);
    cluster.on('error', () => undefined).on('node error', () => undefined);
    this.cluster = cluster;
    // QUIT after the commands in flight, whose replies (redirects too) still arrive.
    const server = this.server;
    if (server?.status === 'ready') server.quit().catch(() => server.disconnect());
    else server?.disconnect();
    this.server = undefined;
    log.info('Redis is a cluster: rate limits are counted through the cluster client', { node: `${node.host}:${node.port}` });
    this.clusterReady = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, connectTimeoutMs).unref();
      cluster.once('ready', () => {
        // Connected to every master, each holding the scripts, before the first request: a
        // charge then costs one round trip to its node, as on one server.
        const loads = cluster.nodes('master').flatMap((master) => Object.values(scripts).map(({ lua }) => master.script('LOAD', lua)));
        void Promise.all(loads)
          .catch(() => undefined)
          .finally(() => {
            clearTimeout(timer);
            resolve();
          });
      });
    });
    return this.clusterReady;
  }
}

// One serving instance on an open, migrated database: its rate limiter, event hub, webhook
// deliveries, background purges and HTTP server, started together and stopped together.
// serve.ts runs one per process (with signals and exit codes); tests run them in process.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Config } from './config.js';
import type { Database } from './db/connection.js';
import { scheduleTombstonePurge } from './db/tombstones.js';
import { scheduleIdempotencyPurge } from './http/idempotency.js';
import { scheduleSessionPurge } from './web/sessions.js';
import { createEventHub } from './events/hub.js';
import { scheduleEventPurge } from './events/retention.js';
import type { Logger } from './logger.js';
import { createRateLimiter } from './rate-limit.js';
// Request logs: written in batches off the request path, purged after 7 days.
import { scheduleRequestLogPurge } from './request-logs/retention.js';
import { createRequestLogWriter } from './request-logs/writer.js';
import { createResponseCache } from './rest/response-cache.js';
import { createApp } from './server.js';
import { schema } from './schema/index.js';
import { startDeliveries } from './webhooks/delivery.js';
// CSV imports: each instance's loop writes leased imports in the background.
import { startImports } from './imports/worker.js';
import { countsAsForeground, createForeground } from './http/foreground.js';
import { lazySecretBox } from './webhooks/secrets.js';
import { counterInPrimary, throttlesInPrimary } from './cluster/shared.js';

export interface Instance {
  server: Server;
  /** The port it listens on (the one chosen when `config.port` is 0). */
  port: number;
  /**
   * Stops accepting, lets in-flight requests finish, then stops the background work.
   * The database stays open: it belongs to the caller.
   */
  stop(): Promise<void>;
}

/** `worker`: a cluster worker, whose rate-limit and login counts are kept by the primary. */
export async function startInstance(config: Config, log: Logger, db: Database, { worker = false } = {}): Promise<Instance> {
  const rateLimiter = createRateLimiter({
    max: config.rateLimitMax,
    windowSeconds: config.rateLimitWindowSeconds,
    redisUrl: config.redisUrl,
    // Workers count through the primary, so the limit is the cluster's, not one worker's.
    local: worker ? counterInPrimary : undefined,
    log,
  });
  await rateLimiter.ready;
  let stopping = false;
  // Requests whose headers arrived after shutdown began; the ones before it are in flight and finish.
  const late = new WeakSet<IncomingMessage>();
  // Each instance (each cluster worker too) has its own LISTEN for events and its own delivery
  // loop (deliveries are claimed per organization with a lease, so instances never collide).
  const box = lazySecretBox(db.prisma, config.webhooks.secretKey);
  const events = createEventHub(db, log);
  const deliveries = startDeliveries({ db, hub: events, log, schema, box, config: config.webhooks });
  // Imports give way to the requests this instance serves (http/foreground.ts).
  const foreground = createForeground();
  const imports = startImports({ db, log, schema, foreground });
  // Every purge, on the background client's own connections: a DELETE waiting on a lock (a
  // migration, a long transaction) must not hold a connection the API queues for (with a pool
  // of one, a request waited for a purge's statement timeout, then its own).
  const stopPurges = [
    scheduleTombstonePurge(db.background, config.tombstoneRetentionDays, log),
    scheduleEventPurge(db.background, config.eventRetentionDays, log),
    scheduleRequestLogPurge(db.background, log),
    scheduleIdempotencyPurge(db.background, log),
    scheduleSessionPurge(db.background, log),
  ];
  const requestLogs = createRequestLogWriter(db.sql, log);
  const app = createApp({
    db,
    log,
    rateLimiter,
    trustProxy: config.trustProxy,
    corsOrigins: config.corsOrigins,
    webhooks: { policy: { allowHttp: config.webhooks.allowHttp, allowPrivate: config.webhooks.allowPrivateNetworks }, box, wake: deliveries.wake, timeoutMs: config.webhooks.timeoutMs },
    events,
    draining: (arrived) => (arrived ? late.has(arrived) : stopping),
    loginThrottles: worker ? throttlesInPrimary : undefined,
    requestLogs,
    // Reads that may go to a replica are not kept: the change number is read on the primary.
    responses: config.responseCacheBytes > 0 && !db.replicas ? createResponseCache(db.sql, config.responseCacheBytes) : undefined,
  });
  const server = createServer((req, res) => {
    if (countsAsForeground(req.headers.accept)) res.once('close', foreground.enter());
    if (stopping) late.add(req);
    void app(req, res);
  });
  // Idle connections outlive a proxy's (load balancers keep theirs 60 s), so the proxy, not
  // this server, closes them: a request sent on a connection just closed here would fail.
  // Slow clients are still bounded: a request's headers must arrive within a second more
  // than that (Node counts it from the connection's last activity), a whole request within
  // REQUEST_TIMEOUT_MS.
  server.keepAliveTimeout = config.keepAliveSeconds * 1000;
  server.headersTimeout = server.keepAliveTimeout + 1000;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;

  return {
    server,
    port,
    async stop() {
      if (stopping) return;
      stopping = true;
      // Open subscriptions would hold close() until the grace runs out: they end now, each
      // telling its client to reconnect elsewhere and catch up.
      events.endStreams();
      // close() stops accepting and resolves once in-flight requests have finished;
      // idle keep-alive sockets are closed so they do not hold it open.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      // A client that stopped reading (an ended stream it never read to the end) would hold
      // close() past the shutdown grace; every request has had its time by then.
      const cut = setTimeout(() => server.closeAllConnections(), CLOSE_ALL_AFTER_MS).unref();
      await closed;
      clearTimeout(cut);
      for (const stop of stopPurges) stop();
      // The requests served before shutdown are written before the database is closed.
      await requestLogs.stop();
      await deliveries.stop();
      // The chunk under way commits; the import is released for another instance to go on.
      await imports.stop();
      await events.close();
      await rateLimiter.close();
    },
  };
}

const REQUEST_TIMEOUT_MS = 300_000;
/** Within serve.ts's 10 s grace: a statement may run 5 s, a request wait 5 s for a connection. */
const CLOSE_ALL_AFTER_MS = 8_000;

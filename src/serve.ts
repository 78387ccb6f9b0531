// One serving process: open (and, alone, migrate) the database, serve, and shut down
// gracefully on SIGTERM/SIGINT (stop accepting, finish in-flight requests, close the
// database, exit 0). Run by main.ts on its own, or as each worker of a cluster (cluster.ts).
import { createServer, type IncomingMessage } from 'node:http';
import type { Config } from './config.js';
import { openDatabase, type Database } from './db/connection.js';
import { migrate } from './db/migrator.js';
import { errorFields, type Logger } from './logger.js';
import { createRateLimiter } from './rate-limit.js';
import { createApp } from './server.js';
import { schema } from './schema/index.js';
import { createEventHub } from './events/hub.js';
import { startDeliveries } from './webhooks/delivery.js';
import { lazySecretBox } from './webhooks/secrets.js';
import { seedDemo } from './db/demo-data.js';
import { counterInPrimary, throttlesInPrimary } from './cluster/shared.js';

const SHUTDOWN_GRACE_MS = 10_000;

/**
 * `worker`: this process is a cluster worker. Its primary has migrated the database, keeps
 * the shared counts, and logs "listening" once every worker is; the worker logs "worker
 * listening".
 */
export async function serve(config: Config, log: Logger, { worker = false } = {}): Promise<void> {
  let db: Database | undefined;
  let firstRun: { organization: string; key: string } | undefined;
  try {
    db = await openDatabase(config);
    if (!worker) {
      const applied = await migrate(db.sql);
      log.info('database ready', { database: db.kind, migrations_applied: applied });
      // A newcomer's first `npm start`: a fresh embedded folder gets the demo and a ready key,
      // so nothing else has to run beside the server (which owns the folder). Never on
      // PostgreSQL, whose first start is a deployment's, not a newcomer's.
      if (db.kind === 'pglite' && config.seedOnFirstStart && applied.some((name) => name.endsWith('_init'))) firstRun = await seedDemo(db.prisma);
    }
  } catch (error) {
    console.error(`Cannot start: ${(error as Error).message}`);
    await db?.close().catch(() => undefined);
    process.exit(1);
  }
  const database = db;

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
  // Each worker is an instance of its own here: its own LISTEN for events, and its own
  // delivery loop (deliveries are leased FOR UPDATE SKIP LOCKED, so instances never collide).
  const box = lazySecretBox(database.prisma, config.webhooks.secretKey);
  const events = createEventHub(database, log);
  const deliveries = startDeliveries({ db: database, hub: events, log, schema, box, config: config.webhooks });
  const app = createApp({
    db: database,
    log,
    rateLimiter,
    trustProxy: config.trustProxy,
    corsOrigins: config.corsOrigins,
    tombstoneRetentionDays: config.tombstoneRetentionDays,
    eventRetentionDays: config.eventRetentionDays,
    webhooks: { policy: { allowHttp: config.webhooks.allowHttp, allowPrivate: config.webhooks.allowPrivateNetworks }, box, wake: deliveries.wake },
    events,
    draining: (arrived) => (arrived ? late.has(arrived) : stopping),
    loginThrottles: worker ? throttlesInPrimary : undefined,
  });
  const server = createServer((req, res) => {
    if (stopping) late.add(req);
    void app(req, res);
  });
  server.listen(config.port, config.host, () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    log.info(worker ? 'worker listening' : 'listening', { host: config.host, port, database: database.kind });
    if (firstRun) printWelcome(firstRun, `http://localhost:${port}`);
  });

  async function shutdown(signal: string) {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { signal });
    const force = setTimeout(() => {
      log.error('in-flight requests did not finish in time; exiting');
      process.exit(1);
    }, SHUTDOWN_GRACE_MS);
    force.unref();
    // close() stops accepting and resolves once in-flight requests have finished;
    // idle keep-alive sockets are closed so they do not hold it open.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    await closed;
    await deliveries.stop();
    await events.close();
    await rateLimiter.close();
    try {
      await database.close();
    } catch (error) {
      log.error('closing the database failed', errorFields(error));
    }
    log.info('stopped');
    process.exit(0);
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

/**
 * The first start's key, for the person at the terminal: plain lines on standard error,
 * apart from the JSON request log (which never carries a key).
 */
function printWelcome({ organization, key }: { organization: string; key: string }, base: string) {
  console.error(
    [
      '',
      `First start: the demo organization "${organization}" was created with sample data.`,
      'Its API key (shown only this once; make more with the CLI or at /settings/api-keys):',
      '',
      `  ${key}`,
      '',
      `Try it:   curl -H "Authorization: Bearer ${key}" ${base}/v1/customers`,
      `GraphiQL: ${base}/graphql (put the key in its Headers tab)`,
      `API docs: ${base}/v1/docs`,
      'This happens only on a fresh embedded data folder; SEED_ON_FIRST_START=false turns it off.',
      '',
    ].join('\n'),
  );
}

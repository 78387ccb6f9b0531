// npm start: validate configuration, open and migrate the database, serve, and shut down
// gracefully on SIGTERM/SIGINT (stop accepting, finish in-flight requests, close the database).
import { createServer, type IncomingMessage } from 'node:http';
import { ConfigError, loadConfig } from './config.js';
import { openDatabase } from './db/connection.js';
import { migrate } from './db/migrator.js';
import { bufferedStdout, createLogger, errorFields } from './logger.js';
import { createRateLimiter } from './rate-limit.js';
import { createApp } from './server.js';

const SHUTDOWN_GRACE_MS = 10_000;

let config;
try {
  config = loadConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(`Invalid configuration: ${error.message}`);
  process.exit(1);
}

const log = createLogger(config.logLevel, bufferedStdout());
let db;
try {
  db = await openDatabase(config);
  const applied = await migrate(db.sql);
  log.info('database ready', { database: db.kind, migrations_applied: applied });
} catch (error) {
  console.error(`Cannot start: ${(error as Error).message}`);
  await db?.close().catch(() => undefined);
  process.exit(1);
}

const rateLimiter = createRateLimiter({
  max: config.rateLimitMax,
  windowSeconds: config.rateLimitWindowSeconds,
  redisUrl: config.redisUrl,
  log,
});
let stopping = false;
// Requests whose headers arrived after shutdown began; the ones before it are in flight and finish.
const late = new WeakSet<IncomingMessage>();
const app = createApp({ db, log, rateLimiter, trustProxy: config.trustProxy, corsOrigins: config.corsOrigins, draining: (arrived) => (arrived ? late.has(arrived) : stopping) });
const server = createServer((req, res) => {
  if (stopping) late.add(req);
  void app(req, res);
});
server.listen(config.port, config.host, () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  log.info('listening', { host: config.host, port, database: db.kind });
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
  await rateLimiter.close();
  try {
    await db!.close();
  } catch (error) {
    log.error('closing the database failed', errorFields(error));
  }
  log.info('stopped');
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));

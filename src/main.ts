// npm start: validate configuration, then serve (serve.ts) in this process, or, with
// WEB_CONCURRENCY > 1 on PostgreSQL, as the primary of that many worker processes sharing
// the port (cluster.ts). The embedded database has one owner, so it is always one process.
import cluster from 'node:cluster';
import { setFlagsFromString } from 'node:v8';
import { ConfigError, loadConfig, type Config } from './config.js';
import { bufferedStdout, createLogger } from './logger.js';

let config: Config;
try {
  config = loadConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(`Invalid configuration: ${error.message}`);
  process.exit(1);
}

// On PostgreSQL the only WebAssembly is Prisma's query compiler, run once per query shape (its
// plans are cached): V8's optimizing tier for it held some 50 MB and bought no throughput (a
// REST list under load, 8 runs each way: 651 req/s and 387 MB with the baseline tier alone,
// 668 and 441 MB without). The embedded database runs in WebAssembly and serves 11-23% more
// with that tier, so it keeps it. Set before anything compiles (the server loads below).
if (config.databaseUrl) setFlagsFromString('--liftoff-only');

// A worker's lines carry its pid: the cluster's lines interleave on one stdout.
const log = createLogger(config.logLevel, bufferedStdout(), cluster.isWorker ? { pid: process.pid } : {});
if (cluster.isPrimary && config.webConcurrency > 1 && config.databaseUrl) {
  // Loaded only here: the primary never needs the server's modules.
  const { runPrimary } = await import('./cluster.js');
  await runPrimary(config, log);
} else {
  // Said only to whoever set it: the default (one per core) is nobody's request.
  if (cluster.isPrimary && config.webConcurrency > 1 && config.webConcurrencySet) {
    log.info(`the embedded database is served by one process: WEB_CONCURRENCY=${config.webConcurrency} is ignored (set DATABASE_URL to use every core)`, {
      web_concurrency: config.webConcurrency,
    });
  }
  const { serve } = await import('./serve.js');
  await serve(config, log, { worker: cluster.isWorker });
}

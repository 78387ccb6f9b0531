// WEB_CONCURRENCY > 1 on PostgreSQL: this process is the cluster's primary. It serves nothing:
// it migrates once (before any worker can race it), forks the workers that share the port,
// keeps the state they must share (cluster/shared.ts), restarts a worker that dies, and on
// SIGTERM/SIGINT lets every worker finish its requests, then exits 0.
import cluster, { type Worker } from 'node:cluster';
import pg from 'pg';
import type { Config } from './config.js';
import { migrate } from './db/migrator.js';
import { poolSql } from './db/sql.js';
import type { Logger } from './logger.js';
import { answerCalls } from './cluster/ipc.js';
import { primaryState } from './cluster/shared.js';

/** Longer than a worker's own grace (serve.ts), so a worker's verdict comes first. */
const SHUTDOWN_GRACE_MS = 15_000;
/** A worker that dies before listening is restarted after this, doubled each time, capped. */
const RESTART_BACKOFF_MS = 1000;
const RESTART_BACKOFF_MAX_MS = 30_000;

export async function runPrimary(config: Config, log: Logger): Promise<void> {
  // pg alone (no Prisma client): the primary stays small, it runs no queries of its own.
  const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 1, connectionTimeoutMillis: 5000 });
  pool.on('error', () => undefined);
  try {
    const applied = await migrate(poolSql(pool), undefined, log);
    log.info('database ready', { database: 'postgres', migrations_applied: applied });
  } catch (error) {
    console.error(`Cannot start: ${(error as Error).message}`);
    process.exit(1);
  } finally {
    await pool.end().catch(() => undefined);
  }

  const state = primaryState({ max: config.rateLimitMax, windowMs: config.rateLimitWindowSeconds * 1000 });
  const listening = new Set<number>();
  let ready = false;
  let stopping = false;
  let failedStarts = 0;
  /** Whether every worker stopped cleanly once shutdown began: the primary's exit code. */
  let cleanExit = true;

  const fork = () => answerCalls(cluster.fork(), state.handlers);
  const workers = () => Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);

  cluster.on('listening', (worker, address) => {
    listening.add(worker.id);
    failedStarts = 0;
    // One "listening" line for the cluster, once every worker takes connections (with PORT=0
    // they all share the port the first one was given).
    if (!ready && listening.size === config.webConcurrency) {
      ready = true;
      log.info('listening', { host: config.host, port: address.port, database: 'postgres', workers: config.webConcurrency });
    }
  });

  cluster.on('exit', (worker, code, signal) => {
    const wasListening = listening.delete(worker.id);
    if (stopping) {
      // Killed by the forwarded signal before its handler was in place (it was starting,
      // nothing in flight) is clean too; exit 1 (its grace ran out) is not.
      if (code !== 0 && !signal) cleanExit = false;
      if (workers().length === 0) finish();
      return;
    }
    if (!ready) {
      // A worker that cannot start (it has said why on stderr) fails the start, as one process would.
      log.error('a worker could not start; stopping', { pid: worker.process.pid, code, signal });
      void stop('start failed', 1);
      return;
    }
    const delay = wasListening ? 0 : Math.min(RESTART_BACKOFF_MAX_MS, RESTART_BACKOFF_MS * 2 ** failedStarts++);
    log.error('worker exited unexpectedly; starting another', { pid: worker.process.pid, code, signal, restart_in_ms: delay });
    setTimeout(() => stopping || fork(), delay);
  });

  function finish() {
    state.close();
    log.info('stopped', { workers: config.webConcurrency });
    process.exit(cleanExit ? 0 : 1);
  }

  function stop(signal: string, exitCode = 0) {
    if (stopping) return;
    stopping = true;
    if (exitCode !== 0) cleanExit = false;
    log.info('shutting down', { signal, workers: workers().length });
    // Each worker stops accepting, finishes what it has, closes the database and exits.
    // (On Ctrl-C the terminal signals the workers too; a second signal changes nothing.)
    for (const worker of workers()) worker.process.kill(signal === 'SIGINT' ? 'SIGINT' : 'SIGTERM');
    if (workers().length === 0) finish();
    setTimeout(() => {
      log.error('workers did not stop in time; killing them', { pids: workers().map((w) => w.process.pid) });
      for (const worker of workers()) worker.process.kill('SIGKILL');
      process.exit(1);
    }, SHUTDOWN_GRACE_MS).unref();
  }
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  for (let i = 0; i < config.webConcurrency; i++) fork();
}

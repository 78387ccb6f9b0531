// One serving process: open (and, alone, migrate) the database, serve, and shut down
// gracefully on SIGTERM/SIGINT (stop accepting, finish in-flight requests, close the
// database, exit 0). Run by main.ts on its own, or as each worker of a cluster (cluster.ts).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from './config.js';
import { openDatabase, type Database } from './db/connection.js';
import { migrate } from './db/migrator.js';
import { clearDemoOwed, demoOwed, markDemoOwed, seedDemo } from './db/demo-data.js';
import { startInstance } from './instance.js';
import { errorFields, type Logger } from './logger.js';

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
    // A newcomer's first `npm start`: a fresh embedded folder gets the demo and a ready key,
    // so nothing else has to run beside the server (which owns the folder). Never on
    // PostgreSQL, whose first start is a deployment's, not a newcomer's. Owed from the start,
    // so a first start stopped during its migrations or its seed is finished by the next.
    const embedded = !config.databaseUrl;
    if (embedded && !worker && config.seedOnFirstStart && !existsSync(join(config.dataDir, 'PG_VERSION'))) markDemoOwed(config.dataDir);
    // The log hears of read replicas lost and back (db/replicas.ts).
    db = await openDatabase({ ...config, log });
    if (!worker) {
      const applied = await migrate(db.sql, undefined, log);
      log.info('database ready', { database: db.kind, migrations_applied: applied });
      // An initialized folder without the schema yet is a first start's too.
      if (embedded && config.seedOnFirstStart && (demoOwed(config.dataDir) || applied.some((name) => name.endsWith('_init')))) {
        firstRun = await seedDemo(db.prisma);
        clearDemoOwed(config.dataDir);
      }
    }
  } catch (error) {
    console.error(`Cannot start: ${(error as Error).message}`);
    await db?.close().catch(() => undefined);
    process.exit(1);
  }
  const database = db;

  const instance = await startInstance(config, log, database, { worker }).catch(async (error: Error) => {
    console.error(`Cannot start: ${error.message}`);
    await database.close().catch(() => undefined);
    process.exit(1);
  });
  log.info(worker ? 'worker listening' : 'listening', { host: config.host, port: instance.port, database: database.kind });
  if (firstRun) printWelcome(firstRun, `http://localhost:${instance.port}`);

  let stopping = false;
  async function shutdown(signal: string) {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { signal });
    const force = setTimeout(() => {
      log.error('in-flight requests did not finish in time; exiting');
      process.exit(1);
    }, SHUTDOWN_GRACE_MS);
    force.unref();
    await instance.stop();
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
      'This happens only on a fresh embedded data folder (or the start after one stopped before its demo was written); SEED_ON_FIRST_START=false turns it off.',
      '',
    ].join('\n'),
  );
}

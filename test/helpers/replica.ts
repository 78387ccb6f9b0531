// A private PostgreSQL primary and a streaming replica of it, made for one test file: initdb
// (as the postgres OS user when the tests run as root), then a pg_basebackup -R copy, each
// on a free port with a socket folder of its own, every statement logged so a test can see
// which server ran what. Removed by stop(), or when the test process exits anyway.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, appendFileSync, readFileSync, rmSync, chownSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);
/** Where Debian's PostgreSQL 15 keeps initdb, pg_ctl and pg_basebackup (PG_BINDIR overrides). */
const BIN = process.env.PG_BINDIR ?? '/usr/lib/postgresql/15/bin';
/** initdb refuses root: as root, the servers run as the postgres OS user. */
const AS_POSTGRES = process.getuid?.() === 0;

async function pgTool(tool: string, args: string[]): Promise<void> {
  const [file, argv] = AS_POSTGRES ? ['runuser', ['-u', 'postgres', '--', join(BIN, tool), ...args]] : [join(BIN, tool), args];
  await run(file, argv, { timeout: 60_000 });
}

async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: count }, () => new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
      const server = createServer();
      server.once('error', reject).listen(0, '127.0.0.1', () => resolve(server));
    })),
  );
  const ports = servers.map((server) => (server.address() as { port: number }).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

export type Server = 'primary' | 'replica';

export interface ReplicatedCluster {
  /** The `crm` database on the primary, and on the replica. */
  primaryUrl: string;
  replicaUrl: string;
  /** Each statement the server has logged so far (log_statement = all), oldest first. */
  statements(server: Server): string[];
  /** The server's log so far. */
  log(server: Server): string;
  /** Stops the replica at once, as a crash or a lost machine would. */
  stopReplica(): Promise<void>;
  /** Stops both servers and removes their folders. */
  stop(): Promise<void>;
}

/** `applyDelayMs`: the replica replays each commit that long after it happened (recovery_min_apply_delay), so it is always behind. */
export async function startReplicatedCluster({ applyDelayMs = 0 } = {}): Promise<ReplicatedCluster> {
  const root = mkdtempSync(join(tmpdir(), 'crm-replica-'));
  const dirs = { primary: join(root, 'primary'), replica: join(root, 'replica') };
  const logs = { primary: join(root, 'primary.log'), replica: join(root, 'replica.log') };
  const sockets = join(root, 'sockets');
  mkdirSync(sockets);
  if (AS_POSTGRES) {
    const [uid, gid] = await Promise.all(['-u', '-g'].map(async (flag) => Number((await run('id', [flag, 'postgres'])).stdout.trim())));
    for (const path of [root, sockets]) chownSync(path, uid!, gid!);
  }
  const pgCtl = (server: Server, ...args: string[]) => pgTool('pg_ctl', ['-D', dirs[server], '-l', logs[server], '-w', '-t', '30', ...args]);
  const stopServer = (server: Server) => (existsSync(join(dirs[server], 'postmaster.pid')) ? pgCtl(server, '-m', 'immediate', 'stop').catch(() => undefined) : Promise.resolve());

  // If the test process ends without stop() (a crash, an interrupted run), nothing stays behind.
  const leftovers = () => {
    for (const dir of Object.values(dirs)) {
      try {
        process.kill(Number(readFileSync(join(dir, 'postmaster.pid'), 'utf8').split('\n')[0]), 'SIGQUIT');
      } catch {
        // not running
      }
    }
    rmSync(root, { recursive: true, force: true });
  };
  process.once('exit', leftovers);

  try {
    const [primaryPort, replicaPort] = await freePorts(2);
    await pgTool('initdb', ['-D', dirs.primary, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions']);
    appendFileSync(
      join(dirs.primary, 'postgresql.conf'),
      [
        `port = ${primaryPort}`,
        `listen_addresses = '127.0.0.1'`,
        `unix_socket_directories = '${sockets}'`,
        'wal_level = replica',
        'max_wal_senders = 4',
        // A throwaway cluster: no fsync, small memory.
        'fsync = off',
        'shared_buffers = 16MB',
        'log_statement = all',
        `log_line_prefix = '@@ '`,
        '',
      ].join('\n'),
    );
    appendFileSync(join(dirs.primary, 'pg_hba.conf'), ['host all all 127.0.0.1/32 trust', 'host replication all 127.0.0.1/32 trust', ''].join('\n'));
    await pgCtl('primary', 'start');
    const admin = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${primaryPort}/postgres` });
    await admin.connect();
    await admin.query('CREATE DATABASE crm').finally(() => admin.end());

    await pgTool('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '-D', dirs.replica, '-R', '-X', 'stream', '--checkpoint=fast', '--no-sync']);
    appendFileSync(join(dirs.replica, 'postgresql.conf'), [`port = ${replicaPort}`, `recovery_min_apply_delay = '${applyDelayMs}ms'`, ''].join('\n'));
    await pgCtl('replica', 'start');

    const statements = (server: Server) =>
      readFileSync(logs[server], 'utf8')
        .split(/^@@ /m)
        .filter((entry) => /^LOG:\s+(statement|execute)/.test(entry));
    let stopped: Promise<void> | undefined;
    return {
      primaryUrl: `postgres://postgres@127.0.0.1:${primaryPort}/crm`,
      replicaUrl: `postgres://postgres@127.0.0.1:${replicaPort}/crm`,
      statements,
      log: (server) => readFileSync(logs[server], 'utf8'),
      stopReplica: () => stopServer('replica'),
      stop: () =>
        (stopped ??= Promise.all([stopServer('replica'), stopServer('primary')]).then(() => {
          process.off('exit', leftovers);
          rmSync(root, { recursive: true, force: true });
        })),
    };
  } catch (error) {
    await Promise.all([stopServer('replica'), stopServer('primary')]);
    const logged = Object.values(logs).map((path) => (existsSync(path) ? readFileSync(path, 'utf8').slice(-2000) : '')).join('\n');
    process.off('exit', leftovers);
    rmSync(root, { recursive: true, force: true });
    throw new Error(`the replicated cluster did not start: ${(error as Error).message}\n${logged}`);
  }
}

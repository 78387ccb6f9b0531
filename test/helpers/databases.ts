// Each test file or suite gets its own database: a PGlite folder, or a PostgreSQL database
// created for it on the local server and dropped afterwards, so runs never collide. Empty
// (freshDatabase), or already migrated (migratedDatabase): a copy of a template migrated
// once per set of migrations, since creating a PGlite cluster and migrating it takes seconds.
import { createHash, randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openDatabase } from '../../src/db/connection.js';
import { migrate, readMigrations } from '../../src/db/migrator.js';

export type DbKind = 'pglite' | 'postgres';

/**
 * A Citus coordinator's ready database (`npm run test:citus`): the suites' PostgreSQL
 * databases are then made on the coordinator and every worker it knows, with the citus
 * extension; migrated ones are copies, on each node, of a template migrated (so distributed)
 * once (citusTemplate).
 */
const CITUS_URL = process.env.TEST_CITUS_URL;
/** The suites run on Citus (`npm run test:citus`): every PostgreSQL database is distributed. */
export const ON_CITUS = CITUS_URL !== undefined;
export const DB_KINDS: DbKind[] = CITUS_URL ? ['postgres'] : ['pglite', 'postgres'];
/**
 * For tests whose subject is not the database (client libraries, browsers, the OpenAPI
 * document): the suites over DB_KINDS cover both kinds, and PostgreSQL serves the same answers
 * for a fraction of the CPU PGlite spends in WebAssembly (the language clients' file took
 * 8 CPU-seconds in its worker instead of 16).
 */
export const ANY_DATABASE: DbKind = 'postgres';

/** Where tests may create and drop databases. */
export const POSTGRES_ADMIN_URL = CITUS_URL ? databaseUrl(CITUS_URL, 'postgres') : (process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');

function databaseUrl(url: string, database: string, host?: string, port?: number): string {
  const next = new URL(url);
  next.pathname = `/${database}`;
  if (host) next.hostname = host;
  if (port) next.port = String(port);
  return next.toString();
}

async function run(url: string, ...statements: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const statement of statements) await client.query(statement);
  } finally {
    await client.end();
  }
}

interface CitusNode {
  nodename: string;
  nodeport: number;
}

let citusNodes: Promise<CitusNode[]> | undefined;

/** The coordinator, then its workers. */
function nodesOfCitus(): Promise<CitusNode[]> {
  citusNodes ??= (async () => {
    const coordinator = new pg.Client({ connectionString: CITUS_URL });
    await coordinator.connect();
    const workers = await coordinator
      .query<CitusNode>("SELECT nodename, nodeport FROM pg_dist_node WHERE groupid > 0 AND noderole = 'primary' ORDER BY nodeport")
      .finally(() => coordinator.end());
    const { hostname, port } = new URL(CITUS_URL!);
    return [{ nodename: hostname, nodeport: Number(port) }, ...workers.rows];
  })();
  return citusNodes;
}

const onNode = (node: CitusNode, database: string) => databaseUrl(CITUS_URL!, database, node.nodename, node.nodeport);

/** The database `name` on every node, dropped on every node. */
async function citusDatabaseNamed(name: string): Promise<TestDatabase> {
  const nodes = await nodesOfCitus();
  return {
    kind: 'postgres',
    env: { DATABASE_URL: databaseUrl(CITUS_URL!, name) },
    drop: async () => {
      await Promise.all(nodes.map((node) => run(onNode(node, 'postgres'), `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)));
    },
  };
}

/** Makes a database on the coordinator and each worker, with the extension and the workers registered. */
async function citusDatabase(name: string): Promise<TestDatabase> {
  const nodes = await nodesOfCitus();
  await Promise.all(
    nodes.map(async (node) => {
      await run(onNode(node, 'postgres'), `CREATE DATABASE ${name}`);
      await run(onNode(node, name), 'CREATE EXTENSION citus');
    }),
  );
  const [coordinator, ...workers] = nodes;
  await run(databaseUrl(CITUS_URL!, name), `SELECT citus_set_coordinator_host('${coordinator!.nodename}', ${coordinator!.nodeport})`);
  for (const w of workers) {
    // Registering a node connects to it; under a loaded test run that connection has failed
    // once ("failure on connection marked as essential"): try again, a few times.
    for (let attempt = 1; ; attempt++) {
      try {
        await run(databaseUrl(CITUS_URL!, name), `SELECT citus_add_node('${w.nodename}', ${w.nodeport})`);
        break;
      } catch (error) {
        if (attempt >= 3 || !/failure on connection marked as essential/.test((error as Error).message)) throw error;
      }
    }
  }
  return citusDatabaseNamed(name);
}

/** Any number, the same in every process: the lock builders of the Citus template take in turn. */
const CITUS_TEMPLATE_LOCK = 724_113;

/**
 * The migrated template on Citus: a database of that name on every node, copied on each (its
 * metadata names the same nodes, and each node's copy holds that node's shards). Migrating a
 * distributed database took 3.5 s and 6 CPU-seconds of the nodes, a third of the Citus run's
 * CPU; a copy on three nodes 0.4 s. Made by one process at a time (an advisory lock on the
 * coordinator); renamed into place on the coordinator last, so its name there means it is whole.
 */
async function citusTemplate(): Promise<string> {
  const name = `crm_template_${templateId()}`;
  const nodes = await nodesOfCitus();
  const lock = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [CITUS_TEMPLATE_LOCK]);
    const found = await lock.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount) return name;
    const building = `crm_template_building_${randomBytes(6).toString('hex')}`;
    const database = await citusDatabase(building);
    try {
      const db = await openDatabase({ databaseUrl: database.env.DATABASE_URL!, dataDir: '' });
      await migrate(db.sql).finally(() => db.close());
      // A template has no one connected: Citus's maintenance daemon and the nodes' connections
      // to each other are. Closed to new connections first, so none comes back.
      for (const node of nodes) await run(onNode(node, 'postgres'), `ALTER DATABASE ${building} WITH ALLOW_CONNECTIONS false`);
      // A worker may hold one from a run stopped before the coordinator's rename: never whole, so never copied.
      for (const node of [...nodes.slice(1), nodes[0]!]) {
        await endSessions(onNode(node, 'postgres'), building);
        await run(onNode(node, 'postgres'), `DROP DATABASE IF EXISTS ${name}`, `ALTER DATABASE ${building} RENAME TO ${name}`);
      }
    } catch (error) {
      await database.drop();
      throw error;
    }
    return name;
  } finally {
    await lock.end();
  }
}

/**
 * CREATE DATABASE `name` TEMPLATE `template`, with the template's own settings, which a copy
 * does not take (ALTER DATABASE ... SET: the migrations set Citus's there).
 */
async function copyDatabase(url: string, template: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
    const { rows } = await client.query<{ setconfig: string[] }>(
      'SELECT setconfig FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase WHERE d.datname = $1 AND s.setrole = 0',
      [template],
    );
    for (const setting of rows.flatMap((row) => row.setconfig)) {
      const [key, value] = [setting.slice(0, setting.indexOf('=')), setting.slice(setting.indexOf('=') + 1)];
      await client.query(`ALTER DATABASE ${name} SET ${key} = ${client.escapeLiteral(value)}`);
    }
  } finally {
    await client.end();
  }
}

/** Ends every session of `database`, each waited for until it is gone (up to 10 s). */
async function endSessions(url: string, database: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // False also for a session that ended on its own meanwhile (its peers' went with Citus's daemon): counted again after.
    await client.query('SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database]);
    const { rows } = await client.query<{ left: number }>('SELECT count(*)::int AS left FROM pg_stat_activity WHERE datname = $1', [database]);
    if (rows[0]!.left > 0) throw new Error(`${database}: ${rows[0]!.left} session(s) did not end within 10 s`);
  } finally {
    await client.end();
  }
}

export interface TestDatabase {
  kind: DbKind;
  /** The environment that points the service at this database. */
  env: Record<string, string>;
  drop(): Promise<void>;
}

export function postgresUrl(database: string): string {
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

export async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

export async function freshDatabase(kind: DbKind): Promise<TestDatabase> {
  if (kind === 'pglite') {
    const dataDir = mkdtempSync(join(tmpdir(), 'crm-test-'));
    return { kind, env: { DATA_DIR: dataDir }, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
  }
  const name = `crm_test_${randomBytes(6).toString('hex')}`;
  if (CITUS_URL) return citusDatabase(name);
  await adminQuery(`CREATE DATABASE ${name}`);
  return {
    kind,
    env: { DATABASE_URL: postgresUrl(name) },
    drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

/**
 * A database with every migration applied, as the service leaves it at its first start
 * (without the demo): a copy of the migrated template. Tests of migrating or of a first
 * start use freshDatabase.
 */
export async function migratedDatabase(kind: DbKind): Promise<TestDatabase> {
  const template = await ensureTemplate(kind);
  if (kind === 'pglite') {
    const dataDir = mkdtempSync(join(tmpdir(), 'crm-test-'));
    cpSync(template, dataDir, { recursive: true });
    return { kind, env: { DATA_DIR: dataDir }, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
  }
  const name = `crm_test_${randomBytes(6).toString('hex')}`;
  if (CITUS_URL) {
    const database = await citusDatabaseNamed(name);
    const nodes = await nodesOfCitus();
    await Promise.all(nodes.map((node) => copyDatabase(onNode(node, 'postgres'), template, name))).catch(async (error: unknown) => {
      await database.drop();
      throw error;
    });
    return database;
  }
  await copyDatabase(POSTGRES_ADMIN_URL, template, name);
  return {
    kind,
    env: { DATABASE_URL: postgresUrl(name) },
    drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

/**
 * A database set up but without any migration: on PostgreSQL a new database (as
 * freshDatabase), on PGlite a copy of a folder PGlite initialized once, since its initdb
 * takes seconds of CPU. Tests of migrating start from it; tests of a first start on an empty
 * folder (the service's initdb included) use freshDatabase.
 */
export async function unmigratedDatabase(kind: DbKind): Promise<TestDatabase> {
  if (kind !== 'pglite') return freshDatabase(kind);
  const template = await pgliteTemplate(false);
  const dataDir = mkdtempSync(join(tmpdir(), 'crm-test-'));
  cpSync(template, dataDir, { recursive: true });
  return { kind, env: { DATA_DIR: dataDir }, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
}

const templateIds = new Map<boolean, string>();

/**
 * Names the templates after what makes them: the migrations, the migrator, and PGlite's
 * version (its folder format), so a changed migration gets a template of its own. Read once
 * a process: every copy of a test database asked for it again.
 */
function templateId(migrated = true): string {
  let id = templateIds.get(migrated);
  if (id) return id;
  const hash = createHash('sha256');
  if (migrated) {
    for (const migration of readMigrations()) hash.update(`${migration.name}\0${migration.checksum}\0`);
    hash.update(readFileSync(new URL('../../src/db/migrator.ts', import.meta.url)));
  }
  hash.update(JSON.parse(readFileSync(new URL('../../node_modules/@electric-sql/pglite/package.json', import.meta.url), 'utf8')).version);
  id = hash.digest('hex').slice(0, 16);
  templateIds.set(migrated, id);
  return id;
}

const DAY_MS = 86_400_000;
/** The names the suite's folders are made with (mkdtemp's prefixes), and nothing else of the temporary folder's. */
const TEST_FOLDER = /^crm-(test|template|first-run|client-(probe|project|notes)|announce|import|replica|redis-cluster)-/;

/**
 * Removes the folders runs leave behind in `dir` (the temporary folder, in memory where it is
 * /dev/shm): PGlite copies and the tests' other `crm-` folders (first starts, client projects,
 * CSV files) from runs that were killed before they removed them, and templates of earlier
 * sets of migrations. Only those untouched for a day, so a run still using one keeps it.
 * Returns the names removed.
 */
export function sweepTestFolders(dir = tmpdir(), now = Date.now()): string[] {
  const current = new Set([`crm-template-${templateId()}`, `crm-template-unmigrated-${templateId(false)}`]);
  const removed: string[] = [];
  for (const name of readdirSync(dir)) {
    if (!TEST_FOLDER.test(name) || current.has(name)) continue;
    const path = join(dir, name);
    try {
      if (now - statSync(path).mtimeMs < DAY_MS) continue;
      rmSync(path, { recursive: true, force: true });
      removed.push(name);
    } catch {
      // Gone already, or not ours to remove.
    }
  }
  return removed;
}

const templates = new Map<DbKind, Promise<string>>();

/**
 * The migrated template of `kind` (a folder, or a database name), made if missing. Runs in
 * parallel processes may race to make it: each builds its own under a name of its own and
 * renames it into place; the loser throws its copy away.
 */
export function ensureTemplate(kind: DbKind): Promise<string> {
  let made = templates.get(kind);
  if (!made) {
    made = kind === 'pglite' ? pgliteTemplate() : CITUS_URL ? citusTemplate() : postgresTemplate();
    made.catch(() => templates.delete(kind));
    templates.set(kind, made);
  }
  return made;
}

/** The PGlite folder to copy: migrated, or (`migrated` false) only initialized. */
async function pgliteTemplate(migrated = true): Promise<string> {
  const folder = join(tmpdir(), `crm-template-${migrated ? '' : 'unmigrated-'}${templateId(migrated)}`);
  if (existsSync(join(folder, 'PG_VERSION'))) {
    // In use: a run from another checkout (other migrations) sweeps only what a day left alone.
    const now = new Date();
    utimesSync(folder, now, now);
    return folder;
  }
  const building = mkdtempSync(join(tmpdir(), 'crm-template-building-'));
  try {
    const db = await openDatabase({ databaseUrl: undefined, dataDir: building });
    try {
      if (migrated) await migrate(db.sql);
    } finally {
      await db.close();
    }
    renameSync(building, folder);
  } catch (error) {
    rmSync(building, { recursive: true, force: true });
    // Another run put its template there first.
    if (!existsSync(join(folder, 'PG_VERSION'))) throw error;
  }
  return folder;
}

async function postgresTemplate(): Promise<string> {
  const name = `crm_template_${templateId()}`;
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount) return name;
    const building = `crm_template_building_${randomBytes(6).toString('hex')}`;
    await client.query(`CREATE DATABASE ${building}`);
    try {
      const db = await openDatabase({ databaseUrl: postgresUrl(building), dataDir: '' });
      try {
        await migrate(db.sql);
      } finally {
        await db.close();
      }
      await client.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
    } catch (error) {
      await client.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
      // 42P04: another run put its template there first.
      if ((error as { code?: string }).code !== '42P04') throw error;
    }
    return name;
  } finally {
    await client.end();
  }
}

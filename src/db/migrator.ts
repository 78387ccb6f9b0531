// Applies prisma/migrations/<name>/migration.sql in name order and records each in
// `_prisma_migrations` exactly as Prisma Migrate does, so that `prisma migrate status`
// (where the native engine exists) agrees with what the service applied.
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import type { Logger } from '../logger.js';
import type { Sql } from './sql.js';
import { splitStatements } from './split-sql.js';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../prisma/migrations', import.meta.url));

// Arbitrary constant shared by every instance: whoever holds it migrates, the others wait.
const MIGRATION_LOCK_KEY = 72_707_369;

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

export interface Migration {
  name: string;
  script: string;
  checksum: string;
}

export function readMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(dir, entry.name, 'migration.sql')))
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const script = readFileSync(join(dir, name, 'migration.sql'), 'utf8');
      return { name, script, checksum: createHash('sha256').update(script).digest('hex') };
    });
}

export class MigrationError extends Error {
  override name = 'MigrationError';
}

interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

/**
 * Applies pending migrations; returns the names it applied (empty when up to date). With
 * `log`, says which one it is applying before each: a first start can take half a minute.
 */
export async function migrate(sql: Sql, migrations = readMigrations(), log?: Pick<Logger, 'info'>): Promise<string[]> {
  return sql.withLock(MIGRATION_LOCK_KEY, async (conn) => {
    await conn.exec(CREATE_TABLE);
    const rows = await conn.query<AppliedRow>(
      'SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations"',
    );
    const failed = rows.find((row) => row.finished_at === null && row.rolled_back_at === null);
    if (failed) {
      throw new MigrationError(
        `Migration ${failed.migration_name} failed earlier and is not rolled back; resolve it before starting.`,
      );
    }
    const applied = new Set(rows.filter((row) => row.rolled_back_at === null).map((row) => row.migration_name));
    const known = new Set(migrations.map((m) => m.name));
    const unknown = [...applied].filter((name) => !known.has(name));
    if (unknown.length > 0) {
      throw new MigrationError(
        `The database has migrations this version does not know (${unknown.join(', ')}); is an older version starting against a newer database?`,
      );
    }
    const done: string[] = [];
    const pending = migrations.filter((migration) => !applied.has(migration.name));
    // Citus passes some DDL on distributed tables (a named constraint, an index) to its
    // workers as the whole query string, which fails when that holds several statements
    // (citusdata/citus#6608): there, a migration runs one statement at a time.
    const oneByOne = (await conn.query<{ citus: boolean }>("SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') AS citus"))[0]!.citus;
    for (const migration of pending) {
      log?.info(`applying migration ${migration.name}`, { migration: migration.name, number: done.length + 1, of: pending.length });
      // Each migration and its record commit together, or not at all.
      await conn.exec('BEGIN');
      try {
        // API statements are time-bounded (db/connection.ts); a migration may take its time.
        await conn.exec('SET LOCAL statement_timeout = 0');
        const startedAt = new Date();
        for (const statement of oneByOne ? splitStatements(migration.script) : [migration.script]) await conn.exec(statement);
        await conn.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, started_at, applied_steps_count)
           VALUES ($1, $2, now(), $3, $4, 1)`,
          [randomUUID(), migration.checksum, migration.name, startedAt],
        );
        await conn.exec('COMMIT');
      } catch (error) {
        await conn.exec('ROLLBACK').catch(() => undefined);
        throw new MigrationError(`Migration ${migration.name} failed: ${(error as Error).message}`);
      }
      done.push(migration.name);
    }
    return done;
  });
}

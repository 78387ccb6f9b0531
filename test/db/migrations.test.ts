import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/connection.js';
import { DataDirLockedError } from '../../src/db/data-dir-lock.js';
import { MIGRATIONS_DIR, migrate, readMigrations } from '../../src/db/migrator.js';
import { pendingMigrationSql, SQL_ONLY_INDEXES } from '../../scripts/schema-diff.js';
import { DB_KINDS, freshDatabase, migratedDatabase, unmigratedDatabase, type TestDatabase } from '../helpers/databases.js';

const committed = readdirSync(MIGRATIONS_DIR, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();

function open(test: TestDatabase): Promise<Database> {
  return openDatabase({ databaseUrl: test.env.DATABASE_URL, dataDir: test.env.DATA_DIR ?? '' });
}

describe.each(DB_KINDS)('migrations on %s', (kind) => {
  const cleanup: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const step of cleanup.reverse()) await step();
    cleanup.length = 0;
  });

  async function fresh() {
    // Initialized, with nothing migrated: PGlite's initdb is not what these tests are about.
    const test = await unmigratedDatabase(kind);
    cleanup.push(test.drop);
    return test;
  }

  it('apply on an empty database, in Prisma\'s record format, and are a no-op the second time', async () => {
    const db = await open(await fresh());
    cleanup.push(() => db.close());

    expect(await migrate(db.sql)).toEqual(committed);
    const rows = await db.sql.query<{ migration_name: string; checksum: string; finished_at: Date | null; applied_steps_count: number; rolled_back_at: Date | null }>(
      'SELECT migration_name, checksum, finished_at, applied_steps_count, rolled_back_at FROM "_prisma_migrations" ORDER BY migration_name',
    );
    expect(rows.map((r) => r.migration_name)).toEqual(committed);
    for (const row of rows) {
      const script = readFileSync(join(MIGRATIONS_DIR, row.migration_name, 'migration.sql'));
      expect(row.checksum).toBe(createHash('sha256').update(script).digest('hex'));
      expect(row.finished_at).toBeInstanceOf(Date);
      expect(row.rolled_back_at).toBeNull();
      expect(row.applied_steps_count).toBe(1);
    }
    const tables = await db.sql.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
    );
    expect(tables.map((t) => t.table_name)).toEqual(
      expect.arrayContaining(['customers', 'jobs', 'emails', 'invoices', 'invoice_line_items', 'estimates', 'estimate_line_items', 'proposals', 'api_keys', 'users', 'organizations']),
    );

    expect(await migrate(db.sql)).toEqual([]);
    const [{ count }] = (await db.sql.query<{ count: number }>('SELECT count(*)::int AS count FROM "_prisma_migrations"')) as [{ count: number }];
    expect(count).toBe(committed.length);
  });

  it('create the SQL-only list indexes the schema comparison leaves out, nulls last', async () => {
    const test = await migratedDatabase(kind);
    cleanup.push(test.drop);
    const db = await open(test);
    cleanup.push(() => db.close());
    const rows = await db.sql.query<{ indexname: string; indexdef: string }>(
      "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' AND indexname = ANY($1::text[]) ORDER BY indexname",
      [SQL_ONLY_INDEXES],
    );
    expect(rows.map((r) => r.indexname)).toEqual([...SQL_ONLY_INDEXES].sort());
    for (const row of rows) expect(row.indexdef).toMatch(/\(organization_id, \w+ DESC NULLS LAST, id DESC\) WHERE \(deleted_at IS NULL\)$/);
  });

  it('roll back a failing migration entirely and refuse to continue past it', async () => {
    const db = await open(await fresh());
    cleanup.push(() => db.close());
    const broken = [
      ...readMigrations(),
      { name: '99999999999999_broken', script: 'CREATE TABLE half_done (id int); SELECT no_such_function();', checksum: 'x' },
    ];
    await expect(migrate(db.sql, broken)).rejects.toThrow(/99999999999999_broken failed/);
    const leftovers = await db.sql.query("SELECT 1 FROM information_schema.tables WHERE table_name = 'half_done'");
    expect(leftovers).toEqual([]);
    expect(await migrate(db.sql)).toEqual([]);
  });

  it('refuse a database that has migrations this version does not know', async () => {
    const test = await migratedDatabase(kind);
    cleanup.push(test.drop);
    const db = await open(test);
    cleanup.push(() => db.close());
    expect(await migrate(db.sql)).toEqual([]);
    await db.sql.query(
      `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, applied_steps_count) VALUES (gen_random_uuid(), 'x', now(), '99999999999999_from_the_future', 1)`,
    );
    await expect(migrate(db.sql)).rejects.toThrow(/99999999999999_from_the_future/);
  });
});

describe('migrations, concurrently', () => {
  it('two instances migrating one PostgreSQL database at once apply each migration once', async () => {
    const test = await freshDatabase('postgres');
    const [a, b] = [await open(test), await open(test)];
    try {
      const [appliedByA, appliedByB] = await Promise.all([migrate(a.sql), migrate(b.sql)]);
      expect([...appliedByA, ...appliedByB].sort()).toEqual(committed);
      const rows = await a.sql.query<{ migration_name: string }>('SELECT migration_name FROM "_prisma_migrations"');
      expect(rows).toHaveLength(committed.length);
    } finally {
      await a.close();
      await b.close();
      await test.drop();
    }
  });

  it('a second process cannot open an embedded data folder that is in use', async () => {
    const test = await migratedDatabase('pglite');
    const first = await open(test);
    try {
      await expect(open(test)).rejects.toThrow(DataDirLockedError);
      await expect(open(test)).rejects.toThrow(/in use by another process/);
    } finally {
      await first.close();
    }
    const again = await open(test);
    await again.close();
    await test.drop();
  });
});

describe('prisma/schema.prisma', () => {
  it('is fully described by the committed migrations (npm run db:diff would write nothing)', async () => {
    const test = await unmigratedDatabase('pglite');
    const db = await PGlite.create(test.env.DATA_DIR!, { extensions: { pg_trgm } });
    try {
      expect(await pendingMigrationSql(db)).toBe('');
    } finally {
      await db.close();
      await test.drop();
    }
  });
});

// A new import is started at once by an instance's import loop, not at the loop's next look
// for due imports: the row's INSERT NOTIFYs crm_imports (the statement_triggers migration),
// whichever process made it (here: as the CLI and the account page do, straight into the
// database). The loop below looks for due imports only once an hour, so the import can end
// only because the notification woke it.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/connection.js';
import { newImport } from '../../src/imports/plan.js';
import { startImports, type Imports } from '../../src/imports/worker.js';
import { createLogger } from '../../src/logger.js';
import { schema } from '../../src/schema/index.js';
import { runCliHere } from '../helpers/cli.js';
import { DB_KINDS, migratedDatabase, type TestDatabase } from '../helpers/databases.js';

describe.each(DB_KINDS)('a new import on %s', (kind) => {
  let test: TestDatabase;
  let db: Database;
  let imports: Imports;
  beforeAll(async () => {
    test = await migratedDatabase(kind);
    db = await openDatabase({ databaseUrl: test.env.DATABASE_URL ?? '', dataDir: test.env.DATA_DIR ?? '' });
    imports = startImports({ db, log: createLogger('warn'), schema, pollMs: 3_600_000 });
  });
  afterAll(async () => {
    await imports?.stop();
    await db?.close();
    await test?.drop();
  });

  it('is started by its notification', async () => {
    const organization = await db.prisma.organization.create({ data: { name: 'Announced' } });
    // The loop's first pass (when it starts) has found nothing; the import comes after it.
    await expect.poll(() => db.sql.query("SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN%crm_imports%'").then((rows) => kind === 'pglite' || rows.length > 0)).toBe(true);
    const stored = newImport(schema, 'customers', 'create', 'name,email\nAda,ada@announce.example\nGrace,grace@announce.example\n');
    const { id } = await db.prisma.import.create({ data: { organizationId: organization.id, ...stored, requestId: 'test' } });
    await expect.poll(async () => (await db.prisma.import.findUniqueOrThrow({ where: { organizationId_id: { organizationId: organization.id, id } } })).status, { timeout: 20_000 }).toBe('completed');
    expect(await db.prisma.customer.count({ where: { organizationId: organization.id } })).toBe(2);
  });

  // Declared on PostgreSQL only: an embedded data folder is open in one process at a time.
  if (kind === 'postgres') it('that the CLI runs stays the CLI\'s: the listening instance finds it leased', async () => {
    await db.prisma.organization.create({ data: { name: 'By hand' } });
    const dir = mkdtempSync(join(tmpdir(), 'crm-announce-'));
    try {
      writeFileSync(join(dir, 'rows.csv'), 'name,email\nAda,ada@cli-announce.example\nBad,nope\n');
      const run = await runCliHere(['imports', 'run', '--org', 'By hand', '--resource', 'customers', join(dir, 'rows.csv')], test.env);
      // It ran here to its end: the refused row is its exit code, and it printed the import.
      expect(run.code, run.stderr).toBe(1);
      expect(JSON.parse(run.stdout)).toMatchObject({ status: 'completed', total: 2, created: 1, failed: 1 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// The embedded database (PGlite), opened with shared memory for the one process it serves.
// It answers in the server's own thread, through promises alone: a loop of statements (an
// import's chunks, a purge's batches) would never let the event loop reach its I/O, and the
// server would answer no request until the loop ended. Each statement and transaction begun
// on its clients first lets pending I/O in (db/connection.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/connection.js';
import { migratedDatabase, type TestDatabase } from '../helpers/databases.js';

const STATEMENTS = 50;

describe('the embedded database between statements', () => {
  let test: TestDatabase;
  let db: Database;
  beforeAll(async () => {
    test = await migratedDatabase('pglite');
    db = await openDatabase({ databaseUrl: '', dataDir: test.env.DATA_DIR! });
  });
  afterAll(async () => {
    await db?.close();
    await test?.drop();
  });

  /** How many of the loop's statements had run when work waiting for the event loop's next turn ran. */
  async function turnDuring(statement: () => Promise<unknown>): Promise<number> {
    let ran = 0;
    let seenAt: number | undefined;
    setImmediate(() => (seenAt = ran));
    for (; ran < STATEMENTS; ran++) await statement();
    return seenAt ?? ran;
  }

  it('lets the event loop turn within a loop of Prisma statements and transactions', async () => {
    expect(await turnDuring(() => db.prisma.$queryRaw`SELECT 1`)).toBeLessThan(STATEMENTS);
    expect(await turnDuring(() => db.background.$transaction((tx) => tx.$queryRaw`SELECT 1`))).toBeLessThan(STATEMENTS);
  });

  it('and within a loop of plain SQL statements', async () => {
    expect(await turnDuring(() => db.sql.query('SELECT 1'))).toBeLessThan(STATEMENTS);
  });

  it('is opened with shared memory for one process, not PostgreSQL\'s server defaults (128MB, 100)', async () => {
    const settings = await db.sql.query<{ name: string; setting: string; unit: string | null }>(
      `SELECT name, setting, unit FROM pg_settings WHERE name IN ('shared_buffers', 'max_connections') ORDER BY name`,
    );
    expect(settings).toEqual([
      { name: 'max_connections', setting: '10', unit: null },
      { name: 'shared_buffers', setting: '2048', unit: '8kB' },
    ]);
  });
});

// What every command-line entry point shares: configuration, an open and migrated
// database, and a clean exit with a one-line message on failure.
import { loadConfig } from '../config.js';
import { openDatabase, type Database } from '../db/connection.js';
import { migrate } from '../db/migrator.js';

export async function withDatabase(run: (db: Database) => Promise<void>): Promise<void> {
  let db: Database | undefined;
  try {
    const config = loadConfig();
    db = await openDatabase(config);
    const applied = await migrate(db.sql);
    if (applied.length > 0) console.error(`Applied migrations: ${applied.join(', ')}`);
    await run(db);
  } catch (error) {
    console.error(`error: ${(error as Error).message}`);
    process.exitCode = 1;
  } finally {
    await db?.close();
  }
}

// The SQL that takes a database with every committed migration applied to the state of
// prisma/schema.prisma: empty when the migrations are complete. Works offline: the
// migrations are applied to a throwaway in-memory PGlite, and Prisma's WebAssembly schema
// engine compares that database with the schema.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { migrate } from '../src/db/migrator.js';
import { pgliteSql } from '../src/db/sql.js';
import { loadSchemaEngine } from './schema-engine.js';

export const SCHEMA_PATH = fileURLToPath(new URL('../prisma/schema.prisma', import.meta.url));

export async function pendingMigrationSql(): Promise<string> {
  const datamodel = { path: SCHEMA_PATH, content: readFileSync(SCHEMA_PATH, 'utf8') };
  const db = await PGlite.create({ extensions: { pg_trgm } });
  try {
    await migrate(pgliteSql(db));
    const engine = await loadSchemaEngine(new PrismaPGlite(db), datamodel);
    const result = (await engine.diff({
      from: { tag: 'schemaDatasource', files: [datamodel], configDir: process.cwd() },
      to: { tag: 'schemaDatamodel', files: [datamodel] },
      script: true,
      exitCode: null,
      filters: { externalTables: [], externalEnums: [] },
    })) as { stdout?: string };
    const script = result.stdout?.trim() ?? '';
    return script.startsWith('-- This is an empty migration') ? '' : script;
  } finally {
    await db.close();
  }
}

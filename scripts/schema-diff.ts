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

/**
 * Indexes the migrations create that the schema cannot declare, so the comparison leaves
 * them out (it would drop them): the descending list indexes of nullable sort keys, whose
 * nulls sort last (`DESC NULLS LAST`; Prisma's `sort: Desc` is nulls first). Created by the
 * list_indexes migration; each model names its own beside its indexes in the schema.
 */
export const SQL_ONLY_INDEXES = [
  'customers_email_desc_live_idx',
  'jobs_scheduled_at_desc_live_idx',
  'jobs_completed_at_desc_live_idx',
  'invoices_issued_at_desc_live_idx',
  'invoices_due_date_desc_live_idx',
  'invoices_paid_at_desc_live_idx',
  'estimates_issued_at_desc_live_idx',
  'estimates_valid_until_desc_live_idx',
];

/** The script without its `DROP INDEX` steps of the SQL-only indexes (each a comment line and a statement). */
function withoutSqlOnlyIndexes(script: string): string {
  const dropped = new Set(SQL_ONLY_INDEXES.map((name) => `DROP INDEX "${name}";`));
  return script
    .split(/\n\s*\n/)
    .filter((step) => !dropped.has(step.replace(/^--.*\n/, '').trim()))
    .join('\n\n')
    .trim();
}

/**
 * `empty`: the PGlite to apply the migrations to, with pg_trgm, and left open (the tests
 * pass a copy of one initialized once: PGlite's initdb takes seconds); by default a new
 * in-memory one.
 */
export async function pendingMigrationSql(empty?: PGlite): Promise<string> {
  const datamodel = { path: SCHEMA_PATH, content: readFileSync(SCHEMA_PATH, 'utf8') };
  const db = empty ?? (await PGlite.create({ extensions: { pg_trgm } }));
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
    const script = withoutSqlOnlyIndexes(result.stdout?.trim() ?? '');
    return script === '' || script.startsWith('-- This is an empty migration') ? '' : script;
  } finally {
    if (!empty) await db.close();
  }
}

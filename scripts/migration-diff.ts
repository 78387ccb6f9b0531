// npm run db:diff -- <name>
// Writes prisma/migrations/<timestamp>_<name>/migration.sql: the SQL that takes a database
// with every existing migration applied to the state of prisma/schema.prisma. Works offline:
// the migrations are applied to a throwaway in-memory PGlite and Prisma's WebAssembly schema
// engine computes the difference from it.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { MIGRATIONS_DIR, migrate } from '../src/db/migrator.js';
import { pgliteSql } from '../src/db/sql.js';
import { loadSchemaEngine } from './schema-engine.js';

const name = process.argv[2];
if (!name || !/^[a-z0-9_]+$/.test(name)) {
  console.error('usage: npm run db:diff -- <name_in_snake_case>');
  process.exit(2);
}

const schemaPath = 'prisma/schema.prisma';
const datamodel = { path: schemaPath, content: readFileSync(schemaPath, 'utf8') };
const db = await PGlite.create({ extensions: { pg_trgm } });
await migrate(pgliteSql(db));
const engine = await loadSchemaEngine(new PrismaPGlite(db), datamodel);
const result = await engine.diff({
  from: { tag: 'schemaDatasource', files: [datamodel], configDir: process.cwd() },
  to: { tag: 'schemaDatamodel', files: [datamodel] },
  script: true,
  exitCode: null,
  filters: { externalTables: [], externalEnums: [] },
});
await db.close();

const script = (result as { stdout?: string }).stdout?.trim() ?? '';
if (script === '' || script.startsWith('-- This is an empty migration')) {
  console.log('The schema matches the migrations: nothing to write.');
} else {
  const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
  const dir = join(MIGRATIONS_DIR, `${stamp}_${name}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'migration.sql'), script + '\n');
  console.log(`Wrote ${join(dir, 'migration.sql')}; review it (add anything Prisma cannot express) before committing.`);
}

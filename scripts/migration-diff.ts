// npm run db:diff -- <name>
// Writes prisma/migrations/<timestamp>_<name>/migration.sql for the changes made to
// prisma/schema.prisma since the last migration. Review the file before committing it.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MIGRATIONS_DIR } from '../src/db/migrator.js';
import { pendingMigrationSql } from './schema-diff.js';

const name = process.argv[2];
if (!name || !/^[a-z0-9_]+$/.test(name)) {
  console.error('usage: npm run db:diff -- <name_in_snake_case>');
  process.exit(2);
}

const script = await pendingMigrationSql();
if (script === '') {
  console.log('The schema matches the migrations: nothing to write.');
} else {
  const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
  const dir = join(MIGRATIONS_DIR, `${stamp}_${name}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'migration.sql'), script + '\n');
  console.log(`Wrote ${join(dir, 'migration.sql')}; review it (add anything Prisma cannot express) before committing.`);
}

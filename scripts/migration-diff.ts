// npm run db:diff -- <name>
// Writes prisma/migrations/<timestamp>_<name>/migration.sql for the changes made to
// prisma/schema.prisma since the last migration. Review the file before committing it.
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MIGRATIONS_DIR } from '../src/db/migrator.js';
import { pendingMigrationSql } from './schema-diff.js';

const name = process.argv[2];
if (!name || !/^[a-z0-9_]+$/.test(name)) {
  console.error('usage: npm run db:diff -- <name_in_snake_case>');
  process.exit(2);
}

/** `20261127000000` -> `20261127000001`, as a UTC time one second later. */
function nextSecond(stamp: string): string {
  const [, y, mo, d, h, mi, se] = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(stamp)!;
  const next = new Date(Date.UTC(+y!, +mo! - 1, +d!, +h!, +mi!, +se! + 1));
  return next.toISOString().replace(/\D/g, '').slice(0, 14);
}

const script = await pendingMigrationSql();
if (script === '') {
  console.log('The schema matches the migrations: nothing to write.');
} else {
  // The clock's time, or one second after the last committed migration where that is later
  // (some are dated ahead): migrations apply in the order of their names.
  const now = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
  const last = readdirSync(MIGRATIONS_DIR).filter((entry) => /^\d{14}_/.test(entry)).sort().at(-1)?.slice(0, 14);
  const stamp = last && last >= now ? nextSecond(last) : now;
  const dir = join(MIGRATIONS_DIR, `${stamp}_${name}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'migration.sql'), script + '\n');
  console.log(`Wrote ${join(dir, 'migration.sql')}; review it (add anything Prisma cannot express) before committing.`);
}

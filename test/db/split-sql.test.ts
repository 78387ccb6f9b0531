import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS_DIR } from '../../src/db/migrator.js';
import { splitStatements } from '../../src/db/split-sql.js';
import { freshDatabase } from '../helpers/databases.js';

describe('splitting a migration into statements', () => {
  it('splits on semicolons outside quotes, dollar quotes and comments', () => {
    const script = `-- a comment; not a statement
CREATE TABLE "a;b" (note text DEFAULT 'it''s; fine');
/* block; comment */ CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1; RETURN NULL;
END $$;
DO $body$ BEGIN EXECUTE 'SELECT $1'; END $body$;
SELECT 1`;
    expect(splitStatements(script).map((s) => s.trim().split('\n').at(-1))).toEqual([
      `CREATE TABLE "a;b" (note text DEFAULT 'it''s; fine');`,
      'END $$;',
      `DO $body$ BEGIN EXECUTE 'SELECT $1'; END $body$;`,
      'SELECT 1',
    ]);
    expect(splitStatements('SELECT 1;\n-- trailing comment\n')).toEqual(['SELECT 1;']);
  });

  it('applies every committed migration one statement at a time on PostgreSQL, as the migrator does on Citus', async () => {
    // A wrong split (a function body cut at its inner semicolon) is a syntax error here.
    const db = await freshDatabase('postgres');
    const client = new pg.Client({ connectionString: db.env.DATABASE_URL });
    await client.connect();
    try {
      let applied = 0;
      for (const name of readdirSync(MIGRATIONS_DIR).filter((entry) => /^\d{14}_/.test(entry)).sort()) {
        await client.query('BEGIN');
        for (const statement of splitStatements(readFileSync(join(MIGRATIONS_DIR, name, 'migration.sql'), 'utf8'))) {
          await client.query(statement).catch((error: Error) => {
            throw new Error(`${name}: ${error.message}\n${statement.slice(0, 200)}`);
          });
          applied++;
        }
        await client.query('COMMIT');
      }
      expect(applied).toBeGreaterThan(100);
      // The last migration's function is whole: it installs a table's triggers.
      const { rows } = await client.query("SELECT prosrc FROM pg_proc WHERE proname = 'install_resource_triggers'");
      expect(rows[0].prosrc).toContain('CREATE CONSTRAINT TRIGGER');
    } finally {
      await client.end();
      await db.drop();
    }
  });

  it('keeps every committed migration whole when joined again', () => {
    for (const name of readdirSync(MIGRATIONS_DIR).filter((entry) => /^\d{14}_/.test(entry))) {
      const script = readFileSync(join(MIGRATIONS_DIR, name, 'migration.sql'), 'utf8');
      const statements = splitStatements(script);
      expect(statements.length, name).toBeGreaterThan(0);
      // Nothing is lost but whitespace and comment-only tails.
      expect(statements.join('').replace(/\s+/g, ''), name).toBe(script.replace(/--[^\n]*\n?\s*$/, '').replace(/\s+/g, ''));
      for (const statement of statements.slice(0, -1)) expect(statement.trimEnd().endsWith(';'), `${name}: ${statement.slice(0, 80)}`).toBe(true);
    }
  });
});

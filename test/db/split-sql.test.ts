import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS_DIR } from '../../src/db/migrator.js';
import { splitStatements } from '../../src/db/split-sql.js';

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

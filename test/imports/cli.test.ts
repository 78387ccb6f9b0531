// `npm run cli -- imports run`: a CSV file imported from the command line, as an operator runs
// it, into a service's database: the same checks and counts as POST /v1/imports, the import
// printed as JSON, exit code 1 when a row was refused and 2 for a usage error. The first run is
// a process, as an operator's; the others run the same command in this process.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeKeys } from '../helpers/api.js';
import { DB_KINDS, migratedDatabase, type TestDatabase } from '../helpers/databases.js';
import { runCliHere } from '../helpers/cli.js';
import { runNpm } from '../helpers/processes.js';

describe.each(DB_KINDS)('cli imports run on %s', (kind) => {
  let db: TestDatabase;
  const dir = mkdtempSync(join(tmpdir(), 'crm-import-'));
  const file = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };

  beforeAll(async () => {
    db = await migratedDatabase(kind);
    await makeKeys(db, { acme: { org: 'Acme' } });
  });
  afterAll(async () => {
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('imports a file to its end and prints the import; refused rows make the exit code 1', async () => {
    const csv = file('customers.csv', '\uFEFFname,email,external_id\nAda,ada@cli.example,cli-1\nBad,nope,\n');
    const first = await runNpm('cli', ['imports', 'run', '--org', 'Acme', '--resource', 'customers', csv], db.env);
    expect(first.code, first.stderr).toBe(1);
    const printed = JSON.parse(first.stdout);
    expect(printed).toMatchObject({ status: 'completed', total: 2, created: 1, updated: 0, failed: 1 });
    expect(printed.errors).toEqual([{ row: 2, param: 'email', message: expect.any(String) }]);

    const upsert = file('upsert.csv', 'external_id,name\ncli-1,Ada Lovelace\n');
    const second = await runCliHere(['imports', 'run', '--org', 'Acme', '--resource', 'customers', '--mode', 'upsert', upsert], db.env);
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ status: 'completed', total: 1, created: 0, updated: 1, failed: 0, errors: [] });
  });

  it('refuses a file it cannot run, and usage errors', async () => {
    const unknown = await runCliHere(['imports', 'run', '--org', 'Acme', '--resource', 'customers', file('bad.csv', 'name,emial\nA,a\n')], db.env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('emial is not a column');
    const usage = await runCliHere(['imports', 'run', '--org', 'Acme', file('ok.csv', 'name\nA\n')], db.env);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--resource must be one of customers');
  });
});

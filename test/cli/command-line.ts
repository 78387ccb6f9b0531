import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allScopes } from '../../src/auth/scopes.js';
import '../../src/schema/index.js';
import { openDatabase, type Database } from '../../src/db/connection.js';
import { seedDemo } from '../../src/db/demo-data.js';
import { makeKeys } from '../helpers/api.js';
import { migratedDatabase, type DbKind, type TestDatabase } from '../helpers/databases.js';
import { runCliHere } from '../helpers/cli.js';
import { lastLine, runNpm } from '../helpers/processes.js';

const KEY = /^svc_live_[0-9A-Za-z]{32}$/;

/**
 * The command line's tests on one kind of database: each kind is a test file of its own
 * (cli-pglite, cli-postgres), so the two run side by side. Most runs are in this process
 * (runCliHere: the same commands on a recording terminal); those that test what the process
 * does (the key alone on standard output, exit codes, a password on standard input, npm
 * run seed) are processes, as a user runs them.
 */
export function commandLineSuite(kind: DbKind): void {
  describe(`command line on ${kind}`, () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await migratedDatabase(kind);
    });
    afterAll(() => db.drop());

    /** Runs `use` on the test database, opened in this process and closed again (the CLI's processes open it too). */
    async function opened<T>(use: (open: Database) => Promise<T>): Promise<T> {
      const open = await openDatabase({ databaseUrl: db.env.DATABASE_URL, dataDir: db.env.DATA_DIR ?? '' });
      try {
        return await use(open);
      } finally {
        await open.close();
      }
    }
    const query = <T>(text: string, params: unknown[] = []) => opened((open) => open.sql.query<T>(text, params));

    const cli = (...args: string[]) => runCliHere(args, db.env);

    it('keys create prints the key alone on the last line, and the database holds only its hash', async () => {
      const result = await runNpm('cli', ['keys', 'create', '--org', 'Acme', '--scopes', 'all', '--name', 'Zapier'], db.env);
      expect(result.code).toBe(0);
      const key = lastLine(result.stdout);
      expect(key).toMatch(KEY);
      expect(result.stderr).not.toContain(key);

      const rows = await query<Record<string, unknown>>(
        `SELECT k.*, o.name AS org FROM api_keys k JOIN organizations o ON o.id = k.organization_id WHERE k.name = 'Zapier'`,
      );
      expect(rows).toHaveLength(1);
      const row = rows[0]!;
      expect(row.org).toBe('Acme');
      expect(row.hash).toBe(createHash('sha256').update(key).digest('hex'));
      expect(row.prefix).toBe(key.slice(0, 17));
      expect(row.scopes).toEqual(allScopes());
      expect(JSON.stringify(row)).not.toContain(key.slice(17));
    });

    it('keys create reuses the organization and takes a scope list', async () => {
      const result = await cli('keys', 'create', '--org', 'Acme', '--scopes', 'customers:read,jobs:read');
      expect(result.code).toBe(0);
      const rows = await query<{ scopes: string[]; orgs: number }>(
        `SELECT k.scopes, (SELECT count(*)::int FROM organizations WHERE name = 'Acme') AS orgs FROM api_keys k WHERE k.prefix = $1`,
        [lastLine(result.stdout).slice(0, 17)],
      );
      expect(rows[0]).toEqual({ scopes: ['customers:read', 'jobs:read'], orgs: 1 });
    });

    it('keys create --mode test makes a svc_test_ key in the organization\'s test twin, made once', async () => {
      const first = await cli('keys', 'create', '--org', 'Acme', '--mode', 'test');
      const second = await cli('keys', 'create', '--org', 'Acme', '--mode', 'test', '--name', 'Second');
      expect([first.code, second.code]).toEqual([0, 0]);
      expect(lastLine(first.stdout)).toMatch(/^svc_test_[0-9A-Za-z]{32}$/);
      const rows = await query<{ mode: string; live: string }>(
        `SELECT o.mode, l.name AS live FROM api_keys k JOIN organizations o ON o.id = k.organization_id JOIN organizations l ON l.id = o.live_id WHERE k.prefix IN ($1, $2)`,
        [lastLine(first.stdout).slice(0, 17), lastLine(second.stdout).slice(0, 17)],
      );
      expect(rows).toEqual([{ mode: 'test', live: 'Acme' }, { mode: 'test', live: 'Acme' }]);
      expect((await query<{ n: number }>(`SELECT count(*)::int AS n FROM organizations WHERE mode = 'test'`))[0]!.n).toBe(1);
    });

    it.each([
      [['keys', 'create', '--org', 'Acme', '--mode', 'staging'], /--mode must be live or test/],
      [['keys', 'create', '--scopes', 'all'], /--org is required/],
      [['keys', 'create', '--org', 'Acme', '--scopes', 'customers:delete'], /unknown scope "customers:delete"/],
      [['keys', 'frobnicate'], /usage:/],
    ])('refuses bad usage %j with exit code 2', async (args, message) => {
      const result = await cli(...args);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stdout).toBe('');
    });

    it('a process ends with the exit code of its command: 2 for bad usage, 1 for a failure', async () => {
      const [usage, failure] = await Promise.all([runNpm('cli', ['keys', 'frobnicate'], db.env), runNpm('cli', ['keys', 'revoke', 'svc_live_nothing'], db.env)]);
      expect([usage.code, failure.code]).toEqual([2, 1]);
      expect(usage.stderr).toMatch(/usage:/);
      expect(failure.stderr).toContain('error: no such key');
      expect(usage.stdout + failure.stdout).toBe('');
    });

    it('keys list shows name, prefix, scopes, status and dates, never the key', async () => {
      // Made directly (keys create is tested above).
      const { Reporting: key } = await makeKeys(db, { Reporting: { org: 'Listers', scopes: 'invoices:read' } });
      const result = await cli('keys', 'list', '--org', 'Listers');
      expect(result.code).toBe(0);
      const [id, prefix, name, status, scopes, createdAt, lastUsed, expires] = result.stdout.trim().split('\t');
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      expect({ prefix, name, status, scopes, lastUsed, expires }).toEqual({
        prefix: key!.slice(0, 17),
        name: 'Reporting',
        status: 'active',
        scopes: 'invoices:read',
        lastUsed: '-',
        expires: '-',
      });
      expect(new Date(createdAt!).getTime()).toBeGreaterThan(Date.now() - 60_000);
      expect(result.stdout).not.toContain(key!);
    });

    it.each(['key', 'prefix', 'id'] as const)('keys revoke accepts the whole key, its display prefix or its id (%s)', async (form) => {
      const org = `Revokers-${form}`;
      // Made directly (keys create is tested above).
      const { [org]: key } = await makeKeys(db, { [org]: { org } });
      const id = form === 'id' ? (await cli('keys', 'list', '--org', org)).stdout.trim().split('\t')[0] : undefined;
      const ref = form === 'key' ? key! : form === 'prefix' ? key!.slice(0, 17) : id!;
      const result = await cli('keys', 'revoke', ref);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(`Revoked ${key!.slice(0, 17)}`);
      const listed = await cli('keys', 'list', '--org', org);
      expect(listed.stdout.split('\t')[3]).toBe('revoked');
    });

    it('keys revoke of an unknown key fails', async () => {
      const result = await cli('keys', 'revoke', 'svc_live_nothing');
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('no such key');
    });

    it('users create reads the password from standard input and stores only a scrypt hash', async () => {
      const password = 'correct horse battery staple';
      const result = await runNpm('cli', ['users', 'create', '--org', 'Acme', '--email', 'Owner@Example.com', '--password-stdin'], db.env, `${password}\n`);
      expect(result.code).toBe(0);
      const [user] = await query<{ email: string; password_hash: string }>(`SELECT email, password_hash FROM users WHERE email = 'owner@example.com'`);
      expect(user!.password_hash).toMatch(/^scrypt\$/);
      expect(user!.password_hash).not.toContain(password);
    });

    it('npm run seed fills every resource of a demo organization and prints a working key', async () => {
      const result = await runNpm('seed', [], db.env);
      expect(result.code).toBe(0);
      expect(lastLine(result.stdout)).toMatch(KEY);
      const [counts] = await query<Record<string, number>>(`
        SELECT (SELECT count(*)::int FROM customers) AS customers, (SELECT count(*)::int FROM jobs) AS jobs,
               (SELECT count(*)::int FROM emails) AS emails, (SELECT count(*)::int FROM invoices) AS invoices,
               (SELECT count(*)::int FROM invoice_line_items) AS invoice_lines, (SELECT count(*)::int FROM estimates) AS estimates,
               (SELECT count(*)::int FROM proposals) AS proposals`);
      for (const [table, count] of Object.entries(counts!)) expect(count, table).toBeGreaterThan(5);
      // Every seeded date lies in the past.
      const [latest] = await query<{ future: number }>(`
        SELECT count(*)::int AS future FROM (
          SELECT created_at AS at FROM customers UNION ALL SELECT scheduled_at FROM jobs UNION ALL SELECT completed_at FROM jobs
          UNION ALL SELECT sent_at FROM emails UNION ALL SELECT created_at FROM invoices UNION ALL SELECT paid_at FROM invoices
          UNION ALL SELECT due_date FROM invoices UNION ALL SELECT issued_at FROM estimates UNION ALL SELECT valid_until FROM estimates
          UNION ALL SELECT created_at FROM proposals) dates WHERE at > now()`);
      expect(latest!.future).toBe(0);
      const numbers = await query<{ number: string }>('SELECT number FROM invoices ORDER BY number');
      expect(numbers.map((n) => n.number)).toEqual(numbers.map((_, i) => `INV-${String(i + 1).padStart(6, '0')}`));

      // Run again (in this process: what the process does is tested above), it adds a key only.
      expect(await opened((open) => seedDemo(open.prisma))).toMatchObject({ seeded: false, key: expect.stringMatching(KEY) });
      const [after] = await query<{ customers: number }>('SELECT count(*)::int AS customers FROM customers');
      expect(after!.customers).toBe(counts!.customers);
    });
  });
}

// The README's first-run path, as a newcomer follows it: `npm start` on a fresh clone's
// embedded data folder, then the printed key, curl line and GraphiQL address just work.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { markDemoOwed } from '../../src/db/demo-data.js';
import { call } from '../helpers/api.js';
import { freshDatabase, migratedDatabase, unmigratedDatabase } from '../helpers/databases.js';
import { runCliHere } from '../helpers/cli.js';
import { lastLine, runNpm, startNpm, startServer } from '../helpers/processes.js';

describe('first run on the embedded default', () => {
  it('npm start on a fresh folder creates the demo and prints a key that works; the CLI says what to do meanwhile', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'crm-first-run-'));
    // As a newcomer has it: no DATABASE_URL, no SEED_ON_FIRST_START.
    // A first start makes the data folder, migrates and writes the demo before it listens:
    // on PGlite, beside the rest of the suite on two cores, that once took over 30 s.
    const server = await startNpm('start', { DATA_DIR: dataDir, SEED_ON_FIRST_START: '' }, 90_000);
    try {
      await expect.poll(() => server.output(), { timeout: 10_000 }).toContain('GraphiQL:');
      const key = /^\s+(svc_live_\w+)$/m.exec(server.output())![1]!;
      const curl = /Try it:\s+curl -H "Authorization: Bearer (\S+)" (\S+)$/m.exec(server.output())!;
      expect(curl[1]).toBe(key);
      const port = new URL(server.url).port;
      const customers = await call(curl[2]!.replace('localhost', '127.0.0.1').replace(/:\d+\//, `:${port}/`), { key });
      expect(customers.status).toBe(200);
      expect(customers.body.pagination.total).toBeGreaterThan(5);
      const graphiql = await fetch(`${server.url}/graphql`, { headers: { accept: 'text/html' } });
      expect(graphiql.status).toBe(200);
      expect(await graphiql.text()).toContain('GraphiQL');
      // The key is never in a JSON log line.
      expect(server.output().split('\n').filter((line) => line.startsWith('{') && line.includes(key))).toEqual([]);

      // The seed in a second terminal meets a message that says what to do instead.
      const seed = await runNpm('seed', [], { DATA_DIR: dataDir });
      expect(seed.code).toBe(1);
      expect(seed.stderr).toMatch(/in use by another process.*printed an API key/s);
    } finally {
      const code = await server.stop();
      expect(code, server.output()).toBe(0);
    }

    // A second start of the same folder prints no new key (looked for once it has stopped: the
    // welcome would follow "listening"). The compiled service: `npm start` itself was tried above.
    const again = await startServer({ DATA_DIR: dataDir, SEED_ON_FIRST_START: '' });
    try {
      expect(await again.stop()).toBe(0);
      expect(again.output()).toContain('"msg":"stopped"');
      expect(again.output()).not.toContain('First start');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 150_000);

  it('never seeds PostgreSQL, and SEED_ON_FIRST_START=false turns it off; a second start reuses the data: no re-migration, nothing lost', async () => {
    // Nothing migrated yet, as a first start finds it: the demo hangs on the first migration
    // applied, not on PGlite's initdb, which the test above runs.
    const embedded = await unmigratedDatabase('pglite');
    const postgres = await freshDatabase('postgres');
    try {
      // The compiled service, as the Docker image runs it (the test above starts `npm start`):
      // an `npm start` took 9 CPU-seconds on a 2-core machine (npm, tsx's loader, WebAssembly's
      // optimizing tier), the compiled service 3.4.
      const servers = await Promise.all([
        startServer({ ...embedded.env, SEED_ON_FIRST_START: 'false' }),
        startServer({ ...postgres.env, SEED_ON_FIRST_START: '' }),
      ]);
      for (const server of servers) {
        expect(server.output()).not.toContain('First start');
        expect(server.output()).toMatch(/"migrations_applied":\["\d+_init"/);
        expect(await server.stop()).toBe(0);
      }
      // Their second start (here, not in lifecycle.test.ts: migrating an empty database, the
      // embedded one above all, is seconds of CPU, paid once per kind).
      for (const db of [embedded, postgres]) {
        const created = await runCliHere(['keys', 'create', '--org', 'Acme', '--name', 'kept'], db.env);
        expect(created.code).toBe(0);
        const second = await startServer(db.env);
        expect(second.output()).toContain('"migrations_applied":[]');
        expect(await second.stop()).toBe(0);
        const listed = await runCliHere(['keys', 'list', '--org', 'Acme'], db.env);
        expect(listed.stdout).toContain(lastLine(created.stdout).slice(0, 17));
      }
    } finally {
      await postgres.drop();
      await embedded.drop();
    }
  }, 90_000);

  it('a first start stopped after its migrations, before its demo was written, is finished by the next start: the whole demo, and its key', async () => {
    // What such a start leaves (the seed writes its records in one transaction: test/db/demo-data.test.ts): every
    // migration, no demo, and the folder's mark that it is owed one, made before anything else.
    const embedded = await migratedDatabase('pglite');
    markDemoOwed(embedded.env.DATA_DIR!);
    try {
      const server = await startServer({ ...embedded.env, SEED_ON_FIRST_START: '' });
      try {
        await expect.poll(() => server.output(), { timeout: 10_000 }).toContain('GraphiQL:');
        const key = /^\s+(svc_live_\w+)$/m.exec(server.output())![1]!;
        const customers = await call(`${server.url}/v1/customers?limit=1`, { key });
        expect(customers.status).toBe(200);
        expect(customers.body.pagination.total).toBe(40);
      } finally {
        expect(await server.stop(), server.output()).toBe(0);
      }
      // Finished once: the start after it prints no key (the welcome follows "listening").
      const again = await startServer({ ...embedded.env, SEED_ON_FIRST_START: '' });
      expect(await again.stop()).toBe(0);
      expect(again.output()).toContain('"msg":"stopped"');
      expect(again.output()).not.toContain('First start');
    } finally {
      await embedded.drop();
    }
  });
});

// What a newcomer meets in the first minutes: a start that says which migration it is
// applying, no WEB_CONCURRENCY line nobody asked for, one Vary: Origin on CORS answers, and a
// favicon instead of a 404 on every page.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/auth/api-keys.js';
import { allScopes } from '../../src/auth/scopes.js';
import '../../src/schema/index.js';
import { openDatabase, type Database } from '../../src/db/connection.js';
import { migrate, readMigrations } from '../../src/db/migrator.js';
import { createLogger } from '../../src/logger.js';
import { createRateLimiter } from '../../src/rate-limit.js';
import { createApp } from '../../src/server.js';
import { unmigratedDatabase, type TestDatabase } from '../helpers/databases.js';
import { startServer } from '../helpers/processes.js';

const ORIGIN = 'https://app.example.com';

describe('in one process', () => {
  let test: TestDatabase;
  let db: Database;
  let app: ReturnType<typeof createApp>;
  let key: string;
  const lines: Array<{ msg: string; migration?: string; number?: number; of?: number }> = [];

  beforeAll(async () => {
    // Initialized, nothing migrated: PGlite's initdb on a first start is test/server/first-run's.
    test = await unmigratedDatabase('pglite');
    db = await openDatabase({ dataDir: test.env.DATA_DIR! });
    await migrate(db.sql, undefined, createLogger('info', (line) => lines.push(JSON.parse(line))));
    const log = createLogger('silent');
    app = createApp({ db, log, rateLimiter: createRateLimiter({ max: 1_000_000, windowSeconds: 60, log }) });
    const organization = await db.prisma.organization.create({ data: { name: 'Acme' } });
    key = (await createApiKey(db.prisma, { organizationId: organization.id, name: 'test', scopes: allScopes() })).key;
  });
  afterAll(async () => {
    await db?.close();
    await test?.drop();
  });

  it('logs a line before each migration it applies, and none when up to date', async () => {
    const names = readMigrations().map((migration) => migration.name);
    expect(lines).toEqual(names.map((name, i) => expect.objectContaining({ msg: `applying migration ${name}`, migration: name, number: i + 1, of: names.length })));
    lines.length = 0;
    expect(await migrate(db.sql, undefined, createLogger('info', (line) => lines.push(JSON.parse(line))))).toEqual([]);
    expect(lines).toEqual([]);
  });

  it('names Origin once in Vary, on a preflight and on an answer', async () => {
    const preflight = await app.fetch('http://crm.test/v1/events', { method: 'OPTIONS', headers: { origin: ORIGIN, 'access-control-request-method': 'POST' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('vary')).toBe('Origin');
    for (const path of ['/v1/events', '/graphql?query=%7B__typename%7D']) {
      const answer = await app.fetch(`http://crm.test${path}`, { headers: { origin: ORIGIN, authorization: `Bearer ${key}` } });
      expect(answer.status, path).toBe(200);
      const vary = answer.headers.get('vary')!.split(',').map((name) => name.trim().toLowerCase());
      expect(vary.filter((name) => name === 'origin'), path).toEqual(['origin']);
    }
  });

  it('answers /favicon.ico with an icon, to GET and HEAD', async () => {
    const icon = await app.fetch('http://crm.test/favicon.ico');
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toBe('image/x-icon');
    const bytes = Buffer.from(await icon.arrayBuffer());
    // An ICO header (reserved 0, type 1, one image) and a PNG image inside.
    expect([...bytes.subarray(0, 6)]).toEqual([0, 0, 1, 0, 1, 0]);
    expect(bytes.subarray(22, 26).toString('latin1')).toBe('\x89PNG');
    expect(Number(icon.headers.get('content-length'))).toBe(bytes.length);
    const head = await app.fetch('http://crm.test/favicon.ico', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect((await head.arrayBuffer()).byteLength).toBe(0);
  });
});

describe('npm start on a fresh embedded folder, WEB_CONCURRENCY unset', () => {
  it('says which migration it is applying, and nothing about WEB_CONCURRENCY', async () => {
    // A folder with nothing migrated (PGlite's initdb on a first start is test/server/first-run's).
    const test = await unmigratedDatabase('pglite');
    // The helper sets WEB_CONCURRENCY=1 for every server; unset here, as a user's shell has it.
    // Its default is the number of cores: on one core the old line never showed either.
    const server = await startServer({ ...test.env, WEB_CONCURRENCY: undefined as unknown as string }, undefined, 90_000);
    try {
      const output = server.output();
      const names = readMigrations().map((migration) => migration.name);
      const applying = [...output.matchAll(/"msg":"applying migration ([^"]+)"/g)].map((match) => match[1]);
      expect(applying).toEqual(names);
      expect(output.indexOf('applying migration')).toBeLessThan(output.indexOf('"msg":"database ready"'));
      expect(output).not.toContain('WEB_CONCURRENCY');
      expect(await server.stop()).toBe(0);
    } finally {
      await server.stop();
      await test.drop();
    }
  }, 120_000);
});

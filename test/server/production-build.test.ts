// The compiled server (npm run build, then npm run start:production's command), as the
// Dockerfile and the benchmark run it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, makeKeys } from '../helpers/api.js';
import { migratedDatabase, type TestDatabase } from '../helpers/databases.js';
import { runNpm, startNpm, type RunningServer } from '../helpers/processes.js';

describe('the production build', () => {
  let db: TestDatabase;
  let server: RunningServer;
  let key: string;

  beforeAll(async () => {
    const build = await runNpm('build', [], {});
    expect(build.code, build.stdout + build.stderr).toBe(0);
    // On PostgreSQL, as production runs it (README): the embedded database's compiled server
    // is what the other process tests start (test/helpers/service-build.ts), and each start
    // of it here took 4-5 CPU-s against 2.
    db = await migratedDatabase('postgres');
    ({ key } = (await makeKeys(db, { key: { org: 'Acme' } })) as { key: string });
    server = await startNpm('start:production', { ...db.env, NODE_ENV: 'production' });
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await db?.drop();
  });

  it('serves REST and GraphQL, with its migrations, and stops cleanly', async () => {
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    const created = await call(`${server.url}/v1/customers`, { method: 'POST', key, json: { name: 'Ada Lovelace' } });
    expect(created.status).toBe(201);
    const listed = await call(`${server.url}/v1/customers`, { key });
    expect(listed.body.pagination.total).toBe(1);
    const graphql = await call(`${server.url}/graphql`, { method: 'POST', key, json: { query: '{ customers { data { name } } }' } });
    expect(graphql.body).toEqual({ data: { customers: { data: [{ name: 'Ada Lovelace' }] } } });
  });

  it.each(['SIGTERM', 'SIGINT'] as const)('stops gracefully when npm gets %s, leaving no server behind', async (signal) => {
    const running = signal === 'SIGTERM' ? server : await startNpm('start:production', { ...db.env, NODE_ENV: 'production' });
    expect(await running.stop(signal)).toBe(0);
    expect(running.output()).toContain('"msg":"stopped"');
    // An orphaned server would still answer on its port.
    await expect(fetch(`${running.url}/healthz`)).rejects.toThrow();
  });
});

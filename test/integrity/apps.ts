// In-process service instances on one database (PostgreSQL: any number, each with its own
// pool, as separate servers would be; PGlite: one), and a REST client that calls them as an
// integration would.
import { createApiKey } from '../../src/auth/api-keys.js';
import { allScopes } from '../../src/auth/scopes.js';
import '../../src/schema/index.js';
import { openDatabase, type Database } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrator.js';
import { createLogger } from '../../src/logger.js';
import { createRateLimiter } from '../../src/rate-limit.js';
import { createApp } from '../../src/server.js';
import { migratedDatabase, type DbKind, type TestDatabase } from '../helpers/databases.js';

export type App = ReturnType<typeof createApp>;

export interface Answer {
  status: number;
  body: any;
}

/** `rest(app, key).post('/jobs', {...})`: a call to /v1, its status and JSON body. */
export function rest(app: App, key: string) {
  async function call(method: string, path: string, body?: unknown): Promise<Answer> {
    const response = await app.fetch(
      new Request(`http://test/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    );
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null };
  }
  return {
    get: (path: string) => call('GET', path),
    post: (path: string, body?: unknown) => call('POST', path, body),
    patch: (path: string, body: unknown) => call('PATCH', path, body),
    delete: (path: string) => call('DELETE', path),
  };
}

export type Client = ReturnType<typeof rest>;

export interface Instances {
  /** One client per instance, all with the same key. */
  clients: Client[];
  /** The first instance's database, for looking at what was stored. */
  db: Database;
  close(): Promise<void>;
}

/** `count` instances (1 on PGlite) on a fresh database with one organization and a key of every scope. */
export async function startInstances(kind: DbKind, count: number): Promise<Instances> {
  const test: TestDatabase = await migratedDatabase(kind);
  const dbs: Database[] = [];
  try {
    for (let i = 0; i < (kind === 'pglite' ? 1 : count); i++) {
      dbs.push(await openDatabase({ databaseUrl: test.env.DATABASE_URL, dataDir: test.env.DATA_DIR ?? '' }));
    }
    await migrate(dbs[0]!.sql);
    const organization = await dbs[0]!.prisma.organization.create({ data: { name: 'Acme' } });
    const { key } = await createApiKey(dbs[0]!.prisma, { organizationId: organization.id, name: 'test', scopes: allScopes() });
    const log = createLogger('silent');
    const clients = dbs.map((db) => rest(createApp({ db, log, rateLimiter: createRateLimiter({ max: 1_000_000, windowSeconds: 60, log }) }), key));
    return {
      clients,
      db: dbs[0]!,
      async close() {
        for (const db of dbs) await db.close();
        await test.drop();
      },
    };
  } catch (error) {
    for (const db of dbs) await db.close();
    await test.drop();
    throw error;
  }
}

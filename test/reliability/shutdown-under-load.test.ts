import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { makeKeys } from '../helpers/api.js';
import { migratedDatabase } from '../helpers/databases.js';
import { startServer } from '../helpers/processes.js';
import { stopUnderLoad } from '../helpers/shutdown-load.js';

describe('graceful shutdown under load', () => {
  it('SIGTERM while creates are in flight: every 201 has its row, and nothing else was written', async () => {
    const db = await migratedDatabase('postgres');
    const { key } = await makeKeys(db, { key: { org: 'Acme' } });
    const server = await startServer({ ...db.env, RATE_LIMIT_MAX: '10000' });
    try {
      const { created, refused, sent, exitCode } = await stopUnderLoad(server, key!, 20);

      const client = new pg.Client({ connectionString: db.env.DATABASE_URL });
      await client.connect();
      const { rows } = await client.query<{ count: number }>('SELECT count(*)::int AS count FROM customers');
      await client.end();
      expect(exitCode).toBe(0);
      expect(created).toBeGreaterThanOrEqual(20);
      expect(rows[0]!.count).toBe(created);
      expect(created + refused).toBe(sent);
    } finally {
      await server.stop();
      await db.drop();
    }
  });
});

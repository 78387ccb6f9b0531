import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { makeKeys } from '../helpers/api.js';
import { freshDatabase } from '../helpers/databases.js';
import { startServer } from '../helpers/processes.js';

describe('graceful shutdown under load', () => {
  it('SIGTERM while creates are in flight: every 201 has its row, and nothing else was written', async () => {
    const db = await freshDatabase('postgres');
    const { key } = await makeKeys(db, { key: { org: 'Acme' } });
    const server = await startServer({ ...db.env, RATE_LIMIT_MAX: '10000' });
    try {
      let created = 0;
      let refused = 0;
      let sent = 0;
      let loaded: () => void;
      const underLoad = new Promise<void>((resolve) => (loaded = resolve));
      const createOne = async (i: number) => {
        sent++;
        try {
          const response = await fetch(`${server.url}/v1/customers`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ name: `Load ${i}` }),
          });
          if (response.status === 201) {
            if (++created === 20) loaded();
          } else {
            expect(response.status).toBe(503); // refused while shutting down, before any write
            refused++;
          }
          await response.arrayBuffer();
        } catch {
          refused++; // the connection was refused or closed before an answer
        }
      };
      // 16 clients creating in a loop; SIGTERM in the middle of it, once 20 creates are
      // acknowledged (a fixed delay saw only a few on a busy machine).
      let stop = false;
      const workers = Array.from({ length: 16 }, async (_, w) => {
        for (let i = 0; !stop && i < 1000; i++) await createOne(w * 1000 + i);
      });
      await underLoad;
      server.process.kill('SIGTERM');
      const exitCode = await server.exited;
      stop = true;
      await Promise.all(workers);

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

import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connection.js';
import { DB_KINDS, freshDatabase } from '../helpers/databases.js';

describe.each(DB_KINDS)('planner settings on %s', (kind) => {
  it('prices random page reads for SSDs and cached data, so searches use the trigram indexes', async () => {
    const test = await freshDatabase(kind);
    const db = await openDatabase({ databaseUrl: test.env.DATABASE_URL, dataDir: test.env.DATA_DIR ?? '' });
    try {
      // Every pooled session, not just the first.
      const settings = await Promise.all(Array.from({ length: 4 }, () => db.sql.query<{ random_page_cost: string }>('SHOW random_page_cost')));
      expect(settings.map(([row]) => row!.random_page_cost)).toEqual(['1.1', '1.1', '1.1', '1.1']);
    } finally {
      await db.close();
      await test.drop();
    }
  });
});

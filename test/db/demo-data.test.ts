// The demo seed (npm run seed, and a fresh embedded folder's first start) writes its records
// in one transaction, so a seed stopped half-way leaves none of them, and the next run writes
// them whole (test/server/first-run.test.ts: the next start writes a demo still owed).
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connection.js';
import { seedDemo } from '../../src/db/demo-data.js';
import { migratedDatabase } from '../helpers/databases.js';

describe('the demo seed', () => {
  it('writes its records in one transaction: a seed that fails half-way leaves no record, event or key, and the next one writes it whole', async () => {
    const test = await migratedDatabase('pglite');
    const db = await openDatabase({ databaseUrl: undefined, dataDir: test.env.DATA_DIR! });
    const count = async (table: string) => (await db.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))[0]!.n;
    try {
      // The first proposal comes after the first customer's job, e-mails, estimate and invoice.
      await db.sql.query(`CREATE FUNCTION refuse_proposal() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'no proposals today'; END $$`);
      await db.sql.query('CREATE TRIGGER refuse_proposal BEFORE INSERT ON proposals FOR EACH ROW EXECUTE FUNCTION refuse_proposal()');
      await expect(seedDemo(db.prisma)).rejects.toThrow(/no proposals today/);
      for (const table of ['customers', 'jobs', 'emails', 'invoices', 'estimates', 'events', 'api_keys']) expect(await count(table), table).toBe(0);
      // At most the organization, empty: the next run fills it rather than making another.
      expect(await count('organizations')).toBe(1);

      await db.sql.query('DROP TRIGGER refuse_proposal ON proposals');
      const seeded = await seedDemo(db.prisma);
      expect(seeded).toMatchObject({ organization: 'Demo Home Services', seeded: true });
      expect(await count('customers')).toBe(40);
      expect(await count('proposals')).toBe(10);
      expect(await count('api_keys')).toBe(1);
      expect(await count('organizations')).toBe(1);
    } finally {
      await db.close();
      await test.drop();
    }
  });
});

// The ids a plain create's INSERT gives its rows (db/insert-rows.ts): version 7 UUIDs that
// grow, as Prisma's `uuid(7)` default makes them, so a batch's records, which share their
// creation time, keep their order in a list; and the INSERT itself, on both databases.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/connection.js';
import { insertCommitted, insertRows, timeOrderedIds } from '../../src/db/insert-rows.js';
import { DB_KINDS, migratedDatabase, type TestDatabase } from '../helpers/databases.js';

describe('timeOrderedIds', () => {
  it('is an RFC 9562 version 7 UUID carrying the time in milliseconds', () => {
    const at = Date.UTC(2026, 10, 27, 12, 0, 0, 123);
    const id = timeOrderedIds()(at);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(at);
  });

  it('grows within one millisecond (a batch shares its creation time), and past the 4,096 a millisecond holds', () => {
    const next = timeOrderedIds();
    const at = Date.now();
    const ids = Array.from({ length: 5000 }, () => next(at));
    expect(new Set(ids).size).toBe(5000);
    expect([...ids].sort()).toEqual(ids);
    // A clock that steps back does not make an id sort before the last one.
    expect(next(at - 10_000) > ids.at(-1)!).toBe(true);
  });
});

describe.each(DB_KINDS)('insertRows on %s', (kind) => {
  let test: TestDatabase;
  let db: Database;
  let organizationId: string;

  beforeAll(async () => {
    test = await migratedDatabase(kind);
    db = await openDatabase({ databaseUrl: test.env.DATABASE_URL ?? '', dataDir: test.env.DATA_DIR ?? '' });
    organizationId = (await db.prisma.organization.create({ data: { name: 'Rows' } })).id;
  });
  afterAll(async () => {
    await db?.close();
    await test?.drop();
  });

  it('answers the records in the order given, by field name, with what each row leaves out at its default', async () => {
    const rows = [
      { organizationId, name: 'First', metadata: { source: 'crm' } },
      { organizationId, name: 'Second', email: 'second@example.com' },
      { organizationId, name: 'Third', email: null, externalId: 'third' },
    ];
    const records = await db.prisma.$transaction((tx) => insertRows(tx, 'Customer', 'customers', rows));
    expect(records.map((r) => [r.name, r.email ?? null, r.metadata, r.externalId ?? null, r.version, r.deletedAt])).toEqual([
      ['First', null, { source: 'crm' }, null, 1, null],
      ['Second', 'second@example.com', {}, null, 1, null],
      ['Third', null, {}, 'third', 1, null],
    ]);
    for (const record of records) {
      expect(record.createdAt).toBeInstanceOf(Date);
      // One instant for both, as Prisma's own create sets them.
      expect(record.updatedAt).toEqual(record.createdAt);
      expect(typeof record.changeSeq).toBe('bigint');
    }
    // Prisma reads them back as it wrote them.
    const read = await db.prisma.customer.findMany({ where: { organizationId }, orderBy: { changeSeq: 'asc' } });
    expect(read.map((r) => ({ ...r }))).toEqual(records);
  });
  it('writes every value as Prisma would: text an array literal would misread, JSON, enumerations, times, integers and nulls', async () => {
    // Every value arrives as itself, whatever it holds.
    const awkward = ['NULL', 'a,b', '{braces}', 'quote " and \\ backslash', "it's", ' padded ', 'ünïcødé ✓', ''];
    const customers = await db.prisma.$transaction((tx) =>
      insertRows(tx, 'Customer', 'customers', awkward.map((name, i) => ({ organizationId, name: name || 'empty', email: i % 2 ? null : `c${i}@rows.example`, metadata: { note: name, nested: '{"x": "\\"}' } }))),
    );
    expect(customers.map((c) => [c.name, c.email, c.metadata])).toEqual(
      awkward.map((name, i) => [name || 'empty', i % 2 ? null : `c${i}@rows.example`, { note: name, nested: '{"x": "\\"}' }]),
    );
    const customerId = String(customers[0]!.id);
    const at = new Date('2026-11-27T10:11:12.345Z');
    const jobs = await db.prisma.$transaction((tx) =>
      insertRows(tx, 'Job', 'jobs', [
        { organizationId, customerId, title: 'Later', status: 'in_progress', scheduledAt: at },
        { organizationId, customerId, title: 'Unscheduled', scheduledAt: null },
        { organizationId, customerId, title: 'Done', status: 'completed', scheduledAt: at, completedAt: at },
      ]),
    );
    expect(jobs.map((j) => [j.title, j.status, j.scheduledAt, j.completedAt ?? null])).toEqual([
      ['Later', 'in_progress', at, null],
      ['Unscheduled', 'scheduled', null, null],
      ['Done', 'completed', at, at],
    ]);
    const proposals = await db.prisma.$transaction((tx) =>
      insertRows(tx, 'Proposal', 'proposals', [{ organizationId, customerId, title: 'P', totalAmount: 2_000_000_000, currency: 'EUR' }]),
    );
    expect(proposals.map((p) => [p.totalAmount, p.currency, p.status])).toEqual([[2_000_000_000, 'EUR', 'draft']]);
    // Each in the order given, with change numbers in that order.
    expect(jobs.map((j) => j.changeSeq)).toEqual([...jobs.map((j) => j.changeSeq as bigint)].sort((a, b) => (a < b ? -1 : 1)));
    const read = await db.prisma.job.findMany({ where: { organizationId }, orderBy: { changeSeq: 'asc' } });
    expect(read.map((r) => ({ ...r }))).toEqual(jobs);
  });
});

// A plain create whose INSERT and COMMIT go in one message (PostgreSQL): the same records as
// insertRows's, the request named for its events, holds that can refuse the row, and a
// failure that leaves the connection usable.
describe('insertCommitted on postgres', () => {
  let test: TestDatabase;
  let db: Database;
  let organizationId: string;
  let customerId: string;
  let session: NonNullable<Database['sql']['session']>;

  beforeAll(async () => {
    test = await migratedDatabase('postgres');
    // One connection: whatever a failed create left on it, the next one meets.
    db = await openDatabase({ databaseUrl: test.env.DATABASE_URL!, dataDir: '', poolSize: 1 });
    session = db.sql.session!;
    organizationId = (await db.prisma.organization.create({ data: { name: 'One trip' } })).id;
    customerId = String((await insertCommitted(db.prisma, session, 'req-setup', 'Customer', 'customers', { organizationId, name: 'Held' }))!.id);
  });
  afterAll(async () => {
    await db?.close();
    await test?.drop();
  });

  it('answers each record exactly as Prisma reads it back, values written in as literals whatever they hold', async () => {
    const awkward = ['NULL', 'a,b', '{braces}', 'quote " and \\ backslash', "it's", "'); DROP TABLE customers; --", '\\\'', ' padded ', 'ünïcødé ✓'];
    for (const [i, name] of awkward.entries()) {
      const record = (await insertCommitted(db.prisma, session, `req-${i}`, 'Customer', 'customers', { organizationId, name, email: i % 2 ? null : `c${i}@one.example`, metadata: { note: name } }))!;
      expect(record).toEqual({ ...(await db.prisma.customer.findUniqueOrThrow({ where: { organizationId_id: { organizationId, id: String(record.id) } } })) });
      expect(record.name).toBe(name);
      expect(typeof record.changeSeq).toBe('bigint');
    }
    const at = new Date('2026-11-27T10:11:12.345Z');
    const job = (await insertCommitted(db.prisma, session, 'req-job', 'Job', 'jobs', { organizationId, customerId, title: 'Later', status: 'in_progress', scheduledAt: at }))!;
    expect(job).toEqual({ ...(await db.prisma.job.findUniqueOrThrow({ where: { organizationId_id: { organizationId, id: String(job.id) } } })) });
    expect(job.scheduledAt).toEqual(at);
    // A date column (due_date) as Prisma answers it: midnight UTC, whatever the process's time zone.
    const invoice = (await insertCommitted(db.prisma, session, 'req-invoice', 'Invoice', 'invoices', { organizationId, customerId, number: 'INV-1', currency: 'EUR', totalAmount: 100, dueDate: new Date('2026-12-31T00:00:00.000Z') }))!;
    expect(invoice).toEqual({ ...(await db.prisma.invoice.findUniqueOrThrow({ where: { organizationId_id: { organizationId, id: String(invoice.id) } } })) });
    expect(invoice.dueDate).toEqual(new Date('2026-12-31T00:00:00.000Z'));
  });

  it('names the request its events record, and the write is committed when it answers', async () => {
    const record = (await insertCommitted(db.prisma, session, 'req-named-1', 'Customer', 'customers', { organizationId, name: 'Named' }))!;
    const events = await db.sql.query<{ type: string; request_id: string }>('SELECT type, request_id FROM events WHERE record_id = $1', [record.id]);
    expect(events).toEqual([{ type: 'customer.created', request_id: 'req-named-1' }]);
  });

  it('writes its row only where every hold found its record, and otherwise nothing, answering undefined', async () => {
    const before = await db.prisma.job.count({ where: { organizationId } });
    const found = `SELECT 1 FROM customers WHERE id = '${customerId}'::uuid FOR SHARE`;
    expect(await insertCommitted(db.prisma, session, 'req-refused', 'Job', 'jobs', { organizationId, customerId, title: 'Never' }, [found, 'SELECT 1 WHERE false'])).toBeUndefined();
    expect(await db.prisma.job.count({ where: { organizationId } })).toBe(before);
    expect(await db.sql.query("SELECT 1 FROM events WHERE request_id = 'req-refused'")).toEqual([]);
    expect(await insertCommitted(db.prisma, session, 'req-held', 'Job', 'jobs', { organizationId, customerId, title: 'Held' }, [found])).toMatchObject({ title: 'Held' });
    expect(await db.prisma.job.count({ where: { organizationId } })).toBe(before + 1);
  });

  it("fails with the database's own error, writes nothing, and leaves its one connection usable", async () => {
    await insertCommitted(db.prisma, session, 'req-first', 'Customer', 'customers', { organizationId, name: 'First', externalId: 'same' });
    const clash = insertCommitted(db.prisma, session, 'req-second', 'Customer', 'customers', { organizationId, name: 'Second', externalId: 'same' });
    await expect(clash).rejects.toMatchObject({ code: '23505', constraint: 'customers_external_id_live_key' });
    expect(await db.prisma.customer.count({ where: { organizationId, name: 'Second' } })).toBe(0);
    // The aborted transaction was ended: the same connection takes the next create.
    expect(await insertCommitted(db.prisma, session, 'req-third', 'Customer', 'customers', { organizationId, name: 'Third' })).toMatchObject({ name: 'Third' });
  });

  it('writes backslashes and quotes as they are where the server reads strings the old way (standard_conforming_strings off)', async () => {
    const other = await openDatabase({ databaseUrl: `${test.env.DATABASE_URL!}?options=-c%20standard_conforming_strings%3Doff`, dataDir: '', poolSize: 1 });
    try {
      expect(await other.sql.query('SHOW standard_conforming_strings')).toEqual([{ standard_conforming_strings: 'off' }]);
      const name = "back\\slash ' and \\' quote";
      const record = (await insertCommitted(other.prisma, other.sql.session!, 'req-old-strings', 'Customer', 'customers', { organizationId, name }))!;
      expect(record.name).toBe(name);
      expect((await db.prisma.customer.findUniqueOrThrow({ where: { organizationId_id: { organizationId, id: String(record.id) } } })).name).toBe(name);
    } finally {
      await other.close();
    }
  });
});

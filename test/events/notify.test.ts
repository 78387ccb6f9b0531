// Which writes NOTIFY the events channel (the notify_with_deliveries migration): only those
// that queued a webhook delivery, once per organization, with its id. PostgreSQL serializes
// the commits of every notifying transaction of the server, so a write nobody has to be told
// of sends none. Notifications arrive in commit order: a sentinel sent after the writes is
// the point by which any NOTIFY of theirs would have arrived.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../src/schema/index.js';
import { openDatabase, type Database } from '../../src/db/connection.js';
import { EVENTS_CHANNEL } from '../../src/events/hub.js';
import { DB_KINDS, migratedDatabase, type TestDatabase } from '../helpers/databases.js';

describe.each(DB_KINDS)('event notifications on %s', (kind) => {
  let test: TestDatabase;
  let db: Database;
  let organizationId: string;
  let heard: string[] = [];
  let sentinels = 0;

  /** What the channel carried up to a sentinel sent now. */
  async function heardSoFar(): Promise<string[]> {
    const sentinel = `sentinel ${++sentinels}`;
    await db.prisma.$executeRawUnsafe(`SELECT pg_notify('${EVENTS_CHANNEL}', '${sentinel}')`);
    await expect.poll(() => heard.includes(sentinel)).toBe(true);
    const before = heard.slice(0, heard.indexOf(sentinel));
    heard = heard.slice(heard.indexOf(sentinel) + 1);
    return before;
  }

  /** An import made and completed, as the import worker ends one: an import.completed event. */
  async function completeImport() {
    const made = await db.prisma.import.create({ data: { organizationId, resource: 'customers', mode: 'create', csv: 'name\nA', total: 1 } });
    await db.prisma.import.update({ where: { organizationId_id: { organizationId, id: made.id } }, data: { status: 'completed', created: 1 } });
  }

  beforeAll(async () => {
    test = await migratedDatabase(kind);
    db = await openDatabase({ databaseUrl: test.env.DATABASE_URL, dataDir: test.env.DATA_DIR ?? '' });
    organizationId = (await db.prisma.organization.create({ data: { name: 'Acme' } })).id;
    await new Promise<void>((resolve, reject) => {
      db.listen(EVENTS_CHANNEL, { notify: (payload) => heard.push(payload), lost: () => undefined, listening: resolve }).catch(reject);
    });
  });
  afterAll(async () => {
    await db?.close();
    await test?.drop();
  });

  it('a write that queues no webhook delivery sends none; one that does (statement, row and import triggers) sends the organization id once', async () => {
    await db.prisma.customer.create({ data: { organizationId, name: 'Nobody listens' } });
    await db.prisma.customer.createMany({ data: [{ organizationId, name: 'A' }, { organizationId, name: 'B' }] });
    expect(await heardSoFar()).toEqual([]);

    // An endpoint that wants job events only: a customer still queues nothing.
    const endpoint = await db.prisma.webhookEndpoint.create({ data: { organizationId, url: 'http://127.0.0.1:9/hook', eventTypes: ['job.created'], secret: 'unused' } });
    const customer = await db.prisma.customer.create({ data: { organizationId, name: 'Still nobody' } });
    expect(await heardSoFar()).toEqual([]);

    await completeImport();
    expect(await heardSoFar()).toEqual([]);

    await db.prisma.job.createMany({ data: [1, 2, 3].map((n) => ({ organizationId, customerId: customer.id, title: `Job ${n}` })) });
    expect(await heardSoFar()).toEqual([organizationId]);
    expect(await db.prisma.webhookDelivery.count({ where: { endpointId: endpoint.id } })).toBe(3);

    // The row trigger (an invoice's event carries its lines) too.
    await db.prisma.webhookEndpoint.update({ where: { organizationId_id: { organizationId, id: endpoint.id } }, data: { eventTypes: [] } });
    await db.prisma.invoice.create({ data: { organizationId, customerId: customer.id, number: 'INV-000001', currency: 'USD', totalAmount: 0 } });
    expect(await heardSoFar()).toEqual([organizationId]);
    // And an import's event (import.completed).
    await completeImport();
    expect(await heardSoFar()).toEqual([organizationId]);
  });
});

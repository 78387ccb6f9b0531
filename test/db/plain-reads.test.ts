// Plain reads (db/plain-reads.ts) answer exactly what Prisma answers for the same arguments:
// every shape below runs both ways on PostgreSQL and the rows must be equal (field names,
// Date, BigInt, parsed JSON, DATE columns, arrays, enums, nulls, order), also in included
// relations at any depth. Shapes that are not plain are declined, and run by Prisma.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/connection.js';
import pg from 'pg';
import { parseTimestamptz, plainFindMany, tablesOf, type Read } from '../../src/db/plain-reads.js';
import { findMany, findManyWithSum, tenantClient, tenantClients, type TenantClient } from '../../src/db/tenant.js';
import { getDatamodel } from '../../src/generated/pothos-prisma-types.js';
import { migratedDatabase, type TestDatabase } from '../helpers/databases.js';

const day = (n: number) => new Date(Date.UTC(2026, 0, n));

describe('reading a timestamptz', () => {
  it('gives the Date pg gives, for every offset and fraction PostgreSQL writes; other forms go to pg', () => {
    const pgParse = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ, 'text');
    const values = [
      '2026-11-29 05:32:46.123+00', '2026-11-29 05:32:46+00', '2026-11-29 05:32:46.1+00', '2026-11-29 05:32:46.123456+00', '2026-11-29 05:32:46.999999+00',
      '2026-01-01 00:00:00+05:30', '2025-12-31 23:59:59.5-08', '2026-03-29 01:30:00+01:00:30', '1970-01-01 00:00:00+00', '0100-02-28 12:00:00+00',
      '2024-02-29 23:59:59.999-12', '0099-01-01 00:00:00+00', '12345-01-01 00:00:00+00', '2026-11-29 05:32:46+00 BC', 'infinity', '-infinity', '2026-11-29',
    ];
    for (const value of values) {
      let fellBack = false;
      const parsed = parseTimestamptz(value, (v) => ((fellBack = true), pgParse(v)));
      expect(parsed, value).toEqual(pgParse(value));
      expect(fellBack, value).toBe(/^(0099|12345|infinity|-infinity)|BC|^2026-11-29$/.test(value));
    }
  });
});

describe('plain reads', () => {
  let test: TestDatabase;
  let db: Database;
  let plain: TenantClient;
  let prisma: TenantClient;
  let organizationId: string;
  const plainStatements: string[] = [];

  beforeAll(async () => {
    test = await migratedDatabase('postgres');
    db = await openDatabase({ databaseUrl: test.env.DATABASE_URL, dataDir: '' });
    const organization = await db.prisma.organization.create({ data: { name: 'Plain' } });
    const other = await db.prisma.organization.create({ data: { name: 'Other' } });
    organizationId = organization.id;
    const read: Read = (text, values) => {
      plainStatements.push(text);
      return db.read!(text, values);
    };
    plain = tenantClients(db.prisma, { read })(organizationId);
    prisma = tenantClient(db.prisma, organizationId);
    for (const [org, prefix] of [[organization.id, 'A'], [other.id, 'B']] as const) {
      const tenant = tenantClient(db.prisma, org);
      for (let i = 0; i < 12; i++) {
        const customer = await tenant.customer.create({
          data: { organizationId: org, name: `${prefix}${i} "quoted" 'name'`, email: i % 3 === 0 ? null : `c${i}@example.com`, metadata: i % 2 ? { tier: i, tags: ['x', 'y'] } : {} },
        });
        await tenant.job.create({ data: { organizationId: org, customerId: customer.id, title: `Job ${i}`, status: (['scheduled', 'in_progress', 'completed'] as const)[i % 3], scheduledAt: i % 4 ? day(i + 1) : null } });
        const job = await tenant.job.create({ data: { organizationId: org, customerId: customer.id, title: `Second job ${i}`, metadata: { n: i } } });
        const invoice = await tenant.invoice.create({
          data: { organizationId: org, customerId: customer.id, jobId: i % 3 ? job.id : null, number: `${prefix}-INV-${i}`, currency: 'USD', totalAmount: 1000 * i, status: i % 2 ? 'sent' : 'draft', dueDate: i % 5 ? day(i + 1) : null },
        });
        // Lines written out of order: the relation's order is the query's, not the insert's.
        for (const position of i % 2 ? [2, 1, 3] : []) {
          await tenant.invoiceLineItem.create({ data: { organizationId: org, invoiceId: invoice.id, position, description: `Line ${position}`, quantity: position, unitAmount: 100, amount: 100 * position } });
        }
        if (i % 4 === 0) await tenant.customer.update({ where: { organizationId_id: { organizationId: org, id: customer.id } }, data: { deletedAt: day(20) } });
      }
      await tenant.webhookEndpoint.create({ data: { organizationId: org, url: 'https://example.com/hook', eventTypes: ['customer.created', 'job.updated'], secret: 's', enabled: false } });
    }
  });
  afterAll(async () => {
    await db?.close();
    await test?.drop();
  });

  /** Both ways, equal; and the plain way really ran one statement of its own. */
  async function same(model: string, args: Record<string, unknown>) {
    const delegate = (prisma as unknown as Record<string, { findMany(a: object): Promise<unknown[]> }>)[model.charAt(0).toLowerCase() + model.slice(1)]!;
    const expected = await delegate.findMany(args);
    plainStatements.length = 0;
    const actual = await findMany(plain, model, args, () => Promise.reject(new Error(`not plain: ${JSON.stringify(args)}`)));
    expect(plainStatements).toHaveLength(1);
    expect(actual).toEqual(expected);
    return actual;
  }

  const NEWEST_FIRST = [{ createdAt: 'desc' as const }, { id: 'desc' as const }];

  it('answers a list page as Prisma does: every scalar, selected columns, order, skip and take', async () => {
    expect(await same('Customer', { orderBy: NEWEST_FIRST, take: 5 })).toHaveLength(5);
    await same('Customer', { select: { id: true, name: true, email: true, metadata: true, changeSeq: true, createdAt: true, deletedAt: false }, orderBy: NEWEST_FIRST, skip: 2, take: 4 });
    await same('Invoice', { orderBy: [{ dueDate: 'asc' }, { id: 'asc' }] });
    await same('Invoice', { orderBy: [{ dueDate: 'desc' }, { id: 'asc' }], take: 0 });
    await same('WebhookEndpoint', {});
    await same('Job', { orderBy: { changeSeq: 'asc' } });
  });

  it('filters as Prisma does: equalities, sets, ranges, nulls, AND, OR, deleted records when deletedAt is named', async () => {
    await same('Job', { where: { status: 'completed' }, orderBy: NEWEST_FIRST });
    await same('Job', { where: { status: { in: ['scheduled', 'in_progress'] } }, orderBy: NEWEST_FIRST });
    await same('Job', { where: { status: { in: [] } } });
    await same('Job', { where: { scheduledAt: null }, orderBy: NEWEST_FIRST });
    await same('Job', { where: { scheduledAt: { not: null, gte: day(3), lt: day(9) } }, orderBy: NEWEST_FIRST });
    await same('Invoice', { where: { dueDate: { gte: day(4), lte: day(8) } }, orderBy: NEWEST_FIRST });
    await same('Invoice', { where: { totalAmount: { gt: 2000 }, OR: [{ status: 'sent' }, { dueDate: null }] }, orderBy: NEWEST_FIRST });
    await same('Invoice', { where: { OR: [] } });
    await same('Invoice', { where: { AND: [{}, { status: { equals: 'draft' } }], currency: 'USD' } });
    await same('Customer', { where: { deletedAt: undefined }, orderBy: [{ changeSeq: 'asc' }] });
    await same('Customer', { where: { deletedAt: { not: null } } });
    await same('Customer', { where: { email: { equals: null }, name: { in: ["A3 \"quoted\" 'name'", 'nobody'] } } });
    const [first] = (await same('Customer', { orderBy: NEWEST_FIRST, take: 1 })) as Array<{ createdAt: Date; id: string; changeSeq: bigint }>;
    await same('Customer', { where: { AND: [{ OR: [{ createdAt: { lt: first!.createdAt } }, { createdAt: first!.createdAt, id: { lt: first!.id } }] }] }, orderBy: NEWEST_FIRST, take: 3 });
    await same('Customer', { where: { changeSeq: { gt: first!.changeSeq - 5n } }, orderBy: [{ changeSeq: 'asc' }] });
    await same('RecordCount', { where: { resource: 'customers', status: '' }, select: { count: true } });
  });

  it("reads a page and a maintained total in one statement, as the two reads would; an empty page carries none", async () => {
    const customers = { model: 'RecordCount', where: { resource: 'customers', status: '' }, field: 'count' };
    const page = { orderBy: NEWEST_FIRST, take: 4 };
    plainStatements.length = 0;
    const together = await findManyWithSum(plain, 'Customer', page, customers);
    expect(plainStatements).toHaveLength(1);
    expect(together!.rows).toEqual(await prisma.customer.findMany(page));
    expect(together!.total).toBe(await prisma.customer.count());
    // Summed over a resource's statuses, with the page's own filter bound after the total's.
    const jobs = await findManyWithSum(plain, 'Job', { where: { status: 'completed' }, orderBy: NEWEST_FIRST }, { model: 'RecordCount', where: { resource: 'jobs' }, field: 'count' });
    expect(jobs!.rows).toEqual(await prisma.job.findMany({ where: { status: 'completed' }, orderBy: NEWEST_FIRST }));
    expect(jobs!.total).toBe(await prisma.job.count());
    expect(await findManyWithSum(plain, 'Customer', { where: { id: '00000000-0000-4000-8000-000000000000' } }, customers)).toEqual({ rows: [], total: undefined });
    const withInvoices = await findManyWithSum(plain, 'Customer', { include: { invoices: true }, orderBy: NEWEST_FIRST }, customers);
    expect(withInvoices!.rows).toEqual(await prisma.customer.findMany({ include: { invoices: true }, orderBy: NEWEST_FIRST }));
    expect(withInvoices!.total).toBe(await prisma.customer.count());
  });

  it('reads included relations as Prisma does: to many with their filter, order, skip and take, to one (or none), nested, selected', async () => {
    const LIVE = { deletedAt: null };
    // The bench's nested page: customers with their newest jobs and invoices, the invoices with their lines.
    const nested = await same('Customer', {
      include: { jobs: { where: LIVE, orderBy: NEWEST_FIRST, take: 5 }, invoices: { where: LIVE, orderBy: NEWEST_FIRST, take: 5, include: { lineItems: { orderBy: { position: 'asc' } } } } },
      where: { AND: [{}] },
      orderBy: NEWEST_FIRST,
      skip: 0,
      take: 21,
    });
    const lines = (nested as Array<{ invoices: Array<{ lineItems: Array<{ position: number }> }> }>).flatMap((c) => c.invoices.flatMap((i) => i.lineItems.map((l) => l.position)));
    expect(lines.slice(0, 3)).toEqual([1, 2, 3]);
    // (Every relation of more than one row per parent is ordered: unordered, either side may read them in any order.)
    await same('Customer', { include: { invoices: true }, orderBy: NEWEST_FIRST });
    await same('Customer', { include: { jobs: { orderBy: NEWEST_FIRST }, invoices: { include: { lineItems: { orderBy: { position: 'asc' } }, job: true } } }, orderBy: NEWEST_FIRST, take: 6 });
    await same('Customer', { include: { jobs: { where: { status: { in: ['scheduled', 'completed'] } }, orderBy: [{ title: 'desc' }], skip: 1, take: 1 } }, orderBy: NEWEST_FIRST });
    await same('Customer', { include: { jobs: { take: 0 } }, orderBy: NEWEST_FIRST, take: 2 });
    // To one: a required relation, an optional one that is sometimes absent, and one included as false.
    await same('Invoice', { include: { customer: true, job: true, lineItems: { orderBy: { position: 'desc' } } }, orderBy: NEWEST_FIRST });
    await same('Invoice', { include: { customer: { include: { jobs: { orderBy: NEWEST_FIRST } } }, job: false } });
    await same('InvoiceLineItem', { include: { invoice: { include: { customer: true } } }, orderBy: [{ invoiceId: 'asc' }, { position: 'asc' }] });
    // Selected: scalars beside relations, relations with selections of their own.
    await same('Job', { select: { id: true, title: true, customer: { select: { name: true, metadata: true } }, invoices: { select: { number: true, dueDate: true, changeSeq: true } } }, orderBy: NEWEST_FIRST });
    await same('Customer', { select: { name: true, invoices: { where: { status: 'sent' }, select: { totalAmount: true, lineItems: { select: { amount: true }, orderBy: { position: 'asc' } } } } }, orderBy: NEWEST_FIRST });
  });

  it('declines relations it cannot read plainly', async () => {
    const tables = tablesOf((db.prisma as unknown as { _runtimeDataModel: Parameters<typeof tablesOf>[0] })._runtimeDataModel, getDatamodel());
    const declined = [
      { include: { _count: true } },
      { include: { jobs: { cursor: { id: 'x' } } } },
      { include: { jobs: { distinct: ['title'] } } },
      { include: { jobs: { where: { customer: { name: 'A1' } } } } },
      { include: { jobs: { where: { title: { contains: 'Job' } } } } },
      { include: { jobs: { orderBy: { customer: { name: 'asc' } } } } },
      { include: { jobs: { take: -1 } } },
      { include: { nothing: true } },
      { select: { jobs: true } },
      { select: { id: true }, include: { jobs: true } },
    ];
    for (const args of declined) expect(plainFindMany(tables, 'Customer', args), JSON.stringify(args)).toBeUndefined();
    // A to-one relation takes no filter, order or page.
    expect(plainFindMany(tables, 'Job', { include: { customer: { where: { name: 'A1' } } } })).toBeUndefined();
    expect(plainFindMany(tables, 'Job', { include: { customer: { take: 1 } } })).toBeUndefined();
  });

  it('never reaches another organization', async () => {
    const names = ((await same('Customer', { where: { deletedAt: undefined } })) as Array<{ name: string }>).map((c) => c.name);
    expect(names).toHaveLength(12);
    expect(names.every((name) => name.startsWith('A'))).toBe(true);
  });

  it('declines what is not plain, which Prisma then runs', async () => {
    const tables = tablesOf((db.prisma as unknown as { _runtimeDataModel: Parameters<typeof tablesOf>[0] })._runtimeDataModel);
    const declined = [
      { include: { jobs: true } },
      { select: { id: true, jobs: true } },
      { where: { customer: { name: 'A1' } } },
      { where: { name: { contains: 'A', mode: 'insensitive' } } },
      { where: { name: { not: 'A1' } } },
      { where: { NOT: { name: 'A1' } } },
      { where: { metadata: { equals: {} } } },
      { orderBy: [{ name: { sort: 'asc', nulls: 'last' } }] },
      { cursor: { id: 'x' } },
      { distinct: ['name'] },
      { take: -1 },
    ];
    for (const args of declined) expect(plainFindMany(tables, 'Customer', args), JSON.stringify(args)).toBeUndefined();
    expect(plainFindMany(tables, 'NoSuchModel', {})).toBeUndefined();
    // Columns Prisma answers in classes of its own: a model with one is read by Prisma, unless it is left out.
    const priced = tablesOf({ models: { Price: { dbName: 'prices', schema: null, fields: [{ name: 'id', kind: 'scalar', type: 'String' }, { name: 'amount', kind: 'scalar', type: 'Decimal' }] } }, enums: {}, types: {} } as never);
    expect(plainFindMany(priced, 'Price', {})).toBeUndefined();
    expect(plainFindMany(priced, 'Price', { select: { id: true } })?.text).toBe('SELECT "id" FROM "public"."prices" WHERE TRUE');
    // And through the client: Prisma answers them.
    plainStatements.length = 0;
    const rows = await findMany(plain, 'Customer', { where: { name: { contains: 'A1' } } }, () => prisma.customer.findMany({ where: { name: { contains: 'A1' } } }));
    expect(plainStatements).toEqual([]);
    expect(rows.length).toBeGreaterThan(0);
  });

  it('leaves a value PostgreSQL refuses to Prisma, which answers it as it always did', async () => {
    const args = { where: { id: 'not-a-uuid' } };
    const expected = await prisma.customer.findMany(args).then(
      (rows) => ({ rows }),
      (error: Error) => ({ error: error.constructor.name }),
    );
    const actual = await findMany(plain, 'Customer', args, () => prisma.customer.findMany(args)).then(
      (rows) => ({ rows }),
      (error: Error) => ({ error: error.constructor.name }),
    );
    expect(actual).toEqual(expected);
  });

  it("reads a transaction's client through Prisma, inside the transaction", async () => {
    await plain.$transaction(async (tx) => {
      plainStatements.length = 0;
      const rows = await findMany(tx as unknown as TenantClient, 'Customer', { take: 2 }, () => tx.customer.findMany({ take: 2 }));
      expect(rows).toHaveLength(2);
      expect(plainStatements).toEqual([]);
    });
  });
});

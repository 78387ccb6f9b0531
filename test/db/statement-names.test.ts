// Prisma's statements on PostgreSQL are prepared once per connection and then only executed:
// named after their text, never a parameterless one (BEGIN, COMMIT), and no more names than
// the bound.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/connection.js';
import { statementNames } from '../../src/db/statement-names.js';
import { migratedDatabase, type TestDatabase } from '../helpers/databases.js';

const query = (sql: string, args: unknown[] = [1]) => ({ sql, args, argTypes: [] });

describe('statement names', () => {
  it('name a text the same way every time, two texts two ways, and leave statements without parameters unnamed', () => {
    const name = statementNames();
    const list = name(query('SELECT * FROM customers WHERE organization_id = $1'));
    expect(list).toMatch(/^crm_[\w-]+$/);
    expect(list!.length).toBeLessThan(64); // PostgreSQL's identifiers are at most 63 bytes
    expect(name(query('SELECT * FROM customers WHERE organization_id = $1'))).toBe(list);
    expect(name(query('SELECT * FROM jobs WHERE organization_id = $1'))).not.toBe(list);
    expect(name(query('BEGIN', []))).toBeUndefined();
    expect(name(query('COMMIT', []))).toBeUndefined();
  });

  it('stop naming new texts past the bound, and keep the names already given', () => {
    const name = statementNames(2);
    const [a, b] = [name(query('SELECT $1')), name(query('SELECT $1, 2'))];
    expect(name(query('SELECT $1, 3'))).toBeUndefined();
    expect([name(query('SELECT $1')), name(query('SELECT $1, 2'))]).toEqual([a, b]);
  });
});

describe('on PostgreSQL', () => {
  let database: TestDatabase;
  let db: Database;
  beforeAll(async () => {
    database = await migratedDatabase('postgres');
    // One connection: the statements below and the one that lists what it prepared share it.
    db = await openDatabase({ databaseUrl: database.env.DATABASE_URL, dataDir: '', poolSize: 1 });
  });
  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  it("a connection prepares a query's statement once and runs it again by name; a transaction's BEGIN and COMMIT stay simple statements", async () => {
    const organization = await db.prisma.organization.create({ data: { name: 'Acme' } });
    for (let i = 0; i < 3; i++) await db.prisma.customer.findMany({ where: { organizationId: organization.id }, take: 20 });
    await db.prisma.$transaction([db.prisma.customer.count({ where: { organizationId: organization.id } })]);
    const prepared = await db.prisma.$queryRawUnsafe<Array<{ name: string; statement: string }>>('SELECT name, statement FROM pg_prepared_statements ORDER BY prepare_time');
    const lists = prepared.filter((p) => /FROM "public"\."customers"/.test(p.statement) && !/COUNT/i.test(p.statement));
    expect(lists).toHaveLength(1);
    expect(lists[0]!.name).toMatch(/^crm_/);
    expect(prepared.some((p) => /COUNT/i.test(p.statement))).toBe(true);
    expect(prepared.filter((p) => /^\s*(BEGIN|COMMIT)/i.test(p.statement))).toEqual([]);
  });
});

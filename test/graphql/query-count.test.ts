// In-process on purpose: it counts the SQL statements Prisma sends for one request, which a
// client cannot see.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/auth/api-keys.js';
import { allScopes } from '../../src/auth/scopes.js';
import '../../src/schema/index.js';
import { openDatabase, type Database } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrator.js';
import { createLogger } from '../../src/logger.js';
import { createRateLimiter } from '../../src/rate-limit.js';
import { createApp } from '../../src/server.js';
import { migratedDatabase, type TestDatabase } from '../helpers/databases.js';

describe('nested GraphQL selections', () => {
  let test: TestDatabase;
  let db: Database;
  let app: ReturnType<typeof createApp>;
  let key: string;
  const statements: string[] = [];

  async function graphql(query: string, variables: Record<string, unknown> = {}) {
    const response = await app.fetch(
      new Request('http://test/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ query, variables }),
      }),
    );
    const body = (await response.json()) as { data: any; errors?: unknown };
    if (body.errors) throw new Error(JSON.stringify(body.errors));
    return body.data;
  }

  beforeAll(async () => {
    test = await migratedDatabase('postgres');
    db = await openDatabase({ databaseUrl: test.env.DATABASE_URL, dataDir: '', onQuery: (sql) => statements.push(sql) });
    await migrate(db.sql);
    const organization = await db.prisma.organization.create({ data: { name: 'Acme' } });
    key = (await createApiKey(db.prisma, { organizationId: organization.id, name: 'test', scopes: allScopes() })).key;
    const log = createLogger('silent');
    app = createApp({ db, log, rateLimiter: createRateLimiter({ max: 100_000, windowSeconds: 60, log }) });
    for (let i = 0; i < 40; i++) {
      const { createCustomer } = await graphql('mutation($i: CreateCustomerInput!) { createCustomer(input: $i) { id } }', { i: { name: `C${i}` } });
      for (let j = 0; j < 2; j++) {
        const { createJob } = await graphql('mutation($i: CreateJobInput!) { createJob(input: $i) { id } }', { i: { customerId: createCustomer.id, title: `J${j}` } });
        await graphql('mutation($i: CreateInvoiceInput!) { createInvoice(input: $i) { id } }', {
          i: { customerId: createCustomer.id, jobId: createJob.id, currency: 'USD', lineItems: [{ description: 'x', quantity: 1, unitAmount: 100 }] },
        });
      }
    }
  });
  afterAll(async () => {
    await db.close();
    await test.drop();
  });

  async function statementsFor(limit: number) {
    const query = `query($limit: Int) { customers(limit: $limit) {
      data { name jobs(limit: 5) { title invoices(limit: 5) { number } } invoices(limit: 5) { number lineItems { amount } job { title } customer { name } } }
      pagination { total } } }`;
    statements.length = 0;
    const data = await graphql(query, { limit });
    // Authentication's key lookup is one statement; the key's last-use write may add one.
    const dataStatements = statements.filter((sql) => !/"api_keys"/.test(sql));
    return { data, count: dataStatements.length };
  }

  it('a page of customers with their jobs and invoices is a bounded number of statements, whatever the page size', async () => {
    const small = await statementsFor(5);
    const large = await statementsFor(40);
    expect(small.data.customers.data).toHaveLength(5);
    expect(large.data.customers.data).toHaveLength(40);
    expect(large.data.customers.data[0].invoices[0].lineItems).toEqual([{ amount: 100 }]);
    expect(large.count).toBe(small.count);
    // The page with every relation it includes, joined in the database, and its total, in one statement (db/plain-reads.ts).
    expect(large.count).toBe(1);
    // And on every later run of the same document (the executor may change after a few).
    for (let run = 0; run < 5; run++) expect((await statementsFor(40)).count).toBe(1);
  });

  it('a page of invoices with their lines and customer (as REST lists them) is 1 statement with its total on every run, compiled ones too', async () => {
    for (let run = 0; run < 6; run++) {
      statements.length = 0;
      const data = await graphql('{ invoices(limit: 10) { data { number lineItems { amount } customer { name } } pagination { total } } }');
      expect(data.invoices.data[0].lineItems).toEqual([{ amount: 100 }]);
      expect(data.invoices.pagination.total).toBeGreaterThan(0);
      expect(statements.filter((sql) => !/"api_keys"/.test(sql))).toHaveLength(1);
    }
  });

  it('a list whose selection leaves out pagination reads no total; asked for (directly or in a fragment), it gets it', async () => {
    const counting = () => statements.filter((sql) => /"record_counts"|count\(/i.test(sql)).length;
    // Five runs each: the later ones run compiled (graphql-jit), whose resolve info differs.
    for (let run = 0; run < 5; run++) {
      statements.length = 0;
      const recordsOnly = await graphql('{ customers(limit: 3) { data { name } } }');
      expect(recordsOnly.customers.data).toHaveLength(3);
      expect(counting()).toBe(0);
      statements.length = 0;
      const direct = await graphql('{ customers(limit: 3) { data { name } pagination { total hasMore } } }');
      expect(direct.customers.pagination).toEqual({ total: 40, hasMore: true });
      expect(counting()).toBe(1);
    }
    const spread = await graphql('query { customers(limit: 3) { ...Paged } } fragment Paged on CustomerPage { pagination { total } }');
    expect(spread.customers.pagination.total).toBe(40);
    const searched = await graphql('{ customers(limit: 3, search: "C1") { pagination { total } } }');
    expect(searched.customers.pagination.total).toBe(11);
  });
});

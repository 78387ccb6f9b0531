// The SQL statements of the hot paths, pinned: a list page is N statements on every run, a
// create M, so a change that adds a round trip fails here rather than surprising the bench.
// In process on purpose (a client cannot see statements): the app alone (createApp), with no
// background loop (webhook deliveries, imports and purges start with an instance, not with
// the app), on PostgreSQL; each statement as Prisma's query log reports it. That log leaves
// out BEGIN: a transaction is one round trip more than its count here (its COMMIT is counted).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/auth/api-keys.js';
import { allScopes } from '../../src/auth/scopes.js';
import '../../src/schema/index.js';
import { openDatabase, type Database } from '../../src/db/connection.js';
import { NAMES_ON_BEGIN } from '../../src/db/request-naming.js';
import { createLogger } from '../../src/logger.js';
import { createRateLimiter } from '../../src/rate-limit.js';
import { createApp } from '../../src/server.js';
import { migratedDatabase, type TestDatabase } from '../helpers/databases.js';

/** The bench's nested row (bench/types.ts NESTED_QUERY): customers, their jobs and invoices, the invoices' lines. */
const NESTED_QUERY = '{ customers(limit: 20) { data { name jobs(limit: 5) { title status } invoices(limit: 5) { number totalAmount lineItems { amount } } } } }';
/** Later runs of a GraphQL document run compiled (graphql-jit): each path is counted this many times. */
const RUNS = 5;

/** A statement in a word or two: its verb and the first table it names, as `SELECT customers`; a script, its statements. */
function kindOf(sql: string): string {
  // A message of several statements (db/sql.ts session) is logged whole; its values hold no "; " here.
  if (sql.includes('; ')) return `one message: ${sql.split('; ').map(kindOf).join(', ')}`;
  const verb = /^\s*(SET LOCAL|\w+)/i.exec(sql)![1]!.toUpperCase();
  // The statement's own table, not one of a sub-select's (a page's total): parentheses go
  // first, innermost out; a statement whose only table is inside them (a count of a sub-select) names that one.
  let outer = sql;
  for (let inner = outer.replace(/\([^()]*\)/g, ''); inner !== outer; inner = outer.replace(/\([^()]*\)/g, '')) outer = inner;
  // Prisma names tables with their schema; a batch's raw INSERT (db/insert-rows.ts) does not.
  const table = /"public"\."(\w+)"/.exec(outer)?.[1] ?? /"public"\."(\w+)"/.exec(sql)?.[1] ?? /^\s*INSERT INTO "(\w+)"/.exec(sql)?.[1];
  return table ? `${verb} ${table}` : verb;
}
/** A write in a Prisma transaction names its request on its BEGIN on Node 24; before, with a statement of its own (db/request-naming.ts). */
const NAMING = NAMES_ON_BEGIN ? [] : ['SET LOCAL'];
/** A key's last use, written at most once a minute per key (auth/authenticate.ts), whichever request happens to be running. */
const LAST_USED = /^\s*UPDATE "public"\."api_keys"/;

describe('statements of the hot paths on PostgreSQL', () => {
  let test: TestDatabase;
  let db: Database;
  let app: ReturnType<typeof createApp>;
  let key: string;
  const statements: string[] = [];
  let customerId: string;

  async function send(method: string, path: string, body?: unknown): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${key}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    return app.fetch(new Request(`http://test${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }));
  }

  async function ok(method: string, path: string, body?: unknown): Promise<any> {
    const response = await send(method, path, body);
    const text = await response.text();
    if (response.status >= 300 || text.includes('"errors"')) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
    return JSON.parse(text);
  }

  /**
   * The kinds of the statements one request sends, sorted (a page and its total run at once,
   * in either order). Before it, the same request until one runs without looking its key up:
   * keys are remembered once the key-change LISTEN is up, which the first requests may beat;
   * this also prepares what the request reuses (the cursor key, the compiled document).
   */
  async function statementsOf(method: string, path: string, body?: unknown): Promise<string[]> {
    // Bounded by time, not attempts: on a loaded machine the LISTEN may take a while.
    for (const until = Date.now() + 20_000; ; ) {
      statements.length = 0;
      await ok(method, path, body);
      if (!statements.some((sql) => /^\s*SELECT .*"public"\."api_keys"/s.test(sql))) break;
      if (Date.now() > until) throw new Error('the key is looked up on every request: the authenticator does not remember it');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    statements.length = 0;
    await ok(method, path, body);
    return statements.filter((sql) => !LAST_USED.test(sql)).map(kindOf).sort();
  }

  beforeAll(async () => {
    test = await migratedDatabase('postgres');
    db = await openDatabase({ databaseUrl: test.env.DATABASE_URL, dataDir: '', onQuery: (sql) => statements.push(sql) });
    const organization = await db.prisma.organization.create({ data: { name: 'Acme' } });
    key = (await createApiKey(db.prisma, { organizationId: organization.id, name: 'test', scopes: allScopes() })).key;
    const log = createLogger('silent');
    app = createApp({ db, log, rateLimiter: createRateLimiter({ max: 100_000, windowSeconds: 60, log }) });
    // More customers than a page of 50, through the API (so the triggers keep the counts);
    // the newest ones with a job and an invoice with lines, which the nested page shows.
    for (let i = 0; i < 55; i++) customerId = (await ok('POST', '/v1/customers', { name: `Customer ${i}` })).id;
    for (const customer of (await ok('GET', '/v1/customers?limit=3')).data as Array<{ id: string }>) {
      const job = await ok('POST', '/v1/jobs', { customer_id: customer.id, title: 'Boiler service' });
      await ok('POST', '/v1/invoices', { customer_id: customer.id, job_id: job.id, currency: 'USD', line_items: [{ description: 'Labour', quantity: 1, unit_amount: 7500 }] });
    }
  });
  afterAll(async () => {
    await db.close();
    await test.drop();
  });

  it('a REST list page is 1 statement: the page with its maintained total as a sub-select', async () => {
    for (let run = 0; run < RUNS; run++) {
      // The page (51 rows: one more tells has_more) and the total from record_counts, in one statement (db/plain-reads.ts).
      expect(await statementsOf('GET', '/v1/customers?limit=50')).toEqual(['SELECT customers']);
      expect(statements[0]).toMatch(/SUM\("count"\), 0\) FROM "public"\."record_counts"/);
    }
    // Past the last page no row carries the total: it is read on its own.
    statements.length = 0;
    const beyond = await ok('GET', '/v1/customers?limit=50&page=100');
    expect(beyond.data).toEqual([]);
    expect(beyond.pagination.total).toBeGreaterThanOrEqual(55);
    expect(statements.filter((sql) => !LAST_USED.test(sql)).map(kindOf)).toEqual(['SELECT customers', 'SELECT record_counts']);
  });

  it('a REST list page filtered by status is 1 statement too, its total that status\'s count', async () => {
    for (let run = 0; run < RUNS; run++) expect(await statementsOf('GET', '/v1/jobs?status=scheduled&limit=10')).toEqual(['SELECT jobs']);
  });

  it('a REST list with an expanded relation is 1 statement: the page with it joined, and the total', async () => {
    for (let run = 0; run < RUNS; run++) {
      // The invoices with their customer and lines joined, and the total summed over the
      // maintained counts of every status, in one statement (db/plain-reads.ts).
      expect(await statementsOf('GET', '/v1/invoices?expand=customer&limit=50')).toEqual(['SELECT invoices']);
      expect(statements[0]).toMatch(/json_agg\(json_build_array\(.*FROM "public"\."invoice_line_items"/);
    }
  });

  it("the bench's nested GraphQL page is 1 statement: customers with jobs, invoices and lines joined (no total asked)", async () => {
    for (let run = 0; run < RUNS; run++) {
      expect(await statementsOf('POST', '/graphql', { query: NESTED_QUERY })).toEqual(['SELECT customers']);
    }
  });

  it('a REST item GET is 1 statement', async () => {
    for (let run = 0; run < RUNS; run++) expect(await statementsOf('GET', `/v1/customers/${customerId}`)).toEqual(['SELECT customers']);
  });

  it('a REST create is 2 round trips: BEGIN naming the request, then INSERT ... RETURNING and COMMIT in one message', async () => {
    for (let run = 0; run < RUNS; run++) {
      // SET LOCAL names the request the event trigger records; the insert's triggers stamp the
      // change and count it (and, deferred to COMMIT, write the event). Nothing waits on this
      // process between the INSERT and its COMMIT.
      expect(await statementsOf('POST', '/v1/customers', { name: 'Bench Customer', email: 'bench@example.com' })).toEqual(['one message: BEGIN, SET LOCAL', 'one message: INSERT customers, COMMIT']);
    }
    // The event still records the request that wrote it.
    const response = await send('POST', '/v1/customers', { name: 'Named' });
    const { id } = (await response.json()) as { id: string };
    const [event] = await db.sql.query<{ request_id: string }>(`SELECT request_id FROM events WHERE record_id = $1`, [id]);
    expect(event!.request_id).toBe(response.headers.get('x-request-id'));
  });

  it('a REST create that refers to a customer is 3 round trips: the customer is held FOR SHARE before the INSERT and COMMIT, not checked before as well', async () => {
    for (let run = 0; run < RUNS; run++) {
      expect(await statementsOf('POST', '/v1/jobs', { customer_id: customerId, title: 'Boiler service' })).toEqual(['SELECT', 'one message: BEGIN, SET LOCAL', 'one message: INSERT jobs, COMMIT']);
    }
  });

  it('a create with an Idempotency-Key is a transaction of separate statements: its outcome may be read back from the event log after a failure', async () => {
    for (let run = 0; run < RUNS; run++) {
      statements.length = 0;
      const response = await app.fetch(
        new Request('http://test/v1/customers', { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': `keyed-${run}` }, body: JSON.stringify({ name: 'Keyed' }) }),
      );
      expect(response.status).toBe(201);
      const kinds = statements.filter((sql) => !LAST_USED.test(sql)).map(kindOf);
      // The key's claim and its answer are statements of their own around the create's INSERT and COMMIT.
      expect(kinds.filter((kind) => /customers|COMMIT|one message/.test(kind))).toEqual(['INSERT customers', 'COMMIT']);
    }
  });

  it('a create whose customer is deleted writes nothing, and the transaction then names the fault', async () => {
    const gone = (await ok('POST', '/v1/customers', { name: 'Gone' })).id as string;
    expect((await send('DELETE', `/v1/customers/${gone}`)).status).toBe(204);
    statements.length = 0;
    const refused = await send('POST', '/v1/jobs', { customer_id: gone, title: 'Orphan' });
    expect(refused.status).toBe(400);
    expect((await refused.json()).errors).toEqual([{ param: 'customer_id', message: 'does not name a record of this organization' }]);
    // Its hold finds no customer: it rolls back, and the transaction's hold names the fault.
    expect(statements.filter((sql) => !LAST_USED.test(sql)).map(kindOf)).toEqual(['one message: BEGIN, SET LOCAL', 'SELECT', 'ROLLBACK', ...NAMING, 'SELECT', 'ROLLBACK']);
    expect((await ok('GET', `/v1/jobs?customer_id=${gone}`)).data).toEqual([]);
  });

  it('a REST PATCH is 2 statements after a BEGIN that names the request (on Node 24): a conditional UPDATE, COMMIT', async () => {
    for (let run = 0; run < RUNS; run++) {
      expect(await statementsOf('PATCH', `/v1/customers/${customerId}`, { name: `Patched ${run}` })).toEqual(['COMMIT', ...NAMING, 'UPDATE customers'].sort());
    }
  });

  it('a batch of 10 creates is 3 statements in one transaction: the request named once, one INSERT of 10 rows, COMMIT', async () => {
    const items = Array.from({ length: 10 }, (_, i) => ({ op: 'create', data: { name: `Batch ${i}` } }));
    for (let run = 0; run < RUNS; run++) {
      expect(await statementsOf('POST', '/v1/customers/batch', { items })).toEqual(['COMMIT', 'INSERT customers', 'SET LOCAL']);
    }
  });

  it('a partial batch of 10 creates, 2 refused for their input, writes the other 8 in one INSERT (no savepoint per item), answering each in its place', async () => {
    const items = Array.from({ length: 10 }, (_, i) => ({ op: 'create', data: { name: `Partial ${i}`, ...(i % 5 === 3 ? { email: 'not an address' } : {}) } }));
    await statementsOf('GET', '/v1/customers?limit=1');
    for (let run = 0; run < RUNS; run++) {
      statements.length = 0;
      const response = await send('POST', '/v1/customers/batch', { mode: 'partial', items });
      const body = await response.json();
      expect(response.status).toBe(200);
      expect(body.results.map((result: { index: number; status: number }) => [result.index, result.status])).toEqual(items.map((_, i) => [i, i % 5 === 3 ? 400 : 201]));
      expect(body.results[3].error.errors).toEqual([{ param: 'email', message: 'must be a valid e-mail address' }]);
      expect(body.results[4].record.name).toBe('Partial 4');
      expect(statements.filter((sql) => !LAST_USED.test(sql)).map(kindOf).sort()).toEqual(['COMMIT', 'INSERT customers', 'SET LOCAL']);
    }
  });

  it("a batch of 10 jobs of one customer holds the customer once, then one INSERT", async () => {
    const items = Array.from({ length: 10 }, (_, i) => ({ op: 'create', data: { customer_id: customerId, title: `Job ${i}` } }));
    for (let run = 0; run < RUNS; run++) {
      expect(await statementsOf('POST', '/v1/jobs/batch', { items })).toEqual(['COMMIT', 'INSERT jobs', 'SELECT', 'SET LOCAL']);
    }
  });

  it("a sync's first page is 2 statements (the page in change order, and a count); each page by cursor after it is 1", async () => {
    const first = await ok('GET', '/v1/customers?include_deleted=true&limit=20');
    const next = `/v1/customers?limit=20&cursor=${encodeURIComponent(first.pagination.next_cursor)}`;
    for (let run = 0; run < RUNS; run++) {
      // With deleted records there is no maintained count: the first page counts them.
      expect(await statementsOf('GET', '/v1/customers?include_deleted=true&limit=20')).toEqual(['SELECT customers', 'SELECT customers']);
      // The total rides in the cursor: a page by cursor is its rows alone.
      expect(await statementsOf('GET', next)).toEqual(['SELECT customers']);
    }
  });
  it("an import's answers never read its file back (kept until the import ends, up to 50 MiB)", async () => {
    statements.length = 0;
    const posted = await app.fetch(
      new Request('http://test/v1/imports?resource=customers&mode=create', { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'text/csv' }, body: 'name\nAda\n' }),
    );
    expect(posted.status).toBe(202);
    const { id } = (await posted.json()) as { id: string };
    const written = statements.filter((sql) => /INSERT INTO "public"\."imports"/.test(sql));
    expect(written).toHaveLength(1);
    expect(written[0]!.split('RETURNING')[1]).not.toMatch(/"csv"/);
    statements.length = 0;
    expect((await send('GET', `/v1/imports/${id}`)).status).toBe(200);
    const read = statements.filter((sql) => /"public"\."imports"/.test(sql));
    expect(read).toHaveLength(1);
    expect(read[0]).not.toMatch(/"csv"/);
  });
});

// CPU time per request, in this process: the service's fetch handler (no socket, no load
// generator competing for the cores) beside the parts of it that Prisma alone costs and
// the same statements through pg alone. Throughput on a 2-core machine moves with whatever
// else runs; the CPU a request costs moves far less, so this is where changes are compared.
import pg from 'pg';
import { Request } from '../src/http/fetch.js';
import type { BenchData } from './seed.js';
import { CREATE_BODY, CUSTOMER_INSERT, LIST_QUERY, NESTED_QUERY, uuid7 } from './types.js';

export interface CpuRow {
  scenario: string;
  /** Milliseconds of CPU (user + system) per request: the least, and the median, of the rounds. */
  min: number;
  median: number;
}

const ROUNDS = 8;
const PER_ROUND = 2000;
const CONCURRENCY = 16;

async function cpuPerCall(call: () => Promise<unknown>): Promise<{ min: number; median: number }> {
  const round = async () => {
    let started = 0;
    const before = process.cpuUsage();
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (started++ < PER_ROUND) await call();
    }));
    const used = process.cpuUsage(before);
    return (used.user + used.system) / 1000 / PER_ROUND;
  };
  await round(); // warm-up: JIT, compiled documents, Prisma's query plans
  const rounds: number[] = [];
  for (let i = 0; i < ROUNDS; i++) rounds.push(await round());
  rounds.sort((a, b) => a - b);
  return { min: rounds[0]!, median: rounds[ROUNDS / 2]! };
}

/** `only`: run just the calls whose name contains it (an A/B of one path takes a minute, not three). */
export async function cpuCost(data: BenchData, only = ''): Promise<{ rows: CpuRow[]; notes: string[] }> {
  // As in production: Prisma and the schema read NODE_ENV when they are set up.
  process.env.NODE_ENV = 'production';
  const [{ openDatabase }, { createRateLimiter }, { createApp }, { createLogger }, { tenantClients, findMany }, { NEWEST_FIRST }, { relationQuery }] = await Promise.all([
    import('../src/db/connection.js'),
    import('../src/rate-limit.js'),
    import('../src/server.js'),
    import('../src/logger.js'),
    import('../src/db/tenant.js'),
    import('../src/schema/pagination.js'),
    import('../src/schema/relations.js'),
  ]);
  const db = await openDatabase({ databaseUrl: data.databaseUrl, dataDir: '' });
  const log = createLogger('warn');
  const app = createApp({ db, log, rateLimiter: createRateLimiter({ max: 1_000_000_000, windowSeconds: 60, log }) });
  const tenant = tenantClients(db.prisma)(data.organizationId);
  // The service's own client: its list pages and items are plain reads (db/plain-reads.ts).
  const served = tenantClients(db.prisma, { read: db.read })(data.organizationId);
  const pool = new pg.Pool({ connectionString: data.databaseUrl, max: 10 });
  const headers = { authorization: `Bearer ${data.keys[0]}`, 'content-type': 'application/json' };
  const fetchOk = async (path: string, body?: string) => {
    const response = await app.fetch(new Request(`http://bench${path}`, { method: body ? 'POST' : 'GET', headers, body }));
    const text = await response.text();
    if ((response.status !== 200 && response.status !== 201) || text.includes('"errors"')) throw new Error(`${path} answered ${response.status}: ${text.slice(0, 200)}`);
  };
  const graphql = (query: string) => () => fetchOk('/graphql', JSON.stringify({ query }));
  const columns = { id: true, name: true, email: true, phone: true, createdAt: true, updatedAt: true, version: true, deletedAt: true, changeSeq: true };
  const page = (take: number) => () => tenant.customer.findMany({ select: columns, orderBy: NEWEST_FIRST, take });
  // The nested query's one statement as the schema asks Prisma for it: every column of each
  // level, the newest five live jobs and invoices (the relations' own query), and the lines.
  const related = relationQuery({ limit: 5 });
  const nestedArgs = {
    include: { jobs: related, invoices: { ...related, include: { lineItems: { orderBy: { position: 'asc' as const } } } } },
    orderBy: NEWEST_FIRST,
    take: 21,
  };
  const nested = () => tenant.customer.findMany(nestedArgs);
  const sql = `SELECT id, name, email, phone, created_at, updated_at, version, deleted_at, change_seq FROM customers
    WHERE organization_id = $1 AND deleted_at IS NULL ORDER BY created_at DESC, id DESC LIMIT 21`;
  const scenarios: Array<[string, () => Promise<unknown>]> = [
    ['REST GET /v1/customers?limit=20 (the whole handler)', () => fetchOk('/v1/customers?limit=20')],
    ['GraphQL customers(limit: 20) list with pagination', graphql(LIST_QUERY)],
    ['GraphQL nested (20 customers, jobs, invoices, line items)', graphql(NESTED_QUERY)],
    ['Prisma alone: the list page (21 rows; the service reads it plainly, below)', page(21)],
    ['Prisma alone: the same query, 1 row', page(1)],
    ['Prisma alone: the nested page (21 customers, their jobs, invoices and lines, one statement; the service reads it plainly, below)', nested],
    ['Prisma alone: the maintained count (findUnique)', () => tenant.recordCount.findUnique({ where: { organizationId_resource_status: { organizationId: data.organizationId, resource: 'customers', status: '' } }, select: { count: true } })],
    ['plain read: the list page as the service reads it (db/plain-reads.ts, 21 rows)', () => findMany(served, 'Customer', { select: columns, orderBy: NEWEST_FIRST, take: 21 }, () => Promise.reject(new Error('not a plain read')))],
    ['plain read: the nested page as the service reads it (its relations as JSON sub-selects)', () => findMany(served, 'Customer', nestedArgs, () => Promise.reject(new Error('not a plain read')))],
    ["Prisma's raw SQL: the same statement through $queryRawUnsafe (why plain reads go to the pool)", () => db.prisma.$queryRawUnsafe(sql, data.organizationId)],
    ['pg alone: the list page (21 rows, same SQL)', () => pool.query(sql, [data.organizationId])],
    ['REST POST /v1/customers (the whole handler: one create, its transaction and event)', () => fetchOk('/v1/customers', CREATE_BODY)],
    ['pg alone: the references\' create, one INSERT (its own transaction, the same triggers)', () => pool.query(CUSTOMER_INSERT, [uuid7(), data.organizationId, 'Bench Customer', 'bench@example.com'])],
  ];
  const rows: CpuRow[] = [];
  try {
    for (const [scenario, call] of scenarios.filter(([name]) => name.includes(only))) {
      rows.push({ scenario, ...(await cpuPerCall(call)) });
      console.log(JSON.stringify(rows.at(-1)));
    }
  } finally {
    await pool.end();
    await db.close();
  }
  const notes = [
    `CPU of this process per call, in ms: ${ROUNDS} rounds of ${PER_ROUND} calls, ${CONCURRENCY} at a time, after one warm-up round; the least and the median round. ` +
      'No socket and no load generator: the handler is called with the Request class the HTTP server gives it. PostgreSQL runs in its own processes and is not counted.',
  ];
  return { rows, notes };
}

export function cpuTable(rows: CpuRow[]): string[] {
  return ['| call | CPU ms (least round) | CPU ms (median round) |', '|---|---|---|', ...rows.map((r) => `| ${r.scenario} | ${r.min.toFixed(3)} | ${r.median.toFixed(3)} |`)];
}

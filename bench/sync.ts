// Sync at scale: a client pulling every customer by cursor (deep cursors must cost what the
// first page costs), the same pages by page number for contrast, and `updated_since` when
// only a few thousand of many records changed, with the plans PostgreSQL runs for it.
import autocannon from 'autocannon';
import pg from 'pg';
import { openDatabase } from '../src/db/connection.js';
import { tenantClient, type TenantClient } from '../src/db/tenant.js';
import type { BenchData } from './seed.js';
import type { Row, Server } from './types.js';

/** What run.ts lends: its measurement, its rotating keys and ids, its memory probe. */
export interface Bench {
  measure(name: string, server: Server, scenario: { path: string; method?: string; body?: string; connections?: number; ids?: string[] }): Promise<Row>;
  authorization(): string;
  rssMb(pid: number): number;
  rotatingIds(path: string, ids: string[]): { setupRequest: (req: { headers?: Record<string, string> }) => object };
  headersOf(scenario: { body?: string }): Record<string, string>;
}

const LIMIT = 100;
/** The walk reads the whole list up to this many records (at 1,000,000 the first 100,000). */
const WALK_MAX = 100_000;
/** Single requests are timed this many times; the median is reported. */
const REPEAT = 10;
/** Customers changed (by PATCH, through the service) before the `updated_since` rows. */
const CHANGED = 3000;

interface Fetched {
  ms: number;
  status: number;
  text: string;
  body?: { data: Array<{ id: string; deleted?: boolean }>; pagination: { total: number; next_cursor: string | null; has_more: boolean } };
}

async function get(bench: Bench, server: Server, path: string): Promise<Fetched> {
  const begun = performance.now();
  const response = await fetch(server.url + path, { headers: { authorization: bench.authorization() } });
  const text = await response.text();
  const ms = performance.now() - begun;
  let body: Fetched['body'];
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { ms, status: response.status, text, body: response.ok && body?.pagination ? body : undefined };
}

const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
const median = (values: number[]) => sorted(values)[Math.floor(values.length / 2)] ?? NaN;
const percentile = (values: number[], p: number) => sorted(values)[Math.max(0, Math.ceil(p * values.length) - 1)] ?? NaN;
const ms = (value: number) => value.toFixed(1);
const failed = (what: string, page: Fetched) => `${what} answered ${page.status}: ${page.text.slice(0, 300)}`;

/** The median time of `path`, requested REPEAT times one after another; failures are listed. */
async function timed(bench: Bench, server: Server, path: string, failures: string[]): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < REPEAT; i++) {
    const page = await get(bench, server, path);
    if (!page.body) failures.push(failed(`GET ${path.slice(0, 140)}`, page));
    times.push(page.ms);
  }
  return median(times);
}

function sampling(bench: Bench, server: Server) {
  let peak = 0;
  const timer = setInterval(() => (peak = Math.max(peak, bench.rssMb(server.process.pid!))), 250);
  return () => {
    clearInterval(timer);
    return peak;
  };
}

/**
 * One client follows `next_cursor` (limit=100) from `?include_deleted=true` until `has_more`
 * is false, each page with the next bench key as a fleet of clients would; then times the
 * first page and the last page again, by cursor and by page number.
 */
export async function syncWalk(bench: Bench, server: Server, data: BenchData): Promise<{ rows: Row[]; notes: string[] }> {
  const db = new pg.Client({ connectionString: data.databaseUrl });
  await db.connect();
  try {
    const { count } = (await db.query<{ count: number }>('SELECT count(*)::int AS count FROM customers WHERE organization_id = $1', [data.organizationId])).rows[0]!;
    const target = Math.min(count, WALK_MAX);
    const first = `/v1/customers?include_deleted=true&limit=${LIMIT}`;
    const failures: string[] = [];
    const times: number[] = [];
    const ids = new Set<string>();
    let records = 0;
    let tombstones = 0;
    let total = 0;
    let path = first;
    let lastPath = first;
    let finished = false;
    const peak = sampling(bench, server);
    const begun = performance.now();
    for (;;) {
      const page = await get(bench, server, path);
      if (!page.body) {
        failures.push(failed(`page ${times.length + 1} of the walk (GET ${path.slice(0, 140)})`, page));
        break;
      }
      times.push(page.ms);
      lastPath = path;
      for (const record of page.body.data) {
        ids.add(record.id);
        if (record.deleted) tombstones++;
      }
      records += page.body.data.length;
      total = page.body.pagination.total;
      if (!page.body.pagination.has_more) {
        finished = true;
        break;
      }
      if (records >= target) break;
      path = `/v1/customers?cursor=${page.body.pagination.next_cursor}&limit=${LIMIT}`;
    }
    const seconds = (performance.now() - begun) / 1000;
    const rssMb = peak();
    const pages = times.length;
    const cursorFirst = await timed(bench, server, first, failures);
    const cursorLast = await timed(bench, server, lastPath, failures);
    const numberFirst = await timed(bench, server, `${first}&page=1`, failures);
    const numberLast = await timed(bench, server, `${first}&page=${pages}`, failures);
    const explained = await explainWalk(data, db, pages);

    const complete = finished
      ? records === count && ids.size === count
        ? `all ${count} customers of the organization, each once, has_more false on the last page`
        : `has_more false after ${records} records (${ids.size} distinct), but the organization has ${count} customers: the walk MISSED OR REPEATED records`
      : records >= target
        ? `the first ${records} of ${count} customers (the walk stops at ${WALK_MAX}), ${ids.size} distinct`
        : `stopped by a failure after ${records} records`;
    const rows: Row[] = [
      {
        scenario: `REST sync by cursor, limit=${LIMIT}, ${pages} pages, 1 client (req/s = pages/s)`,
        system: 'service',
        rps: Math.round(pages / seconds),
        p50: Math.round(median(times)),
        p99: Math.round(percentile(times, 0.99)),
        errors: failures.length,
        rssMb,
      },
    ];
    const notes = [
      '',
      `Sync by cursor: one client followed next_cursor from \`GET /v1/customers?include_deleted=true&limit=${LIMIT}\`: ${complete}; ${tombstones} tombstones. ` +
        `${records} records in ${seconds.toFixed(1)} s = **${Math.round(records / seconds)} records/s** (${pages} sequential pages). ` +
        `During the walk: first page ${ms(times[0] ?? NaN)} ms, last page ${ms(times.at(-1) ?? NaN)} ms; median of the first 10 pages ${ms(median(times.slice(0, 10)))} ms, of the last 10 ${ms(median(times.slice(-10)))} ms. ` +
        `pagination.total on every page: ${total} (with include_deleted there is no maintained count: the first page counts the organization's customers, and the pages by cursor carry that count in the cursor). ` +
        `Each page used the next of the ${data.keys.length} bench keys; one key alone is allowed 600 requests a minute (at most ${600 * LIMIT} records a minute at limit=${LIMIT}).`,
      '',
      `| sync list, limit=${LIMIT}, 1 client, median of ${REPEAT} | first page ms | last page ms (page ${pages}) | last / first |`,
      '|---|---|---|---|',
      `| by cursor (\`?cursor=<next_cursor of page ${pages - 1}>\`) | ${ms(cursorFirst)} | ${ms(cursorLast)} | ${(cursorLast / cursorFirst).toFixed(2)} |`,
      `| by page number (\`?include_deleted=true&page=N\`) | ${ms(numberFirst)} | ${ms(numberLast)} | ${(numberLast / numberFirst).toFixed(2)} |`,
      '',
      ...explained,
      ...(failures.length ? ['', `**Sync walk failures (${failures.length}):**`, ...failures.slice(0, 10).map((f) => `- ${f}`)] : []),
    ];
    for (const note of notes) if (note) console.log(note);
    console.log(JSON.stringify(rows[0]));
    return { rows, notes };
  } finally {
    await db.end();
  }
}

/**
 * The SQL the service sends for a list page, as Prisma writes it: the same tenant client and
 * arguments as `paginate` (src/schema/pagination.ts), run here with query logging on.
 */
async function captureSql(databaseUrl: string, organizationId: string, run: (customers: TenantClient['customer']) => Promise<unknown>): Promise<string> {
  const seen: string[] = [];
  const db = await openDatabase({ databaseUrl, dataDir: '', poolSize: 1, onQuery: (sql) => seen.push(sql) });
  try {
    await run(tenantClient(db.prisma, organizationId).customer);
  } finally {
    await db.close();
  }
  const sql = seen.filter((text) => /"customers"/.test(text)).at(-1);
  if (!sql) throw new Error(`no customers query captured (saw: ${seen.join(' | ')})`);
  return sql;
}

/** Binds the captured statement's placeholders by what each one stands for. */
function bind(sql: string, values: { organization: string; since?: string; after?: string; limit?: number; offset?: number }): unknown[] {
  const slots: Array<[RegExp, unknown]> = [
    [/"organization_id" = \$(\d+)/, values.organization],
    [/"updated_at" >= \$(\d+)/, values.since],
    [/"change_seq" > \$(\d+)/, values.after],
    [/LIMIT \$(\d+)/, values.limit],
    [/OFFSET \$(\d+)/, values.offset ?? 0],
  ];
  const params: unknown[] = [];
  for (const [pattern, value] of slots) {
    const index = pattern.exec(sql)?.[1];
    if (index !== undefined) params[Number(index) - 1] = value;
  }
  const wanted = new Set([...sql.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
  for (const n of wanted) if (params[n - 1] === undefined) throw new Error(`cannot bind $${n} of: ${sql}`);
  return params;
}

async function explain(db: pg.Client, sql: string, params: unknown[]): Promise<string[]> {
  const { rows } = await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, params);
  return rows.map((r) => r['QUERY PLAN']);
}

/** The top plan node and the execution time, in one line. */
const summary = (plan: string[]) => `${plan[0]!.trim().replace(/\s+\(cost=[^)]*\)/, '')}; ${plan.find((line) => /Execution Time/.test(line))!.trim()}`;

/** How the walk's statements run: a deep cursor page, the same page by OFFSET, and the count of every page. */
async function explainWalk(data: BenchData, db: pg.Client, pages: number): Promise<string[]> {
  const { organizationId: organization, databaseUrl } = data;
  const order = [{ changeSeq: 'asc' as const }];
  const deep = (await db.query<{ change_seq: string }>('SELECT change_seq FROM customers WHERE organization_id = $1 ORDER BY change_seq LIMIT 1 OFFSET $2', [organization, (pages - 1) * LIMIT - 1])).rows[0]?.change_seq ?? '0';
  const cursorSql = await captureSql(databaseUrl, organization, (c) => c.findMany({ where: { deletedAt: undefined, AND: [{ changeSeq: { gt: BigInt(deep) } }] }, orderBy: order, skip: 0, take: LIMIT + 1 }));
  const offsetSql = await captureSql(databaseUrl, organization, (c) => c.findMany({ where: { deletedAt: undefined, AND: [{}] }, orderBy: order, skip: (pages - 1) * LIMIT, take: LIMIT + 1 }));
  const countSql = await captureSql(databaseUrl, organization, (c) => c.count({ where: { deletedAt: undefined } }));
  const cursorPlan = await explain(db, cursorSql, bind(cursorSql, { organization, after: deep, limit: LIMIT + 1 }));
  const offsetPlan = await explain(db, offsetSql, bind(offsetSql, { organization, limit: LIMIT + 1, offset: (pages - 1) * LIMIT }));
  const countPlan = await explain(db, countSql, bind(countSql, { organization }));
  return [
    `EXPLAIN (ANALYZE, BUFFERS) of the walk's statements as Prisma writes them (page ${pages}): ` +
      `by cursor (change_seq > ${deep}): ${summary(cursorPlan)}; ` +
      `by page number (OFFSET ${(pages - 1) * LIMIT}): ${summary(offsetPlan)}; ` +
      `the total every sync page also runs (count(*) of the organization's customers, deleted included): ${summary(countPlan)}.`,
  ];
}

/**
 * `updated_since` when few records changed: CHANGED customers spread over the list are
 * patched through the service, then `GET /v1/customers?updated_since=<just before>` is
 * measured under load and alone, and its two statements (the page and its count) explained.
 */
export async function updatedSince(bench: Bench, server: Server, data: BenchData, customers: number): Promise<{ rows: Row[]; notes: string[] }> {
  const db = new pg.Client({ connectionString: data.databaseUrl });
  await db.connect();
  try {
    const organization = data.organizationId;
    // Milliseconds, as the API takes and compares it; every seeded row is older.
    const since = new Date((await db.query<{ now: Date }>('SELECT now() AS now')).rows[0]!.now.getTime());
    const body = JSON.stringify({ name: 'Recently Changed' });
    const changedIds = data.customerIds.slice(0, CHANGED);
    const patched = await autocannon({
      url: server.url,
      connections: 16,
      amount: changedIds.length,
      requests: [{ method: 'PATCH', path: '/v1/customers/{id}', headers: bench.headersOf({ body }), body, ...bench.rotatingIds('/v1/customers/{id}', changedIds) }],
    });
    const patchFailures = patched.errors + patched.timeouts + patched.non2xx;
    const { matched } = (await db.query<{ matched: number }>(
      'SELECT count(*)::int AS matched FROM customers WHERE organization_id = $1 AND deleted_at IS NULL AND updated_at >= $2',
      [organization, since],
    )).rows[0]!;
    const first = `/v1/customers?updated_since=${encodeURIComponent(since.toISOString())}&limit=${LIMIT}`;
    const failures: string[] = [];
    // All the changes, by cursor, as a client catching up would read them.
    let path = first;
    let records = 0;
    let pages = 0;
    let total: number | undefined;
    const begun = performance.now();
    for (;;) {
      const page = await get(bench, server, path);
      if (!page.body) {
        failures.push(failed(`page ${pages + 1} of updated_since (GET ${path.slice(0, 140)})`, page));
        break;
      }
      pages++;
      records += page.body.data.length;
      total ??= page.body.pagination.total;
      if (!page.body.pagination.has_more) break;
      path = `/v1/customers?cursor=${page.body.pagination.next_cursor}&limit=${LIMIT}`;
    }
    const catchUp = (performance.now() - begun) / 1000;
    const alone = await timed(bench, server, first, failures);
    const name = `REST updated_since (${matched} of ${customers} changed), limit=${LIMIT}`;
    const rows = [await bench.measure(name, server, { path: first }), await bench.measure(`${name}, 1 connection`, server, { path: first, connections: 1 })];

    const where = { updatedAt: { gte: since } };
    const pageSql = await captureSql(data.databaseUrl, organization, (c) => c.findMany({ where: { ...where, AND: [{}] }, orderBy: [{ changeSeq: 'asc' }], skip: 0, take: LIMIT + 1 }));
    const countSql = await captureSql(data.databaseUrl, organization, (c) => c.count({ where }));
    const values = { organization, since: since.toISOString(), limit: LIMIT + 1 };
    const pagePlan = await explain(db, pageSql, bind(pageSql, values));
    const countPlan = await explain(db, countSql, bind(countSql, values));
    const notes = [
      '',
      `updated_since: ${changedIds.length} customers spread over the list were patched through the service (PATCH, 16 connections; ${patchFailures} failed), ` +
        `after which ${matched} of the organization's customers have updated_at >= ${since.toISOString()}. ` +
        `\`GET ${first}\` alone: median of ${REPEAT} ${ms(alone)} ms (pagination.total ${total}); ` +
        `reading all of them by cursor: ${records} records in ${pages} pages, ${catchUp.toFixed(2)} s.`,
      '',
      'EXPLAIN (ANALYZE, BUFFERS) of the two statements the service runs for that first page, as Prisma writes them (the tenant client and arguments of paginate(), captured with query logging and bound to the same values):',
      '',
      '```sql',
      pageSql,
      '```',
      '```',
      ...pagePlan,
      '```',
      '```sql',
      countSql,
      '```',
      '```',
      ...countPlan,
      '```',
      ...(failures.length ? ['', `**updated_since failures (${failures.length}):**`, ...failures.slice(0, 10).map((f) => `- ${f}`)] : []),
    ];
    for (const note of notes) if (note) console.log(note);
    return { rows, notes };
  } finally {
    await db.end();
  }
}

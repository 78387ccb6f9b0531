// npm run bench -- lists: the questions screens ask of a list (CONTRACT section 10, issue
// #27) at 100,000 customers in one organization, each beside the plain list: latency over
// HTTP against the service (one process, production's flags), and the plan PostgreSQL runs
// for each statement of the request (EXPLAIN ANALYZE, captured from the service's own client
// in this process).
// Then an audit of every sort of the lists that have data: the first page and a page 2,000
// records deep by cursor, with what each plan reads.
import http from 'node:http';
import pg from 'pg';
import { explain, SEQ_SCAN, statementsOf, type Statement } from './statements.js';
import type { BenchData } from './seed.js';

export interface ListRow {
  name: string;
  path: string;
  /** The resource's own plain list, its second yardstick. */
  resource: 'customers' | 'jobs' | 'invoices' | 'emails';
}

export interface Timing {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

export interface StatementPlan {
  text: string;
  values: unknown[];
  plan: string[];
}

const DEEP_PAGES = 250;
const DEEP_LIMIT = 100;

/** Dates as the screens send them: today, and this week (Monday to Monday, UTC). */
export function calendar(now = new Date()) {
  const day = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const monday = day - ((now.getUTCDay() + 6) % 7) * 86_400_000;
  const date = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  return { today: date(day), weekStart: `${date(monday)}T00:00:00Z`, weekEnd: `${date(monday + 7 * 86_400_000)}T00:00:00Z` };
}

/** The service in this process (no socket, no rate limit), for cursor walks and statements. */
export async function inProcess(data: BenchData) {
  process.env.NODE_ENV = 'production';
  const [{ openDatabase }, { createRateLimiter }, { createApp }, { createLogger }, { Request }] = await Promise.all([
    import('../src/db/connection.js'),
    import('../src/rate-limit.js'),
    import('../src/server.js'),
    import('../src/logger.js'),
    import('../src/http/fetch.js'),
  ]);
  const db = await openDatabase({ databaseUrl: data.databaseUrl, dataDir: '' });
  const log = createLogger('warn');
  const app = createApp({ db, log, rateLimiter: createRateLimiter({ max: 1_000_000_000, windowSeconds: 60, log }) });
  const client = new pg.Client({ connectionString: data.databaseUrl });
  await client.connect();
  const get = async (path: string): Promise<{ data: unknown[]; pagination: { next_cursor: string | null; total: number } }> => {
    const response = await app.fetch(new Request(`http://bench${path}`, { headers: { authorization: `Bearer ${data.keys[0]}` } }));
    const text = await response.text();
    if (response.status !== 200) throw new Error(`${path} answered ${response.status}: ${text.slice(0, 300)}`);
    return JSON.parse(text) as never;
  };
  return {
    get,
    /** A connection of its own for EXPLAIN. */
    client,
    close: async () => {
      await client.end();
      await db.close();
    },
  };
}

type Local = Awaited<ReturnType<typeof inProcess>>;
type Get = Local['get'];

/** The cursor `pages` pages of `limit` into a list: the next page starts `pages * limit` records deep. */
export async function deepCursor(get: Get, path: string, pages = DEEP_PAGES, limit = DEEP_LIMIT): Promise<string> {
  const [base, query = ''] = path.split('?');
  let url = `${base}?${query ? `${query}&` : ''}limit=${limit}`;
  let cursor: string | null = null;
  for (let i = 0; i < pages; i++) {
    cursor = (await get(url)).pagination.next_cursor;
    if (!cursor) throw new Error(`${path} ends before page ${i + 2}`);
    url = `${base}?limit=${limit}&cursor=${encodeURIComponent(cursor)}`;
  }
  return cursor!;
}

/** The rows: the plain lists, then each screen's question. */
export async function listRows(get: Get): Promise<ListRow[]> {
  const { today, weekStart, weekEnd } = calendar();
  const deep = async (path: string) => `/v1/invoices?cursor=${encodeURIComponent(await deepCursor(get, path))}`;
  return [
    { name: 'plain list: GET /v1/invoices', path: '/v1/invoices', resource: 'invoices' },
    { name: 'plain list: GET /v1/customers', path: '/v1/customers', resource: 'customers' },
    { name: 'plain list: GET /v1/jobs', path: '/v1/jobs', resource: 'jobs' },
    { name: 'overdue invoices by due date', path: `/v1/invoices?status=sent&due_date[lt]=${today}&order_by=due_date`, resource: 'invoices' },
    { name: "this week's jobs by scheduled_at", path: `/v1/jobs?scheduled_at[gte]=${weekStart}&scheduled_at[lt]=${weekEnd}&order_by=scheduled_at`, resource: 'jobs' },
    { name: 'customers with a sent invoice', path: '/v1/customers?invoices[status]=sent', resource: 'customers' },
    { name: 'invoices with expand=customer', path: '/v1/invoices?expand=customer', resource: 'invoices' },
    { name: `invoices order_by=-total_amount, cursor ${DEEP_PAGES * DEEP_LIMIT} deep`, path: await deep('/v1/invoices?order_by=-total_amount'), resource: 'invoices' },
    { name: `invoices order_by=due_date (nullable), cursor ${DEEP_PAGES * DEEP_LIMIT} deep`, path: await deep('/v1/invoices?order_by=due_date'), resource: 'invoices' },
  ];
}

/** Statements on the business tables (not the key lookup), with their plans. */
export async function plansOf({ get, client }: Pick<Local, 'get' | 'client'>, path: string): Promise<StatementPlan[]> {
  await get(path); // warm: the first request prepares what later ones reuse
  const statements = await statementsOf(() => get(path));
  const listed = statements.filter((s: Statement) => /"public"\."(customers|jobs|emails|invoices|estimates|proposals)"/.test(s.text));
  const plans: StatementPlan[] = [];
  for (const statement of listed) plans.push({ ...statement, plan: await explain(client, statement) });
  return plans;
}

/**
 * `path` requested over `connections` keep-alive connections for `seconds` (after `warmup`
 * seconds unmeasured), each request with the next key; every request's latency timed here,
 * so the percentiles are exact to the microsecond rather than whole milliseconds.
 */
export async function timeRequests(url: string, path: string, keys: string[], { connections, warmup, seconds }: { connections: number; warmup: number; seconds: number }): Promise<Timing> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const { hostname, port } = new URL(url);
  let next = 0;
  const once = () =>
    new Promise<boolean>((resolve) => {
      const request = http.get({ hostname, port, path, agent, headers: { authorization: `Bearer ${keys[next++ % keys.length]}` } }, (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode === 200));
      });
      request.on('error', () => resolve(false));
    });
  const run = async (ms: number, latencies?: number[]) => {
    const until = performance.now() + ms;
    let errors = 0;
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (performance.now() < until) {
          const begun = performance.now();
          const ok = await once();
          latencies?.push(performance.now() - begun);
          if (!ok) errors++;
        }
      }),
    );
    return errors;
  };
  try {
    await run(warmup * 1000);
    const latencies: number[] = [];
    const begun = performance.now();
    const errors = await run(seconds * 1000, latencies);
    const elapsed = (performance.now() - begun) / 1000;
    latencies.sort((a, b) => a - b);
    const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
    return { requests: latencies.length, rps: Math.round(latencies.length / elapsed), p50: at(0.5), p99: at(0.99), errors };
  } finally {
    agent.destroy();
  }
}

/** What a plan reads, in a few words: its scans, whether it sorts, rows filtered away, its time. */
export function planSummary(plan: string[]): { scans: string; sort: string; removed: number; ms: number; seq: boolean } {
  // The list's own tables: an invoice's lines and the maintained counts are read by key.
  const scanned = plan
    .map((line) => /((?:Parallel )?(?:Index Only Scan|Index Scan|Bitmap Index Scan|Seq Scan)(?: Backward)?)(?: using (\S+))? on (\S+)/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null && !['invoice_line_items', 'record_counts'].includes(m[3]!))
    .map((m) => `${m[1]} ${m[2] ?? m[3]}`);
  const sorts = plan.filter((line) => /^\s*(->\s*)?(Incremental )?Sort\s/.test(line)).map((line) => (/Incremental Sort/.test(line) ? 'incremental' : 'sort'));
  const removed = plan.reduce((sum, line) => sum + Number(/Rows Removed by Filter: (\d+)/.exec(line)?.[1] ?? 0), 0);
  const ms = Number(/Execution Time: ([\d.]+) ms/.exec(plan.join('\n'))?.[1] ?? NaN);
  return {
    scans: [...new Set(scanned)].join('; ') || '(none)',
    sort: sorts.length ? [...new Set(sorts)].join(', ') : 'no',
    removed,
    ms,
    seq: plan.some((line) => SEQ_SCAN.test(line) && !/on (record_counts|invoice_line_items)\b/.test(line)),
  };
}

/** Sortable fields of the lists the seed fills (CONTRACT section 10), in REST's words. */
export const SORTS: Record<string, string[]> = {
  customers: ['name', 'email', 'created_at', 'updated_at'],
  jobs: ['title', 'status', 'scheduled_at', 'completed_at', 'created_at', 'updated_at'],
  emails: ['sent_at', 'created_at', 'updated_at'],
  invoices: ['number', 'status', 'total_amount', 'issued_at', 'due_date', 'paid_at', 'created_at', 'updated_at'],
};

/** `search` on each list the seed fills, and the relation and exact filters screens use. */
export const FILTERS: string[] = [
  '/v1/customers?search=grace',
  '/v1/jobs?search=boiler',
  '/v1/emails?search=office',
  '/v1/invoices?search=INV-00123',
  '/v1/customers?email=ada.12@example.com',
  '/v1/customers?phone=%2B15550000012',
  '/v1/customers?jobs[status]=scheduled',
  '/v1/invoices?customer[search]=grace',
  '/v1/invoices?job[status]=completed',
  '/v1/invoices?status=sent,paid&order_by=due_date',
  '/v1/invoices?total_amount[gte]=450000&order_by=-total_amount',
];

export interface AuditRow {
  request: string;
  depth: number;
  summary: ReturnType<typeof planSummary>;
}

/** Every sort, both ways, first page and `pages * limit` deep; then the filters. Main statements only. */
export async function audit(local: Pick<Local, 'get' | 'client'>, pages = 20, limit = 100): Promise<AuditRow[]> {
  const { get } = local;
  const rows: AuditRow[] = [];
  const main = async (request: string, path: string, depth: number) => {
    const plans = await plansOf(local, path);
    const statement = plans.find((p) => /LIMIT/.test(p.text)) ?? plans[0]!;
    rows.push({ request, depth, summary: planSummary(statement.plan) });
  };
  for (const [resource, fields] of Object.entries(SORTS)) {
    for (const field of fields) {
      for (const sign of ['', '-']) {
        const request = `/v1/${resource}?order_by=${sign}${field}`;
        await main(request, request, 0);
        await main(request, `/v1/${resource}?cursor=${encodeURIComponent(await deepCursor(get, request, pages, limit))}`, pages * limit);
      }
    }
  }
  for (const request of FILTERS) await main(request, request, 0);
  return rows;
}

const ms = (value: number) => value.toFixed(2);

/** The results: the rows against the plain lists, the goal, each row's plans, the audit. */
export function listsMarkdown(rows: ListRow[], timings: Map<string, Timing>, plans: Map<string, StatementPlan[]>, audited: AuditRow[], notes: string[]): string {
  const plain = timings.get(rows[0]!.name)!;
  const own = (row: ListRow) => timings.get(rows.find((r) => r.name.startsWith('plain list') && r.resource === row.resource)!.name)!;
  const seq = (row: ListRow) => plans.get(row.name)!.some((p) => planSummary(p.plan).seq);
  const lines = [
    '| row | req/s | p50 ms | p99 ms | p50 / plain invoices | p99 / plain invoices | p50 / its own plain list | sequential scan | errors |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows.map((row) => {
      const t = timings.get(row.name)!;
      const mine = own(row);
      return `| ${row.name} | ${t.rps} | ${ms(t.p50)} | ${ms(t.p99)} | ${(t.p50 / plain.p50).toFixed(2)} | ${(t.p99 / plain.p99).toFixed(2)} | ${(t.p50 / mine.p50).toFixed(2)} | ${seq(row) ? 'yes' : 'no'} | ${t.errors} |`;
    }),
    '',
    'Goal (issue #27): each row within 2x of the plain list (p50 and p99) and no sequential scan of a list table. ' +
      'Rows over it: ' +
      (rows
        .slice(1)
        .filter((row) => {
          const t = timings.get(row.name)!;
          return t.p50 > 2 * plain.p50 || t.p99 > 2 * plain.p99 || seq(row);
        })
        .map((row) => row.name)
        .join('; ') || 'none') +
      '.',
    '',
    ...notes,
    '',
    'Requests (REST):',
    '',
    ...rows.map((row) => `- ${row.name}: \`GET ${row.path.length > 160 ? `${row.path.slice(0, 160)}...` : row.path}\``),
    '',
    '## Plans',
    '',
    'EXPLAIN (ANALYZE, BUFFERS) of every statement each request sends to a list table (the key lookup and the maintained counts left out), run once on the seeded database before the timed rows, with the parameters the service sent.',
  ];
  for (const row of rows) {
    lines.push('', `### ${row.name}`, '');
    for (const statement of plans.get(row.name)!) {
      lines.push('```sql', statement.text, `-- parameters: ${JSON.stringify(statement.values)}`, '```', '```', ...statement.plan, '```', '');
    }
  }
  lines.push(
    '## Audit: every sort, first page and 2,000 records deep',
    '',
    'The main statement of each request (the page, not its count): what it scans, whether it sorts, the rows it reads and throws away, and its execution time. ' +
      'A deep page is the cursor after 20 pages of 100. Lists without data in the seed (estimates, proposals) are left out: their plans on empty tables say nothing.',
    '',
    '| request | depth | scans | sort | rows removed by filter | ms |',
    '|---|---|---|---|---|---|',
    ...audited.map((a) => `| \`${a.request}\` | ${a.depth} | ${a.summary.scans} | ${a.summary.sort} | ${a.summary.removed} | ${ms(a.summary.ms)} |`),
    '',
  );
  return lines.join('\n');
}

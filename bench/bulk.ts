// npm run bench -- bulk: bulk writes (issue #28) into one organization on PostgreSQL, in
// records a second: customers created one REST call at a time (a few connections, as an
// importer would), by batch calls of 100, and by one CSV import, beside PostgreSQL's own
// COPY of the same rows into a scratch table shaped like `customers` (the physical limit).
// While the import runs, another organization's single creates are timed beside the same
// creates just before it. What the database does meanwhile is sampled (sessions waiting on a
// lock, sessions idle inside a transaction), and the statements each call sends are recorded
// in this process, so a slow row comes with the reason.
import { spawn } from 'node:child_process';
import http from 'node:http';
import pg from 'pg';
import { sampleActivity, type Activity } from './activity.js';
import { statementsOf, type Statement } from './statements.js';
import type { BenchData } from './seed.js';

const FIRST = ['Ada', 'Grace', 'Alan', 'Katherine', 'Linus', 'Margaret', 'Tim', 'Barbara', 'Dennis', 'Frances', 'Ken', 'Radia'];
const LAST = ['Lovelace', 'Hopper', 'Turing', 'Johnson', 'Torvalds', 'Hamilton', 'Lee', 'Liskov', 'Ritchie', 'Allen', 'Thompson', 'Perlman'];
export const BATCH_SIZE = 100;
/** Thrown to roll a timed transaction back. */
const ROLLBACK = new Error('rolled back on purpose');
const COLUMNS = ['name', 'email', 'phone', 'external_id'] as const;

type Customer = Record<(typeof COLUMNS)[number], string>;

/** The `i`th customer of a row: the same shape in every row, `tag` keeps e-mails and external ids apart. */
export function customer(tag: string, i: number): Customer {
  const first = FIRST[i % 12]!;
  return { name: `${first} ${LAST[Math.floor(i / 12) % 12]} ${i}`, email: `${first.toLowerCase()}.${tag}.${i}@example.com`, phone: `+1555${String(i).padStart(7, '0')}`, external_id: `${tag}-${i}` };
}

/** The rows as an import file (and as COPY reads it): a header, then one line per customer; no value needs quoting. */
export function csvOf(tag: string, count: number): string {
  const lines = [COLUMNS.join(',')];
  for (let i = 0; i < count; i++) lines.push(COLUMNS.map((c) => customer(tag, i)[c]).join(','));
  return lines.join('\n') + '\n';
}

export interface Sampled {
  /** Sessions of the database running a statement, on average. */
  active: number;
  /** Of them, waiting on a lock (Lock:transactionid, Lock:tuple, ...). */
  lockWaits: number;
  /** Sessions inside a transaction waiting for the service's next statement. */
  idleInTransaction: number;
}

export interface BulkRow {
  kind: 'single' | 'batch' | 'import' | 'copy';
  name: string;
  connections?: number;
  records: number;
  seconds: number;
  rate: number;
  calls: number;
  p50?: number;
  p99?: number;
  errors: number;
  sampled?: Sampled;
  note?: string;
}

interface Answer {
  status: number;
  text: string;
  ms: number;
}

/** One HTTP call on a keep-alive agent, timed here. */
function call(agent: http.Agent, url: string, method: string, path: string, key: string, body?: string, type = 'application/json'): Promise<Answer> {
  const { hostname, port } = new URL(url);
  const begun = performance.now();
  return new Promise((resolve, reject) => {
    const request = http.request({ hostname, port, path, method, agent, headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': type, 'content-length': Buffer.byteLength(body) } : {}) } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString(), ms: performance.now() - begun }));
    });
    request.on('error', reject);
    request.end(body);
  });
}

const percentile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

/** What pg_stat_activity shows of the bench database every 100 ms while `run` runs. */
async function sampling<T>(databaseUrl: string, run: () => Promise<T>): Promise<{ result: T; sampled: Sampled }> {
  const sampler = sampleActivity(databaseUrl, 100);
  let activity: Activity = [];
  let result: T;
  try {
    result = await run();
  } finally {
    activity = await sampler.stop();
  }
  const sum = (matches: (what: string) => boolean) => activity.filter(([what]) => matches(what)).reduce((total, [, n]) => total + n, 0);
  return {
    result,
    sampled: {
      active: sum((what) => what.startsWith('active')),
      lockWaits: sum((what) => what.startsWith('active waiting Lock:')),
      idleInTransaction: sum((what) => what.startsWith('idle in transaction')),
    },
  };
}

/** `bodies` posted to `path` over `connections` keep-alive connections, each next body to the next free one; every answer must be `ok`. */
async function drive(url: string, key: string, path: string, bodies: string[], connections: number, ok: (answer: Answer) => boolean) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const latencies: number[] = [];
  let next = 0;
  let errors = 0;
  let firstError: string | undefined;
  const begun = performance.now();
  try {
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (next < bodies.length) {
          const answer = await call(agent, url, 'POST', path, key, bodies[next++]!);
          latencies.push(answer.ms);
          if (!ok(answer)) {
            errors++;
            firstError ??= `${answer.status} ${answer.text.slice(0, 300)}`;
          }
        }
      }),
    );
  } finally {
    agent.destroy();
  }
  const seconds = (performance.now() - begun) / 1000;
  latencies.sort((a, b) => a - b);
  if (firstError) console.error(`${path}: ${errors} calls failed; first: ${firstError}`);
  return { seconds, calls: latencies.length, ok: latencies.length - errors, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), errors };
}

/** `count` sequential creates of another organization: their latencies, sorted. */
async function probe(url: string, key: string, tag: string, count: number): Promise<{ p50: number; p99: number; errors: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const latencies: number[] = [];
  let errors = 0;
  try {
    for (let i = 0; i < count; i++) {
      const answer = await call(agent, url, 'POST', '/v1/customers', key, JSON.stringify(customer(tag, i)));
      latencies.push(answer.ms);
      if (answer.status !== 201) errors++;
    }
  } finally {
    agent.destroy();
  }
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), errors };
}

interface ImportState {
  id: string;
  status: string;
  total: number;
  created: number;
  failed: number;
  created_at: string;
  completed_at: string | null;
  errors: unknown[];
}

export interface Probes {
  count: number;
  idle: { p50: number; p99: number; errors: number };
  during: { p50: number; p99: number; errors: number };
  /** Whether the import was still running when the last create during it answered. */
  overlapped: boolean;
}

const IMPORT_POLL_MS = 200;

/**
 * Posts `csv` as an import and follows it to its end (polled every IMPORT_POLL_MS: each poll is
 * a request the import gives way to, see src/http/foreground.ts); `beside` runs once
 * it is running. Answers the seconds from the POST to the poll that saw it completed, its own
 * created_at to completed_at, and whether it was still running when `beside` ended.
 */
async function importOf(url: string, agent: http.Agent, key: string, csv: string, rows: number, beside?: () => Promise<void>): Promise<{ seconds: number; importSeconds: number; overlapped: boolean }> {
  const begun = performance.now();
  const posted = await call(agent, url, 'POST', '/v1/imports?resource=customers&mode=create', key, csv, 'text/csv');
  if (posted.status !== 202) throw new Error(`POST /v1/imports answered ${posted.status}: ${posted.text.slice(0, 300)}`);
  const { id } = JSON.parse(posted.text) as { id: string };
  const state = async () => {
    const answer = await call(agent, url, 'GET', `/v1/imports/${id}`, key);
    if (answer.status !== 200) throw new Error(`GET /v1/imports/${id} answered ${answer.status}: ${answer.text.slice(0, 300)}`);
    return JSON.parse(answer.text) as ImportState;
  };
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  let current = await state();
  while (current.status === 'pending') {
    await pause(IMPORT_POLL_MS);
    current = await state();
  }
  // Its end is watched beside `beside`, so neither waits for the other.
  let ended = 0;
  const watched = (async () => {
    while (current.status === 'running') {
      await pause(IMPORT_POLL_MS);
      current = await state();
    }
    ended = performance.now();
  })();
  // Its failure is reported when awaited below, not as an unhandled rejection meanwhile.
  watched.catch(() => undefined);
  await beside?.();
  const overlapped = current.status === 'running';
  await watched;
  if (current.status !== 'completed' || current.created !== rows || current.failed !== 0) throw new Error(`import ended ${current.status}: ${current.created} created, ${current.failed} failed: ${JSON.stringify(current.errors.slice(0, 3))}`);
  return { seconds: (ended - begun) / 1000, importSeconds: (Date.parse(current.completed_at!) - Date.parse(current.created_at)) / 1000, overlapped };
}

/**
 * `VACUUM organization_counters, record_counts` before each row: every write updates their
 * rows, and this server runs without autovacuum (a production server vacuums them as it
 * goes); without it each row would start on the dead versions the rows before it left.
 */
async function vacuumCounters(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('VACUUM organization_counters, record_counts');
  } finally {
    await client.end();
  }
}

/** Rows 1 to 3 against the running service, in this order; the other organization's creates around row 3. */
export async function serviceRows(url: string, data: BenchData, otherKey: string, { rows, connections, probes }: { rows: number; connections: number; probes: number }): Promise<{ rows: BulkRow[]; probes: Probes; importSeconds: number }> {
  const key = data.keys[0]!;
  const out: BulkRow[] = [];

  const singles = Array.from({ length: rows }, (_, i) => JSON.stringify(customer('single', i)));
  console.log(`single creates: ${rows} over ${connections} connections...`);
  await vacuumCounters(data.databaseUrl);
  const single = await sampling(data.databaseUrl, () => drive(url, key, '/v1/customers', singles, connections, (a) => a.status === 201));
  // Only what was written counts: a failed call's records are not in the rate.
  const { ok: singleOk, ...singleRun } = single.result;
  out.push({ kind: 'single', name: `POST /v1/customers, one record a call`, connections, records: singleOk, rate: singleOk / singleRun.seconds, ...singleRun, sampled: single.sampled });
  console.log(JSON.stringify(out.at(-1)));

  // Batches over as many connections as the single calls, then over one (an importer sending
  // its next batch when the last answered: no batch waits on another's lock).
  for (const [tag, over] of [['batch', connections], ['batch1', 1]] as const) {
    const batches: string[] = [];
    for (let i = 0; i < rows; i += BATCH_SIZE) {
      const items = Array.from({ length: Math.min(BATCH_SIZE, rows - i) }, (_, j) => {
        const { external_id, ...fields } = customer(tag, i + j);
        return { op: 'create', external_id, data: fields };
      });
      batches.push(JSON.stringify({ items }));
    }
    console.log(`batches: ${batches.length} calls of ${BATCH_SIZE} over ${over} connection(s)...`);
    await vacuumCounters(data.databaseUrl);
    const allCreated = (a: Answer) => a.status === 200 && (JSON.parse(a.text) as { results: Array<{ status: number }> }).results.every((r) => r.status === 201);
    const batch = await sampling(data.databaseUrl, () => drive(url, key, '/v1/customers/batch', batches, over, allCreated));
    const { ok, ...run } = batch.result;
    const records = Math.min(rows, ok * BATCH_SIZE);
    out.push({ kind: 'batch', name: `POST /v1/customers/batch, ${BATCH_SIZE} creates a call, atomic`, connections: over, records, rate: records / run.seconds, ...run, sampled: batch.sampled });
    console.log(JSON.stringify(out.at(-1)));
  }

  // The import alone (the row beside COPY), then a second import of as many rows (tag
  // `import2`) while the other organization's creates are timed, after the same creates idle.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 2 });
  await vacuumCounters(data.databaseUrl);
  const alone = await sampling(data.databaseUrl, () => importOf(url, agent, key, csvOf('import', rows), rows));
  console.log(`other organization: ${probes} sequential creates, idle...`);
  const idle = await probe(url, otherKey, 'idle', probes);
  let during: Probes['during'] | undefined;
  await vacuumCounters(data.databaseUrl);
  const beside = await importOf(url, agent, key, csvOf('import2', rows), rows, async () => {
    console.log(`import running; other organization: ${probes} sequential creates...`);
    during = await probe(url, otherKey, 'during', probes);
  });
  agent.destroy();
  out.push({
    kind: 'import',
    name: 'POST /v1/imports?resource=customers&mode=create, one CSV file',
    connections: 1,
    records: rows,
    seconds: alone.result.seconds,
    rate: rows / alone.result.seconds,
    calls: 1,
    errors: 0,
    sampled: alone.sampled,
    note: `from the POST (the file sent) to the poll that saw \`completed\` (polled every ${IMPORT_POLL_MS} ms); the import's own created_at to completed_at: ${alone.result.importSeconds.toFixed(2)} s. The second import, beside the other organization's creates: ${Math.round(rows / beside.seconds)} records/s`,
  });
  console.log(JSON.stringify(out.at(-1)));
  const importSeconds = alone.result.importSeconds;
  const overlapped = beside.overlapped;
  return { rows: out, probes: { count: probes, idle, during: during!, overlapped }, importSeconds };
}

const SCRATCH = 'customers_copy';

/**
 * The scratch table: `customers`' columns, defaults, checks and indexes (the unique external
 * id among them) and its foreign key to the organization, without its triggers; what the
 * file does not name comes from defaults, as the service fills it in.
 */
export async function createScratch(client: pg.Client, organizationId: string) {
  await client.query(`DROP TABLE IF EXISTS ${SCRATCH}`);
  await client.query(`CREATE TABLE ${SCRATCH} (LIKE customers INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES)`);
  await client.query(
    `ALTER TABLE ${SCRATCH} ALTER id SET DEFAULT gen_random_uuid(), ALTER organization_id SET DEFAULT '${organizationId}'::uuid, ALTER updated_at SET DEFAULT now(),
       ADD FOREIGN KEY (organization_id) REFERENCES organizations(id)`,
  );
}

/**
 * Row 4: COPY of the import's file (tagged `copy`) into the scratch table, holding by then as many rows
 * as `customers` (the same index sizes). Timed by psql (`\timing`: the COPY's round trip,
 * file sent to committed), so neither a process start nor a connection counts.
 */
export async function copyRow(databaseUrl: string, rows: number): Promise<BulkRow> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`INSERT INTO ${SCRATCH} SELECT * FROM customers`);
    await client.query(`VACUUM ANALYZE ${SCRATCH}`);
  } finally {
    await client.end();
  }
  // The import's file with its own tag: the scratch table holds the imported rows already (same external ids).
  const csv = csvOf('copy', rows);
  const output = await new Promise<string>((resolve, reject) => {
    const psql = spawn('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', databaseUrl, '-c', '\\timing on', '-c', `COPY ${SCRATCH} (${COLUMNS.join(', ')}) FROM STDIN WITH (FORMAT csv, HEADER true)`], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    psql.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    psql.on('error', reject);
    psql.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`psql exited with ${code}: ${out}`))));
    psql.stdin.end(csv);
  });
  const ms = Number(/Time: ([\d.]+) ms/.exec(output)?.[1]);
  if (!Number.isFinite(ms)) throw new Error(`psql printed no timing: ${output}`);
  const check = new pg.Client({ connectionString: databaseUrl });
  await check.connect();
  const [{ count }] = (await check.query<{ count: number }>(`SELECT count(*)::int AS count FROM ${SCRATCH} WHERE external_id LIKE 'copy-%'`)).rows as [{ count: number }];
  await check.end();
  if (count !== rows) throw new Error(`COPY wrote ${count} rows, not ${rows}`);
  return { kind: 'copy', name: `COPY ${SCRATCH} FROM STDIN (the import's rows; psql)`, connections: 1, records: rows, seconds: ms / 1000, rate: rows / (ms / 1000), calls: 1, errors: 0 };
}

/** Each row's records, as the database holds them at the end: every one written once. */
export async function writtenOnce(databaseUrl: string, organizationId: string): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ tag: string; count: number }>(
      `SELECT split_part(external_id, '-', 1) AS tag, count(*)::int AS count FROM customers WHERE organization_id = $1 AND external_id IS NOT NULL GROUP BY 1 ORDER BY 1`,
      [organizationId],
    );
    return Object.fromEntries(rows.map((r) => [r.tag, r.count]));
  } finally {
    await client.end();
  }
}

/** A statement's kind in a few words: its verb and the table it names. */
function kindOf(statement: Statement): string {
  const text = statement.text.trim();
  const verb = /^(\w+)/.exec(text)?.[1]?.toUpperCase() ?? '?';
  if (['BEGIN', 'COMMIT', 'ROLLBACK', 'SAVEPOINT', 'RELEASE'].includes(verb)) return verb;
  const table = /\b(?:FROM|INTO|UPDATE)\s+(?:"public"\.)?"?(\w+)"?/i.exec(text)?.[1];
  return table ? `${verb} ${table}` : verb;
}

function tally(statements: Statement[]): Array<[string, number]> {
  const counts = new Map<string, number>();
  for (const s of statements) counts.set(kindOf(s), (counts.get(kindOf(s)) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1]);
}

export interface Evidence {
  single: Array<[string, number]>;
  batch: Array<[string, number]>;
  batchItems: number;
  /**
   * Medians in process: a batch of 100, a single create, and the batch's rows written alone
   * (rolled back) by Prisma's createManyAndReturn and by the batch's own INSERT (db/insert-rows.ts).
   */
  inProcess: { batchMs: number; singleMs: number; prismaManyMs: number; rawManyMs: number };
  /** EXPLAIN ANALYZE of one INSERT of 100 customers: with the triggers (fired in the statement), and into the scratch table. */
  insert: InsertPlans;
  /** The same after the service rows, on the grown tables. */
  after?: InsertPlans & { organizations: string; vacuumed: InsertPlans };
}

export interface InsertPlans {
  triggers: string[];
  withTriggersMs: number;
  scratchMs: number;
  rows: number;
  tenthMs: number;
  tenthTriggers: string[];
}

/**
 * EXPLAIN ANALYZE of one INSERT of 100 customers into `customers` (its triggers, the deferred
 * event trigger made immediate so it is timed), of the same into the scratch table (no
 * triggers), and of 10 into `customers`; each in a transaction rolled back.
 */
export async function insertPlans(client: pg.Client, organizationId: string): Promise<InsertPlans> {
  const explain = async (table: string, count = BATCH_SIZE) => {
    await client.query('BEGIN');
    try {
      await client.query('SET CONSTRAINTS ALL IMMEDIATE');
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN (ANALYZE) INSERT INTO ${table} (id, organization_id, name, email, phone, external_id, updated_at)
         SELECT gen_random_uuid(), '${organizationId}'::uuid, 'Explain ' || g, 'explain.' || g || '@example.com', '+1555' || lpad(g::text, 7, '0'), 'explain-' || g, now()
         FROM generate_series(1, ${count}) g`,
      );
      return rows.map((r) => r['QUERY PLAN']);
    } finally {
      await client.query('ROLLBACK');
    }
  };
  const executionMs = (plan: string[]) => Number(/Execution Time: ([\d.]+) ms/.exec(plan.join('\n'))?.[1]);
  const triggers = (plan: string[]) => plan.filter((line) => /^Trigger /.test(line));
  await explain('customers'); // warm the trigger functions' plans
  const withTriggers = await explain('customers');
  const scratch = await explain(SCRATCH);
  // A tenth of the rows: does a row cost more the more rows its transaction wrote before it?
  const tenth = await explain('customers', BATCH_SIZE / 10);
  return { triggers: triggers(withTriggers), withTriggersMs: executionMs(withTriggers), scratchMs: executionMs(scratch), rows: BATCH_SIZE, tenthMs: executionMs(tenth), tenthTriggers: triggers(tenth) };
}

/** The same plans on the grown tables, after the service rows (the service stopped), with the organization's row as they left it. */
export async function insertPlansAfter(databaseUrl: string, organizationId: string): Promise<InsertPlans & { organizations: string; vacuumed: InsertPlans }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const plans = await insertPlans(client, organizationId);
    const { rows } = await client.query<{ n_live_tup: number; n_dead_tup: number; n_tup_upd: number; n_tup_hot_upd: number; autovacuums: number; size: string; autovacuum: string }>(
      `SELECT n_live_tup, n_dead_tup, n_tup_upd, n_tup_hot_upd, autovacuum_count AS autovacuums, pg_size_pretty(pg_relation_size('organization_counters')) AS size, current_setting('autovacuum') AS autovacuum
       FROM pg_stat_user_tables WHERE relname = 'organization_counters'`,
    );
    const o = rows[0]!;
    // The rows every write updates, vacuumed: how much of the plan above is their dead versions.
    await client.query('VACUUM organization_counters, record_counts');
    const vacuumed = await insertPlans(client, organizationId);
    return {
      ...plans,
      vacuumed,
      organizations: `organization_counters: ${o.n_live_tup} live rows in ${o.size}, ${o.n_dead_tup} dead row versions, ${o.n_tup_upd} updates (${o.n_tup_hot_upd} HOT), ${o.autovacuums} autovacuums (autovacuum = ${o.autovacuum} on this server)`,
    };
  } finally {
    await client.end();
  }
}

/**
 * Why the rows cost what they do, measured before the service starts, in this process: the
 * statements one single create and one batch of 100 send (the service in process, no socket,
 * no rate limit), and the plan of an INSERT of 100 customers with the table's triggers (the
 * event triggers made immediate where deferred, so EXPLAIN times them) against the same INSERT into the
 * scratch table; both in transactions rolled back, except the recorded calls' rows (tag `stmt`).
 */
export async function evidence(data: BenchData): Promise<Evidence> {
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
  const post = async (path: string, body: unknown) => {
    const response = await app.fetch(new Request(`http://bench${path}`, { method: 'POST', headers: { authorization: `Bearer ${data.keys[0]}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }));
    const text = await response.text();
    if (response.status >= 300) throw new Error(`${path} answered ${response.status}: ${text.slice(0, 300)}`);
  };
  const items = (from: number, count: number) =>
    Array.from({ length: count }, (_, j) => {
      const { external_id, ...fields } = customer('stmt', from + j);
      return { op: 'create', external_id, data: fields };
    });
  let result: Evidence;
  try {
    // Warm: the first calls prepare what later ones reuse.
    await post('/v1/customers', customer('stmt', 0));
    await post('/v1/customers/batch', { items: items(1, 2) });
    const single = await statementsOf(() => post('/v1/customers', customer('stmt', 3)));
    const batch = await statementsOf(() => post('/v1/customers/batch', { items: items(4, BATCH_SIZE) }));
    // Timed in process (no socket), median of a few: a batch of 100, a single create, and the
    // statements a batch sends around its INSERTs alone (per item two savepoints, the request
    // id and two releases), through the service's Prisma client in one transaction.
    const median = async (times: number, run: (i: number) => Promise<unknown>) => {
      const ms: number[] = [];
      for (let i = 0; i < times; i++) {
        const begun = performance.now();
        await run(i);
        ms.push(performance.now() - begun);
      }
      return ms.sort((a, b) => a - b)[Math.floor(times / 2)]!;
    };
    const batchMs = await median(5, (i) => post('/v1/customers/batch', { items: items(200 + i * BATCH_SIZE, BATCH_SIZE) }));
    const singleMs = await median(21, (i) => post('/v1/customers', customer('stmt', 1000 + i)));
    // The batch's rows alone, in a transaction rolled back (customers' events are written as
    // the INSERT ends): as Prisma's createManyAndReturn writes them, and as the batch writes them.
    const { insertRows } = await import('../src/db/insert-rows.js');
    const rowsOf = (from: number) => items(from, BATCH_SIZE).map(({ external_id, data: fields }) => ({ ...fields, externalId: external_id, organizationId: data.organizationId }));
    const rolledBack = (write: (tx: Parameters<Parameters<typeof db.prisma.$transaction>[0]>[0]) => Promise<unknown>) =>
      db.prisma.$transaction(async (tx) => {
        await write(tx);
        throw ROLLBACK;
      }).catch((error: unknown) => {
        if (error !== ROLLBACK) throw error;
      });
    const prismaManyMs = await median(5, (i) => rolledBack((tx) => tx.customer.createManyAndReturn({ data: rowsOf(20_000 + i * BATCH_SIZE) })));
    const rawManyMs = await median(5, (i) => rolledBack((tx) => insertRows(tx, 'Customer', 'customers', rowsOf(30_000 + i * BATCH_SIZE))));
    const client = new pg.Client({ connectionString: data.databaseUrl });
    await client.connect();
    try {
      await createScratch(client, data.organizationId);
      const insert = await insertPlans(client, data.organizationId);
      result = {
        single: tally(single),
        batch: tally(batch),
        batchItems: BATCH_SIZE,
        inProcess: { batchMs, singleMs, prismaManyMs, rawManyMs },
        insert,
      };
    } finally {
      await client.end();
    }
  } finally {
    await db.close();
  }
  return result;
}

const fixed = (value: number | undefined, digits = 1) => (value === undefined || Number.isNaN(value) ? '' : value.toFixed(digits));

/** The results page: the rows and their ratios, the goals, the other organization's latency, and why. */
export function bulkMarkdown(rows: BulkRow[], copy: BulkRow, probes: Probes, evidenceOf: Evidence, written: Record<string, number>, notes: string[]): string {
  const of = (kind: BulkRow['kind'], connections?: number) => rows.find((r) => r.kind === kind && (connections === undefined || r.connections === connections))!;
  const single = of('single');
  // The goal compares batches and single calls over the same connections.
  const batch = of('batch', single.connections);
  const imported = of('import');
  const all = [...rows, copy];
  const batchVsSingle = batch.rate / single.rate;
  const copyVsImport = copy.rate / imported.rate;
  const p99Ratio = probes.during.p99 / probes.idle.p99;
  const met = (ok: boolean) => (ok ? 'yes' : 'no');
  const list = (tallied: Array<[string, number]>) => tallied.map(([kind, n]) => `${kind} ×${n}`).join(', ');
  const total = (tallied: Array<[string, number]>) => tallied.reduce((sum, [, n]) => sum + n, 0);
  return [
    '| row | connections | records | seconds | records/s | COPY / row | calls | call p50 ms | call p99 ms | failed calls | sessions active (avg) | waiting on a lock (avg) | idle in transaction (avg) |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...all.map(
      (r) =>
        `| ${r.name} | ${r.connections ?? ''} | ${r.records} | ${fixed(r.seconds, 2)} | ${Math.round(r.rate)} | ${fixed(copy.rate / r.rate, 1)} | ${r.calls} | ${fixed(r.p50)} | ${fixed(r.p99)} | ${r.errors} | ` +
        `${fixed(r.sampled?.active, 2)} | ${fixed(r.sampled?.lockWaits, 2)} | ${fixed(r.sampled?.idleInTransaction, 2)} |`,
    ),
    '',
    `Ratios: batches / single calls ${fixed(batchVsSingle, 2)}x (${single.connections} connections each; over 1 connection ${fixed(of('batch', 1).rate / single.rate, 2)}x); import / single calls ${fixed(imported.rate / single.rate, 2)}x; import / batches ${fixed(imported.rate / batch.rate, 2)}x; COPY / import ${fixed(copyVsImport, 1)}x. ` +
      `The import: ${imported.note}.`,
    '',
    `| another organization's single create (${probes.count} sequential \`POST /v1/customers\`) | p50 ms | p99 ms | failed |`,
    '|---|---|---|---|',
    `| idle, just before the import | ${fixed(probes.idle.p50, 2)} | ${fixed(probes.idle.p99, 2)} | ${probes.idle.errors} |`,
    `| while a second import of as many rows runs | ${fixed(probes.during.p50, 2)} | ${fixed(probes.during.p99, 2)} | ${probes.during.errors} |`,
    `| during / idle | ${fixed(probes.during.p50 / probes.idle.p50, 2)} | ${fixed(p99Ratio, 2)} | |`,
    '',
    '| goal (issue #28) | measured | goal | met |',
    '|---|---|---|---|',
    `| batches of 100 vs single calls, records/s, both over ${single.connections} connections | ${fixed(batchVsSingle, 2)}x${batch.errors ? ` (${batch.errors} of ${batch.calls} batch calls failed)` : ''} | >= 10x | ${met(batchVsSingle >= 10)} |`,
    `| batches of 100 over 1 connection vs single calls over ${single.connections} | ${fixed(of('batch', 1).rate / single.rate, 2)}x${of('batch', 1).errors ? ` (${of('batch', 1).errors} failed)` : ''} | >= 10x | ${met(of('batch', 1).rate / single.rate >= 10)} |`,
    `| COPY vs import, records/s (import within 5x of COPY) | ${fixed(copyVsImport, 1)}x | <= 5x | ${met(copyVsImport <= 5)} |`,
    `| other organization's create p99 during a second import vs idle | ${fixed(p99Ratio, 2)}x | <= 2x | ${met(p99Ratio <= 2)}${probes.overlapped ? '' : ' (the import ended before the last create: see below)'} |`,
    '',
    ...notes,
    '',
    `Every record written once: ${Object.entries(written).map(([tag, n]) => `${tag} ${n}`).join(', ')} customers by tag at the end (stmt: the calls recorded below). ` +
      `The other organization's creates during the second import ${probes.overlapped ? 'all ran while it was running' : 'outlasted it: the import had ended before the last one answered'}.`,
    '',
    '## Why: what each call sends, and what a row costs inside PostgreSQL',
    '',
    `Statements one call sends to PostgreSQL (recorded from the service's own pg client, the service in the bench process, after a warm-up call):`,
    '',
    `- one \`POST /v1/customers\`: ${total(evidenceOf.single)} statements: ${list(evidenceOf.single)}`,
    `- one \`POST /v1/customers/batch\` of ${evidenceOf.batchItems}: ${total(evidenceOf.batch)} statements, ${fixed(total(evidenceOf.batch) / evidenceOf.batchItems, 2)} an item: ${list(evidenceOf.batch)}`,
    '',
    `In process (the service's app in the bench process, no socket, before the service rows; medians): one batch of ${evidenceOf.batchItems} creates takes ${fixed(evidenceOf.inProcess.batchMs, 1)} ms ` +
      `(${fixed(evidenceOf.inProcess.batchMs / evidenceOf.batchItems, 2)} ms an item), one single create ${fixed(evidenceOf.inProcess.singleMs, 2)} ms. ` +
      `The batch's ${evidenceOf.batchItems} rows alone (rolled back; customers' events are written as the INSERT ends, so they are timed): ${fixed(evidenceOf.inProcess.rawManyMs, 1)} ms in the batch's one INSERT (db/insert-rows.ts), ` +
      `${fixed(evidenceOf.inProcess.prismaManyMs, 1)} ms through Prisma's createManyAndReturn (${fixed(evidenceOf.inProcess.prismaManyMs / evidenceOf.inProcess.rawManyMs, 1)}x: it compiles and interprets each call).`,
    '',
    `One \`INSERT\` of ${evidenceOf.insert.rows} customers in one statement (EXPLAIN ANALYZE, rolled back; a deferred event trigger made immediate so it is timed): ` +
      `${fixed(evidenceOf.insert.withTriggersMs, 2)} ms into \`customers\` with its triggers, ${fixed(evidenceOf.insert.scratchMs, 2)} ms into the scratch table (same columns, indexes and foreign key, no triggers): ` +
      `${fixed(evidenceOf.insert.withTriggersMs / evidenceOf.insert.scratchMs, 1)}x. Triggers:`,
    '',
    ...evidenceOf.insert.triggers.map((line) => `- ${line}`),
    '',
    `The same INSERT of ${evidenceOf.insert.rows / 10} rows: ${fixed(evidenceOf.insert.tenthMs, 2)} ms (${fixed(evidenceOf.insert.tenthMs / (evidenceOf.insert.rows / 10), 3)} ms a row, against ${fixed(evidenceOf.insert.withTriggersMs / evidenceOf.insert.rows, 3)} ms a row at ${evidenceOf.insert.rows}). Triggers:`,
    '',
    ...evidenceOf.insert.tenthTriggers.map((line) => `- ${line}`),
    '',
    ...(evidenceOf.after
      ? [
          `After the service rows (the service stopped; ${evidenceOf.after.organizations}): the INSERT of ${evidenceOf.after.rows} takes ${fixed(evidenceOf.after.withTriggersMs, 2)} ms into \`customers\` ` +
            `(${fixed(evidenceOf.after.withTriggersMs / evidenceOf.insert.withTriggersMs, 1)}x its time before the rows), ${fixed(evidenceOf.after.scratchMs, 2)} ms into the scratch table; of ${evidenceOf.after.rows / 10}: ${fixed(evidenceOf.after.tenthMs, 2)} ms. Triggers (${evidenceOf.after.rows} rows):`,
          '',
          ...evidenceOf.after.triggers.map((line) => `- ${line}`),
          '',
          `Then \`VACUUM organization_counters, record_counts\` (the two rows every write updates): the INSERT of ${evidenceOf.after.rows} takes ${fixed(evidenceOf.after.vacuumed.withTriggersMs, 2)} ms. Triggers:`,
          '',
          ...evidenceOf.after.vacuumed.triggers.map((line) => `- ${line}`),
          '',
        ]
      : []),
  ].join('\n');
}

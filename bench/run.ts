// npm run bench [-- --customers 100000 --duration 10 --connections 64]
// npm run bench -- soak [--minutes 5]
// npm run bench -- limiter
// npm run bench -- sync [--customers 1000000]
// npm run bench -- events [--customers 100000 --burst 2000 --sequential 200 --rounds 2 --pool-size N]
// npm run bench -- profile [--scenario rest-list|graphql-list|nested|rest-create --customers 100000]
// npm run bench -- one [--scenario rest-list|graphql-list|nested|rest-create --customers 100000]
// npm run bench -- cpu [--customers 100000 --only REST|GraphQL|Prisma|pg]
// npm run bench -- fanout
// npm run bench -- lists [--customers 100000 --duration 5 --warmup 2 --connections 4]
// npm run bench -- bulk [--rows 20000 --connections 8 --probes 300]
// npm run bench -- limits [--customers 20000 --duration 10 --warmup 3 --connections 32]
// npm run bench -- citus [--customers 20000 --duration 5 --warmup 2 --connections 32]
//
// Seeds a dedicated PostgreSQL database (DATABASE_URL's server, default the local one),
// starts the service as in production, minimal node:http + pg servers (the practical limit:
// bench/references.ts) and PostGraphile (a real peer) on the same database, drives each with
// autocannon after a warm-up, and writes a table to bench/results/ (JSON and Markdown). Every
// figure that matters is a ratio measured in the same run: each row against the best
// reference of its kind.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { seedBenchDatabase, seedBenchDataDir, type BenchData } from './seed.js';
import { CREATE_BODY, LIST_QUERY, NESTED_QUERY, type Row, type Server } from './types.js';
import { syncWalk, updatedSince, type Bench } from './sync.js';
import { startReceiver, webhookBench } from './events.js';
import { cpuShares, heapShares, profileIn, shareTable } from './profile.js';
import { cpuCost, cpuTable } from './cpu.js';
import { fanOut, fanOutTable } from './fanout.js';
import { rawInserts, rawInsertsEvidence, rawInsertsTable, type RawInserts } from './raw-inserts.js';
import { againstBest, COMPUTED, CREATE_WITHOUT_EVENT, limitsTargets, RAW_CREATE_GOAL, ONE_STATEMENT_SERVERS, pairedTable, PAIRED_ROUNDS, TWO_STATEMENTS } from './references.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    // Default per subcommand below (limits: issue #31's 20,000).
    customers: { type: 'string' },
    'pglite-customers': { type: 'string', default: '10000' },
    // Defaults per subcommand below (the lists rows are short and measure latency, not load).
    duration: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
    minutes: { type: 'string', default: '5' },
    burst: { type: 'string', default: '2000' },
    sequential: { type: 'string', default: '200' },
    rounds: { type: 'string', default: '2' },
    'pool-size': { type: 'string' },
    scenario: { type: 'string', default: 'rest-list' },
    only: { type: 'string', default: '' },
    // bulk: records per row, and the other organization's sequential creates (idle, then during the import).
    rows: { type: 'string', default: '20000' },
    probes: { type: 'string', default: '300' },
  },
});
const ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const LISTS = positionals[0] === 'lists';
const LIMITS = positionals[0] === 'limits';
// citus: short rows, the whole comparison in a few minutes.
const CITUS = positionals[0] === 'citus';
const CUSTOMERS = values.customers ?? (LIMITS || CITUS ? '20000' : '100000');
const DURATION = Number(values.duration ?? (LISTS || CITUS ? 5 : 10));
const WARMUP = Number(values.warmup ?? (LISTS || CITUS ? 2 : 3));
const CONNECTIONS = Number(values.connections ?? (LISTS ? 4 : LIMITS || CITUS ? 32 : 64));

/** The command of `npm run start:production`, read from package.json so the bench and it cannot drift apart. */
function startProduction(): string[] {
  const [node, ...args] = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts['start:production']!.replace(/^exec\s+/, '').split(/\s+/);
  if (node !== 'node') throw new Error('start:production must be a node command');
  return args;
}

/** The service as in production: compiled (npm run build), started as `npm run start:production` starts it. */
function productionArgs(): string[] {
  const build = spawnSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
  if (build.status !== 0) throw new Error('npm run build failed');
  return startProduction();
}
const typescript = (file: string) => ['--import', 'tsx', file];
/** The node flags of `npm run start:production`, for the rows that run the service from source. */
const SERVICE_NODE_FLAGS = startProduction().filter((arg) => arg.startsWith('--'));
/**
 * Processes of the all-cores rows (the service's WEB_CONCURRENCY, the reference's cluster).
 * Every other row, and the soak, sync and events subcommands, run one process
 * (WEB_CONCURRENCY=1, not the default of one per core), as their earlier results did.
 */
const CLUSTER_PROCESSES = 2;

function start(name: string, args: string[], env: Record<string, string>): Promise<Server> {
  const child = spawn(process.execPath, args, {
    env: { PATH: process.env.PATH, NODE_ENV: 'production', PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  child.stdout!.on('error', () => undefined); // a stopped server's closed pipe
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const port = /"msg":"listening".*?"port":(\d+)/.exec(output)?.[1];
      if (port) {
        child.stdout!.removeAllListeners('data');
        child.stdout!.resume();
        resolve({ name, url: `http://127.0.0.1:${port}`, process: child });
      }
    });
    child.on('exit', (code) => reject(new Error(`${name} exited with ${code}: ${output}`)));
  });
}

/** `RESPONSE_CACHE_MB` as the bench was given it (`RESPONSE_CACHE_MB=0 npm run bench -- one`), for the service it starts; unset: the service's default. */
function memoryFromEnv(): Record<string, string> {
  return process.env.RESPONSE_CACHE_MB === undefined ? {} : { RESPONSE_CACHE_MB: process.env.RESPONSE_CACHE_MB };
}

function ownRssKb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) : 0;
}

/**
 * CPU time the whole machine spent so far (every process: server, PostgreSQL, the load
 * generator), in ms: over a measured row, per request, it is steadier than req/s on a machine
 * whose cores the server shares, and it counts what PostgreSQL spends on each request too.
 */
function busyCpuMs(): number {
  return cpus().reduce((sum, { times }) => sum + times.user + times.nice + times.sys + times.irq, 0);
}

/**
 * A server's memory: its process and every Node process under it (a cluster's workers),
 * not the esbuild helper tsx starts beside a TypeScript reference.
 */
function rssMb(pid: number): number {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may hold spaces, so read after its closing parenthesis.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (stat.includes('(node)')) children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // The process ended meanwhile.
    }
  }
  let kb = 0;
  for (const queue = [pid]; queue.length > 0; ) {
    const next = queue.pop()!;
    try {
      kb += ownRssKb(next);
    } catch {
      // The process ended meanwhile.
    }
    queue.push(...(children.get(next) ?? []));
  }
  return Math.round(kb / 1024);
}

interface Scenario {
  path: string;
  method?: string;
  body?: string;
  /** Concurrent connections, if not the run's. */
  connections?: number;
  /** Record ids the requests go to in turn: `{id}` in `path` takes the next one. */
  ids?: string[];
  /** What the first answer must contain, so a row never measures a cheaper answer than it says. */
  expect?: RegExp;
}

/**
 * A nested answer with invoice lines in it (not only customers without jobs or invoices);
 * PostgreSQL's JSON (a reference's) has spaces around its colons.
 */
const WITH_LINES = /"(lineItems|nodes)"\s*:\s*\[\s*\{\s*"amount"\s*:/;
const NESTED = 'graphql nested (20 customers, jobs, invoices)';
/** A customer created by the service and by the create references alike. */
const CREATE: Scenario = { path: '/v1/customers', method: 'POST', body: CREATE_BODY };
const PROFILED: Record<string, Scenario> = {
  'rest-list': { path: '/v1/customers?limit=20' },
  'graphql-list': { path: '/graphql', method: 'POST', body: JSON.stringify({ query: LIST_QUERY }) },
  nested: { path: '/graphql', method: 'POST', body: JSON.stringify({ query: NESTED_QUERY }), expect: WITH_LINES },
  'rest-create': CREATE,
};

// The service runs with its default rate limit (600 requests per key per minute), as in
// production: the load comes from many keys, each within its allowance, rather than from
// one key the limiter would refuse. Each request takes the next key; every system gets the
// same header (the references ignore it), so the load generator works alike for all.
const KEYS = 256;
let keys: string[] = [];
let nextKey = 0;
const authorization = () => `Bearer ${keys[nextKey++ % keys.length]}`;
const rotatingKey = { setupRequest: (req: { headers?: Record<string, string> }) => ({ ...req, headers: { ...req.headers, authorization: authorization() } }) };

/** Each request takes the next id of `ids` (and the next key). */
function rotatingIds(path: string, ids: string[]) {
  let next = 0;
  return {
    setupRequest: (req: { headers?: Record<string, string> }) => ({
      ...req,
      path: path.replace('{id}', ids[next++ % ids.length]!),
      headers: { ...req.headers, authorization: authorization() },
    }),
  };
}

function headersOf(scenario: Pick<Scenario, 'body'>): Record<string, string> {
  return { ...(scenario.body ? { 'content-type': 'application/json' } : {}), authorization: authorization() };
}

/** Every system must answer the scenario correctly before its speed means anything. */
/** Stops a server and waits for it: one still writing its log when the bench exits dies of EPIPE. */
async function stop(server: Server) {
  if (server.process.exitCode !== null || server.process.signalCode !== null) return;
  const exited = new Promise((resolve) => server.process.once('exit', resolve));
  server.process.kill('SIGTERM');
  await exited;
}

async function verify(name: string, server: Server, scenario: Scenario) {
  const path = scenario.ids ? scenario.path.replace('{id}', scenario.ids[0]!) : scenario.path;
  const response = await fetch(server.url + path, { method: scenario.method ?? 'GET', headers: headersOf(scenario), body: scenario.body });
  const text = await response.text();
  if (!response.ok || text.includes('"errors"') || (scenario.expect && !scenario.expect.test(text))) {
    throw new Error(`${server.name} answered ${name} with ${response.status}: ${text.slice(0, 300)}`);
  }
}

async function measure(name: string, server: Server, scenario: Scenario): Promise<Row> {
  await verify(name, server, scenario);
  const request = {
    method: scenario.method ?? 'GET',
    path: scenario.path,
    body: scenario.body,
    headers: headersOf(scenario),
    ...(scenario.ids ? rotatingIds(scenario.path, scenario.ids) : rotatingKey),
  };
  const options = { url: server.url, connections: scenario.connections ?? CONNECTIONS, requests: [request] };
  await autocannon({ ...options, duration: WARMUP });
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(server.process.pid!))), 250);
  const busyBefore = busyCpuMs();
  const result = await autocannon({ ...options, duration: DURATION });
  const busy = busyCpuMs() - busyBefore;
  clearInterval(sampler);
  const row = {
    scenario: name,
    system: server.name,
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
    rssMb: peak,
    cpuMsPerRequest: Number((busy / result.requests.total).toFixed(3)),
  };
  console.log(JSON.stringify(row));
  return row;
}

/**
 * List, get one and create on a PGlite folder seeded with the same kind of data, through the
 * service as `serviceArgs` starts it (one process, as the embedded database always is); the
 * service's memory is read once it listens, before any request.
 */
async function embeddedRows(serviceArgs: string[]): Promise<{ rows: Row[]; customers: number; seedSeconds: string; restMb: number }> {
  const customers = Number(values['pglite-customers']);
  const seeding = performance.now();
  const data = await seedBenchDataDir('bench/.pglite-data', customers, KEYS);
  const seedSeconds = ((performance.now() - seeding) / 1000).toFixed(1);
  const service = await start('service on PGlite', serviceArgs, { DATA_DIR: data.dataDir });
  const rows: Row[] = [];
  const before = keys;
  keys = data.keys;
  try {
    const restMb = rssMb(service.process.pid!);
    rows.push(await measure('REST list limit=20', service, { path: '/v1/customers?limit=20' }));
    rows.push(await measure('REST get one', service, { path: `/v1/customers/${data.customerId}` }));
    rows.push(await measure('REST create', service, CREATE));
    return { rows, customers, seedSeconds, restMb };
  } finally {
    keys = before;
    await stop(service);
  }
}

/** The embedded rows beside the same rows on PostgreSQL (the default bench). */
async function embedded(rows: Row[], serviceArgs: string[]): Promise<string[]> {
  const { rows: pgliteRows, customers, seedSeconds } = await embeddedRows(serviceArgs);
  rows.push(...pgliteRows);
  const onPostgres = (scenario: string) => rows.find((r) => r.system === 'service' && r.scenario === scenario);
  return [
    '',
    `Embedded default (PGlite, one process whatever WEB_CONCURRENCY says): a data folder with ${customers} customers and the same kind of related rows (seeded in ${seedSeconds} s), ${CONNECTIONS} connections.`,
    '',
    '| scenario | PostgreSQL req/s (1 process) | PGlite req/s | PGlite / PostgreSQL | PGlite p99 ms |',
    '|---|---|---|---|---|',
    ...pgliteRows.map((r) => {
      const pg = onPostgres(r.scenario);
      return `| ${r.scenario} | ${pg?.rps ?? ''} | ${r.rps} | ${pg ? (r.rps / pg.rps).toFixed(2) : ''} | ${r.p99} |`;
    }),
  ];
}

/**
 * `bench embedded`: the embedded rows alone, for a change that touches only the embedded
 * database. No PostgreSQL row: compare runs of this command.
 */
async function embeddedOnly() {
  const { rows, customers, restMb } = await embeddedRows(productionArgs());
  saveLatest('embedded', [
    `Embedded default (PGlite), a data folder with ${customers} customers and the same kind of related rows; the production build, ${CONNECTIONS} connections, ${WARMUP} s warm-up, ${DURATION} s measured per row.`,
    `RSS after start, before any request: ${restMb} MB. Node ${process.version}; ${cpus().length} CPUs.`,
    '',
    '| scenario | req/s | p50 ms | p99 ms | errors | peak RSS MB | machine CPU ms per request |',
    '|---|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.scenario} | ${r.rps} | ${r.p50} | ${r.p99} | ${r.errors} | ${r.rssMb} | ${r.cpuMsPerRequest} |`),
  ]);
}

/**
 * `bench raw`: the database alone (bench/raw-inserts.ts), creates into one organization and
 * spread over 8, each as one INSERT and as BEGIN, INSERT, COMMIT: whether organizations'
 * writers queue only on their own organization's counters; then 8 organizations with a NOTIFY
 * in every write and without, back to back (what a NOTIFY costs writers of other organizations).
 */
async function raw() {
  const { data } = await seeded('crm_raw', Number(values.customers ?? 2000), 1);
  const client = new pg.Client({ connectionString: data.databaseUrl });
  await client.connect();
  const others = await client
    .query<{ id: string }>(`INSERT INTO organizations (id, name) SELECT gen_random_uuid(), 'Raw ' || n FROM generate_series(1, 7) n RETURNING id`)
    .finally(() => client.end());
  const eight = [data.organizationId, ...others.rows.map((row) => row.id)];
  const rows = [];
  for (const pauseMs of [undefined, 0]) {
    // One connection writes to one organization whatever the list: it is measured once.
    for (const connections of [1, 8, 32]) rows.push(await rawInserts(data.databaseUrl, [data.organizationId], connections, DURATION, pauseMs));
    for (const connections of [8, 32]) rows.push(await rawInserts(data.databaseUrl, eight, connections, DURATION, pauseMs));
  }
  // A NOTIFY in every write (as every write sent before the notify_with_deliveries migration;
  // a write that queues a webhook delivery still does) against none, in alternation.
  const notifying: Array<[RawInserts, RawInserts]> = [];
  for (let round = 0; round < 3; round++) {
    const withNotify = await withNotifyOnEveryInsert(data.databaseUrl, () => rawInserts(data.databaseUrl, eight, 32, DURATION));
    notifying.push([withNotify, await rawInserts(data.databaseUrl, eight, 32, DURATION)]);
  }
  saveLatest('raw', [
    ...rawInsertsTable(rows),
    '',
    rawInsertsEvidence(rows, RAW_CREATE_GOAL),
    '',
    '| 8 organizations, 32 connections, back to back | every write NOTIFYs, creates/s | CPUs busy | no NOTIFY (no webhook endpoint), creates/s | CPUs busy | ratio |',
    '|---|---|---|---|---|---|',
    ...notifying.map(([a, b], i) => `| round ${i + 1} | ${a.perSecond} | ${Math.round(a.cpuBusy * 100)}% | ${b.perSecond} | ${Math.round(b.cpuBusy * 100)}% | ${(b.perSecond / a.perSecond).toFixed(2)} |`),
    '',
    'PostgreSQL serializes the commits of every transaction that sent a NOTIFY (one lock for the whole server, held through the commit\'s WAL flush): a write sends one only when it queued a webhook delivery.',
    '',
    `${DURATION} s per row; connection i writes to organization i mod n. Node ${process.version}; 1-minute load average ${loadavg()[0]!.toFixed(1)} after the rows (${cpus().length} CPUs, shared by PostgreSQL and the bench).`,
  ]);
}

/** What the sync measurements (sync.ts) share with the rows here. */
const tools: Bench = { measure, authorization, rssMb, rotatingIds, headersOf };

async function coldStart(data: BenchData, service: string[]): Promise<number> {
  const begun = performance.now();
  const server = await start('service', service, { DATABASE_URL: data.databaseUrl, WEB_CONCURRENCY: '1' });
  for (;;) {
    const response = await fetch(`${server.url}/healthz`).catch(() => null);
    if (response?.ok) break;
  }
  const ms = Math.round(performance.now() - begun);
  await stop(server);
  return ms;
}

/** `goals`: the targets table (by default issue #18's). */
function markdown(rows: Row[], extra: string[], goals = targets(rows)): string {
  const peer = (scenario: string) => rows.find((r) => r.system.startsWith('PostGraphile') && r.scenario === scenario);
  const lines = [
    '| scenario | system | req/s | p50 ms | p99 ms | errors | RSS MB | vs best reference | best reference (node:http + pg, ...) | vs peer |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map((r) => {
      // Every row against the fastest reference of its kind run as as many processes.
      const [vsBest, best] = againstBest(rows, r);
      const p = r.system === 'service' ? peer(r.scenario) : undefined;
      const vsPeer = p ? (r.rps / p.rps).toFixed(2) : '';
      return `| ${r.scenario} | ${r.system} | ${r.rps} | ${r.p50} | ${r.p99} | ${r.errors} | ${r.rssMb} | ${vsBest} | ${best} | ${vsPeer} |`;
    }),
  ];
  return [...lines, '', ...goals, '', ...extra].join('\n') + '\n';
}

/** The round's targets (issue #18), each as measured in this run. */
function targets(rows: Row[]): string[] {
  const find = (scenario: string, system: string) => rows.find((r) => r.scenario === scenario && r.system === system);
  const service = find('REST list limit=20', 'service');
  const limit = find('REST list limit=20', 'node:http + pg');
  const graphql = find('graphql list limit=20', 'service');
  const nested = find(NESTED, 'service');
  const peerNested = rows.find((r) => r.scenario === NESTED && r.system.startsWith('PostGraphile'));
  const rss = Math.max(...rows.filter((r) => r.system === 'service').map((r) => r.rssMb));
  const prismaOnly = find('REST list limit=20', 'node:http + Prisma');
  const ratio = (a?: Row, b?: Row, of: (r: Row) => number = (r) => r.rps) => (a && b ? of(a) / of(b) : NaN);
  const checks: Array<[string, number, (value: number) => boolean, string]> = [
    ['REST list limit=20: req/s vs the node:http + pg limit', ratio(service, limit), (v) => v >= 0.5, '>= 0.50'],
    ['GraphQL list limit=20: req/s vs the same limit', ratio(graphql, limit), (v) => v >= 0.35, '>= 0.35'],
    ['GraphQL nested: req/s vs PostGraphile on the same nested query', ratio(nested, peerNested), (v) => v >= 2, '>= 2.00'],
    [`REST list limit=20: p99 vs the limit's p99 (${CONNECTIONS} connections)`, ratio(service, limit, (r) => r.p99), (v) => v <= 2, '<= 2.00'],
    ['Peak RSS of the service (one process, every row on PostgreSQL), MB', rss, (v) => v < 250, '< 250'],
  ];
  return [
    '| target | measured | goal | met |',
    '|---|---|---|---|',
    ...checks.map(([name, value, met, goal]) => `| ${name} | ${Number.isNaN(value) ? 'not measured' : name.endsWith('MB') ? String(value) : value.toFixed(2)} | ${goal} | ${Number.isNaN(value) ? '' : met(value) ? 'yes' : 'no'} |`),
    '',
    `For scale: node:http + Prisma, the same list through the service's Prisma client and nothing else (no GraphQL, auth, rate limit or log), reaches ${ratio(prismaOnly, limit).toFixed(2)} of the limit in this run.`,
    'The rate limiter\'s targets have their own table: `npm run bench -- limiter`.',
  ];
}

/** Seeds the database `name` with `customers` customers; the bench's keys become its keys. */
async function seeded(name: string, customers: number, keyCount = KEYS): Promise<{ data: BenchData; seedSeconds: string }> {
  console.log(`Seeding ${customers} customers...`);
  const seeding = performance.now();
  const data = await seedBenchDatabase(ADMIN_URL, name, customers, keyCount);
  keys = data.keys;
  return { data, seedSeconds: ((performance.now() - seeding) / 1000).toFixed(1) };
}

/** The references, one process each: the 2-statement list first, then the one-statement ones. */
async function startReferences(data: BenchData): Promise<Server[]> {
  const env = { DATABASE_URL: data.databaseUrl, ORGANIZATION_ID: data.organizationId };
  return Promise.all([
    start(TWO_STATEMENTS, typescript('bench/reference-server.ts'), env),
    ...ONE_STATEMENT_SERVERS.map(([name, extra]) => start(name, typescript('bench/reference-one-statement.ts'), { ...env, ...extra })),
  ]);
}

const REFERENCES_NOTE =
  `"${TWO_STATEMENTS}" sends a list page as two unprepared statements (the page, and its total); "${ONE_STATEMENT_SERVERS[0]![0]}" sends every request as one named statement (a list page with its total as a scalar sub-select; the nested page with each customer's jobs and invoices, with their lines, as JSON columns; a create as one INSERT ... RETURNING, its own transaction, through every trigger of customers) and node writes the JSON; ` +
  `"${ONE_STATEMENT_SERVERS[1]![0]}" sends the same statements with PostgreSQL writing the whole answer (json_build_object, json_agg: spaces around its colons), which node forwards. ` +
  'No reference authenticates, rate-limits or logs; their list pages carry has_more but no next_cursor (the service signs its cursors).';

async function bench() {
  const customers = Number(CUSTOMERS);
  const { data, seedSeconds } = await seeded('crm_bench', customers);
  const serviceArgs = productionArgs();
  const coldMs = await coldStart(data, serviceArgs);
  const rows: Row[] = [];
  const extra: string[] = [];
  // One process for the rows below (WEB_CONCURRENCY defaults to the cores); two further down.
  const service = await start('service', serviceArgs, { DATABASE_URL: data.databaseUrl, WEB_CONCURRENCY: '1' });
  const references = await startReferences(data);
  const oneStatement = references.slice(1);
  try {
    for (const [name, path] of [
      ['REST list limit=20', '/v1/customers?limit=20'],
      ['REST list page=500', '/v1/customers?limit=20&page=500'],
      ['REST list search=grace', '/v1/customers?limit=20&search=grace'],
    ] as const) {
      for (const server of references) rows.push(await measure(name, server, { path }));
      rows.push(await measure(name, service, { path }));
    }
    // The query layer's own limit: the same list through Prisma and nothing else.
    const prismaOnly = await start('node:http + Prisma', typescript('bench/reference-prisma.ts'), { DATABASE_URL: data.databaseUrl, ORGANIZATION_ID: data.organizationId });
    try {
      rows.push(await measure('REST list limit=20', prismaOnly, { path: '/v1/customers?limit=20' }));
    } finally {
      await stop(prismaOnly);
    }
    // A search's own latency, without a queue of 63 others in front of it.
    const alone = { path: '/v1/customers?limit=20&search=grace', connections: 1 };
    for (const server of references) rows.push(await measure('REST list search=grace, 1 connection', server, alone));
    rows.push(await measure('REST list search=grace, 1 connection', service, alone));
    rows.push(await measure('REST get one', service, { path: `/v1/customers/${data.customerId}` }));
    // Before any write row: the walk reads exactly the seeded customers.
    const walk = await syncWalk(tools, service, data);
    rows.push(...walk.rows);
    extra.push(...walk.notes);
    if (customers >= 1_000_000) {
      const recent = await updatedSince(tools, service, data, customers);
      rows.push(...recent.rows);
      extra.push(...recent.notes);
    }
    rows.push(await measure('REST invoices status=paid', service, { path: '/v1/invoices?status=paid' }));
    rows.push(await measure('graphql list limit=20', service, { path: '/graphql', method: 'POST', body: JSON.stringify({ query: LIST_QUERY }) }));
    for (const server of oneStatement) rows.push(await measure(NESTED, server, PROFILED.nested!));
    rows.push(await measure(NESTED, service, PROFILED.nested!));
    // The peer before any write row: both answer the nested query on the seeded customers
    // (created ones, newest in every list, have no jobs or invoices).
    await peerRows(rows, data);
    for (const server of oneStatement) rows.push(await measure('REST create', server, CREATE));
    rows.push(await measure('REST create', service, CREATE));
    // Each request patches the next of 10,000 customers spread over the list (no row is hot),
    // without If-Match; every write of the organization still takes its row (the change sequence).
    rows.push(await measure('REST PATCH customer', service, { path: '/v1/customers/{id}', method: 'PATCH', body: JSON.stringify({ name: 'Bench Patched' }), ids: data.customerIds }));
    const [created, patched] = ['REST create', 'REST PATCH customer'].map((name) => rows.find((r) => r.scenario === name)!);
    extra.push(
      `REST PATCH customer: each request a JSON merge patch {"name"} of the next of ${data.customerIds.length} customers spread over the list (random ids), no If-Match; ` +
        `${patched!.rps} req/s against REST create's ${created!.rps} (PATCH/create ${(patched!.rps / created!.rps).toFixed(2)}). ` +
        'Both are writes of one organization, and every write of an organization takes its row (stamp_change() bumps organization_counters.change_seq, held to commit): ' +
        'by design they serialize per organization whatever records they touch, so these rows are one organization\'s write ceiling, not the server\'s.',
    );
  } finally {
    await stop(service);
    for (const server of references) await stop(server);
  }
  // All cores: the service's cluster against the reference as as many processes.
  const cluster = await start(`service, ${CLUSTER_PROCESSES} workers`, serviceArgs, { DATABASE_URL: data.databaseUrl, WEB_CONCURRENCY: String(CLUSTER_PROCESSES) });
  const clusterReference = await start(`${TWO_STATEMENTS}, ${CLUSTER_PROCESSES} processes`, typescript('bench/reference-server.ts'), {
    DATABASE_URL: data.databaseUrl,
    ORGANIZATION_ID: data.organizationId,
    REFERENCE_PROCESSES: String(CLUSTER_PROCESSES),
  });
  try {
    rows.push(await measure('REST list limit=20', clusterReference, { path: '/v1/customers?limit=20' }));
    rows.push(await measure('REST list limit=20', cluster, { path: '/v1/customers?limit=20' }));
  } finally {
    await stop(cluster);
    await stop(clusterReference);
  }
  extra.push(
    `All cores: "service, ${CLUSTER_PROCESSES} workers" is WEB_CONCURRENCY=${CLUSTER_PROCESSES} (a primary that serves nothing, and the workers; without Redis every request's rate-limit charge is one IPC round trip to the primary), ` +
      `against the reference as ${CLUSTER_PROCESSES} processes under node:cluster; RSS sums every Node process of each. ` +
      'On a machine whose cores are also running the load generator and PostgreSQL, a second process mostly competes with them: compare the two 2-process rows with each other, not with the 1-process rows.',
  );
  // Subscriptions: one event fanned out to 50 and to 500 open streams (bench/fanout.ts).
  const fan = await fanOut(data);
  extra.push('', ...fanOutTable(fan.rows), '', ...fan.notes);
  extra.push(...(await embedded(rows, serviceArgs)));
  extra.unshift(
    `${customers} customers in the measured organization; ${CONNECTIONS} connections; ${WARMUP} s warm-up, ${DURATION} s measured per row; Node ${process.version}.`,
    `Cold start of the service on PostgreSQL to the first 200 on /healthz: ${coldMs} ms.`,
    `"vs best reference" is a row's throughput over the fastest node:http + pg server of its kind in this run (for GraphQL's list, over the REST list): ${REFERENCES_NOTE} "vs peer" is over PostGraphile's answer to the same list or nested query.`,
    `Seeding took ${seedSeconds} s.`,
  );
  report('bench', rows, extra);
}

/** PostGraphile 4 (a real peer) on the same database: the GraphQL list and the nested query. */
async function peerRows(rows: Row[], data: BenchData) {
  try {
    if (!existsSync('bench/peer/node_modules')) {
      // The peer needs graphql 15, so it lives in its own folder with its own lock file.
      const install = spawnSync('npm', ['ci', '--prefix', 'bench/peer', '--no-audit', '--no-fund'], { stdio: 'inherit' });
      if (install.status !== 0) throw new Error('npm ci in bench/peer failed');
    }
    const peer = await start('PostGraphile 4.14', ['bench/peer/server.mjs'], { DATABASE_URL: data.databaseUrl });
    const peerQuery = `{ allCustomers(first: 20, orderBy: [CREATED_AT_DESC, ID_DESC], condition: { organizationId: "${data.organizationId}" }) { nodes { id name email phone createdAt updatedAt } totalCount } }`;
    try {
      rows.push(await measure('graphql list limit=20', peer, { path: '/graphql', method: 'POST', body: JSON.stringify({ query: peerQuery }) }));
      // The nested query in PostGraphile's words: the same records, orders and limits.
      const newest = 'first: 5, orderBy: [CREATED_AT_DESC, ID_DESC]';
      const peerNested =
        `{ allCustomers(first: 20, orderBy: [CREATED_AT_DESC, ID_DESC], condition: { organizationId: "${data.organizationId}" }) { nodes { name ` +
        `jobsByOrganizationIdAndCustomerId(${newest}) { nodes { title status } } ` +
        `invoicesByOrganizationIdAndCustomerId(${newest}) { nodes { number totalAmount invoiceLineItemsByOrganizationIdAndInvoiceId(orderBy: POSITION_ASC) { nodes { amount } } } } } } }`;
      rows.push(await measure(NESTED, peer, { path: '/graphql', method: 'POST', body: JSON.stringify({ query: peerNested }), expect: WITH_LINES }));
    } finally {
      await stop(peer);
    }
  } catch (error) {
    console.error(`PostGraphile could not run: ${(error as Error).message}`);
  }
}

async function soak() {
  const minutes = Number(values.minutes);
  const data = await seedBenchDatabase(ADMIN_URL, 'crm_soak', 10_000, KEYS);
  keys = data.keys;
  const service = await start('service', productionArgs(), { DATABASE_URL: data.databaseUrl, WEB_CONCURRENCY: '1' });
  const json = { 'content-type': 'application/json' };
  await autocannon({ url: service.url, connections: 16, duration: 5, requests: [{ path: '/v1/customers', ...rotatingKey }] });
  const rssStart = rssMb(service.process.pid!);
  const samples: number[] = [];
  const sampler = setInterval(() => samples.push(rssMb(service.process.pid!)), 5000);
  const result = await autocannon({
    url: service.url,
    connections: 16,
    duration: minutes * 60,
    requests: [
      { method: 'GET', path: '/v1/customers?limit=20', ...rotatingKey },
      { method: 'GET', path: '/v1/customers?search=ada&limit=10', ...rotatingKey },
      { method: 'POST', path: '/v1/customers', headers: json, body: JSON.stringify({ name: 'Soak', email: 'soak@example.com' }), ...rotatingKey },
      { method: 'GET', path: '/v1/invoices?status=paid', ...rotatingKey },
      { method: 'POST', path: '/graphql', headers: json, body: JSON.stringify({ query: '{ customers(limit: 10) { data { name jobs(limit: 3) { title } } } }' }), ...rotatingKey },
    ],
  });
  clearInterval(sampler);
  const rssEnd = rssMb(service.process.pid!);
  await stop(service);
  const rows: Row[] = [
    { scenario: `soak ${minutes} min mixed`, system: 'service', rps: Math.round(result.requests.average), p50: result.latency.p50, p99: result.latency.p99, errors: result.errors + result.timeouts + result.non2xx, rssMb: rssEnd },
  ];
  report('soak', rows, [
    `Requests: ${result.requests.total}; errors (including non-2xx): ${rows[0]!.errors}.`,
    `RSS at start ${rssStart} MB, at end ${rssEnd} MB, peak ${Math.max(rssStart, ...samples)} MB; samples every 5 s: ${samples.join(', ')}.`,
  ]);
}

/**
 * The rate limiter's own cost per request: consume() in memory and over Redis, at a limit of
 * 60 and of 100,000, with 100 identities and with 100,000 (each one charged once before the
 * timing, as keys seen earlier in the window), against a no-op baseline.
 */
async function limiterCost() {
  const { createRateLimiter } = await import('../src/rate-limit.js');
  const { createLogger } = await import('../src/logger.js');
  const log = createLogger('warn');
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const calls = 20_000;
  const time = async (run: (i: number) => Promise<unknown>) => {
    for (let i = 0; i < 1000; i++) await run(i); // warm-up
    const begun = performance.now();
    for (let i = 0; i < calls; i++) await run(i);
    return ((performance.now() - begun) * 1000) / calls;
  };
  const baseline = await time(async () => undefined);
  const { Redis } = await import('ioredis');
  const redis = new Redis(redisUrl);
  const roundTrip = await time(() => redis.ping()); // the floor of any Redis-backed limiter
  redis.disconnect();
  const rows: { store: string; max: number; identities: number; us: number }[] = [];
  for (const store of ['memory', 'Redis'] as const) {
    for (const max of [60, 100_000]) {
      for (const identities of [100, 100_000]) {
        const limiter = createRateLimiter({ max, windowSeconds: 60, redisUrl: store === 'Redis' ? redisUrl : undefined, redisKeyPrefix: `bench:${process.pid}:${max}:${identities}:`, log });
        for (let i = 0; i < identities; i += 1000) await Promise.all(Array.from({ length: Math.min(1000, identities - i) }, (_, j) => limiter.consume(`key:${i + j}`)));
        const us = await time((i) => limiter.consume(`key:${(i * 7919) % identities}`));
        rows.push({ store, max, identities, us });
        await limiter.close();
      }
    }
  }
  const lines = [
    '| store | RATE_LIMIT_MAX | identities | µs per request |',
    '|---|---|---|---|',
    `| no-op baseline | | | ${baseline.toFixed(1)} |`,
    `| one Redis round trip (PING) | | | ${roundTrip.toFixed(1)} |`,
    ...rows.map((r) => `| ${r.store} | ${r.max} | ${r.identities} | ${r.us.toFixed(1)} |`),
  ];
  const md =
    lines.join('\n') +
    `\n\n${calls} sequential consume() calls per row after 1,000 warm-up calls, window 60 s; every identity charged once before the timing ` +
    `(with 100 identities at a limit of 60 most calls are refused; otherwise all are admitted). Node ${process.version}.\n`;
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/limiter-latest.md', md);
  console.log(md);
}

/** A table of lines as `bench/results/<kind>-latest.md`, and on the console. */
function saveLatest(kind: string, lines: string[]) {
  const md = lines.join('\n') + '\n';
  mkdirSync('bench/results', { recursive: true });
  writeFileSync(`bench/results/${kind}-latest.md`, md);
  console.log('\n' + md);
}

function report(kind: string, rows: Row[], extra: string[], goals?: string[]) {
  mkdirSync('bench/results', { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const md = markdown(rows, extra, goals);
  writeFileSync(`bench/results/${kind}-${stamp}.json`, JSON.stringify({ rows, notes: extra }, null, 2));
  writeFileSync(`bench/results/${kind}-${stamp}.md`, md);
  writeFileSync(`bench/results/${kind}-latest.md`, md);
  console.log('\n' + md);
}

/**
 * Sync at scale alone: the cursor walk (the first 100,000 records at most) and, on its own
 * few thousand recent changes, `updated_since` with the plans PostgreSQL runs for it.
 */
async function sync() {
  const customers = Number(CUSTOMERS);
  const { data, seedSeconds } = await seeded('crm_bench', customers);
  const service = await start('service', productionArgs(), { DATABASE_URL: data.databaseUrl, WEB_CONCURRENCY: '1' });
  const rows: Row[] = [];
  const extra = [`${customers} customers in the measured organization (seeded in ${seedSeconds} s); ${CONNECTIONS} connections; ${WARMUP} s warm-up, ${DURATION} s measured per row; Node ${process.version}.`];
  try {
    const walk = await syncWalk(tools, service, data);
    const recent = await updatedSince(tools, service, data, customers);
    rows.push(...walk.rows, ...recent.rows);
    extra.push(...walk.notes, ...recent.notes);
  } finally {
    await stop(service);
  }
  report('sync', rows, extra);
}

/**
 * Events and webhooks alone: REST create with the event trigger off, on with no endpoint and
 * on with one endpoint (a local receiver in this process), then deliveries a second and the
 * time from a create's response to its delivery (bench/events.ts).
 */
async function events() {
  const customers = Number(CUSTOMERS);
  const { data, seedSeconds } = await seeded('crm_events', customers);
  const loadBefore = loadavg()[0]!.toFixed(1);
  const receiver = await startReceiver();
  // The receiver is local (http://127.0.0.1): the service must be allowed to post there.
  // --pool-size: the service's DATABASE_POOL_SIZE (default: the service's own, 10).
  const pool: Record<string, string> = values['pool-size'] ? { DATABASE_POOL_SIZE: values['pool-size'] } : {};
  const service = await start('service', productionArgs(), { DATABASE_URL: data.databaseUrl, WEB_CONCURRENCY: '1', WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', ...pool });
  const rows: Row[] = [];
  const extra = [
    `${customers} customers in the measured organization (seeded in ${seedSeconds} s, triggers bypassed: no events for them); ${CONNECTIONS} connections; ${WARMUP} s warm-up, ${DURATION} s measured per create row; service pool ${values['pool-size'] ?? 'default (10)'}; Node ${process.version}. ` +
      'The service, PostgreSQL, and the bench process (load generator and webhook receiver) share the machine.',
  ];
  try {
    const result = await webhookBench(tools, service, data, receiver, { burst: Number(values.burst), sequential: Number(values.sequential), rounds: Number(values.rounds), connections: CONNECTIONS });
    rows.push(...result.rows);
    extra.push(...result.notes);
  } finally {
    await stop(service);
    await receiver.close();
  }
  // Other work on the machine takes the same 2 cores: its load is part of the figures.
  extra.splice(1, 0, `1-minute load average of the machine: ${loadBefore} when the service started, ${loadavg()[0]!.toFixed(1)} at the end (${cpus().length} CPUs).`);
  report(values['pool-size'] ? `events-pool${values['pool-size']}` : 'events', rows, extra);
}

/** The scenario `--scenario` names, on a freshly seeded database. */
async function profiledScenario() {
  const name = values.scenario!;
  const scenario = PROFILED[name];
  if (!scenario) throw new Error(`--scenario must be one of ${Object.keys(PROFILED).join(', ')}`);
  const { data } = await seeded('crm_bench', Number(CUSTOMERS));
  return { name, scenario, data };
}

/**
 * Where one scenario's time and memory go: the service as in production under the bench's
 * load, with V8's CPU profiler and heap sampling on, read into tables of self time, and of
 * the heap still alive at exit, by function and by owner (bench/profile.ts).
 */
async function profile() {
  const { name, scenario, data } = await profiledScenario();
  const dir = `bench/results/profile-${name}`;
  rmSync(dir, { recursive: true, force: true });
  const flags = ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--heap-prof', `--heap-prof-dir=${dir}`];
  const service = await start('service', [...flags, ...productionArgs()], { DATABASE_URL: data.databaseUrl, WEB_CONCURRENCY: '1', ...memoryFromEnv() });
  const row = await measure(name, service, scenario);
  await stop(service);
  const cpu = cpuShares(profileIn(dir, '.cpuprofile') as Parameters<typeof cpuShares>[0]);
  const heap = heapShares(profileIn(dir, '.heapprofile') as Parameters<typeof heapShares>[0]);
  const md = [
    `Profile of ${name} (${scenario.method ?? 'GET'} ${scenario.path}): ${row.rps} req/s, p99 ${row.p99} ms, RSS ${row.rssMb} MB under the profiler; ` +
      `${cpu.samples} CPU samples over the whole life of the process (start, warm-up, ${DURATION} s measured, shutdown); Node ${process.version}.`,
    '',
    ...shareTable('self time by owner', cpu.owners),
    '',
    ...shareTable('self time by function', cpu.functions),
    '',
    ...shareTable('live heap at exit by allocating owner (sampled)', heap.owners),
    '',
    ...shareTable('live heap at exit by allocating function (sampled)', heap.functions),
  ].join('\n');
  writeFileSync(`bench/results/profile-${name}-latest.md`, md + '\n');
  console.log('\n' + md);
}

/**
 * One scenario's row, the service alone as in production (no profiler): an A/B of a change
 * over HTTP in a minute, where the whole bench takes ten.
 */
async function one() {
  const { name, scenario, data } = await profiledScenario();
  const service = await start('service', productionArgs(), { DATABASE_URL: data.databaseUrl, WEB_CONCURRENCY: '1', ...memoryFromEnv() });
  try {
    const row = await measure(name, service, scenario);
    console.log(`\n${name}: ${row.rps} req/s, p50 ${row.p50} ms, p99 ${row.p99} ms, ${row.errors} errors, RSS ${row.rssMb} MB, machine CPU ${row.cpuMsPerRequest} ms per request`);
  } finally {
    await stop(service);
  }
}

/** CPU time per request in process, and how much of it Prisma alone costs (bench/cpu.ts). */
async function cpu() {
  const { data, seedSeconds } = await seeded('crm_bench', Number(CUSTOMERS));
  const { rows, notes } = await cpuCost(data, values.only);
  const md = [...cpuTable(rows), '', `${CUSTOMERS} customers (seeded in ${seedSeconds} s); Node ${process.version}.`, ...notes].join('\n') + '\n';
  // A partial run (--only) is printed, and leaves the whole table on record as it was.
  if (!values.only) {
    mkdirSync('bench/results', { recursive: true });
    writeFileSync('bench/results/cpu-latest.md', md);
  }
  console.log('\n' + md);
}

/** One committed event fanned out to 50 and to 500 open subscriptions: time and statements (bench/fanout.ts). */
async function fanout() {
  // The number of customers does not matter here: a small organization seeds in seconds.
  const { data } = await seeded('crm_fanout', 1000);
  const { rows, notes } = await fanOut(data);
  saveLatest('fanout', [...fanOutTable(rows), '', `Node ${process.version}; 1-minute load average ${loadavg()[0]!.toFixed(1)} (${cpus().length} CPUs).`, ...notes]);
}

/**
 * The lists screens ask for (issue #27) at scale: each row's latency beside the plain list,
 * the plan of each of its statements, and every sort's plan first and 2,000 records deep
 * (bench/lists.ts). Loaded only here: it records the SQL of this process's pg clients.
 */
async function lists() {
  const { data, seedSeconds } = await seeded('crm_lists', Number(CUSTOMERS));
  const [{ varyListData }, list] = await Promise.all([import('./list-data.js'), import('./lists.js')]);
  const varying = performance.now();
  const spread = await varyListData(data.databaseUrl, data.organizationId);
  const varySeconds = ((performance.now() - varying) / 1000).toFixed(1);
  const local = await list.inProcess(data);
  let rows: Awaited<ReturnType<typeof list.listRows>>;
  const plans = new Map<string, Awaited<ReturnType<typeof list.plansOf>>>();
  let audit: Awaited<ReturnType<typeof list.audit>>;
  try {
    rows = await list.listRows(local.get);
    for (const row of rows) plans.set(row.name, await list.plansOf(local, row.path));
    audit = await list.audit(local);
  } finally {
    await local.close();
  }
  const loadBefore = loadavg()[0]!.toFixed(1);
  // From source, with production's flags and NODE_ENV (start() sets it): every row is compared
  // with the plain list of the same run, and the rows need no clean build of the shared tree.
  const fromSource = [...SERVICE_NODE_FLAGS, ...typescript('src/main.ts')];
  // Every answer computed (RESPONSE_CACHE_MB=0): the rows measure the query layer, which a
  // list read again and again would otherwise skip (rest/response-cache.ts).
  const service = await start('service', fromSource, { DATABASE_URL: data.databaseUrl, WEB_CONCURRENCY: '1', RESPONSE_CACHE_MB: '0' });
  const timings = new Map<string, Awaited<ReturnType<typeof list.timeRequests>>>();
  try {
    for (const row of rows) {
      timings.set(row.name, await list.timeRequests(service.url, row.path, keys, { connections: CONNECTIONS, warmup: WARMUP, seconds: DURATION }));
      console.log(JSON.stringify({ row: row.name, ...timings.get(row.name) }));
    }
  } finally {
    await stop(service);
  }
  const md = list.listsMarkdown(rows, timings, plans, audit, [
    `${CUSTOMERS} customers in the measured organization, with ${spread}; seeded in ${seedSeconds} s, dates, amounts and statuses varied in ${varySeconds} s (bench/list-data.ts). ` +
      `The service from source (node ${SERVICE_NODE_FLAGS.join(' ')} --import tsx src/main.ts, NODE_ENV=production, RESPONSE_CACHE_MB=0: every answer computed), one process; ${CONNECTIONS} connections, ${WARMUP} s warm-up, ${DURATION} s measured per row, every request's latency timed by the bench; Node ${process.version}; ` +
      `1-minute load average ${loadBefore} before the rows and ${loadavg()[0]!.toFixed(1)} after (${cpus().length} CPUs, shared with other work).`,
  ]);
  mkdirSync('bench/results', { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  writeFileSync(`bench/results/lists-${stamp}.md`, md);
  writeFileSync(`bench/results/lists-latest.md`, md);
  console.log(`\n${md.split('\n## ')[0]}\nFull results (plans, audit): bench/results/lists-${stamp}.md`);
}

/**
 * Bulk writes (issue #28): one organization's customers one call at a time, by batches of 100
 * and by a CSV import, beside COPY of the same rows; another organization's creates while the
 * import runs (bench/bulk.ts). Loaded only here: it records the SQL of this process's pg clients.
 */
async function bulk() {
  const count = Number(values.rows);
  const connections = Number(values.connections ?? 8);
  // A small organization to start from: the rows measure writes, not the size of what is there.
  const seeding = performance.now();
  const data = await seedBenchDatabase(ADMIN_URL, 'crm_bulk', 1000, 1);
  const seedSeconds = ((performance.now() - seeding) / 1000).toFixed(1);
  const b = await import('./bulk.js');
  const otherKey = await otherOrganizationKey(data.databaseUrl, data.organizationId);
  const why = await b.evidence(data);
  const loadBefore = loadavg()[0]!.toFixed(1);
  const fromSource = [...SERVICE_NODE_FLAGS, ...typescript('src/main.ts')];
  // The bench's keys may write as fast as they can: the rows measure the writes, not the limit.
  const service = await start('service', fromSource, { DATABASE_URL: data.databaseUrl, WEB_CONCURRENCY: '1', RATE_LIMIT_MAX: '1000000000' });
  let measured: Awaited<ReturnType<typeof b.serviceRows>>;
  try {
    measured = await b.serviceRows(service.url, data, otherKey, { rows: count, connections, probes: Number(values.probes) });
  } finally {
    await stop(service);
  }
  const loadAfterService = loadavg()[0]!.toFixed(1);
  // Before COPY: the plans on the organization's row as the rows left it, then vacuumed (this
  // server may run without autovacuum), so COPY's foreign-key checks read a clean row.
  why.after = await b.insertPlansAfter(data.databaseUrl, data.organizationId);
  const copy = await b.copyRow(data.databaseUrl, count);
  console.log(JSON.stringify(copy));
  const written = await b.writtenOnce(data.databaseUrl, data.organizationId);
  const md = b.bulkMarkdown(measured.rows, copy, measured.probes, why, written, [
    `${count} customers per row (the issue names 100,000; \`--rows N\`), each row into the same organization, which held 1,000 customers at the start (seeded in ${seedSeconds} s) and the rows before it at each row's start; ` +
      `single calls over ${connections} keep-alive connections, batches over as many and then over one (tags batch and batch1 below), every call timed by the bench; each customer has a name, e-mail, phone and external_id (unique in the organization). ` +
      `The service from source (node ${SERVICE_NODE_FLAGS.join(' ')} --import tsx src/main.ts, NODE_ENV=production), one process, default pool (10 connections, and 2 background ones the import runs on), RATE_LIMIT_MAX=1000000000; ` +
      `Each service row and COPY start after VACUUM organization_counters, record_counts (this server runs without autovacuum); COPY with the service stopped. "sessions active" / "waiting on a lock" / "idle in transaction": pg_stat_activity of the bench database sampled every 100 ms during the row (client sessions, the sampler left out). ` +
      `Node ${process.version}; 1-minute load average ${loadBefore} before the service rows, ${loadAfterService} after them, ${loadavg()[0]!.toFixed(1)} after COPY (${cpus().length} CPUs, shared with other work: the service, PostgreSQL and the bench process on the same 2 cores).`,
  ]);
  mkdirSync('bench/results', { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  writeFileSync(`bench/results/bulk-${stamp}.md`, md);
  writeFileSync('bench/results/bulk-latest.md', md);
  console.log(`\n${md}\nbench/results/bulk-${stamp}.md`);
}

/** A key of the seed's second organization, whose creates are timed while the first imports. */
async function otherOrganizationKey(databaseUrl: string, organizationId: string): Promise<string> {
  const [{ openDatabase }, { createApiKey }, { allScopes }] = await Promise.all([import('../src/db/connection.js'), import('../src/auth/api-keys.js'), import('../src/auth/scopes.js'), import('../src/schema/index.js')]);
  const db = await openDatabase({ databaseUrl, dataDir: '' });
  try {
    const other = await db.prisma.organization.findFirstOrThrow({ where: { id: { not: organizationId } } });
    return (await createApiKey(db.prisma, { organizationId: other.id, name: 'bench other', scopes: allScopes() })).key;
  } finally {
    await db.close();
  }
}

/**
 * The service against the references that are the limit (issue #31), as its goals are set:
 * one key of one organization of 20,000 customers, 32 connections, one process each. The
 * list, the nested page and a create, each from every reference of its kind and then the
 * service (the list also through Prisma alone); the creates last, so the reads see the
 * seeded customers. Before the creates, the raw INSERT once with the event trigger disabled:
 * what the event row and its NOTIFY cost, beside the references that write them.
 */
async function limits() {
  const { data, seedSeconds } = await seeded('crm_limits', Number(CUSTOMERS), 1);
  const loadBefore = loadavg()[0]!.toFixed(1);
  const fromSource = [...SERVICE_NODE_FLAGS, ...typescript('src/main.ts')];
  // One key at full speed: the rows measure the request, not the limiter's refusals.
  const service = await start('service', fromSource, { DATABASE_URL: data.databaseUrl, WEB_CONCURRENCY: '1', RATE_LIMIT_MAX: '1000000000' });
  const references = await startReferences(data);
  const oneStatement = references.slice(1);
  const list = 'REST list limit=20';
  const rows: Row[] = [];
  const pairs: Array<[Row, Row]> = [];
  try {
    for (const server of references) rows.push(await measure(list, server, { path: '/v1/customers?limit=20' }));
    rows.push(await measure(list, service, { path: '/v1/customers?limit=20' }));
    const computed = await start(COMPUTED, fromSource, { DATABASE_URL: data.databaseUrl, WEB_CONCURRENCY: '1', RATE_LIMIT_MAX: '1000000000', RESPONSE_CACHE_MB: '0' });
    try {
      rows.push(await measure(list, computed, { path: '/v1/customers?limit=20' }));
      // The machine's other work moves a row by 10-20% from one row to the next: the computed
      // page is also measured back to back with the 2-statement reference, pair after pair.
      for (let round = 0; round < PAIRED_ROUNDS; round++) {
        const reference = await measure(list, references[0]!, { path: '/v1/customers?limit=20' });
        pairs.push([reference, await measure(list, computed, { path: '/v1/customers?limit=20' })]);
      }
    } finally {
      await stop(computed);
    }
    const prismaOnly = await start('node:http + Prisma', typescript('bench/reference-prisma.ts'), { DATABASE_URL: data.databaseUrl, ORGANIZATION_ID: data.organizationId });
    try {
      rows.push(await measure(list, prismaOnly, { path: '/v1/customers?limit=20' }));
    } finally {
      await stop(prismaOnly);
    }
    for (const server of oneStatement) rows.push(await measure(NESTED, server, PROFILED.nested!));
    rows.push(await measure(NESTED, service, PROFILED.nested!));
    rows.push(await withoutEventTrigger(data.databaseUrl, () => measure(CREATE_WITHOUT_EVENT, oneStatement[0]!, CREATE)));
    for (const server of oneStatement) rows.push(await measure('REST create', server, CREATE));
    rows.push(await measure('REST create', service, CREATE));
  } finally {
    await stop(service);
    for (const server of references) await stop(server);
  }
  // With every server stopped: the database's own rate for the same INSERT, alone and in
  // transactions as the service sends it.
  const raw = [];
  for (const pauseMs of [undefined, 0, 2]) {
    for (const connections of [1, 8, CONNECTIONS]) raw.push(await rawInserts(data.databaseUrl, [data.organizationId], connections, DURATION, pauseMs));
  }
  report('limits', rows, [
    ...pairedTable(pairs),
    '',
    ...rawInsertsTable(raw),
    '',
    rawInsertsEvidence(raw, RAW_CREATE_GOAL),
    '',
    `${CUSTOMERS} customers in the measured organization (seeded in ${seedSeconds} s); one API key for every request; ${CONNECTIONS} connections; ${WARMUP} s warm-up, ${DURATION} s measured per row; ` +
      `the service from source (node ${SERVICE_NODE_FLAGS.join(' ')} --import tsx src/main.ts, NODE_ENV=production), one process, RATE_LIMIT_MAX=1000000000; each reference one process with a pool of 10 connections, as the service's default. ` +
      `Node ${process.version}; 1-minute load average ${loadBefore} before the rows and ${loadavg()[0]!.toFixed(1)} after (${cpus().length} CPUs, shared with the load generator, PostgreSQL and any other work on the machine).`,
    REFERENCES_NOTE,
    `"${CREATE_WITHOUT_EVENT}": the one-statement INSERT with \`ALTER TABLE customers DISABLE TRIGGER customers_event\` for its row only: the change sequence and the count triggers still run, the event trigger (the event row, webhook deliveries, NOTIFY) does not; the service's create is read against the references that write the event, as it does.`,
    `"${COMPUTED}": the service with its answers from memory off, so every list page is computed (the service's other rows keep the default, ${'`'}RESPONSE_CACHE_MB=32${'`'}: a page read again while nothing in the organization changed is answered from memory after one read of the organization's change number).`,
  ], limitsTargets(rows, list, NESTED, 'REST create', pairs));
}

/** `run` between `change` and `undo` (statements on the bench database), undone whatever happens. */
async function withChange<T>(databaseUrl: string, change: string[], undo: string, run: () => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    for (const statement of change) await client.query(statement);
    try {
      return await run();
    } finally {
      await client.query(undo);
    }
  } finally {
    await client.end();
  }
}

/** `run` with a NOTIFY sent by every INSERT statement into customers. */
const withNotifyOnEveryInsert = <T>(databaseUrl: string, run: () => Promise<T>) =>
  withChange(
    databaseUrl,
    [
      `CREATE OR REPLACE FUNCTION bench_notify() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN PERFORM pg_notify('crm_events', (SELECT organization_id::text FROM new_rows LIMIT 1)); RETURN NULL; END $$`,
      'CREATE TRIGGER bench_notify AFTER INSERT ON customers REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bench_notify()',
    ],
    'DROP TRIGGER bench_notify ON customers',
    run,
  );

/** `run` with the customers' event trigger disabled. */
const withoutEventTrigger = <T>(databaseUrl: string, run: () => Promise<T>) =>
  withChange(databaseUrl, ['ALTER TABLE customers DISABLE TRIGGER customers_event'], 'ALTER TABLE customers ENABLE TRIGGER customers_event', run);

/**
 * The service on Citus (a coordinator and two workers it starts and removes) beside plain
 * PostgreSQL: list, create, sync and webhook delivery with the ratios (bench/citus.ts).
 */
async function citus() {
  const { citusBench } = await import('./citus.js');
  await citusBench(
    { ...tools, start, stop, useKeys: (next) => (keys = next) },
    { adminUrl: ADMIN_URL, customers: Number(CUSTOMERS), serviceArgs: [...SERVICE_NODE_FLAGS, ...typescript('src/main.ts')], connections: CONNECTIONS, warmup: WARMUP, duration: DURATION },
  );
}

const commands: Record<string, () => Promise<void>> = { soak, limiter: limiterCost, sync, events, profile, one, cpu, fanout, lists, bulk, limits, citus, embedded: embeddedOnly, raw };
await (commands[positionals[0] ?? ''] ?? bench)();
process.exit(0);

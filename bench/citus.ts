// The service on Citus beside the same service on plain PostgreSQL (issue #30): a coordinator
// and two workers on this machine (scripts/citus-cluster.sh, started here and always
// removed), and a bench database on the local PostgreSQL, each migrated (on Citus: so
// distributed by organization) and seeded alike; then the same rows on each: the REST list,
// the REST create, a sync by cursor and webhook delivery, with Citus's figures over
// PostgreSQL's. The two organizations the rows measure sit on different workers.
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createApiKey } from '../src/auth/api-keys.js';
import { allScopes } from '../src/auth/scopes.js';
import '../src/schema/index.js';
import { openDatabase } from '../src/db/connection.js';
import { migrate } from '../src/db/migrator.js';
import { startReceiver, type Receiver } from './events.js';
import type { Bench } from './sync.js';
import { CREATE_BODY, type Row, type Server } from './types.js';

/** What run.ts lends besides the measurement: starting and stopping servers, and the keys requests carry. */
export interface CitusTools extends Bench {
  start(name: string, args: string[], env: Record<string, string>): Promise<Server>;
  stop(server: Server): Promise<void>;
  /** The keys run.ts's measurements authorize with from now on. */
  useKeys(keys: string[]): void;
}

export interface CitusOptions {
  /** The local PostgreSQL server the plain database is made on. */
  adminUrl: string;
  /** Customers of the measured organization. */
  customers: number;
  serviceArgs: string[];
  connections: number;
  warmup: number;
  duration: number;
}

const PLAIN_DATABASE = 'crm_citus_pg';
/** Customers of each organization beside the measured one. */
const SMALL = 2000;
const SYNC_LIMIT = 100;
/** Events of the throughput row, half in each organization, inserted BURST_CHUNK a statement. */
const BURST = 4000;
const BURST_CHUNK = 500;
/** The latency row: single-row commits at this pace, for this long. */
const PACED_RATE = 100;
const PACED_SECONDS = 3;
/** How long deliveries may make no progress before a row gives up on the rest. */
const STALL_MS = 15_000;

/** The rows, in the order they run on each system. */
const LIST = 'REST list limit=20';
const SYNC = `sync by cursor, limit=${SYNC_LIMIT}, 1 client walking the organization (req/s = pages/s)`;
const CREATE = 'REST create';
const BURST_ROW = `webhook delivery, a backlog of ${BURST} events committed at once in 2 organizations (req/s = events/s delivered; p50/p99 = commit to delivery)`;
const PACED_ROW = `webhook commit-to-delivery, single-row commits paced at ${PACED_RATE}/s for ${PACED_SECONDS} s over 2 organizations (req/s = commits/s achieved; p50/p99 = commit to delivery)`;

interface Organization {
  id: string;
  name: string;
  customers: number;
  /** The port of the worker holding its shards (Citus only). */
  worker?: number;
}

/** An organization the rows act as, with its key. */
interface Tenant extends Organization {
  key: string;
}

interface System {
  name: 'PostgreSQL' | 'Citus';
  databaseUrl: string;
  /** The measured organization (list, create, sync), then the second one webhooks go to. */
  tenants: [Tenant, Tenant];
  seedSeconds: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
const percentile = (values: number[], p: number) => sorted(values)[Math.max(0, Math.ceil(p * values.length) - 1)] ?? NaN;

async function withClient<T>(url: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

function databaseUrl(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Starts the throwaway cluster in `dir`; answers the coordinator's URL (database crm, workers registered). */
function startCluster(dir: string): string {
  const started = spawnSync('bash', ['scripts/citus-cluster.sh', 'start', dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const url = started.stdout.trim().split('\n').at(-1) ?? '';
  if (started.status !== 0 || !url.startsWith('postgres://')) throw new Error(`scripts/citus-cluster.sh start failed (${started.status}): ${started.stdout}`);
  return url;
}

function stopCluster(dir: string) {
  spawnSync('bash', ['scripts/citus-cluster.sh', 'stop', dir], { stdio: 'inherit' });
}

async function migrated(url: string) {
  const db = await openDatabase({ databaseUrl: url, dataDir: '' });
  await migrate(db.sql).finally(() => db.close());
}

/**
 * Organization ids whose shards sit on the given workers, in order: an organization's
 * shard is the hash of its id, so random ids are drawn until each worker has one.
 */
async function idsOnWorkers(client: pg.Client, workers: number[]): Promise<string[]> {
  const ids: string[] = [];
  for (const worker of workers) {
    for (let tries = 0; ; tries++) {
      if (tries > 1000) throw new Error(`no organization id found whose shard is on the worker at port ${worker}`);
      const id = randomUUID();
      const { rows } = await client.query<{ nodeport: number }>(
        "SELECT nodeport FROM citus_shards WHERE table_name = 'organization_counters'::regclass AND shardid = get_shard_id_for_distribution_column('organization_counters', $1::uuid)",
        [id],
      );
      if (rows[0]?.nodeport === worker) {
        ids.push(id);
        break;
      }
    }
  }
  return ids;
}

/** The port of the worker holding an organization's shards. */
async function workerOf(client: pg.Client, id: string): Promise<number> {
  const { rows } = await client.query<{ nodeport: number }>(
    "SELECT nodeport FROM citus_shards WHERE table_name = 'organization_counters'::regclass AND shardid = get_shard_id_for_distribution_column('organization_counters', $1::uuid)",
    [id],
  );
  return rows[0]!.nodeport;
}

/**
 * Each organization's customers in bulk (INSERT ... SELECT generate_series), as bench/seed.ts
 * writes them: triggers off for the statement (SET LOCAL session_replication_role = replica,
 * which Citus carries to the workers' shards), so what the triggers would have written is
 * written here: each customer's change sequence in insertion order, the organization's
 * counters at the last of them, and the counts. Through the coordinator on Citus.
 */
async function seed(url: string, organizations: Organization[]): Promise<void> {
  await withClient(url, async (client) => {
    // In a transaction of its own: on Citus organizations is a reference table, written on every node.
    await client.query('INSERT INTO organizations (id, name) SELECT * FROM unnest($1::uuid[], $2::text[])', [organizations.map((o) => o.id), organizations.map((o) => o.name)]);
    const bypassing = async (text: string, params: unknown[]) => {
      await client.query('BEGIN');
      try {
        await client.query('SET LOCAL session_replication_role = replica');
        await client.query('SET LOCAL statement_timeout = 0');
        await client.query(text, params);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      }
    };
    for (const org of organizations) {
      await bypassing(
        `INSERT INTO customers (id, organization_id, name, email, phone, created_at, updated_at, change_seq)
         SELECT gen_random_uuid(), $1, 'Customer ' || g, 'customer.' || g || '@example.com', '+1555' || lpad(g::text, 7, '0'),
                now() - make_interval(secs => g), now() - make_interval(secs => g), $2::int + 1 - g
         FROM generate_series(1, $2::int) g`,
        [org.id, org.customers],
      );
      await bypassing('INSERT INTO organization_counters (organization_id, change_seq) VALUES ($1, $2)', [org.id, org.customers]);
      await bypassing("INSERT INTO record_counts (organization_id, resource, status, count) VALUES ($1, 'customers', '', $2)", [org.id, org.customers]);
    }
    await client.query('VACUUM ANALYZE customers, organization_counters, record_counts');
  });
}

async function keyOf(url: string, organizationId: string): Promise<string> {
  const db = await openDatabase({ databaseUrl: url, dataDir: '' });
  try {
    return (await createApiKey(db.prisma, { organizationId, name: 'bench citus', scopes: allScopes() })).key;
  } finally {
    await db.close();
  }
}

async function prepare(name: System['name'], url: string, organizations: Organization[]): Promise<System> {
  console.log(`Seeding ${name} (${organizations.map((o) => o.customers).join(' + ')} customers)...`);
  const begun = performance.now();
  await seed(url, organizations);
  const [measured, second] = organizations;
  const tenants: [Tenant, Tenant] = [
    { ...measured!, key: await keyOf(url, measured!.id) },
    { ...second!, key: await keyOf(url, second!.id) },
  ];
  return { name, databaseUrl: url, tenants, seedSeconds: (performance.now() - begun) / 1000 };
}

/** The service's warnings and errors (its JSON lines) from now on, each with how often: for the notes of a row that failed. */
function collectProblems(server: Server): () => string[] {
  const seen = new Map<string, number>();
  let partial = '';
  server.process.stdout!.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      if (!/"level":"(warn|error|fatal)"/.test(line)) continue;
      let text = line.slice(0, 300);
      try {
        const { msg, error, err } = JSON.parse(line) as { msg?: string; error?: string; err?: { message?: string } };
        const why = error ?? err?.message;
        text = why ? `${msg}: ${why}` : String(msg);
      } catch {
        // Not JSON: the line itself.
      }
      seen.set(text, (seen.get(text) ?? 0) + 1);
    }
  });
  return () => [...seen].map(([text, n]) => `${text} (${n} times)`);
}

/**
 * One client follows next_cursor (limit=100) through the measured organization's customers,
 * from `?include_deleted=true`, until has_more is false: pages a second and each page's time.
 */
async function syncWalk(server: Server, tenant: Tenant): Promise<{ row: Row; note: string }> {
  const times: number[] = [];
  const ids = new Set<string>();
  const failures: string[] = [];
  let path = `/v1/customers?include_deleted=true&limit=${SYNC_LIMIT}`;
  const begun = performance.now();
  for (;;) {
    const started = performance.now();
    const response = await fetch(server.url + path, { headers: { authorization: `Bearer ${tenant.key}` } });
    const text = await response.text();
    times.push(performance.now() - started);
    if (!response.ok) {
      failures.push(`GET ${path.slice(0, 120)} answered ${response.status}: ${text.slice(0, 200)}`);
      break;
    }
    const page = JSON.parse(text) as { data: Array<{ id: string }>; pagination: { next_cursor: string | null; has_more: boolean } };
    for (const record of page.data) ids.add(record.id);
    if (!page.pagination.has_more) break;
    path = `/v1/customers?cursor=${page.pagination.next_cursor}&limit=${SYNC_LIMIT}`;
  }
  const seconds = (performance.now() - begun) / 1000;
  if (!failures.length && ids.size !== tenant.customers) failures.push(`the walk read ${ids.size} distinct customers of ${tenant.customers}`);
  return {
    row: {
      scenario: '',
      system: '',
      rps: Math.round(times.length / seconds),
      p50: Math.round(percentile(times, 0.5)),
      p99: Math.round(percentile(times, 0.99)),
      errors: failures.length,
      rssMb: 0,
    },
    note: `${times.length} pages, ${ids.size} distinct customers in ${seconds.toFixed(2)} s (${Math.round(ids.size / seconds)} records/s)${failures.length ? `; FAILED: ${failures.join('; ')}` : ''}`,
  };
}

/** One webhook endpoint of `tenant`, to its own receiver, which checks every signature with the endpoint's secret. */
async function endpointFor(server: Server, tenant: Tenant): Promise<Receiver> {
  const receiver = await startReceiver();
  const response = await fetch(`${server.url}/v1/webhook_endpoints`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${tenant.key}` },
    body: JSON.stringify({ url: `${receiver.url}/hook`, description: 'bench citus receiver' }),
  });
  const body = (await response.json()) as { secret?: string };
  if (response.status !== 201 || !body.secret) {
    await receiver.close();
    throw new Error(`POST /v1/webhook_endpoints answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`);
  }
  receiver.setSecret(body.secret);
  return receiver;
}

/** A customer committed by the bench, and when its COMMIT's answer came back. */
interface Committed {
  id: string;
  committedAt: number;
  receiver: Receiver;
}

/**
 * Customers INSERTed through every trigger (change sequence, counts, event, delivery rows,
 * NOTIFY), one transaction, as the service writes them: INSERT ... VALUES, which Citus routes
 * whole to the organization's node. (Its INSERT ... SELECT goes through the coordinator
 * with a two-phase commit, which PostgreSQL refuses to a transaction that sent a NOTIFY.)
 */
async function insertCustomers(client: pg.Client, tenant: Tenant, count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, () => randomUUID());
  const values = ids.map((_, i) => `($${i + 2}::uuid, $1::uuid, 'Webhook ${i}', 'webhook@example.com', now())`).join(', ');
  await client.query(`INSERT INTO customers (id, organization_id, name, email, updated_at) VALUES ${values}`, [tenant.id, ...ids]);
  return ids;
}

/** Waits until every committed customer's delivery arrived, or none arrived for STALL_MS. */
async function deliveries(committed: Committed[]): Promise<{ missing: number; lastAt: number }> {
  let seen = -1;
  let progressAt = performance.now();
  for (;;) {
    const missing = committed.filter((c) => !c.receiver.firstByObject.has(c.id)).length;
    const arrivals = committed.map((c) => c.receiver.firstByObject.get(c.id)).filter((at) => at !== undefined);
    if (missing === 0) return { missing, lastAt: Math.max(...arrivals) };
    if (missing !== seen) [seen, progressAt] = [missing, performance.now()];
    else if (performance.now() - progressAt > STALL_MS) return { missing, lastAt: arrivals.length ? Math.max(...arrivals) : NaN };
    await sleep(20);
  }
}

/** Requests beyond the first per customer, and requests whose signature failed, among `committed`'s. */
function exactlyOnce(committed: Committed[]): { duplicates: number; invalid: number } {
  let duplicates = 0;
  let invalid = 0;
  for (const receiver of new Set(committed.map((c) => c.receiver))) {
    const mine = new Set(committed.filter((c) => c.receiver === receiver).map((c) => c.id));
    const requests = receiver.received.filter((r) => r.objectId && mine.has(r.objectId));
    duplicates += requests.length - new Set(requests.map((r) => r.objectId)).size;
    invalid += requests.filter((r) => !r.valid).length;
  }
  return { duplicates, invalid };
}

/** Each delivered customer's time from its COMMIT's answer to its delivery's arrival, ms. */
const latenciesOf = (committed: Committed[]) => committed.filter((c) => c.receiver.firstByObject.has(c.id)).map((c) => c.receiver.firstByObject.get(c.id)! - c.committedAt);

function deliveryRow(committed: Committed[], waited: { missing: number; lastAt: number }, rps: number): Row {
  const latencies = latenciesOf(committed);
  const once = exactlyOnce(committed);
  return {
    scenario: '',
    system: '',
    rps: Math.round(rps),
    p50: Math.round(percentile(latencies, 0.5)),
    p99: Math.round(percentile(latencies, 0.99)),
    errors: waited.missing + once.duplicates + once.invalid,
    rssMb: 0,
  };
}

/**
 * Throughput: a backlog of BURST events that becomes due at once: one transaction per
 * organization (INSERTs of BURST_CHUNK customers, then COMMIT), the two at the same time, so
 * nothing is deliverable before a COMMIT; events/s from the first COMMIT's answer to the last
 * delivery. p50/p99 from each one's COMMIT answer to its delivery: its place in the queue.
 */
async function burst(url: string, tenants: Tenant[], receivers: Receiver[]): Promise<{ row: Row; note: string }> {
  const committed: Committed[] = [];
  const begun = performance.now();
  await Promise.all(
    tenants.map((tenant, i) =>
      withClient(url, async (client) => {
        const ids: string[] = [];
        await client.query('BEGIN');
        while (ids.length < BURST / tenants.length) ids.push(...(await insertCustomers(client, tenant, BURST_CHUNK)));
        await client.query('COMMIT');
        const committedAt = performance.now();
        committed.push(...ids.map((id) => ({ id, committedAt, receiver: receivers[i]! })));
      }),
    ),
  );
  const firstCommit = Math.min(...committed.map((c) => c.committedAt));
  const lastCommit = Math.max(...committed.map((c) => c.committedAt));
  const waited = await deliveries(committed);
  const delivered = committed.length - waited.missing;
  const seconds = (waited.lastAt - firstCommit) / 1000;
  return {
    row: deliveryRow(committed, waited, delivered / seconds),
    note:
      `the two transactions committed ${((firstCommit - begun) / 1000).toFixed(2)} and ${((lastCommit - begun) / 1000).toFixed(2)} s after the first INSERT; ` +
      `${delivered} delivered, the last ${seconds.toFixed(2)} s after the first COMMIT's answer${waited.missing ? `; **${waited.missing} never arrived** (no progress for ${STALL_MS / 1000} s)` : ''}`,
  };
}

/** Latency: single-row commits paced at PACED_RATE a second (open loop), alternating organizations, each timed from its COMMIT answer to its delivery. */
async function paced(url: string, tenants: Tenant[], receivers: Receiver[]): Promise<{ row: Row; note: string }> {
  const clients = await Promise.all(Array.from({ length: 4 }, async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    return client;
  }));
  const committed: Committed[] = [];
  const failures: string[] = [];
  const total = PACED_RATE * PACED_SECONDS;
  const begun = performance.now();
  const running: Array<Promise<void>> = [];
  try {
    for (let n = 0; n < total; n++) {
      const due = begun + (n * 1000) / PACED_RATE;
      if (due > performance.now()) await sleep(due - performance.now());
      const tenant = n % tenants.length;
      running.push(
        insertCustomers(clients[n % clients.length]!, tenants[tenant]!, 1).then(
          ([id]) => void committed.push({ id: id!, committedAt: performance.now(), receiver: receivers[tenant]! }),
          (error: Error) => void failures.push(error.message),
        ),
      );
    }
    await Promise.all(running);
  } finally {
    await Promise.all(clients.map((c) => c.end()));
  }
  if (committed.length === 0) throw new Error(`no commit succeeded: ${failures[0]}`);
  const achieved = committed.length / ((Math.max(...committed.map((c) => c.committedAt)) - begun) / 1000);
  const waited = await deliveries(committed);
  const row = deliveryRow(committed, waited, achieved);
  row.errors += failures.length;
  return { row, note: `${committed.length} of ${total} committed (${failures.length} failed${failures.length ? `: ${failures[0]}` : ''}), max commit to delivery ${Math.round(Math.max(...latenciesOf(committed)))} ms${waited.missing ? `; **${waited.missing} never arrived**` : ''}` };
}

/** A row that could not be measured: no figures, the error in the notes. */
const failedRow = (scenario: string): Row => ({ scenario, system: '', rps: NaN, p50: NaN, p99: NaN, errors: NaN, rssMb: 0 });

/** The service on one system, the receivers of its endpoints (made by the first webhook row), what it logged. */
interface Running {
  system: System;
  service: Server;
  receivers: Receiver[];
  problems: () => string[];
}

type Measurement = Row | { row: Row; note: string };

/** Each row's measurement on one system, in the order the rows run: the walk before any create, so it reads exactly the seeded customers. */
function rowsFor(tools: CitusTools): Array<[string, (on: Running) => Promise<Measurement>]> {
  const as = (on: Running) => tools.useKeys([on.system.tenants[0].key]);
  const webhooks = async (on: Running) => {
    if (on.receivers.length === 0) for (const tenant of on.system.tenants) on.receivers.push(await endpointFor(on.service, tenant));
    return on.receivers;
  };
  return [
    [LIST, (on) => (as(on), tools.measure(LIST, on.service, { path: '/v1/customers?limit=20' }))],
    [SYNC, (on) => syncWalk(on.service, on.system.tenants[0])],
    [CREATE, (on) => (as(on), tools.measure(CREATE, on.service, { path: '/v1/customers', method: 'POST', body: CREATE_BODY }))],
    [BURST_ROW, async (on) => burst(on.system.databaseUrl, on.system.tenants, await webhooks(on))],
    [PACED_ROW, async (on) => paced(on.system.databaseUrl, on.system.tenants, await webhooks(on))],
  ];
}

/** The rows' figures on each system: the mean of its rounds (a failed round fails it), errors summed. */
function tables(rounds: Row[][]): string[] {
  const cell = (value: number) => (Number.isNaN(value) ? 'failed' : String(Math.round(value)));
  const ratio = (a: number, b: number) => (Number.isNaN(a) || Number.isNaN(b) || b === 0 ? '' : (a / b).toFixed(2));
  const scenarios = [...new Set(rounds.flat().map((r) => r.scenario))];
  const of = (scenario: string, system: string) => rounds.map((round) => round.find((r) => r.scenario === scenario && r.system === system) ?? failedRow(scenario));
  const mean = (rows: Row[], key: 'rps' | 'p50' | 'p99') => rows.reduce((sum, r) => sum + r[key], 0) / rows.length;
  const systems = ['PostgreSQL', 'Citus'] as const;
  return [
    `| row (mean of ${rounds.length} rounds) | PostgreSQL req/s | p50 ms | p99 ms | Citus req/s | p50 ms | p99 ms | Citus / PostgreSQL req/s | p50 | p99 | errors (PostgreSQL, Citus) |`,
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...scenarios.map((scenario) => {
      const [plain, citus] = systems.map((system) => of(scenario, system)) as [Row[], Row[]];
      const [rps, p50, p99] = (['rps', 'p50', 'p99'] as const).map((key) => [mean(plain, key), mean(citus, key)] as const);
      const errors = (rows: Row[]) => cell(rows.reduce((sum, r) => sum + r.errors, 0));
      const throughput = ratio(rps![1], rps![0]);
      return `| ${scenario} | ${cell(rps![0])} | ${cell(p50![0])} | ${cell(p99![0])} | ${cell(rps![1])} | ${cell(p50![1])} | ${cell(p99![1])} | ${throughput && `**${throughput}**`} | ${ratio(p50![1], p50![0])} | ${ratio(p99![1], p99![0])} | ${errors(plain)}, ${errors(citus)} |`;
    }),
    '',
    '| row: each round (req/s / p50 ms / p99 ms) | PostgreSQL | Citus |',
    '|---|---|---|',
    ...scenarios.map((scenario) => `| ${scenario.split(' (')[0]} | ${systems.map((system) => of(scenario, system).map((r) => [r.rps, r.p50, r.p99].map(cell).join(' / ')).join(', ')).join(' | ')} |`),
  ];
}

/**
 * Every row on both systems, both services up for them and stopped after, whatever happens.
 * Each row runs on PostgreSQL, Citus, Citus, PostgreSQL: both systems' figures of a row are
 * taken close in time, and a drift of the machine's load over the four favours neither.
 */
async function measureBoth(tools: CitusTools, options: CitusOptions, systems: [System, System]): Promise<{ rounds: Row[][]; notes: string[] }> {
  const running: Running[] = [];
  const rounds: Row[][] = [[], []];
  const notes: string[] = [];
  try {
    for (const system of systems) {
      const service = await tools.start(`service on ${system.name}`, options.serviceArgs, {
        DATABASE_URL: system.databaseUrl,
        WEB_CONCURRENCY: '1',
        // One key per organization at full speed: the rows measure the work, not the limiter.
        RATE_LIMIT_MAX: '1000000000',
        WEBHOOK_ALLOW_HTTP: 'true',
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      });
      running.push({ system, service, receivers: [], problems: collectProblems(service) });
    }
    const [plain, citus] = running as [Running, Running];
    // A fresh process's first seconds (V8 compiling the hot paths) belong to no row.
    for (const on of running) {
      tools.useKeys([on.system.tenants[0].key]);
      await tools.measure(`warm-up on ${on.system.name} (not recorded)`, on.service, { path: '/v1/customers?limit=20' });
    }
    const turns: Array<[Running, number]> = [[plain, 0], [citus, 0], [citus, 1], [plain, 1]];
    for (const [scenario, measure] of rowsFor(tools)) {
      for (const [on, round] of turns) {
        const label = `${on.system.name}, round ${round + 1}, ${scenario.split(' (')[0]}`;
        try {
          const result = await measure(on);
          rounds[round]!.push({ ...('row' in result ? result.row : result), scenario, system: on.system.name });
          if ('note' in result) notes.push(`${label}: ${result.note}.`);
        } catch (error) {
          rounds[round]!.push({ ...failedRow(scenario), system: on.system.name });
          notes.push(`${label}: **failed**: ${(error as Error).message.slice(0, 400)}`);
        }
      }
    }
    for (const on of running) {
      const logged = on.problems();
      const failed = rounds.flat().some((r) => r.system === on.system.name && (Number.isNaN(r.rps) || r.errors !== 0));
      if (failed && logged.length) notes.push(`${on.system.name}: the service logged: ${logged.slice(0, 5).join('; ')}.`);
    }
  } finally {
    for (const on of running) {
      await tools.stop(on.service);
      for (const receiver of on.receivers) await receiver.close();
    }
  }
  return { rounds, notes };
}

export async function citusBench(tools: CitusTools, options: CitusOptions): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'crm-bench-citus-'));
  // Ctrl-C too removes the cluster (its servers would outlive the bench otherwise).
  const interrupted = () => {
    stopCluster(dir);
    process.exit(130);
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  let rounds: Row[][] = [];
  const notes: string[] = [];
  const loadBefore = loadavg()[0]!.toFixed(1);
  let setting: string[] = [];
  try {
    const citusUrl = startCluster(dir);
    await migrated(citusUrl);
    const { workers, version, organizations } = await withClient(citusUrl, async (client) => {
      const workers = (await client.query<{ nodeport: number }>("SELECT nodeport FROM pg_dist_node WHERE groupid > 0 AND noderole = 'primary' ORDER BY nodeport")).rows.map((r) => r.nodeport);
      const [measuredId, secondId] = await idsOnWorkers(client, workers.slice(0, 2));
      const organizations: Organization[] = [
        { id: measuredId!, name: 'Bench Co', customers: options.customers },
        { id: secondId!, name: 'Webhook Co', customers: SMALL },
        { id: randomUUID(), name: 'Other Co 1', customers: SMALL },
        { id: randomUUID(), name: 'Other Co 2', customers: SMALL },
      ];
      for (const org of organizations) org.worker = await workerOf(client, org.id);
      const version = (await client.query<{ v: string }>("SELECT extversion || ' on ' || current_setting('server_version') AS v FROM pg_extension WHERE extname = 'citus'")).rows[0]!.v;
      return { workers, version, organizations };
    });
    if (workers.length < 2) throw new Error(`the cluster has ${workers.length} workers, not 2`);
    const citus = await prepare('Citus', citusUrl, organizations);

    // The plain database: the same organizations (the same ids) and customers.
    const plainUrl = databaseUrl(options.adminUrl, PLAIN_DATABASE);
    await withClient(options.adminUrl, async (admin) => {
      await admin.query(`DROP DATABASE IF EXISTS ${PLAIN_DATABASE} WITH (FORCE)`);
      await admin.query(`CREATE DATABASE ${PLAIN_DATABASE}`);
      // The cluster's nodes run with synchronous_commit = off (and fsync = off): so does this
      // database, or every commit here would wait for a flush that Citus's do not.
      await admin.query(`ALTER DATABASE ${PLAIN_DATABASE} SET synchronous_commit = off`);
    });
    await migrated(plainUrl);
    const plain = await prepare('PostgreSQL', plainUrl, organizations.map(({ worker: _, ...org }) => org));

    const measured = await measureBoth(tools, options, [plain, citus]);
    rounds = measured.rounds;
    notes.push(...measured.notes);
    const [first, second] = citus.tenants;
    setting = [
      `The same service (from source: node ${options.serviceArgs.join(' ')}, NODE_ENV=production), one process (WEB_CONCURRENCY=1), its default pool (10 connections), RATE_LIMIT_MAX=1000000000 with one key per organization, ` +
        `on PostgreSQL (database ${PLAIN_DATABASE} on ${new URL(options.adminUrl).host}, synchronous_commit = off for it) and on Citus ${version} (a coordinator and ${workers.length} workers on this machine, scripts/citus-cluster.sh: fsync = off, synchronous_commit = off; the service's DATABASE_URL on the coordinator). ` +
        `Each seeded alike through its DATABASE_URL (INSERT ... SELECT generate_series with the triggers off; the same organization ids): 4 organizations, the measured one with ${options.customers} customers and three with ${SMALL}; ` +
        `seeding took ${plain.seedSeconds.toFixed(1)} s on PostgreSQL and ${citus.seedSeconds.toFixed(1)} s on Citus.`,
      `On Citus the measured organization's shards are on the worker at port ${first.worker} and the second organization's (webhooks only) on the worker at port ${second.worker}; the other two on ${organizations.slice(2).map((o) => o.worker).join(' and ')}.`,
      `List and create: autocannon, ${options.connections} connections, ${options.warmup} s warm-up, ${options.duration} s measured, the measured organization's key. ` +
        `Sync: one client following next_cursor from \`GET /v1/customers?include_deleted=true&limit=${SYNC_LIMIT}\` to has_more = false, before the creates; p50/p99 of each page. ` +
        `Webhooks: one endpoint in each of the two organizations, each to its own receiver in the bench process (node:http, 204 at once, every signature checked); events are customers INSERTed by the bench through every trigger on DATABASE_URL, ` +
        `timed from each COMMIT's answer to the delivery's arrival at its receiver. The backlog: ${BURST / 2} customers in each organization, one transaction each (INSERTs of ${BURST_CHUNK}), the two sessions at once; its events/s run from the first COMMIT's answer to the last delivery. The paced row: 4 sessions, autocommit, alternating organizations. ` +
        `Errors: non-2xx answers and failed requests; for the sync a walk that missed or repeated a customer; for webhooks deliveries missing (none for ${STALL_MS / 1000} s), repeated, or badly signed.`,
      `Node ${process.version}; 1-minute load average ${loadBefore} before and ${loadavg()[0]!.toFixed(1)} after (${cpus().length} CPUs, shared by the load generator, the service, PostgreSQL, the three Citus nodes and any other work on the machine). Both services ran side by side, each warmed up first by one unrecorded list row; each row then ran on PostgreSQL, Citus, Citus, PostgreSQL (two rounds each, taken close in time). ` +
        'The ratios are Citus\'s figure over PostgreSQL\'s: above 1 is more throughput, or more latency.',
    ];
  } finally {
    process.removeListener('SIGINT', interrupted);
    process.removeListener('SIGTERM', interrupted);
    stopCluster(dir);
  }
  const md = ['# The service on Citus beside PostgreSQL', '', ...tables(rounds), '', ...setting.flatMap((s) => [s, '']), ...notes.map((n) => `- ${n}`)].join('\n') + '\n';
  mkdirSync('bench/results', { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  writeFileSync(`bench/results/citus-${stamp}.md`, md);
  writeFileSync('bench/results/citus-latest.md', md);
  console.log(`\n${md}\nbench/results/citus-${stamp}.md`);
}

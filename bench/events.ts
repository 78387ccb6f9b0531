// Events and webhooks: what the event write (a deferred trigger on every committed change)
// and one webhook endpoint cost `POST /v1/customers`, how many deliveries a second the
// service gets out to a local receiver (as creates come, and draining a backlog while creates
// run), and how long after a create's commit its delivery arrives (one at a time, and paced
// at 200 creates a second through the API and as raw INSERTs). The receiver is a node:http
// server in the bench process answering 204 at once; it checks every delivery's signature
// with the Standard Webhooks reference library and counts webhook-ids, so a missing or
// repeated delivery shows.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { formatActivity, sampleActivity } from './activity.js';
import { Webhook } from 'standardwebhooks';
import type { BenchData } from './seed.js';
import { CREATE_BODY, type Row, type Server } from './types.js';
import type { Bench } from './sync.js';

/** One request the receiver got. */
interface Received {
  webhookId: string;
  /** performance.now() when the request arrived (headers read). */
  at: number;
  type?: string;
  objectId?: string;
  /** The signature verified with the endpoint's secret (Standard Webhooks reference library). */
  valid: boolean;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Requests per webhook-id. */
  count: Map<string, number>;
  /** The first arrival of each customer's delivery, by customer id. */
  firstByObject: Map<string, number>;
  /** Verifies signatures from now on. */
  setSecret(secret: string): void;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  let webhook: Webhook | undefined;
  const received: Received[] = [];
  const count = new Map<string, number>();
  const firstByObject = new Map<string, number>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const at = performance.now();
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      res.writeHead(204).end();
      const body = Buffer.concat(chunks).toString('utf8');
      const webhookId = String(req.headers['webhook-id'] ?? '');
      let valid = false;
      let event: { type?: string; data?: { object?: { id?: string } } } | undefined;
      try {
        event = JSON.parse(body);
      } catch {
        event = undefined;
      }
      if (webhook) {
        try {
          webhook.verify(body, { 'webhook-id': webhookId, 'webhook-timestamp': String(req.headers['webhook-timestamp']), 'webhook-signature': String(req.headers['webhook-signature']) });
          valid = true;
        } catch {
          valid = false;
        }
      }
      const objectId = event?.data?.object?.id;
      received.push({ webhookId, at, type: event?.type, objectId, valid });
      count.set(webhookId, (count.get(webhookId) ?? 0) + 1);
      if (objectId && !firstByObject.has(objectId)) firstByObject.set(objectId, at);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    count,
    firstByObject,
    setSecret: (secret) => (webhook = new Webhook(secret)),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
const percentile = (values: number[], p: number) => sorted(values)[Math.max(0, Math.ceil(p * values.length) - 1)] ?? NaN;
const ms = (value: number) => value.toFixed(1);
const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis));

/** BURST customers are created this many at a time. */
const BURST_CONCURRENCY = 16;
/** How long deliveries may make no progress before the bench gives up waiting for the rest. */
const STALL_MS = 60_000;

interface Created {
  id: string;
  sentAt: number;
  respondedAt: number;
}

/** Creates `count` customers, `concurrency` at a time; answers each one's id and times, and the failures. */
async function createCustomers(bench: Bench, service: Server, count: number, concurrency: number, label: string): Promise<{ created: Created[]; failures: string[] }> {
  const created: Created[] = [];
  const failures: string[] = [];
  let next = 0;
  const body = JSON.stringify({ name: `${label} Customer`, email: 'events@example.com' });
  const worker = async () => {
    while (next < count) {
      const n = next++;
      const sentAt = performance.now();
      const response = await fetch(`${service.url}/v1/customers`, { method: 'POST', headers: bench.headersOf({ body }), body }).catch((error: Error) => error);
      if (response instanceof Error) {
        failures.push(`create ${n}: ${response.message}`);
        continue;
      }
      const text = await response.text();
      const respondedAt = performance.now();
      if (response.status !== 201) {
        failures.push(`create ${n} answered ${response.status}: ${text.slice(0, 200)}`);
        continue;
      }
      created.push({ id: (JSON.parse(text) as { id: string }).id, sentAt, respondedAt });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { created, failures };
}

/** Waits until every id has a delivery (or none arrived for STALL_MS); answers when the last one came. */
async function waitForDeliveries(receiver: Receiver, ids: string[]): Promise<{ done: boolean; lastAt: number; missing: string[] }> {
  let seen = -1;
  let progressAt = performance.now();
  for (;;) {
    const missing = ids.filter((id) => !receiver.firstByObject.has(id));
    if (missing.length === 0) return { done: true, lastAt: Math.max(...ids.map((id) => receiver.firstByObject.get(id)!)), missing };
    if (missing.length !== seen) {
      seen = missing.length;
      progressAt = performance.now();
    } else if (performance.now() - progressAt > STALL_MS) {
      return { done: false, lastAt: NaN, missing };
    }
    await sleep(20);
  }
}

/** What the service's tables say about the deliveries (of one endpoint). */
async function deliveryState(db: pg.Client, endpointId: string): Promise<{ pending: number; succeeded: number; failed: number; attempts: number; failedAttempts: number; lines: string }> {
  const { rows } = await db.query<{ status: string; count: number; attempts: number }>(
    'SELECT status, count(*)::int AS count, coalesce(sum(attempts), 0)::int AS attempts FROM webhook_deliveries WHERE endpoint_id = $1 GROUP BY status',
    [endpointId],
  );
  const by = (status: string) => rows.find((r) => r.status === status)?.count ?? 0;
  const logged = (await db.query<{ all: number; failed: number }>(
    "SELECT count(*)::int AS all, count(*) FILTER (WHERE status_code IS NULL OR status_code NOT BETWEEN 200 AND 299)::int AS failed FROM webhook_attempts WHERE endpoint_id = $1",
    [endpointId],
  )).rows[0]!;
  return {
    pending: by('pending'),
    succeeded: by('succeeded'),
    failed: by('failed'),
    attempts: logged.all,
    failedAttempts: logged.failed,
    lines: rows.map((r) => `${r.status} ${r.count} (attempts ${r.attempts})`).join(', ') || 'none',
  };
}

/** Waits until the endpoint has no pending delivery; answers the seconds it took, or NaN after `limitMs`. */
async function drain(db: pg.Client, endpointId: string, limitMs: number): Promise<number> {
  const begun = performance.now();
  while (performance.now() - begun < limitMs) {
    if ((await deliveryState(db, endpointId)).pending === 0) return (performance.now() - begun) / 1000;
    await sleep(100);
  }
  return NaN;
}

/** Exactly-once check of the receiver's requests whose webhook-id is one of `eventIds`. */
function onceEach(receiver: Receiver, eventIds: Set<string>, since: number) {
  const mine = receiver.received.slice(since).filter((r) => eventIds.has(r.webhookId));
  const distinct = new Set(mine.map((r) => r.webhookId));
  const duplicated = [...distinct].filter((id) => (receiver.count.get(id) ?? 0) > 1);
  return {
    requests: mine.length,
    distinct: distinct.size,
    missing: [...eventIds].filter((id) => !distinct.has(id)),
    duplicates: mine.length - distinct.size,
    duplicated,
    invalid: mine.filter((r) => !r.valid).length,
  };
}

async function eventIdsOf(db: pg.Client, organizationId: string, customerIds: string[]): Promise<Map<string, string>> {
  const { rows } = await db.query<{ id: string; record_id: string }>(
    "SELECT id, record_id FROM events WHERE organization_id = $1 AND type = 'customer.created' AND record_id = ANY($2::uuid[])",
    [organizationId, customerIds],
  );
  return new Map(rows.map((r) => [r.record_id, r.id]));
}

/** Events queued at once for the drain row, and the pace and length of the latency rows. */
const BACKLOG = 10_000;
const BACKLOG_CHUNK = 500;
const PACED_RATE = 200;
const PACED_SECONDS = 10;
/** Creates (or INSERTs) that may be outstanding at once while paced: past it the pace slips, and the achieved rate says so. */
const PACED_OUTSTANDING = 64;

/** Raw customer INSERTs through the triggers (change sequence, counts, event, delivery rows), one transaction; answers the ids. */
async function insertCustomers(db: pg.Client, organizationId: string, count: number, label: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    "INSERT INTO customers (id, organization_id, name, email, updated_at) SELECT gen_random_uuid(), $1, $2 || ' ' || g, 'events@example.com', now() FROM generate_series(1, $3::int) g RETURNING id",
    [organizationId, label, count],
  );
  return rows.map((r) => r.id);
}

/** Receiver arrivals between two instants (performance.now()). */
const arrivalsBetween = (receiver: Receiver, from: number, to: number) => receiver.received.filter((r) => r.at >= from && r.at <= to).length;

/**
 * A backlog of BACKLOG events, committed while the service is paused (SIGSTOP: it takes none
 * of them meanwhile, and holds no lock: no request is under way), drained once it resumes
 * while the API takes creates (BURST_CONCURRENCY at a time) until the last of the backlog has
 * arrived: deliveries a second over that window, every arrival counted (the creates'
 * deliveries too).
 */
async function backlogDrain(bench: Bench, service: Server, data: BenchData, db: pg.Client, receiver: Receiver, endpointId: string): Promise<{ row: Row; note: string; problems: string[] }> {
  const since = receiver.received.length;
  let peak = 0;
  const rss = setInterval(() => (peak = Math.max(peak, bench.rssMb(service.process.pid!))), 250);
  const backlogIds: string[] = [];
  const pausedAt = performance.now();
  service.process.kill('SIGSTOP');
  try {
    while (backlogIds.length < BACKLOG) backlogIds.push(...(await insertCustomers(db, data.organizationId, Math.min(BACKLOG_CHUNK, BACKLOG - backlogIds.length), 'Backlog')));
    // What autovacuum would do after such a load (this machine runs without it): the
    // delivery statements' plans follow the table's size.
    await db.query('ANALYZE webhook_deliveries');
  } finally {
    service.process.kill('SIGCONT');
  }
  const queuedSeconds = (performance.now() - pausedAt) / 1000;
  let creating = true;
  const created: Created[] = [];
  const createFailures: string[] = [];
  const begun = performance.now();
  // Creates in rounds of BURST_CONCURRENCY until the backlog is out.
  const creates = (async () => {
    while (creating) {
      const round = await createCustomers(bench, service, BURST_CONCURRENCY, BURST_CONCURRENCY, 'During backlog');
      created.push(...round.created);
      createFailures.push(...round.failures);
    }
  })();
  const waited = await waitForDeliveries(receiver, backlogIds);
  const endAt = waited.done ? waited.lastAt : performance.now();
  creating = false;
  await creates;
  clearInterval(rss);
  const createIds = created.map((c) => c.id);
  const createsWaited = await waitForDeliveries(receiver, createIds);
  await drain(db, endpointId, 10_000);
  await sleep(2000); // late repeats, if any, would arrive now
  const events = await eventIdsOf(db, data.organizationId, [...backlogIds, ...createIds]);
  const once = onceEach(receiver, new Set(events.values()), since);
  const seconds = (endAt - begun) / 1000;
  const delivered = arrivalsBetween(receiver, begun, endAt);
  const createsInWindow = created.filter((c) => c.respondedAt <= endAt).length;
  const latencies = created.filter((c) => receiver.firstByObject.has(c.id)).map((c) => receiver.firstByObject.get(c.id)! - c.respondedAt);
  const problems: string[] = [];
  if (!waited.done || !createsWaited.done) problems.push(`backlog drain: ${waited.missing.length} of the backlog and ${createsWaited.missing.length} of the creates never arrived`);
  if (once.missing.length || once.duplicates || once.invalid) problems.push(`backlog drain: ${once.missing.length} missing, ${once.duplicates} duplicates (e.g. ${once.duplicated.slice(0, 3).join(', ')}), ${once.invalid} bad signatures`);
  if (createFailures.length) problems.push(`creates during the backlog failed: ${createFailures.slice(0, 3).join('; ')}`);
  return {
    row: {
      scenario: `webhook deliveries/s draining a backlog of ${BACKLOG} events while the API takes creates (${BURST_CONCURRENCY} at a time) (req/s = deliveries/s; p50/p99 = those creates' response to delivery)`,
      system: 'service',
      rps: Math.round(delivered / seconds),
      p50: Math.round(percentile(latencies, 0.5)),
      p99: Math.round(percentile(latencies, 0.99)),
      errors: createFailures.length + once.missing.length + once.duplicates + once.invalid,
      rssMb: peak,
    },
    note:
      `Backlog: ${BACKLOG} customers INSERTed through the triggers in transactions of ${BACKLOG_CHUNK} while the service was paused (SIGSTOP, ${queuedSeconds.toFixed(1)} s; then ANALYZE webhook_deliveries, as autovacuum would); once it resumed, ` +
      `the API took ${createsInWindow} creates (${Math.round(createsInWindow / seconds)} creates/s, ${createFailures.length} failed) until the backlog was out. ` +
      (waited.done ? `The last of the backlog arrived ${seconds.toFixed(2)} s after the resumption: **${Math.round(delivered / seconds)} deliveries/s while creates ran** (${delivered} arrivals in the window, the creates' deliveries included). ` : `**${waited.missing.length} of the backlog never arrived.** `) +
      `The creates' own deliveries queue behind the backlog (first due, first sent): response to delivery p50 ${ms(percentile(latencies, 0.5))} ms, p99 ${ms(percentile(latencies, 0.99))} ms. ` +
      `Exactly once: ${once.distinct} of ${events.size} events received, ${once.missing.length} missing, ${once.duplicates} duplicate requests, ${once.invalid} bad signatures.`,
    problems,
  };
}

/**
 * Creates paced at PACED_RATE a second for PACED_SECONDS (open loop: each starts on its
 * schedule, whatever the ones before took), each timed from its commit to its delivery's
 * arrival. Through the API (`api`: from the create's response, which follows its commit) or
 * as raw INSERTs through the triggers (`sql`: from the COMMIT's answer), the latter showing
 * the pipeline at the full rate even where the API cannot take it.
 */
async function pacedLatency(bench: Bench, service: Server, data: BenchData, db: pg.Client, receiver: Receiver, via: 'api' | 'sql'): Promise<{ row: Row; note: string; problems: string[] }> {
  const since = receiver.received.length;
  const total = PACED_RATE * PACED_SECONDS;
  const clients = via === 'sql' ? await Promise.all(Array.from({ length: 8 }, async () => {
    const client = new pg.Client({ connectionString: data.databaseUrl });
    await client.connect();
    return client;
  })) : [];
  const created: Created[] = [];
  const failures: string[] = [];
  let outstanding = 0;
  let slipped = 0;
  const one = async (n: number) => {
    outstanding++;
    const sentAt = performance.now();
    try {
      if (via === 'api') {
        const round = await createCustomers(bench, service, 1, 1, 'Paced');
        created.push(...round.created);
        failures.push(...round.failures);
      } else {
        const [id] = await insertCustomers(clients[n % clients.length]!, data.organizationId, 1, 'Paced');
        created.push({ id: id!, sentAt, respondedAt: performance.now() });
      }
    } catch (error) {
      failures.push(`paced ${n}: ${(error as Error).message}`);
    } finally {
      outstanding--;
    }
  };
  const begun = performance.now();
  const running: Array<Promise<void>> = [];
  for (let n = 0; n < total; n++) {
    const due = begun + (n * 1000) / PACED_RATE;
    if (due > performance.now()) await sleep(due - performance.now());
    while (outstanding >= PACED_OUTSTANDING) await sleep(1);
    if (performance.now() - due > 50) slipped++;
    running.push(one(n));
  }
  await Promise.all(running);
  const lastResponse = Math.max(...created.map((c) => c.respondedAt));
  const waited = await waitForDeliveries(receiver, created.map((c) => c.id));
  await Promise.all(clients.map((c) => c.end()));
  await sleep(1000);
  const events = await eventIdsOf(db, data.organizationId, created.map((c) => c.id));
  const once = onceEach(receiver, new Set(events.values()), since);
  const latencies = created.filter((c) => receiver.firstByObject.has(c.id)).map((c) => receiver.firstByObject.get(c.id)! - c.respondedAt);
  const achieved = created.length / ((lastResponse - begun) / 1000);
  const what = via === 'api' ? 'API creates (POST /v1/customers), from the response' : 'raw INSERTs through the triggers (8 sessions, autocommit), from the COMMIT\'s answer';
  const problems: string[] = [];
  if (failures.length) problems.push(`paced ${via}: ${failures.length} failed, e.g. ${failures.slice(0, 3).join('; ')}`);
  if (!waited.done || once.missing.length || once.duplicates || once.invalid) problems.push(`paced ${via}: ${waited.missing.length} never arrived, ${once.duplicates} duplicates, ${once.invalid} bad signatures`);
  return {
    row: {
      scenario: `webhook commit-to-delivery, ${via === 'api' ? 'API creates' : 'raw INSERTs'} paced at ${PACED_RATE}/s for ${PACED_SECONDS} s (req/s = creates/s achieved; p50/p99 = commit to delivery)`,
      system: 'service',
      rps: Math.round(achieved),
      p50: Math.round(percentile(latencies, 0.5)),
      p99: Math.round(percentile(latencies, 0.99)),
      errors: failures.length + once.missing.length + once.duplicates + once.invalid,
      rssMb: bench.rssMb(service.process.pid!),
    },
    note:
      `Paced ${what}: ${total} scheduled at ${PACED_RATE}/s, at most ${PACED_OUTSTANDING} outstanding; ${created.length} committed at **${achieved.toFixed(0)}/s achieved** (${slipped} started more than 50 ms late, ${failures.length} failed). ` +
      `Commit to delivery: **p50 ${ms(percentile(latencies, 0.5))} ms, p99 ${ms(percentile(latencies, 0.99))} ms**, max ${ms(Math.max(...latencies))} ms; ` +
      `exactly once: ${once.distinct} of ${events.size} events, ${once.missing.length} missing, ${once.duplicates} duplicate requests, ${once.invalid} bad signatures.`,
    problems,
  };
}

export async function webhookBench(bench: Bench, service: Server, data: BenchData, receiver: Receiver, options: { burst: number; sequential: number; rounds: number; connections: number }): Promise<{ rows: Row[]; notes: string[] }> {
  const db = new pg.Client({ connectionString: data.databaseUrl });
  await db.connect();
  const rows: Row[] = [];
  const notes: string[] = [];
  const problems: string[] = [];
  try {
    const create = { path: '/v1/customers', method: 'POST', body: CREATE_BODY };

    // 1. The cost of the event write and of one endpoint on POST /v1/customers, in rounds
    // (the machine's other load drifts; interleaving keeps it from favouring one case):
    // the event trigger off (what create cost before events), on with no endpoint (an event
    // row and a NOTIFY per create), on with one enabled endpoint (also a delivery row per
    // create, and the deliveries themselves, sent by the same process meanwhile).
    const made = await fetch(`${service.url}/v1/webhook_endpoints`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: bench.authorization() },
      body: JSON.stringify({ url: `${receiver.url}/hook`, description: 'bench receiver' }),
    });
    const endpoint = (await made.json()) as { id: string; secret: string };
    if (made.status !== 201) throw new Error(`POST /v1/webhook_endpoints answered ${made.status}: ${JSON.stringify(endpoint)}`);
    receiver.setSecret(endpoint.secret);
    const enable = async (enabled: boolean) => {
      const response = await fetch(`${service.url}/v1/webhook_endpoints/${endpoint.id}`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json', authorization: bench.authorization() },
        body: JSON.stringify({ enabled }),
      });
      if (!response.ok) throw new Error(`PATCH /v1/webhook_endpoints/${endpoint.id} answered ${response.status}: ${await response.text()}`);
    };
    const countEvents = async () => (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM events')).rows[0]!.n;
    const cases = ['event trigger disabled (baseline)', 'no webhook endpoint', '1 webhook endpoint (local receiver, 204)'] as const;
    const byCase = new Map<string, Row[]>(cases.map((c) => [c, []]));
    const activity = new Map<string, string>();
    const roundNotes: string[] = [];
    for (let round = 1; round <= options.rounds; round++) {
      for (const name of cases) {
        const scenario = `REST create, ${name}${options.rounds > 1 ? `, round ${round}` : ''}`;
        if (name === cases[0]) await db.query('ALTER TABLE customers DISABLE TRIGGER customers_event');
        if (name === cases[2]) await enable(true);
        const eventsBefore = await countEvents();
        const receivedBefore = receiver.received.length;
        const queuedBefore = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1', [endpoint.id])).rows[0]!.n;
        const sampler = sampleActivity(data.databaseUrl);
        const begun = performance.now();
        let row: Row;
        try {
          row = await bench.measure(scenario, service, create);
        } finally {
          if (name === cases[0]) await db.query('ALTER TABLE customers ENABLE TRIGGER customers_event');
        }
        const seconds = (performance.now() - begun) / 1000;
        activity.set(scenario, formatActivity(await sampler.stop()));
        rows.push(row);
        byCase.get(name)!.push(row);
        const events = (await countEvents()) - eventsBefore;
        if (name === cases[1]) roundNotes.push(`round ${round}, no endpoint: ${events} events written for the row's creates (warm-up included).`);
        if (name === cases[2]) {
          const after = await deliveryState(db, endpoint.id);
          const rowQueued = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1', [endpoint.id])).rows[0]!.n - queuedBefore;
          const delivered = receiver.received.length - receivedBefore;
          const drained = await drain(db, endpoint.id, 300_000);
          await enable(false);
          roundNotes.push(
            `round ${round}, 1 endpoint: in the ${seconds.toFixed(1)} s of warm-up and measurement ${rowQueued} creates queued a delivery and the receiver got ${delivered} of them ` +
              `(**${Math.round(delivered / seconds)} deliveries/s while the creates ran**, against ${Math.round(rowQueued / seconds)} creates/s); ${after.pending} were still pending at the row's end, ` +
              (Number.isNaN(drained) ? '**and did not drain within 300 s**.' : `drained ${drained.toFixed(1)} s later${drained > 0.5 ? ` (${Math.round(after.pending / drained)}/s with no create load)` : ''}.`),
          );
        }
      }
    }
    await enable(true);
    await sleep(1000);
    const rowEventIds = new Set((await db.query<{ event_id: string }>('SELECT event_id FROM webhook_deliveries WHERE endpoint_id = $1', [endpoint.id])).rows.map((r) => r.event_id));
    const rowOnce = onceEach(receiver, rowEventIds, 0);
    const mean = (list: Row[], key: 'rps' | 'p50' | 'p99') => list.reduce((sum, r) => sum + r[key], 0) / list.length;
    const [off, none, one] = cases.map((c) => byCase.get(c)!);
    const cell = (list: Row[], key: 'rps' | 'p50' | 'p99') => (list.length > 1 ? `${Math.round(mean(list, key))} (${list.map((r) => r[key]).join(', ')})` : `${list[0]![key]}`);
    const ratio = (a: Row[], b: Row[], key: 'rps' | 'p50' | 'p99') => (mean(a, key) / mean(b, key)).toFixed(2);
    notes.push(
      '',
      `| POST /v1/customers, ${options.connections} connections${options.rounds > 1 ? `, mean of ${options.rounds} rounds (each round)` : ''} | event trigger disabled (baseline) | events, no endpoint | events, 1 endpoint | no endpoint / baseline | 1 endpoint / no endpoint |`,
      '|---|---|---|---|---|---|',
      `| req/s | ${cell(off!, 'rps')} | ${cell(none!, 'rps')} | ${cell(one!, 'rps')} | ${ratio(none!, off!, 'rps')} | **${ratio(one!, none!, 'rps')}** |`,
      `| p50 ms | ${cell(off!, 'p50')} | ${cell(none!, 'p50')} | ${cell(one!, 'p50')} | ${ratio(none!, off!, 'p50')} | ${ratio(one!, none!, 'p50')} |`,
      `| p99 ms | ${cell(off!, 'p99')} | ${cell(none!, 'p99')} | ${cell(one!, 'p99')} | ${ratio(none!, off!, 'p99')} | ${ratio(one!, none!, 'p99')} |`,
      `| errors | ${off!.reduce((s, r) => s + r.errors, 0)} | ${none!.reduce((s, r) => s + r.errors, 0)} | ${one!.reduce((s, r) => s + r.errors, 0)} | | |`,
      '',
      `The create rows ran in ${options.rounds} round(s) of the three cases, one after another on the same service (warm-up and measurement each, as every row of the bench); ` +
        'the baseline disabled the `customers_event` trigger (ALTER TABLE ... DISABLE TRIGGER) for its row only; between rounds the endpoint was disabled (PATCH enabled=false) after its deliveries drained.',
      ...roundNotes.map((n) => `- ${n}`),
      `- Exactly once over the create rows: ${rowOnce.distinct} of ${rowEventIds.size} queued events arrived, ${rowOnce.missing.length} missing, ${rowOnce.duplicates} duplicate requests, ${rowOnce.invalid} bad signatures.`,
      `- The service's PostgreSQL sessions during each row (pg_stat_activity every 250 ms, mean sessions by state / wait): ` + [...activity].map(([k, v]) => `${k.replace('REST create, ', '')}: ${v}`).join('; ') + '.',
    );
    if (rowOnce.missing.length || rowOnce.duplicates || rowOnce.invalid) problems.push(`create rows with 1 endpoint: ${rowOnce.missing.length} missing (e.g. ${rowOnce.missing.slice(0, 3).join(', ')}), ${rowOnce.duplicates} duplicates (e.g. ${rowOnce.duplicated.slice(0, 3).join(', ')}), ${rowOnce.invalid} bad signatures`);

    // 2. Deliveries a second: a burst of creates, timed from the first until the receiver has
    // every one of them; and 3. each delivery's arrival after its create's response.
    const burstStart = receiver.received.length;
    let peak = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, bench.rssMb(service.process.pid!))), 250);
    const begun = performance.now();
    const burst = await createCustomers(bench, service, options.burst, BURST_CONCURRENCY, 'Burst');
    const createdAt = performance.now();
    const ids = burst.created.map((c) => c.id);
    const waited = await waitForDeliveries(receiver, ids);
    clearInterval(sampler);
    const allAt = waited.done ? waited.lastAt : performance.now();
    await drain(db, endpoint.id, 10_000);
    await sleep(2000); // late repeats, if any, would arrive now
    const burstEvents = await eventIdsOf(db, data.organizationId, ids);
    const burstOnce = onceEach(receiver, new Set(burstEvents.values()), burstStart);
    const latencies = burst.created.filter((c) => receiver.firstByObject.has(c.id)).map((c) => receiver.firstByObject.get(c.id)! - c.respondedAt);
    const deliveredBurst = ids.length - waited.missing.length;
    const seconds = (allAt - begun) / 1000;
    rows.push({
      scenario: `webhook deliveries of ${ids.length} creates (${BURST_CONCURRENCY} at a time), first create to last delivery (req/s = deliveries/s; p50/p99 = create response to delivery)`,
      system: 'service',
      rps: Math.round(deliveredBurst / seconds),
      p50: Math.round(percentile(latencies, 0.5)),
      p99: Math.round(percentile(latencies, 0.99)),
      errors: burst.failures.length + burstOnce.missing.length + burstOnce.duplicates + burstOnce.invalid,
      rssMb: peak,
    });
    notes.push(
      '',
      `Deliveries: ${options.burst} customers created through the API, ${BURST_CONCURRENCY} requests at a time (${burst.failures.length} failed), in ${((createdAt - begun) / 1000).toFixed(2)} s (${Math.round(burst.created.length / ((createdAt - begun) / 1000))} creates/s); ` +
        (waited.done
          ? `the receiver had a delivery for every one of them ${seconds.toFixed(2)} s after the first create: **${Math.round(deliveredBurst / seconds)} deliveries/s** ` +
            `(the last arrived ${((allAt - createdAt) / 1000).toFixed(2)} s after the last create's response). `
          : `**${waited.missing.length} of them never arrived** (no progress for ${STALL_MS / 1000} s); ${deliveredBurst} arrived within ${seconds.toFixed(2)} s. `) +
        `Exactly once, by webhook-id: ${burstOnce.distinct} of ${burstEvents.size} events (${burst.created.length} creates) received, ${burstOnce.missing.length} missing, ${burstOnce.duplicates} duplicate requests, ${burstOnce.invalid} bad signatures (checked with the standardwebhooks library). ` +
        `Create response to delivery: p50 ${ms(percentile(latencies, 0.5))} ms, p99 ${ms(percentile(latencies, 0.99))} ms, max ${ms(Math.max(...latencies))} ms (a queue: deliveries lag the creates while the burst lasts).`,
    );
    if (burst.failures.length) problems.push(`burst creates failed: ${burst.failures.slice(0, 3).join('; ')}`);
    if (burstOnce.missing.length || burstOnce.duplicates || burstOnce.invalid) problems.push(`burst: ${burstOnce.missing.length} missing (e.g. ${burstOnce.missing.slice(0, 3).join(', ')}), ${burstOnce.duplicates} duplicates (e.g. ${burstOnce.duplicated.slice(0, 3).join(', ')}), ${burstOnce.invalid} bad signatures`);

    // 3. Latency alone: one create at a time, each waiting for its delivery, so that no
    // backlog stands in front of it: the path commit -> NOTIFY -> claim -> POST.
    const aloneStart = receiver.received.length;
    const alone: number[] = [];
    const aloneIds: string[] = [];
    const aloneFailures: string[] = [];
    const aloneBegun = performance.now();
    for (let i = 0; i < options.sequential; i++) {
      const one = await createCustomers(bench, service, 1, 1, 'Alone');
      aloneFailures.push(...one.failures);
      const created = one.created[0];
      if (!created) continue;
      aloneIds.push(created.id);
      const deadline = performance.now() + 10_000;
      while (!receiver.firstByObject.has(created.id) && performance.now() < deadline) await sleep(0.5);
      const at = receiver.firstByObject.get(created.id);
      if (at === undefined) aloneFailures.push(`no delivery for customer ${created.id} within 10 s`);
      else alone.push(at - created.respondedAt);
    }
    const aloneSeconds = (performance.now() - aloneBegun) / 1000;
    await drain(db, endpoint.id, 10_000);
    await sleep(1000);
    const aloneEvents = await eventIdsOf(db, data.organizationId, aloneIds);
    const aloneOnce = onceEach(receiver, new Set(aloneEvents.values()), aloneStart);
    rows.push({
      scenario: `webhook delivery latency, ${options.sequential} creates one at a time, each awaiting its delivery (req/s = round trips/s; p50/p99 = create response to delivery)`,
      system: 'service',
      rps: Math.round(alone.length / aloneSeconds),
      p50: Math.round(percentile(alone, 0.5)),
      p99: Math.round(percentile(alone, 0.99)),
      errors: aloneFailures.length + aloneOnce.duplicates + aloneOnce.invalid,
      rssMb: bench.rssMb(service.process.pid!),
    });
    notes.push(
      '',
      `Latency with no queue: ${options.sequential} creates one after another, each waiting until its delivery arrived: create response to delivery p50 ${ms(percentile(alone, 0.5))} ms, ` +
        `p90 ${ms(percentile(alone, 0.9))} ms, p99 ${ms(percentile(alone, 0.99))} ms, min ${ms(Math.min(...alone))} ms, max ${ms(Math.max(...alone))} ms; ` +
        `${aloneFailures.length} failures, ${aloneOnce.duplicates} duplicate requests, ${aloneOnce.invalid} bad signatures. ` +
        'Both ends are timed by the bench process\'s clock: the create\'s response (read in full) and the delivery\'s arrival at the receiver (its headers). ' +
        'The response follows the commit, so this slightly understates commit-to-delivery; a negative value would mean the delivery beat the response to the bench process.',
    );
    if (aloneFailures.length || aloneOnce.duplicates || aloneOnce.invalid) problems.push(`one at a time: ${aloneFailures.slice(0, 3).join('; ')} ${aloneOnce.duplicates} duplicates, ${aloneOnce.invalid} bad signatures`);

    // 4. Deliveries a second while creates run: a backlog of BACKLOG events queued at once
    // (raw INSERTs through the triggers) drained while the API takes creates, and 5. the
    // delay from commit to delivery with creates paced at PACED_RATE a second.
    const backlog = await backlogDrain(bench, service, data, db, receiver, endpoint.id);
    rows.push(backlog.row);
    notes.push('', backlog.note);
    problems.push(...backlog.problems);
    for (const via of ['api', 'sql'] as const) {
      const paced = await pacedLatency(bench, service, data, db, receiver, via);
      rows.push(paced.row);
      notes.push('', paced.note);
      problems.push(...paced.problems);
    }

    // The service's own account, against the receiver's.
    const final = await deliveryState(db, endpoint.id);
    const unknown = receiver.received.filter((r) => !r.valid).length;
    notes.push(
      '',
      `The service's delivery table for the endpoint at the end: ${final.lines}; webhook_attempts ${final.attempts} (${final.failedAttempts} not 2xx). ` +
        `The receiver got ${receiver.received.length} requests with ${receiver.count.size} distinct webhook-ids (${receiver.received.length - receiver.count.size} repeats), ${unknown} failing signature verification.`,
    );
    if (final.attempts !== receiver.received.length) problems.push(`the service logged ${final.attempts} attempts, the receiver got ${receiver.received.length} requests`);
    if (final.pending || final.failed) problems.push(`deliveries not succeeded at the end: ${final.lines}`);
    if (problems.length) notes.push('', `**Problems (${problems.length}):**`, ...problems.map((p) => `- ${p}`));
    for (const note of notes) if (note) console.log(note);
    return { rows, notes };
  } finally {
    await db.end();
  }
}

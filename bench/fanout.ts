// One committed event fanned out to many open subscriptions: the time from its commit to its
// delivery on the last stream, and the database statements the service ran for it, with 50
// and with 500 streams open. In this process, as bench/cpu.ts: the statements are counted
// where Prisma runs them, which a client cannot see. The service listens on a real port and
// the streams are real HTTP connections (clients in this same process, sharing its cores);
// the event is committed by SQL on a connection of the bench's own, so every statement
// counted is the service's work for the event.
import { createServer } from 'node:http';
import pg from 'pg';
import { createApiKey } from '../src/auth/api-keys.js';
import { allScopes } from '../src/auth/scopes.js';
import '../src/schema/index.js';
import type { BenchData } from './seed.js';

export interface FanOutRow {
  streams: number;
  /** Milliseconds from the UPDATE's commit (its answer) to the event on the first and the last stream; medians of the rounds. */
  first: number;
  last: number;
  /** SQL statements the service ran per event (the most of any round). */
  statements: number;
}

const ROUNDS = 5;
const PER_KEY = 20;

/** A subscription's connection: resolves `waitFor(n)` once it has received n events. */
async function openStream(url: string, key: string, signal: AbortSignal) {
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    signal,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ query: 'subscription { events(types: ["customer.updated"]) { id type data } }' }),
  });
  if (response.status !== 200) throw new Error(`subscription answered ${response.status}: ${await response.text()}`);
  let received = 0;
  let waiting: { count: number; resolve: (at: number) => void } | undefined;
  void (async () => {
    let buffer = '';
    try {
      for await (const chunk of response.body!.pipeThrough(new TextDecoderStream())) {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          if (buffer.slice(0, end).startsWith('event: next')) received++;
          buffer = buffer.slice(end + 2);
        }
        if (waiting && received >= waiting.count) {
          waiting.resolve(performance.now());
          waiting = undefined;
        }
      }
    } catch {
      // Aborted at the end of the run.
    }
  })();
  return {
    waitFor: (count: number) => new Promise<number>((resolve) => (received >= count ? resolve(performance.now()) : (waiting = { count, resolve }))),
  };
}

export async function fanOut(data: BenchData, counts = [50, 500]): Promise<{ rows: FanOutRow[]; notes: string[] }> {
  process.env.NODE_ENV = 'production';
  const [{ openDatabase }, { createRateLimiter }, { createApp }, { createLogger }, { createEventHub }] = await Promise.all([
    import('../src/db/connection.js'),
    import('../src/rate-limit.js'),
    import('../src/server.js'),
    import('../src/logger.js'),
    import('../src/events/hub.js'),
  ]);
  let statements = 0;
  const db = await openDatabase({ databaseUrl: data.databaseUrl, dataDir: '', onQuery: () => statements++ });
  const log = createLogger('warn');
  const events = createEventHub(db, log);
  const app = createApp({ db, log, rateLimiter: createRateLimiter({ max: 1_000_000_000, windowSeconds: 60, log }), events });
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const sql = new pg.Client({ connectionString: data.databaseUrl });
  await sql.connect();
  // At most PER_KEY streams per key (the documented limit): keys of their own for the bench.
  const keys: string[] = [];
  for (let i = 0; i < Math.ceil(Math.max(...counts) / PER_KEY); i++) {
    keys.push((await createApiKey(db.prisma, { organizationId: data.organizationId, name: `fan-out ${i}`, scopes: allScopes() })).key);
  }
  const rows: FanOutRow[] = [];
  try {
    for (const count of counts) {
      const abort = new AbortController();
      const streams = [];
      for (let i = 0; i < count; i++) streams.push(await openStream(url, keys[Math.floor(i / PER_KEY)]!, abort.signal));
      const firsts: number[] = [];
      const lasts: number[] = [];
      let most = 0;
      // Round 0 warms up (the document's first executions); rounds 1.. are measured.
      for (let round = 0; round <= ROUNDS; round++) {
        const delivered = streams.map((stream) => stream.waitFor(round + 1));
        statements = 0;
        await sql.query("UPDATE customers SET name = 'Fan-out ' || $2 WHERE organization_id = $1 AND id = $3", [data.organizationId, `${count}-${round}`, data.customerId]);
        const committed = performance.now();
        const times = await Promise.all(delivered);
        // The statements ran for this event (nothing else runs meanwhile: no request is made).
        if (round === 0) continue;
        most = Math.max(most, statements);
        firsts.push(Math.min(...times) - committed);
        lasts.push(Math.max(...times) - committed);
      }
      abort.abort();
      await new Promise<void>((resolve) => {
        const check = () => (events.streams.count() === 0 ? resolve() : setTimeout(check, 20));
        check();
      });
      rows.push({ streams: count, first: median(firsts), last: median(lasts), statements: most });
      console.log(JSON.stringify(rows.at(-1)));
    }
  } finally {
    await sql.end();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await events.close();
    await db.close();
  }
  const notes = [
    `One customer.updated event (an UPDATE of one customer, by SQL on the bench's own connection) fanned out to N open subscriptions of one organization (${PER_KEY} per key, the documented limit), ` +
      `each a real HTTP connection to the service in this process; ${ROUNDS} events per N after one to warm up, medians of the times, the most statements of any event. ` +
      'Statements: every SQL statement the service ran between the commit and the last delivery (its load of the event, once per instance, and nothing per stream).',
  ];
  return { rows, notes };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

export function fanOutTable(rows: FanOutRow[]): string[] {
  return [
    '| one event to N subscriptions | commit to first delivery, ms | commit to last delivery, ms | database statements |',
    '|---|---|---|---|',
    ...rows.map((r) => `| ${r.streams} streams | ${r.first.toFixed(1)} | ${r.last.toFixed(1)} | ${r.statements} |`),
  ];
}

// The database alone: the reference's create (CUSTOMER_INSERT, prepared, ids made as the
// service makes them, through every trigger of customers) sent straight from the bench over
// N connections, with no HTTP server between. On a machine of two cores the HTTP reference
// shares them with PostgreSQL and the load generator; this says what the database itself
// does for one organization, and how its writers queue on the organization's counters.
// Each insert alone (one round trip), and as the service writes: BEGIN, INSERT, COMMIT, three
// round trips, also with a pause before the COMMIT (a busy event loop, a database farther
// away): a lock the INSERT takes is held until the COMMIT has arrived and run.
import pg from 'pg';
import { CUSTOMER_INSERT, uuid7 } from './types.js';

export interface RawInserts {
  connections: number;
  /** Organizations written to, each connection always the same one (connection i: organization i mod n). */
  organizations: number;
  /** BEGIN, INSERT, this many ms, COMMIT (as the service writes); undefined: the INSERT alone. */
  pauseMs: number | undefined;
  perSecond: number;
  p50: number;
  p99: number;
}

/** `connections` clients inserting into the organizations for `seconds`, each waiting for its last. */
export async function rawInserts(databaseUrl: string, organizationIds: string[], connections: number, seconds: number, pauseMs?: number): Promise<RawInserts> {
  const inTransaction = pauseMs !== undefined;
  const clients = await Promise.all(
    Array.from({ length: connections }, async () => {
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      return client;
    }),
  );
  const latencies: number[] = [];
  const until = performance.now() + seconds * 1000;
  try {
    await Promise.all(
      clients.map(async (client, i) => {
        const organizationId = organizationIds[i % organizationIds.length]!;
        while (performance.now() < until) {
          const at = performance.now();
          if (inTransaction) await client.query('BEGIN');
          await client.query({ name: 'raw_insert', text: CUSTOMER_INSERT, values: [uuid7(), organizationId, 'Raw Customer', 'raw@example.com'] });
          if (pauseMs) await new Promise((resolve) => setTimeout(resolve, pauseMs));
          if (inTransaction) await client.query('COMMIT');
          latencies.push(performance.now() - at);
        }
      }),
    );
  } finally {
    await Promise.all(clients.map((client) => client.end()));
  }
  latencies.sort((a, b) => a - b);
  const at = (q: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]! * 10) / 10;
  return { connections, organizations: organizationIds.length, pauseMs, perSecond: Math.round(latencies.length / seconds), p50: at(0.5), p99: at(0.99) };
}

export function rawInsertsTable(rows: RawInserts[]): string[] {
  return [
    '| raw INSERT through every trigger, from the bench (no HTTP) | organizations | creates/s | p50 ms | p99 ms |',
    '|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.connections} connection${r.connections === 1 ? '' : 's'}${r.pauseMs === undefined ? '' : `, BEGIN, INSERT,${r.pauseMs ? ` ${r.pauseMs} ms,` : ''} COMMIT`} | ${r.organizations} | ${r.perSecond} | ${r.p50} | ${r.p99} |`),
  ];
}

// The database alone: the reference's create (CUSTOMER_INSERT, prepared, ids made as the
// service makes them, through every trigger of customers) sent straight from the bench over
// N connections, with no HTTP server between. On a machine of two cores the HTTP reference
// shares them with PostgreSQL and the load generator; this says what the database itself
// does for one organization, and how its writers queue on the organization's counters.
// Each insert alone (one round trip), and as the service writes: BEGIN, INSERT, COMMIT, three
// round trips, also with a pause before the COMMIT (a busy event loop, a database farther
// away): a lock the INSERT takes is held until the COMMIT has arrived and run.
import pg from 'pg';
import { cpuBusy, formatActivity, sampleActivity, type Activity } from './activity.js';
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
  /** The machine's CPUs busy during the row (0..1): PostgreSQL, the bench and anything else. */
  cpuBusy: number;
  /** The mean number of sessions in each state / wait during the row (pg_stat_activity every 100 ms). */
  sessions: Activity;
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
  const sampler = sampleActivity(databaseUrl, 100);
  const cpu = cpuBusy();
  const until = performance.now() + seconds * 1000;
  let sessions: Activity = [];
  let busy = 0;
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
    busy = cpu.stop();
    sessions = await sampler.stop();
    await Promise.all(clients.map((client) => client.end()));
  }
  latencies.sort((a, b) => a - b);
  const at = (q: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]! * 10) / 10;
  return { connections, organizations: organizationIds.length, pauseMs, perSecond: Math.round(latencies.length / seconds), p50: at(0.5), p99: at(0.99), cpuBusy: busy, sessions };
}

export function rawInsertsTable(rows: RawInserts[]): string[] {
  return [
    '| raw INSERT through every trigger, from the bench (no HTTP) | organizations | creates/s | p50 ms | p99 ms | CPUs busy | sessions: mean number by state / wait (pg_stat_activity every 100 ms) |',
    '|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.connections} connection${r.connections === 1 ? '' : 's'}${r.pauseMs === undefined ? '' : `, BEGIN, INSERT,${r.pauseMs ? ` ${r.pauseMs} ms,` : ''} COMMIT`} | ${r.organizations} | ${r.perSecond} | ${r.p50} | ${r.p99} | ${Math.round(r.cpuBusy * 100)}% | ${formatActivity(r.sessions)} |`,
    ),
  ];
}

/**
 * Whether the database alone reaches `goal` creates/s into one organization, and what holds it,
 * from its rows (one connection, and the most connections with and without a pause inside the
 * transaction).
 */
export function rawInsertsEvidence(rows: RawInserts[], goal: number): string {
  const many = Math.max(...rows.map((r) => r.connections));
  const row = (connections: number, pauseMs?: number) => rows.find((r) => r.connections === connections && r.pauseMs === pauseMs && r.organizations === 1);
  const alone = row(many);
  const single = row(1);
  const paused = rows.find((r) => r.connections === many && (r.pauseMs ?? 0) > 0 && r.organizations === 1);
  if (!alone || !single) return '';
  const waiting = (r: RawInserts, kind: RegExp) => r.sessions.filter(([what]) => kind.test(what)).reduce((sum, [, n]) => sum + n, 0);
  const locked = waiting(alone, /waiting Lock:/);
  const wal = waiting(alone, /waiting (IO:WAL|LWLock:WAL)/);
  return [
    `Raw create into one organization, goal ${goal}/s: ${alone.perSecond >= goal ? 'met' : 'missed'} by the database alone (no HTTP): ${single.perSecond}/s on 1 connection, ${alone.perSecond}/s on ${many}`,
    ` (${(1000 / alone.perSecond).toFixed(2)} ms a create), the machine's CPUs ${Math.round(alone.cpuBusy * 100)}% busy, and of the ${many} sessions on average ${locked.toFixed(1)} waiting for a lock`,
    ` (the organization's: Lock:advisory, or its counters row) and ${wal.toFixed(1)} for the WAL's flush.`,
    paused
      ? ` With ${paused.pauseMs} ms more inside each transaction, ${many} connections make ${paused.perSecond}/s (${(1000 / paused.perSecond).toFixed(2)} ms a create): the rate follows the time one transaction holds the organization from its insert to its commit, not the CPUs.`
      : '',
    ' An organization\'s writers take turns there because its change numbers (the sync order) and its events\' seq are handed out in commit order, dense; past it, numbers would be given after the commit (one sequencer per organization, readers passing only what no running transaction can precede).',
  ].join('');
}

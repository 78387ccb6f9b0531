// What the database's sessions and the machine's CPUs do while a row runs: the evidence a
// missed target is read with (a queue on a lock, the WAL's fsync, or the CPUs).
import { readFileSync } from 'node:fs';
import pg from 'pg';

/** The mean number of sessions in each state / wait, most first. */
export type Activity = Array<[what: string, meanSessions: number]>;

/** Samples the bench database's client sessions (pg_stat_activity, the sampler left out) every `everyMs` until stopped. */
export function sampleActivity(databaseUrl: string, everyMs = 250): { stop(): Promise<Activity> } {
  const db = new pg.Client({ connectionString: databaseUrl });
  const totals = new Map<string, number>();
  let samples = 0;
  let stopped = false;
  const loop = (async () => {
    await db.connect();
    while (!stopped) {
      const { rows } = await db.query<{ what: string; n: number }>(
        `SELECT coalesce(state, '?') || CASE WHEN wait_event_type IN ('Lock', 'LWLock', 'IO') THEN ' waiting ' || wait_event_type || ':' || wait_event ELSE '' END AS what, count(*)::int AS n
         FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend' GROUP BY 1`,
      );
      samples++;
      for (const r of rows) totals.set(r.what, (totals.get(r.what) ?? 0) + r.n);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
    await db.end();
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return [...totals].sort((a, b) => b[1] - a[1]).map(([what, n]) => [what, n / Math.max(1, samples)]);
    },
  };
}

export const formatActivity = (activity: Activity) => activity.map(([what, n]) => `${what} ${n.toFixed(1)}`).join(', ');

/** The machine's CPU time, busy and in all, from /proc/stat (Linux); zeros elsewhere. */
function cpuTimes(): { busy: number; total: number } {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const total = fields.reduce((a, b) => a + b, 0);
    // idle and iowait are the CPUs' waiting time.
    return { busy: total - fields[3]! - (fields[4] ?? 0), total };
  } catch {
    return { busy: 0, total: 0 };
  }
}

/** Starts measuring the machine's CPUs; `stop` answers the busy share since then (0..1). */
export function cpuBusy(): { stop(): number } {
  const start = cpuTimes();
  return {
    stop() {
      const end = cpuTimes();
      return end.total > start.total ? (end.busy - start.busy) / (end.total - start.total) : 0;
    },
  };
}

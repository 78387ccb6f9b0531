// The SQL a request runs, as PostgreSQL receives it (text and parameters), and its plan:
// the lists bench shows the plan of each list's statements beside its latency. Statements
// are read where every driver call passes, pg's Client.query, in this process only: the
// recorder is installed when this module loads, before any connection is opened (the
// service's pool binds each connection's query method when it connects).
import pg from 'pg';

export interface Statement {
  text: string;
  values: unknown[];
}

let recording: Statement[] | undefined;

{
  const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [config, values] = args as [string | { text: string; values?: unknown[] }, unknown[] | undefined];
    if (recording) recording.push(typeof config === 'string' ? { text: config, values: values ?? [] } : { text: config.text, values: config.values ?? values ?? [] });
    return query.apply(this, args);
  } as typeof pg.Client.prototype.query;
}

/** The statements `run` sends (it must be the only work of this process meanwhile). */
export async function statementsOf(run: () => Promise<unknown>): Promise<Statement[]> {
  recording = [];
  try {
    await run();
    return recording;
  } finally {
    recording = undefined;
  }
}

/** A plan line that reads a table whole. */
export const SEQ_SCAN = /Seq Scan on/;

/** `EXPLAIN (ANALYZE, BUFFERS)` of a statement with its own parameters; the plan's lines. */
export async function explain(client: pg.Client, statement: Statement): Promise<string[]> {
  const result = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${statement.text}`, statement.values);
  return result.rows.map((row) => row['QUERY PLAN']);
}

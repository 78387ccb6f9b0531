// The references: minimal node:http + pg servers on the service's database, each the limit of
// one kind of request (a list page, the nested page, a create) for one way of asking
// PostgreSQL. Every row of a results table is read against the best of them of its kind
// measured in the same run, and `npm run bench -- limits` checks issue #31's goals.
import type { Row } from './types.js';

/** Two unprepared statements per page, the page and its total (bench/reference-server.ts). */
export const TWO_STATEMENTS = 'node:http + pg';
/** One named statement per request, node serializing its rows (bench/reference-one-statement.ts). */
export const ONE_STATEMENT = 'node:http + pg, 1 prepared statement';
/** The same statements with PostgreSQL writing the answer's JSON text, which node forwards. */
export const JSON_IN_POSTGRES = 'node:http + pg, 1 prepared statement, JSON built by PostgreSQL';

/** The one-statement references' names and environments (bench/reference-one-statement.ts). */
export const ONE_STATEMENT_SERVERS: Array<[string, Record<string, string>]> = [
  [ONE_STATEMENT, { REFERENCE_JSON: 'node' }],
  [JSON_IN_POSTGRES, { REFERENCE_JSON: 'postgres' }],
];

/**
 * The raw create with the event trigger disabled for its row: less than the service's work
 * (no event row, no NOTIFY), so a row of its own, never a reference for a create.
 */
export const CREATE_WITHOUT_EVENT = 'raw INSERT, customers_event disabled (no event row)';

const isReference = (system: string) => system === TWO_STATEMENTS || system.startsWith(`${TWO_STATEMENTS},`);
/** A row's processes: `..., 2 processes` / `..., 2 workers`, otherwise one. */
const processesOf = (system: string) => /, (\d+) (processes|workers)$/.exec(system)?.[1] ?? '1';

/**
 * The fastest reference of `row`'s kind in `rows`: the same scenario (GraphQL's list is the
 * REST list's page in other words) on as many processes. None for a row on PGlite: the
 * references run on PostgreSQL.
 */
export function bestReference(rows: Row[], row: Row): Row | undefined {
  if (row.system.includes('PGlite')) return undefined;
  const scenario = row.scenario.replace(/^graphql list/, 'REST list');
  return rows
    .filter((r) => isReference(r.system) && r.scenario === scenario && processesOf(r.system) === processesOf(row.system))
    .reduce<Row | undefined>((best, r) => (!best || r.rps > best.rps ? r : best), undefined);
}

/** The table's two columns for `row`: its req/s over the best reference's, and which one that is. */
export function againstBest(rows: Row[], row: Row): [string, string] {
  const best = bestReference(rows, row);
  if (!best) return ['', ''];
  return [(row.rps / best.rps).toFixed(2), best === row ? '(itself)' : best.system.slice(TWO_STATEMENTS.length).replace(/^, /, '') || '2 statements'];
}

/** The service with its answers from memory off (RESPONSE_CACHE_MB=0): every list page computed. */
export const COMPUTED = 'service, every answer computed (RESPONSE_CACHE_MB=0)';

/** Back-to-back pairs of the 2-statement reference and the computed list page (limits). */
export const PAIRED_ROUNDS = 3;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** The pairs' ratios, each from two rows measured one after the other. */
function pairedRatios(pairs: Array<[Row, Row]>): { rps: number; p99: number } | undefined {
  if (pairs.length === 0) return undefined;
  return { rps: median(pairs.map(([reference, row]) => row.rps / reference.rps)), p99: median(pairs.map(([reference, row]) => row.p99 / reference.p99)) };
}

export function pairedTable(pairs: Array<[Row, Row]>): string[] {
  return [
    `| ${pairs[0]?.[1].scenario ?? 'list'}, back to back | ${TWO_STATEMENTS} req/s | p99 ms | ${COMPUTED} req/s | p99 ms | req/s ratio | p99 ratio |`,
    '|---|---|---|---|---|---|---|',
    ...pairs.map(([reference, row], i) => `| pair ${i + 1} | ${reference.rps} | ${reference.p99} | ${row.rps} | ${row.p99} | ${(row.rps / reference.rps).toFixed(2)} | ${(row.p99 / reference.p99).toFixed(2)} |`),
  ];
}

/** Issue #31's goal for a raw create through every trigger into one organization, per second. */
export const RAW_CREATE_GOAL = 1000;

/** Issue #31's goals, each as measured in this run. */
export function limitsTargets(rows: Row[], list: string, nested: string, create: string, pairs: Array<[Row, Row]> = []): string[] {
  const find = (scenario: string, system: string) => rows.find((r) => r.scenario === scenario && r.system === system);
  const service = find(list, 'service');
  const two = find(list, TWO_STATEMENTS);
  const createService = find(create, 'service');
  const rawCreate = createService && bestReference(rows, createService);
  const ratio = (a?: Row, b?: Row, of: (r: Row) => number = (r) => r.rps) => (a && b ? of(a) / of(b) : NaN);
  const paired = pairedRatios(pairs);
  const checks: Array<[string, number, (value: number) => boolean, string]> = [
    [`${list}: service req/s vs the 2-statement reference (${TWO_STATEMENTS})`, ratio(service, two), (v) => v >= 0.5, '>= 0.50'],
    [`${list}: service p99 vs the 2-statement reference's p99`, ratio(service, two, (r) => r.p99), (v) => v <= 2, '<= 2.00'],
    [`${list}, every page computed (${COMPUTED}): req/s vs the 2-statement reference, median of ${pairs.length} back-to-back pairs`, paired?.rps ?? NaN, (v) => v >= 0.5, '>= 0.50'],
    [`${list}, every page computed: p99 vs the 2-statement reference's p99, median of the pairs`, paired?.p99 ?? NaN, (v) => v <= 2, '<= 2.00'],
    [`Raw create through every trigger (event row included), best reference, req/s`, rawCreate?.rps ?? NaN, (v) => v >= RAW_CREATE_GOAL, `>= ${RAW_CREATE_GOAL}`],
    [`${create}: service req/s vs that raw create`, ratio(createService, rawCreate), (v) => v >= 0.5, '>= 0.50'],
  ];
  const best = (scenario: string) => {
    const row = find(scenario, 'service');
    const reference = row && bestReference(rows, row);
    return row && reference ? `${(row.rps / reference.rps).toFixed(2)} of ${reference.system} (${reference.rps} req/s)` : 'not measured';
  };
  return [
    '| target (issue #31) | measured | goal | met |',
    '|---|---|---|---|',
    ...checks.map(([name, value, met, goal]) => `| ${name} | ${Number.isNaN(value) ? 'not measured' : name.endsWith('req/s') ? String(value) : value.toFixed(2)} | ${goal} | ${Number.isNaN(value) ? '' : met(value) ? 'yes' : 'no'} |`),
    '',
    `Against the best reference of each kind: the list ${best(list)}; the nested page ${best(nested)}; the create ${best(create)}.`,
  ];
}

// The limit, one round trip per request: a minimal node:http + pg server whose every answer
// is one named (prepared) statement, for one organization's customers:
// - GET /v1/customers: the page and its total together (the total a scalar sub-select:
//   the maintained count, or counted when searching), the REST record and pagination (with
//   has_more, without next_cursor: the service signs its cursors);
// - POST /graphql: the bench's nested page (20 customers, each with its newest 5 live jobs and
//   5 live invoices with their lines), the GraphQL answer to NESTED_QUERY (the body is not read);
// - POST /v1/customers: one `INSERT ... RETURNING` of a customer, its own transaction, through
//   the table's triggers (whatever they are when the row runs), answered 201 with the record.
// REFERENCE_JSON=postgres: PostgreSQL builds each answer's JSON text (json_build_object,
// json_agg) and node forwards it untouched; otherwise (node) node serializes the rows, the
// nested page's relations arriving as JSON columns as Prisma's relation joins read them.
// No framework, no auth, no rate limit, no log.
import { createServer, type IncomingMessage } from 'node:http';
import pg from 'pg';
import { CUSTOMER_INSERT, uuid7 } from './types.js';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const organizationId = process.env.ORGANIZATION_ID!;
const inPostgres = process.env.REFERENCE_JSON === 'postgres';

/** The REST customer record's columns, in its order. */
const RECORD = ['id', 'name', 'email', 'phone', 'created_at', 'updated_at', 'version', 'deleted_at', 'external_id', 'metadata'];
/** A timestamp as JavaScript's toISOString writes it (what node and the service send). */
const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const recordJson = (alias: string) =>
  `json_build_object(${RECORD.map((c) => `'${c}', ${c.endsWith('_at') ? iso(`${alias}.${c}`) : `${alias}.${c}`}`).join(', ')})`;
const columns = (alias: string) => RECORD.map((c) => `${alias}.${c}`).join(', ');

const LIVE = 'c.organization_id = $1 AND c.deleted_at IS NULL';
/** `$n`: the search pattern's parameter (after the others of the statement). */
const searched = (n: number) => `${LIVE} AND (c.name ILIKE $${n} OR c.email ILIKE $${n})`;
const NEWEST = 'ORDER BY c.created_at DESC, c.id DESC';
const MAINTAINED = `SELECT coalesce(sum(count), 0)::int FROM record_counts WHERE organization_id = $1 AND resource = 'customers'`;
const COUNTED = (where: string) => `SELECT count(*)::int FROM customers c WHERE ${where}`;

/**
 * The page ($2 = limit + 1 rows, to know has_more; $3 the offset) and its total in one row
 * each, the total beside every row; a page past the end is one row of nulls with the total.
 */
const rowsList = (where: string, total: string) =>
  `SELECT t.total, p.* FROM (${total}) t(total)
   LEFT JOIN LATERAL (SELECT ${columns('c')} FROM customers c WHERE ${where} ${NEWEST} LIMIT $2 OFFSET $3) p ON true`;
/** The whole answer as JSON text ($4 the page number, $5 the limit). */
const jsonList = (where: string, total: string) =>
  `WITH page AS (SELECT c.* FROM customers c WHERE ${where} ${NEWEST} LIMIT $2 OFFSET $3)
   SELECT json_build_object(
     'data', coalesce((SELECT json_agg(${recordJson('c')} ${NEWEST}) FROM (SELECT * FROM page c ${NEWEST} LIMIT $5) c), '[]'),
     'pagination', json_build_object('page', $4::int, 'limit', $5::int, 'total', (${total}), 'has_more', (SELECT count(*) FROM page) > $5)
   )::text AS body`;

/** A customer's newest live jobs and invoices (with lines), as JSON arrays in GraphQL's field names. */
const JOBS = `coalesce((SELECT json_agg(json_build_object('title', j.title, 'status', j.status) ORDER BY j.created_at DESC, j.id DESC)
  FROM (SELECT * FROM jobs j WHERE j.organization_id = c.organization_id AND j.customer_id = c.id AND j.deleted_at IS NULL
        ORDER BY j.created_at DESC, j.id DESC LIMIT 5) j), '[]')`;
const INVOICES = `coalesce((SELECT json_agg(json_build_object('number', i.number, 'totalAmount', i.total_amount, 'lineItems',
    (SELECT coalesce(json_agg(json_build_object('amount', l.amount) ORDER BY l.position), '[]') FROM invoice_line_items l
     WHERE l.organization_id = i.organization_id AND l.invoice_id = i.id)) ORDER BY i.created_at DESC, i.id DESC)
  FROM (SELECT * FROM invoices i WHERE i.organization_id = c.organization_id AND i.customer_id = c.id AND i.deleted_at IS NULL
        ORDER BY i.created_at DESC, i.id DESC LIMIT 5) i), '[]')`;
const NESTED_PAGE = `SELECT * FROM customers c WHERE ${LIVE} ${NEWEST} LIMIT 20`;

const STATEMENTS = inPostgres
  ? {
      list: jsonList(LIVE, MAINTAINED),
      search: jsonList(searched(6), COUNTED(searched(6))),
      nested: `SELECT json_build_object('data', json_build_object('customers', json_build_object('data',
                 coalesce(json_agg(json_build_object('name', c.name, 'jobs', ${JOBS}, 'invoices', ${INVOICES}) ${NEWEST}), '[]'))))::text AS body
               FROM (${NESTED_PAGE}) c`,
      create: `${CUSTOMER_INSERT} RETURNING ${recordJson('customers')}::text AS body`,
    }
  : {
      list: rowsList(LIVE, `(${MAINTAINED})`),
      search: rowsList(searched(4), `(${COUNTED(searched(4))})`),
      nested: `SELECT c.name, ${JOBS} AS jobs, ${INVOICES} AS invoices FROM (${NESTED_PAGE}) c ${NEWEST}`,
      create: `${CUSTOMER_INSERT} RETURNING ${RECORD.join(', ')}`,
    };

const run = (name: keyof typeof STATEMENTS, values: unknown[]) => pool.query({ name, text: STATEMENTS[name], values });

async function list(url: URL): Promise<string> {
  const limit = Number(url.searchParams.get('limit') ?? 20);
  const page = Number(url.searchParams.get('page') ?? 1);
  const search = url.searchParams.get('search');
  const name = search ? 'search' : 'list';
  const values: unknown[] = [organizationId, limit + 1, (page - 1) * limit, ...(inPostgres ? [page, limit] : []), ...(search ? [`%${search}%`] : [])];
  if (inPostgres) return (await run(name, values)).rows[0].body;
  const { rows } = await run(name, values);
  const records = rows[0].id === null ? [] : rows.slice(0, limit).map(({ total: _, ...record }) => record);
  return JSON.stringify({ data: records, pagination: { page, limit, total: rows[0].total, has_more: rows.length > limit } });
}

async function nested(): Promise<string> {
  const { rows } = await run('nested', [organizationId]);
  return inPostgres ? rows[0].body : JSON.stringify({ data: { customers: { data: rows } } });
}

async function create(req: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of req) text += chunk;
  const body = JSON.parse(text) as { name: string; email?: string };
  const { rows } = await run('create', [uuid7(), organizationId, body.name, body.email ?? null]);
  return inPostgres ? rows[0].body : JSON.stringify(rows[0]);
}

const server = createServer(async (req, res) => {
  const url = new URL(req.url!, 'http://x');
  try {
    const [status, body] =
      req.method === 'POST' && url.pathname === '/v1/customers' ? [201, await create(req)] : req.method === 'POST' ? [200, await nested()] : [200, await list(url)];
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(body);
  } catch (error) {
    res.writeHead(500, { 'content-type': 'text/plain' });
    res.end((error as Error).message);
  }
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => console.log(JSON.stringify({ msg: 'listening', port: (server.address() as { port: number }).port })));
process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));

// The practical limit: a minimal node:http + pg server that runs the same SQL as the service
// for one organization's customer list (the page, and the total from the maintained counts,
// or counted when searching) and writes the same JSON. No framework, no auth.
// REFERENCE_PROCESSES=N: N such processes on one port (node:cluster), beside the service's
// WEB_CONCURRENCY=N; the primary logs "listening" once all of them are.
import cluster from 'node:cluster';
import { createServer } from 'node:http';
import pg from 'pg';

const processes = Number(process.env.REFERENCE_PROCESSES ?? 1);
if (cluster.isPrimary && processes > 1) {
  let listening = 0;
  cluster.on('listening', (_worker, address) => {
    if (++listening === processes) console.log(JSON.stringify({ msg: 'listening', port: address.port, processes }));
  });
  for (let i = 0; i < processes; i++) cluster.fork();
  process.on('SIGTERM', () => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    cluster.on('exit', () => Object.keys(cluster.workers ?? {}).length === 0 && process.exit(0));
  });
} else serve();

function serve() {
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
  const organizationId = process.env.ORGANIZATION_ID!;

  const server = createServer(async (req, res) => {
    const url = new URL(req.url!, 'http://x');
    const limit = Number(url.searchParams.get('limit') ?? 20);
    const page = Number(url.searchParams.get('page') ?? 1);
    const search = url.searchParams.get('search');
    const params: unknown[] = [organizationId];
    let where = 'organization_id = $1';
    if (search) {
      params.push(`%${search}%`);
      where += ' AND (name ILIKE $2 OR email ILIKE $2)';
    }
    const [rows, count] = await Promise.all([
      pool.query(
        `SELECT id, name, email, phone, created_at, updated_at FROM customers WHERE ${where}
         ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${(page - 1) * limit}`,
        params,
      ),
      search
        ? pool.query(`SELECT count(*)::int AS total FROM customers WHERE ${where}`, params)
        : pool.query(`SELECT coalesce(sum(count), 0)::int AS total FROM record_counts WHERE organization_id = $1 AND resource = 'customers'`, params),
    ]);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ data: rows.rows, pagination: { page, limit, total: count.rows[0].total } }));
  });
  server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
    if (cluster.isPrimary) console.log(JSON.stringify({ msg: 'listening', port: (server.address() as { port: number }).port }));
  });
  process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
}

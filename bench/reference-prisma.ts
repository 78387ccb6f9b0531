// The limit of the query layer itself: a minimal node:http server that answers the customer
// list as the service does (the page and the maintained total, the same JSON) through the
// service's own Prisma client and driver adapter, with nothing else: no GraphQL, no auth, no
// rate limit, no log. Beside the node:http + pg reference it shows how much of the distance
// to that limit is Prisma's, whatever the rest of the service does.
import { createServer } from 'node:http';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from '../src/generated/prisma/client.js';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
const organizationId = process.env.ORGANIZATION_ID!;
const columns = { id: true, name: true, email: true, phone: true, createdAt: true, updatedAt: true, version: true, deletedAt: true };

const server = createServer(async (req, res) => {
  const url = new URL(req.url!, 'http://x');
  const limit = Number(url.searchParams.get('limit') ?? 20);
  const page = Number(url.searchParams.get('page') ?? 1);
  const [rows, count] = await Promise.all([
    prisma.customer.findMany({
      where: { organizationId, deletedAt: null },
      select: columns,
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      skip: (page - 1) * limit,
      take: limit + 1,
    }),
    prisma.recordCount.findUnique({ where: { organizationId_resource_status: { organizationId, resource: 'customers', status: '' } }, select: { count: true } }),
  ]);
  const data = rows.slice(0, limit).map((r) => ({
    id: r.id,
    name: r.name,
    email: r.email,
    phone: r.phone,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
    version: r.version,
    deleted_at: r.deletedAt?.toISOString() ?? null,
  }));
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ data, pagination: { page, limit, total: Number(count?.count ?? 0), has_more: rows.length > limit } }));
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => console.log(JSON.stringify({ msg: 'listening', port: (server.address() as { port: number }).port })));
process.on('SIGTERM', () => server.close(() => void prisma.$disconnect().then(() => pool.end()).then(() => process.exit(0))));

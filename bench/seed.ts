// A benchmark database: one organization with many customers (and jobs, invoices with line
// items, e-mails), a second organization beside it, and an API key for the first.
import pg from 'pg';
import { createApiKey } from '../src/auth/api-keys.js';
import { allScopes } from '../src/auth/scopes.js';
import '../src/schema/index.js';
import { rmSync } from 'node:fs';
import { openDatabase, type Database } from '../src/db/connection.js';
import { migrate } from '../src/db/migrator.js';

export interface BenchData {
  databaseUrl: string;
  organizationId: string;
  /** Many keys of the measured organization, so each stays within the default rate limit. */
  keys: string[];
  customerId: string;
  /** Customers of the measured organization spread over the whole list (random ids), for writes. */
  customerIds: string[];
}

const FIRST = ['Ada', 'Grace', 'Alan', 'Katherine', 'Linus', 'Margaret', 'Tim', 'Barbara', 'Dennis', 'Frances', 'Ken', 'Radia'];
const LAST = ['Lovelace', 'Hopper', 'Turing', 'Johnson', 'Torvalds', 'Hamilton', 'Lee', 'Liskov', 'Ritchie', 'Allen', 'Thompson', 'Perlman'];

export async function seedBenchDatabase(adminUrl: string, name: string, customers: number, keyCount: number): Promise<BenchData> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();

  const db = await openDatabase({ databaseUrl, dataDir: '' });
  try {
    await migrate(db.sql);
    const [main, other] = await Promise.all([
      db.prisma.organization.create({ data: { name: 'Bench Co' } }),
      db.prisma.organization.create({ data: { name: 'Other Co' } }),
    ]);
    // Bulk rows bypass the triggers, on one session of their own (no statement timeout: the
    // service's pool cancels statements after 5 s). Through the triggers every row would
    // update its organization's row twice (the change sequence and the maintained count) in
    // one transaction: a chain of 100,000 dead versions of one row, each update walking it,
    // which cannot finish at 100,000 customers. `session_replication_role = replica` skips
    // every ordinary trigger (the foreign-key checks too: the rows are built consistent), so
    // what the triggers would have written is written here: each row's change sequence in
    // insertion order (oldest change first, per organization and across its tables), the
    // organization's sequence at the last of them, and the counts once at the end.
    const bulk = new pg.Client({ connectionString: databaseUrl });
    await bulk.connect();
    try {
      await bulk.query("SET session_replication_role = replica; SET statement_timeout = 0; SET maintenance_work_mem = '256MB'");
      await bulkRows((text, params) => bulk.query(text, params).then((r) => r.rowCount ?? 0), main.id, other.id, customers);
      await bulk.query('VACUUM ANALYZE');
    } finally {
      await bulk.end();
    }
    return { databaseUrl, ...(await keysAndIds(db, main.id, keyCount)) };
  } finally {
    await db.close();
  }
}

/**
 * The same data in an embedded (PGlite) data folder, for the service's default: PGlite has
 * one session, so Prisma's raw statements run on the session whose triggers are off.
 */
export async function seedBenchDataDir(dataDir: string, customers: number, keyCount: number): Promise<Omit<BenchData, 'databaseUrl'> & { dataDir: string }> {
  rmSync(dataDir, { recursive: true, force: true });
  const db = await openDatabase({ dataDir });
  try {
    await migrate(db.sql);
    const main = await db.prisma.organization.create({ data: { name: 'Bench Co' } });
    const other = await db.prisma.organization.create({ data: { name: 'Other Co' } });
    const run = (text: string, params: unknown[] = []) => db.prisma.$executeRawUnsafe(text, ...params);
    await run('SET session_replication_role = replica');
    await bulkRows(run, main.id, other.id, customers);
    await run('SET session_replication_role = origin');
    await run('VACUUM ANALYZE');
    return { dataDir, ...(await keysAndIds(db, main.id, keyCount)) };
  } finally {
    await db.close();
  }
}

async function keysAndIds(db: Database, organizationId: string, keyCount: number) {
  const keys: string[] = [];
  for (let i = 0; i < keyCount; i++) keys.push((await createApiKey(db.prisma, { organizationId, name: `bench ${i}`, scopes: allScopes() })).key);
  const [customer] = await db.sql.query<{ id: string }>('SELECT id FROM customers WHERE organization_id = $1 ORDER BY created_at DESC LIMIT 1 OFFSET 100', [organizationId]);
  const spread = await db.sql.query<{ id: string }>('SELECT id FROM customers WHERE organization_id = $1 ORDER BY id LIMIT 10000', [organizationId]);
  return { organizationId, keys, customerId: customer!.id, customerIds: spread.map((r) => r.id) };
}

/**
 * The bulk rows of both organizations, through `run` (a statement with parameters; resolves
 * with the rows it wrote), on a session whose triggers are off (see seedBenchDatabase).
 */
async function bulkRows(run: (text: string, params?: unknown[]) => Promise<number>, mainId: string, otherId: string, customers: number) {
  for (const [org, count] of [[mainId, customers], [otherId, Math.min(customers, 10_000)]] as const) {
    let seq = 0;
    // $n: where this insert's numbers start; each insert numbers its own rows from there.
    const insert = async (text: string, params: unknown[]) => {
      seq += await run(text, [...params, seq]);
    };
    await insert(
      `INSERT INTO customers (id, organization_id, name, email, phone, created_at, updated_at, change_seq)
       SELECT gen_random_uuid(), $1, ($2::text[])[1 + g % 12] || ' ' || ($3::text[])[1 + (g / 12) % 12] || ' ' || g,
              lower(($2::text[])[1 + g % 12]) || '.' || g || '@example.com', '+1555' || lpad(g::text, 7, '0'),
              now() - make_interval(secs => g), now() - make_interval(secs => g), $5::bigint + $4::int + 1 - g
       FROM generate_series(1, $4::int) g`,
      [org, FIRST, LAST, count],
    );
    // Every other customer has a job, an invoice with two lines, and an e-mail.
    await insert(
      `INSERT INTO jobs (id, organization_id, customer_id, title, status, created_at, updated_at, change_seq)
       SELECT gen_random_uuid(), organization_id, id, 'Job for ' || name,
              (ARRAY['scheduled','in_progress','completed','cancelled']::job_status[])[1 + (abs(hashtext(id::text)) % 4)], created_at, created_at,
              $2::bigint + row_number() OVER (ORDER BY created_at, id)
       FROM customers WHERE organization_id = $1 AND abs(hashtext(id::text)) % 2 = 0`,
      [org],
    );
    await insert(
      `INSERT INTO invoices (id, organization_id, number, customer_id, job_id, status, currency, total_amount, created_at, updated_at, change_seq)
       SELECT gen_random_uuid(), j.organization_id, 'INV-' || lpad((row_number() OVER (ORDER BY j.created_at))::text, 6, '0'), j.customer_id, j.id,
              (ARRAY['draft','sent','paid']::invoice_status[])[1 + (abs(hashtext(j.id::text)) % 3)], 'USD', 15000, j.created_at, j.created_at,
              $2::bigint + row_number() OVER (ORDER BY j.created_at, j.id)
       FROM jobs j WHERE j.organization_id = $1`,
      [org],
    );
    await run(
      `INSERT INTO invoice_line_items (organization_id, invoice_id, position, description, quantity, unit_amount, amount)
       SELECT organization_id, id, p, CASE p WHEN 0 THEN 'Labour' ELSE 'Parts' END, 1, 7500, 7500
       FROM invoices, generate_series(0, 1) p WHERE organization_id = $1`,
      [org],
    );
    await insert(
      `INSERT INTO emails (id, organization_id, customer_id, type, from_address, to_address, subject, body, sent_at, created_at, updated_at, change_seq)
       SELECT gen_random_uuid(), organization_id, id, 'incoming', email, 'office@example.com', 'Question', 'Hello', created_at, created_at, created_at,
              $2::bigint + row_number() OVER (ORDER BY created_at, id)
       FROM customers WHERE organization_id = $1 AND abs(hashtext(id::text)) % 2 = 1`,
      [org],
    );
    // The organization's counters row (organization_counters): its change sequence and last invoice number.
    await run(
      `INSERT INTO organization_counters (organization_id, change_seq, last_invoice_number)
       VALUES ($1, $2, (SELECT count(*) FROM invoices WHERE organization_id = $1))
       ON CONFLICT (organization_id) DO UPDATE SET change_seq = EXCLUDED.change_seq, last_invoice_number = EXCLUDED.last_invoice_number`,
      [org, seq],
    );
  }
  await run('DELETE FROM record_counts');
  await run(`
    INSERT INTO record_counts (organization_id, resource, status, count)
    SELECT organization_id, 'customers', '', count(*) FROM customers WHERE deleted_at IS NULL GROUP BY organization_id
    UNION ALL SELECT organization_id, 'jobs', status::text, count(*) FROM jobs WHERE deleted_at IS NULL GROUP BY organization_id, status
    UNION ALL SELECT organization_id, 'emails', type::text, count(*) FROM emails WHERE deleted_at IS NULL GROUP BY organization_id, type
    UNION ALL SELECT organization_id, 'invoices', status::text, count(*) FROM invoices WHERE deleted_at IS NULL GROUP BY organization_id, status`);
}

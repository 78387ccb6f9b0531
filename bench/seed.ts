// A benchmark database: one organization with many customers (and jobs, invoices with line
// items, e-mails), a second organization beside it, and an API key for the first.
import pg from 'pg';
import { createApiKey } from '../src/auth/api-keys.js';
import { SCOPES } from '../src/auth/scopes.js';
import { openDatabase } from '../src/db/connection.js';
import { migrate } from '../src/db/migrator.js';

export interface BenchData {
  databaseUrl: string;
  organizationId: string;
  /** Many keys of the measured organization, so each stays within the default rate limit. */
  keys: string[];
  customerId: string;
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
    // Bulk rows bypass the counting triggers (100,000 updates of one counter row in one
    // transaction would leave a long chain of dead row versions); the counts are computed
    // once afterwards instead.
    const counted = ['customers', 'jobs', 'emails', 'invoices'];
    for (const table of counted) await db.sql.query(`ALTER TABLE ${table} DISABLE TRIGGER ${table}_count`);
    for (const [org, count] of [[main.id, customers], [other.id, Math.min(customers, 10_000)]] as const) {
      await db.sql.query(
        `INSERT INTO customers (id, organization_id, name, email, phone, created_at, updated_at)
         SELECT gen_random_uuid(), $1, ($2::text[])[1 + g % 12] || ' ' || ($3::text[])[1 + (g / 12) % 12] || ' ' || g,
                lower(($2::text[])[1 + g % 12]) || '.' || g || '@example.com', '+1555' || lpad(g::text, 7, '0'),
                now() - make_interval(secs => g), now() - make_interval(secs => g)
         FROM generate_series(1, $4::int) g`,
        [org, FIRST, LAST, count],
      );
      // Every other customer has a job, an invoice with two lines, and an e-mail.
      await db.sql.query(
        `INSERT INTO jobs (id, organization_id, customer_id, title, status, created_at, updated_at)
         SELECT gen_random_uuid(), organization_id, id, 'Job for ' || name,
                (ARRAY['scheduled','in_progress','completed','cancelled']::job_status[])[1 + (abs(hashtext(id::text)) % 4)], created_at, created_at
         FROM customers WHERE organization_id = $1 AND abs(hashtext(id::text)) % 2 = 0`,
        [org],
      );
      await db.sql.query(
        `INSERT INTO invoices (id, organization_id, number, customer_id, job_id, status, currency, total_amount, created_at, updated_at)
         SELECT gen_random_uuid(), j.organization_id, 'INV-' || lpad((row_number() OVER (ORDER BY j.created_at))::text, 6, '0'), j.customer_id, j.id,
                (ARRAY['draft','sent','paid']::invoice_status[])[1 + (abs(hashtext(j.id::text)) % 3)], 'USD', 15000, j.created_at, j.created_at
         FROM jobs j WHERE j.organization_id = $1`,
        [org],
      );
      await db.sql.query(
        `INSERT INTO invoice_line_items (organization_id, invoice_id, position, description, quantity, unit_amount, amount)
         SELECT organization_id, id, p, CASE p WHEN 0 THEN 'Labour' ELSE 'Parts' END, 1, 7500, 7500
         FROM invoices, generate_series(0, 1) p WHERE organization_id = $1`,
        [org],
      );
      await db.sql.query(
        `UPDATE organizations SET last_invoice_number = (SELECT count(*) FROM invoices WHERE organization_id = $1) WHERE id = $1`,
        [org],
      );
      await db.sql.query(
        `INSERT INTO emails (id, organization_id, customer_id, type, from_address, to_address, subject, body, sent_at, created_at)
         SELECT gen_random_uuid(), organization_id, id, 'incoming', email, 'office@example.com', 'Question', 'Hello', created_at, created_at
         FROM customers WHERE organization_id = $1 AND abs(hashtext(id::text)) % 2 = 1`,
        [org],
      );
    }
    for (const table of counted) await db.sql.query(`ALTER TABLE ${table} ENABLE TRIGGER ${table}_count`);
    await db.sql.query('DELETE FROM record_counts');
    await db.sql.query(`
      INSERT INTO record_counts (organization_id, resource, status, count)
      SELECT organization_id, 'customers', '', count(*) FROM customers GROUP BY organization_id
      UNION ALL SELECT organization_id, 'jobs', status::text, count(*) FROM jobs GROUP BY organization_id, status
      UNION ALL SELECT organization_id, 'emails', type::text, count(*) FROM emails GROUP BY organization_id, type
      UNION ALL SELECT organization_id, 'invoices', status::text, count(*) FROM invoices GROUP BY organization_id, status`);
    await db.sql.query('VACUUM ANALYZE');
    const keys: string[] = [];
    for (let i = 0; i < keyCount; i++) keys.push((await createApiKey(db.prisma, { organizationId: main.id, name: `bench ${i}`, scopes: [...SCOPES] })).key);
    const [customer] = await db.sql.query<{ id: string }>('SELECT id FROM customers WHERE organization_id = $1 ORDER BY created_at DESC LIMIT 1 OFFSET 100', [main.id]);
    return { databaseUrl, organizationId: main.id, keys, customerId: customer!.id };
  } finally {
    await db.close();
  }
}

// What the lists bench asks of its data, beyond bench/seed.ts: the measured organization's
// jobs and invoices with the dates, amounts and statuses a field-service business has, so
// every sort and range of the list rows reads a realistic spread (the base seed leaves the
// dates empty and every total at 15000). Written on a session with the triggers off, as the
// seed's own rows are: no events, change sequence or versions for these corrections.
import pg from 'pg';

/**
 * Relative to today (in days, from each record's id, so every run of the seed gives the
 * same spread):
 * - invoices: paid ones issued over the last year, paid within 45 days; sent ones issued
 *   over the last 90 days (so about two in three are past due); drafts not issued, half
 *   with a due date; every due date 30 days after issue; totals from 10.00 to 5,000.00.
 * - jobs: 35% scheduled, 5% in progress, 50% completed, 10% cancelled (the base seed's
 *   hash gives only two of the four); scheduled ones over the next 90 days (one in ten unscheduled), in-progress ones
 *   started in the last week, completed ones over the last year (done 1 to 8 hours after
 *   they were scheduled), cancelled ones within half a year either way; a description.
 * - one in a hundred draft invoices and cancelled jobs soft-deleted, so `deleted_at IS NULL`
 *   filters something out; the maintained counts are written again to match.
 */
export async function varyListData(databaseUrl: string, organizationId: string): Promise<string> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query("SET session_replication_role = replica; SET statement_timeout = 0; SET maintenance_work_mem = '256MB'");
    // h(n): a stable number from 0 to n-1 per record and purpose.
    await client.query(
      `WITH h AS (
         SELECT id, status,
                abs(hashtext(id::text || 'issued')) % 1000 / 1000.0 AS r1,
                abs(hashtext(id::text || 'paid')) % 1000 / 1000.0 AS r2,
                abs(hashtext(id::text || 'amount')) % 499001 AS amount
         FROM invoices WHERE organization_id = $1)
       UPDATE invoices i SET
         total_amount = 1000 + h.amount,
         issued_at = CASE h.status WHEN 'paid' THEN now() - make_interval(secs => (365 * 86400 * h.r1)::int)
                                   WHEN 'sent' THEN now() - make_interval(secs => (90 * 86400 * h.r1)::int) END,
         due_date = CASE WHEN h.status = 'paid' THEN (now() - make_interval(secs => (365 * 86400 * h.r1)::int))::date + 30
                         WHEN h.status = 'sent' THEN (now() - make_interval(secs => (90 * 86400 * h.r1)::int))::date + 30
                         WHEN h.r2 < 0.5 THEN current_date + 1 + (60 * h.r1)::int END,
         paid_at = CASE h.status WHEN 'paid' THEN now() - make_interval(secs => (365 * 86400 * h.r1)::int) + make_interval(secs => (45 * 86400 * h.r2)::int) END,
         deleted_at = CASE WHEN h.status = 'draft' AND h.r2 >= 0.99 THEN now() END
       FROM h WHERE i.organization_id = $1 AND i.id = h.id`,
      [organizationId],
    );
    await client.query(
      `WITH h AS (
         SELECT id,
                (CASE WHEN r0 < 0.35 THEN 'scheduled' WHEN r0 < 0.40 THEN 'in_progress' WHEN r0 < 0.90 THEN 'completed' ELSE 'cancelled' END)::job_status AS status,
                abs(hashtext(id::text || 'when')) % 1000 / 1000.0 AS r1,
                abs(hashtext(id::text || 'long')) % 1000 / 1000.0 AS r2
         FROM jobs, LATERAL (SELECT abs(hashtext(id::text || 'status')) % 1000 / 1000.0 AS r0) s
         WHERE organization_id = $1)
       UPDATE jobs j SET
         status = h.status,
         scheduled_at = CASE h.status
           WHEN 'scheduled' THEN CASE WHEN h.r2 < 0.1 THEN NULL ELSE now() + make_interval(secs => (90 * 86400 * h.r1)::int) END
           WHEN 'in_progress' THEN now() - make_interval(secs => (7 * 86400 * h.r1)::int)
           WHEN 'completed' THEN now() - make_interval(secs => (365 * 86400 * h.r1)::int)
           ELSE now() + make_interval(secs => (365 * 86400 * (h.r1 - 0.5))::int) END,
         completed_at = CASE h.status WHEN 'completed' THEN now() - make_interval(secs => (365 * 86400 * h.r1)::int) + make_interval(secs => 3600 + (7 * 3600 * h.r2)::int) END,
         description = (ARRAY['Boiler service', 'Leaking tap', 'Annual inspection', 'Rewire kitchen', 'Replace filter', 'Install heat pump'])[1 + (abs(hashtext(j.id::text)) % 6)] || ' at ' || j.title,
         deleted_at = CASE WHEN h.status = 'cancelled' AND h.r2 >= 0.99 THEN now() END
       FROM h WHERE j.organization_id = $1 AND j.id = h.id`,
      [organizationId],
    );
    await client.query(`DELETE FROM record_counts WHERE organization_id = $1 AND resource IN ('jobs', 'invoices')`, [organizationId]);
    await client.query(
      `INSERT INTO record_counts (organization_id, resource, status, count)
       SELECT organization_id, 'jobs', status::text, count(*) FROM jobs WHERE organization_id = $1 AND deleted_at IS NULL GROUP BY organization_id, status
       UNION ALL SELECT organization_id, 'invoices', status::text, count(*) FROM invoices WHERE organization_id = $1 AND deleted_at IS NULL GROUP BY organization_id, status`,
      [organizationId],
    );
    // Compact again (the updates left a dead version of every row), then mark every page
    // all-visible and gather statistics, as the base seed leaves its tables.
    await client.query('VACUUM FULL invoices, jobs');
    await client.query('VACUUM ANALYZE invoices, jobs');
    const [spread] = (
      await client.query<Record<string, string>>(
        `SELECT (SELECT count(*) FROM invoices WHERE organization_id = $1 AND deleted_at IS NULL) AS invoices,
                (SELECT count(*) FROM invoices WHERE organization_id = $1 AND deleted_at IS NULL AND status = 'sent') AS sent,
                (SELECT count(*) FROM invoices WHERE organization_id = $1 AND deleted_at IS NULL AND status = 'sent' AND due_date < current_date) AS overdue,
                (SELECT count(DISTINCT customer_id) FROM invoices WHERE organization_id = $1 AND deleted_at IS NULL AND status = 'sent') AS customers,
                (SELECT count(*) FROM jobs WHERE organization_id = $1 AND deleted_at IS NULL) AS jobs,
                (SELECT count(*) FROM jobs WHERE organization_id = $1 AND deleted_at IS NULL AND scheduled_at >= date_trunc('week', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
                   AND scheduled_at < (date_trunc('week', now() AT TIME ZONE 'UTC') + interval '7 days') AT TIME ZONE 'UTC') AS week`,
        [organizationId],
      )
    ).rows as [Record<string, string>];
    return `${spread.invoices} live invoices (${spread.sent} sent, ${spread.overdue} of them overdue, owed by ${spread.customers} customers) and ${spread.jobs} live jobs (${spread.week} scheduled this week)`;
  } finally {
    await client.end();
  }
}

-- An organization's writers queue for its change numbers in the lock manager, one at a time,
-- instead of on its counters row (issue #31, written by hand: Prisma cannot express this).
--
-- Every write of a record takes the organization's next change number from its counters row
-- and holds that row until the transaction ends: numbers are handed out in commit order, which
-- the sync cursor and the events' seq promise. The order stays; what changes is the queue.
-- A row lock's waiters sleep on the holder's transaction, and every commit wakes them to race
-- for the row again. 32 connections inserting customers into one organization (pgbench, this
-- 2-core machine) then reached 533-547 inserts/s, and 467/s as BEGIN, INSERT, COMMIT; taking a
-- transaction-level advisory lock on the organization first (granted to one waiter at a time,
-- in order) and then the row, which nobody waits for any more, reached 750-789/s and 780/s.
--
-- Whatever updates the counters row takes the same lock first (invoice and estimate numbers
-- too): a transaction holding the row while waiting for the lock, beside one holding the lock
-- while waiting for the row, would deadlock.
--
-- Not on Citus: there the change numbers are taken on the worker holding the organization's
-- shards and the document numbers from the coordinator, whose advisory locks are not the
-- worker's; writers keep queueing on the counters row alone (next_change_seq stays as it was,
-- lock_organization_changes does nothing).
DO $$
DECLARE
  citus boolean := EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus');
BEGIN
  IF citus THEN
    CREATE FUNCTION lock_organization_changes(org uuid) RETURNS void LANGUAGE plpgsql AS $f$ BEGIN END $f$;
  ELSE
    CREATE FUNCTION lock_organization_changes(org uuid) RETURNS void LANGUAGE sql AS $f$
      SELECT pg_advisory_xact_lock(hashtextextended(org::text, 0))
    $f$;
    CREATE OR REPLACE FUNCTION next_change_seq(org uuid) RETURNS bigint LANGUAGE plpgsql AS $f$
    DECLARE
      seq bigint;
    BEGIN
      PERFORM lock_organization_changes(org);
      UPDATE organization_counters SET change_seq = change_seq + 1 WHERE organization_id = org
      RETURNING change_seq INTO seq;
      IF NOT FOUND THEN
        INSERT INTO organization_counters (organization_id, change_seq) VALUES (org, 1)
        ON CONFLICT (organization_id) DO UPDATE SET change_seq = organization_counters.change_seq + 1
        RETURNING change_seq INTO seq;
      END IF;
      RETURN seq;
    END $f$;
  END IF;
END $$;

-- The organization's next invoice or estimate number (kind: 'invoice' or 'estimate'), from
-- its counters row (made by its first use).
CREATE FUNCTION next_document_number(org uuid, kind text) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  invoice boolean := kind = 'invoice';
  n integer;
BEGIN
  PERFORM lock_organization_changes(org);
  INSERT INTO organization_counters AS c (organization_id, last_invoice_number, last_estimate_number)
  VALUES (org, CASE WHEN invoice THEN 1 ELSE 0 END, CASE WHEN invoice THEN 0 ELSE 1 END)
  ON CONFLICT (organization_id) DO UPDATE SET
    last_invoice_number = c.last_invoice_number + CASE WHEN invoice THEN 1 ELSE 0 END,
    last_estimate_number = c.last_estimate_number + CASE WHEN invoice THEN 0 ELSE 1 END
  RETURNING CASE WHEN invoice THEN c.last_invoice_number ELSE c.last_estimate_number END INTO n;
  RETURN n;
END $$;

-- The organization's counters (change sequence, invoice and estimate numbers) move to a
-- table keyed by organization_id like its records, and no reference cascades updates: what
-- Citus needs to keep a tenant on one node (see the block at the end).

-- DropForeignKey
ALTER TABLE "api_keys" DROP CONSTRAINT "api_keys_organization_id_fkey";

-- DropForeignKey
ALTER TABLE "customers" DROP CONSTRAINT "customers_organization_id_fkey";

-- DropForeignKey
ALTER TABLE "emails" DROP CONSTRAINT "emails_organization_id_customer_id_fkey";

-- DropForeignKey
ALTER TABLE "emails" DROP CONSTRAINT "emails_organization_id_fkey";

-- DropForeignKey
ALTER TABLE "estimate_line_items" DROP CONSTRAINT "estimate_line_items_organization_id_estimate_id_fkey";

-- DropForeignKey
ALTER TABLE "estimate_line_items" DROP CONSTRAINT "estimate_line_items_organization_id_fkey";

-- DropForeignKey
ALTER TABLE "estimates" DROP CONSTRAINT "estimates_organization_id_customer_id_fkey";

-- DropForeignKey
ALTER TABLE "estimates" DROP CONSTRAINT "estimates_organization_id_fkey";

-- DropForeignKey
ALTER TABLE "estimates" DROP CONSTRAINT "estimates_organization_id_job_id_fkey";

-- DropForeignKey
ALTER TABLE "events" DROP CONSTRAINT "events_organization_id_fkey";

-- DropForeignKey
ALTER TABLE "idempotency_keys" DROP CONSTRAINT "idempotency_keys_organization_id_fkey";

-- DropForeignKey
ALTER TABLE "invoice_line_items" DROP CONSTRAINT "invoice_line_items_organization_id_fkey";

-- DropForeignKey
ALTER TABLE "invoice_line_items" DROP CONSTRAINT "invoice_line_items_organization_id_invoice_id_fkey";

-- DropForeignKey
ALTER TABLE "invoices" DROP CONSTRAINT "invoices_organization_id_customer_id_fkey";

-- DropForeignKey
ALTER TABLE "invoices" DROP CONSTRAINT "invoices_organization_id_fkey";

-- DropForeignKey
ALTER TABLE "invoices" DROP CONSTRAINT "invoices_organization_id_job_id_fkey";

-- DropForeignKey
ALTER TABLE "jobs" DROP CONSTRAINT "jobs_organization_id_customer_id_fkey";

-- DropForeignKey
ALTER TABLE "jobs" DROP CONSTRAINT "jobs_organization_id_fkey";

-- DropForeignKey
ALTER TABLE "organizations" DROP CONSTRAINT "organizations_live_id_fkey";

-- DropForeignKey
ALTER TABLE "proposals" DROP CONSTRAINT "proposals_organization_id_customer_id_fkey";

-- DropForeignKey
ALTER TABLE "proposals" DROP CONSTRAINT "proposals_organization_id_fkey";

-- DropForeignKey
ALTER TABLE "record_counts" DROP CONSTRAINT "record_counts_organization_id_fkey";

-- DropForeignKey
ALTER TABLE "sessions" DROP CONSTRAINT "sessions_user_id_fkey";

-- DropForeignKey
ALTER TABLE "users" DROP CONSTRAINT "users_organization_id_fkey";

-- DropForeignKey
ALTER TABLE "webhook_attempts" DROP CONSTRAINT "webhook_attempts_organization_id_endpoint_id_fkey";

-- DropForeignKey
ALTER TABLE "webhook_attempts" DROP CONSTRAINT "webhook_attempts_organization_id_fkey";

-- DropForeignKey
ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "webhook_deliveries_organization_id_endpoint_id_fkey";

-- DropForeignKey
ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "webhook_deliveries_organization_id_event_id_fkey";

-- DropForeignKey
ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "webhook_deliveries_organization_id_fkey";

-- DropForeignKey
ALTER TABLE "webhook_endpoints" DROP CONSTRAINT "webhook_endpoints_organization_id_fkey";

-- CreateTable
CREATE TABLE "organization_counters" (
    "organization_id" UUID NOT NULL,
    "change_seq" BIGINT NOT NULL DEFAULT 0,
    "last_invoice_number" INTEGER NOT NULL DEFAULT 0,
    "last_estimate_number" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "organization_counters_pkey" PRIMARY KEY ("organization_id")
);

-- The counters move from the organization's row to a row of their own.
INSERT INTO organization_counters (organization_id, change_seq, last_invoice_number, last_estimate_number)
SELECT id, change_seq, last_invoice_number, last_estimate_number FROM organizations;

-- The organization's next change number, from its counters row (made by its first change,
-- so nothing that creates an organization has to remember it).
CREATE FUNCTION next_change_seq(org uuid) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  seq bigint;
BEGIN
  UPDATE organization_counters SET change_seq = change_seq + 1 WHERE organization_id = org
  RETURNING change_seq INTO seq;
  IF NOT FOUND THEN
    INSERT INTO organization_counters (organization_id, change_seq) VALUES (org, 1)
    ON CONFLICT (organization_id) DO UPDATE SET change_seq = organization_counters.change_seq + 1
    RETURNING change_seq INTO seq;
  END IF;
  RETURN seq;
END $$;

CREATE OR REPLACE FUNCTION stamp_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.change_seq := next_change_seq(NEW.organization_id);
  NEW.version := CASE WHEN TG_OP = 'UPDATE' THEN OLD.version + 1 ELSE 1 END;
  RETURN NEW;
END $$;

CREATE OR REPLACE FUNCTION record_import_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  event_id text := 'evt_' || replace(gen_random_uuid()::text, '-', '');
  event_type text := 'import.' || NEW.status;
  event_seq bigint := next_change_seq(NEW.organization_id);
BEGIN
  INSERT INTO events (organization_id, id, seq, type, resource, record_id, object, previous, request_id)
  VALUES (NEW.organization_id, event_id, event_seq, event_type, 'import', NEW.id,
          to_jsonb(NEW) - 'organization_id' - 'csv' - 'next_row' - 'next_offset' - 'attempts' - 'lease_until' - 'request_id',
          NULL, NEW.request_id);
  INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, event_id, event_seq, record_id)
  SELECT gen_random_uuid(), NEW.organization_id, e.id, event_id, event_seq, NEW.id
  FROM webhook_endpoints e
  WHERE e.organization_id = NEW.organization_id AND e.enabled
    AND (cardinality(e.event_types) = 0 OR event_type = ANY (e.event_types));
  PERFORM pg_notify('crm_events', NEW.organization_id::text || ' ' || event_id);
  RETURN NULL;
END $$;

-- Counted under the table's own name, also where the trigger runs on a Citus shard of it
-- (customers_102074).
CREATE OR REPLACE FUNCTION count_records() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  split text := TG_ARGV[0];
  counted text := regexp_replace(TG_TABLE_NAME, '_[0-9]+$', '');
  -- Worked out before the statements (Citus takes no STABLE function in their CASE).
  new_status text := CASE WHEN TG_OP = 'DELETE' OR split = '' THEN '' ELSE to_jsonb(NEW) ->> split END;
  old_status text := CASE WHEN TG_OP = 'INSERT' OR split = '' THEN '' ELSE to_jsonb(OLD) ->> split END;
BEGIN
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.deleted_at IS NULL THEN
    INSERT INTO record_counts (organization_id, resource, status, count)
    VALUES (NEW.organization_id, counted, new_status, 1)
    ON CONFLICT (organization_id, resource, status) DO UPDATE SET count = record_counts.count + 1;
  END IF;
  IF TG_OP IN ('DELETE', 'UPDATE') AND OLD.deleted_at IS NULL THEN
    UPDATE record_counts SET count = count - 1
    WHERE organization_id = OLD.organization_id AND resource = counted AND status = old_status;
  END IF;
  RETURN NULL;
END $$;

-- AlterTable
ALTER TABLE "organizations" DROP COLUMN "change_seq",
DROP COLUMN "last_estimate_number",
DROP COLUMN "last_invoice_number";

-- AlterTable
ALTER TABLE "request_logs" DROP CONSTRAINT "request_logs_pkey",
ADD CONSTRAINT "request_logs_pkey" PRIMARY KEY ("organization_id", "id");

-- AddForeignKey
ALTER TABLE "organizations" ADD CONSTRAINT "organizations_live_id_fkey" FOREIGN KEY ("live_id") REFERENCES "organizations"("id") ON DELETE SET NULL ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "organization_counters" ADD CONSTRAINT "organization_counters_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "users" ADD CONSTRAINT "users_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "customers" ADD CONSTRAINT "customers_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_organization_id_customer_id_fkey" FOREIGN KEY ("organization_id", "customer_id") REFERENCES "customers"("organization_id", "id") ON DELETE RESTRICT ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "emails" ADD CONSTRAINT "emails_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "emails" ADD CONSTRAINT "emails_organization_id_customer_id_fkey" FOREIGN KEY ("organization_id", "customer_id") REFERENCES "customers"("organization_id", "id") ON DELETE RESTRICT ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_organization_id_customer_id_fkey" FOREIGN KEY ("organization_id", "customer_id") REFERENCES "customers"("organization_id", "id") ON DELETE RESTRICT ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_organization_id_job_id_fkey" FOREIGN KEY ("organization_id", "job_id") REFERENCES "jobs"("organization_id", "id") ON DELETE RESTRICT ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "invoice_line_items" ADD CONSTRAINT "invoice_line_items_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "invoice_line_items" ADD CONSTRAINT "invoice_line_items_organization_id_invoice_id_fkey" FOREIGN KEY ("organization_id", "invoice_id") REFERENCES "invoices"("organization_id", "id") ON DELETE CASCADE ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "estimates" ADD CONSTRAINT "estimates_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "estimates" ADD CONSTRAINT "estimates_organization_id_customer_id_fkey" FOREIGN KEY ("organization_id", "customer_id") REFERENCES "customers"("organization_id", "id") ON DELETE RESTRICT ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "estimates" ADD CONSTRAINT "estimates_organization_id_job_id_fkey" FOREIGN KEY ("organization_id", "job_id") REFERENCES "jobs"("organization_id", "id") ON DELETE RESTRICT ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "estimate_line_items" ADD CONSTRAINT "estimate_line_items_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "estimate_line_items" ADD CONSTRAINT "estimate_line_items_organization_id_estimate_id_fkey" FOREIGN KEY ("organization_id", "estimate_id") REFERENCES "estimates"("organization_id", "id") ON DELETE CASCADE ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "proposals" ADD CONSTRAINT "proposals_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "proposals" ADD CONSTRAINT "proposals_organization_id_customer_id_fkey" FOREIGN KEY ("organization_id", "customer_id") REFERENCES "customers"("organization_id", "id") ON DELETE RESTRICT ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "record_counts" ADD CONSTRAINT "record_counts_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "events" ADD CONSTRAINT "events_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_organization_id_endpoint_id_fkey" FOREIGN KEY ("organization_id", "endpoint_id") REFERENCES "webhook_endpoints"("organization_id", "id") ON DELETE CASCADE ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_organization_id_event_id_fkey" FOREIGN KEY ("organization_id", "event_id") REFERENCES "events"("organization_id", "id") ON DELETE CASCADE ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_organization_id_endpoint_id_fkey" FOREIGN KEY ("organization_id", "endpoint_id") REFERENCES "webhook_endpoints"("organization_id", "id") ON DELETE CASCADE ON UPDATE NO ACTION;

-- On Citus (a database with the citus extension): every table of a tenant's is distributed
-- by organization_id, co-located with the organization's counters, so a tenant's rows, its
-- counters and the triggers that keep them sit on one node and a tenant's transaction runs
-- there whole; the shared tables (organizations, keys, users) are reference tables (a copy
-- on every node). Citus distributes a table only while no foreign key ties it to a table
-- that is not distributed yet: the keys are dropped first and made again after. On plain
-- PostgreSQL and PGlite this block does nothing.
DO $$
DECLARE
  shared text[] := ARRAY['organizations', 'api_keys', 'users', 'sessions', 'service_keys'];
  tenant text[] := ARRAY['organization_counters', 'customers', 'jobs', 'emails', 'invoices', 'invoice_line_items',
    'estimates', 'estimate_line_items', 'proposals', 'idempotency_keys', 'record_counts', 'events',
    'webhook_endpoints', 'webhook_deliveries', 'webhook_attempts', 'imports', 'request_logs'];
  t text;
  fk record;
  enum_type text;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
    RETURN;
  END IF;
  -- The triggers only touch rows of the same organization, so on the shard's own node.
  PERFORM set_config('citus.enable_unsafe_triggers', 'on', true);
  -- A tenant's transactions run on several connections in a row (coordinator, then the
  -- tenant's node): SET LOCAL values (crm.request_id, which events carry) go along.
  EXECUTE format('ALTER DATABASE %I SET citus.propagate_set_commands = local', current_database());
  EXECUTE format('ALTER DATABASE %I SET citus.enable_unsafe_triggers = on', current_database());
  CREATE TEMPORARY TABLE citus_foreign_keys ON COMMIT DROP AS
    SELECT conrelid::regclass::text AS tbl, conname, pg_get_constraintdef(oid) AS def
    FROM pg_constraint WHERE contype = 'f' AND connamespace = 'public'::regnamespace;
  FOR fk IN SELECT * FROM citus_foreign_keys LOOP
    EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', fk.tbl, fk.conname);
  END LOOP;
  -- Prisma reads enumeration columns as `status::text`, also in INSERT ... RETURNING, where
  -- Citus takes only IMMUTABLE functions; an enumeration's own output is STABLE (a label may
  -- be renamed: ours never are). An explicit cast through an immutable function instead.
  -- (An enumeration added later needs the same.)
  FOR enum_type IN SELECT typname FROM pg_type WHERE typtype = 'e' AND typnamespace = 'public'::regnamespace LOOP
    EXECUTE format('CREATE FUNCTION %I(%I) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS %L',
      enum_type || '_text', enum_type, 'SELECT textin(enum_out($1))');
    EXECUTE format('CREATE CAST (%I AS text) WITH FUNCTION %I(%I)', enum_type, enum_type || '_text', enum_type);
  END LOOP;
  FOREACH t IN ARRAY shared LOOP
    PERFORM create_reference_table(t);
  END LOOP;
  FOREACH t IN ARRAY tenant LOOP
    PERFORM create_distributed_table(t, 'organization_id', colocate_with => CASE WHEN t = 'organization_counters' THEN 'default' ELSE 'organization_counters' END);
  END LOOP;
  FOR fk IN SELECT * FROM citus_foreign_keys LOOP
    EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I %s', fk.tbl, fk.conname, fk.def);
  END LOOP;
END $$;

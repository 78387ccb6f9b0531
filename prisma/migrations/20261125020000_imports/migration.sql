-- CreateTable
CREATE TABLE "imports" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "resource" TEXT NOT NULL,
    "mode" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "csv" TEXT NOT NULL,
    "total" INTEGER NOT NULL,
    "next_row" INTEGER NOT NULL DEFAULT 1,
    "next_offset" INTEGER NOT NULL DEFAULT 0,
    "created" INTEGER NOT NULL DEFAULT 0,
    "updated" INTEGER NOT NULL DEFAULT 0,
    "failed" INTEGER NOT NULL DEFAULT 0,
    "errors" JSONB NOT NULL DEFAULT '[]',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "lease_until" TIMESTAMPTZ(3),
    "request_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),

    CONSTRAINT "imports_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateIndex
CREATE INDEX "imports_status_lease_until_idx" ON "imports"("status", "lease_until");

-- The event an import ends with (written by hand: Prisma cannot express triggers):
-- import.completed, or import.failed when it was given up. It is written the way
-- record_event writes a record's, in the transaction that ends the import (its last chunk's):
-- the organization's next change number (taking the organization's row, so events commit in
-- the order of their numbers), a delivery for every enabled endpoint that wants it, and
-- NOTIFY on commit. Its object is the import as GET /v1/imports/{id} shows it.
CREATE FUNCTION record_import_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  event_id text := 'evt_' || replace(gen_random_uuid()::text, '-', '');
  event_type text := 'import.' || NEW.status;
  event_seq bigint;
BEGIN
  UPDATE organizations SET change_seq = change_seq + 1 WHERE id = NEW.organization_id
  RETURNING change_seq INTO event_seq;
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

CREATE TRIGGER imports_event AFTER UPDATE OF status ON imports FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status AND NEW.status IN ('completed', 'failed'))
  EXECUTE FUNCTION record_import_event();

-- CreateTable
CREATE TABLE "events" (
    "organization_id" UUID NOT NULL,
    "id" TEXT NOT NULL,
    "seq" BIGINT NOT NULL,
    "type" TEXT NOT NULL,
    "resource" TEXT NOT NULL,
    "record_id" UUID NOT NULL,
    "object" JSONB NOT NULL,
    "previous" JSONB,
    "request_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "events_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateTable
CREATE TABLE "webhook_endpoints" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "url" TEXT NOT NULL,
    "description" TEXT,
    "event_types" TEXT[],
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "disabled_reason" TEXT,
    "secret" TEXT NOT NULL,
    "previous_secret" TEXT,
    "previous_secret_expires_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "webhook_endpoints_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateTable
CREATE TABLE "webhook_deliveries" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "endpoint_id" UUID NOT NULL,
    "event_id" TEXT NOT NULL,
    "event_seq" BIGINT NOT NULL,
    "record_id" UUID NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lease_until" TIMESTAMPTZ(3),
    "last_status_code" INTEGER,
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateTable
CREATE TABLE "webhook_attempts" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "endpoint_id" UUID NOT NULL,
    "delivery_id" UUID NOT NULL,
    "event_id" TEXT NOT NULL,
    "status_code" INTEGER,
    "duration_ms" INTEGER NOT NULL,
    "error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_attempts_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateTable
CREATE TABLE "service_keys" (
    "name" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "service_keys_pkey" PRIMARY KEY ("name")
);

-- CreateIndex
CREATE INDEX "events_organization_id_type_seq_idx" ON "events"("organization_id", "type", "seq");

-- CreateIndex
CREATE INDEX "events_created_at_idx" ON "events"("created_at");

-- CreateIndex
CREATE UNIQUE INDEX "events_organization_id_seq_key" ON "events"("organization_id", "seq");

-- CreateIndex
CREATE INDEX "webhook_endpoints_organization_id_created_at_id_idx" ON "webhook_endpoints"("organization_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "webhook_deliveries_status_next_attempt_at_idx" ON "webhook_deliveries"("status", "next_attempt_at");

-- CreateIndex
CREATE INDEX "webhook_deliveries_organization_id_endpoint_id_record_id_ev_idx" ON "webhook_deliveries"("organization_id", "endpoint_id", "record_id", "event_seq");

-- CreateIndex
CREATE INDEX "webhook_deliveries_organization_id_event_id_idx" ON "webhook_deliveries"("organization_id", "event_id");

-- CreateIndex
CREATE INDEX "webhook_attempts_organization_id_endpoint_id_created_at_idx" ON "webhook_attempts"("organization_id", "endpoint_id", "created_at" DESC);

-- AddForeignKey
ALTER TABLE "events" ADD CONSTRAINT "events_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_organization_id_endpoint_id_fkey" FOREIGN KEY ("organization_id", "endpoint_id") REFERENCES "webhook_endpoints"("organization_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_organization_id_event_id_fkey" FOREIGN KEY ("organization_id", "event_id") REFERENCES "events"("organization_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_organization_id_endpoint_id_fkey" FOREIGN KEY ("organization_id", "endpoint_id") REFERENCES "webhook_endpoints"("organization_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The event log (Prisma cannot express triggers; written by hand). A deferred constraint
-- trigger runs when the change's transaction commits, inside it: the event exists if and
-- only if the change committed, and an invoice's or estimate's lines (written after the
-- record itself) are all there. The same statement queues a delivery for every enabled
-- webhook endpoint that wants the event, and NOTIFY (sent on commit) tells every instance:
-- subscribers and delivery workers hear of it at once.
CREATE FUNCTION record_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  resource text := TG_ARGV[0];
  line_table text := TG_ARGV[1];
  kind text;
  object jsonb := to_jsonb(NEW) - 'organization_id' - 'change_seq';
  previous jsonb;
  lines jsonb;
  event_id text := 'evt_' || replace(gen_random_uuid()::text, '-', '');
  event_type text;
BEGIN
  IF TG_OP = 'INSERT' THEN
    kind := 'created';
  ELSIF OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL THEN
    kind := 'deleted';
  ELSIF OLD.deleted_at IS NOT NULL AND NEW.deleted_at IS NULL THEN
    kind := 'restored';
  ELSIF (to_jsonb(OLD) ->> 'status') IS DISTINCT FROM (to_jsonb(NEW) ->> 'status') THEN
    -- A transition is named for what happened: job.started, invoice.paid, estimate.accepted.
    kind := CASE to_jsonb(NEW) ->> 'status' WHEN 'in_progress' THEN 'started' ELSE to_jsonb(NEW) ->> 'status' END;
  ELSE
    kind := 'updated';
  END IF;
  event_type := resource || '.' || kind;
  IF TG_OP = 'UPDATE' THEN
    SELECT jsonb_object_agg(o.key, o.value) INTO previous
    FROM jsonb_each(to_jsonb(OLD)) o
    WHERE o.key NOT IN ('version', 'updated_at', 'change_seq') AND o.value IS DISTINCT FROM to_jsonb(NEW) -> o.key;
  END IF;
  IF line_table <> '' THEN
    EXECUTE format(
      'SELECT coalesce(jsonb_agg(to_jsonb(l) - %L - %L - %L ORDER BY l.position), ''[]'') FROM %I l WHERE l.organization_id = $1 AND l.%I = $2',
      'organization_id', resource || '_id', 'position', line_table, resource || '_id'
    ) INTO lines USING NEW.organization_id, NEW.id;
    object := object || jsonb_build_object('line_items', lines);
  END IF;
  INSERT INTO events (organization_id, id, seq, type, resource, record_id, object, previous, request_id)
  VALUES (NEW.organization_id, event_id, NEW.change_seq, event_type, resource, NEW.id, object, previous,
          nullif(current_setting('crm.request_id', true), ''));
  INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, event_id, event_seq, record_id)
  SELECT gen_random_uuid(), NEW.organization_id, e.id, event_id, NEW.change_seq, NEW.id
  FROM webhook_endpoints e
  WHERE e.organization_id = NEW.organization_id AND e.enabled
    AND (cardinality(e.event_types) = 0 OR event_type = ANY (e.event_types));
  PERFORM pg_notify('crm_events', NEW.organization_id::text || ' ' || event_id);
  RETURN NULL;
END $$;

CREATE CONSTRAINT TRIGGER customers_event AFTER INSERT OR UPDATE ON customers DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION record_event('customer', '');
CREATE CONSTRAINT TRIGGER jobs_event AFTER INSERT OR UPDATE ON jobs DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION record_event('job', '');
CREATE CONSTRAINT TRIGGER emails_event AFTER INSERT OR UPDATE ON emails DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION record_event('email', '');
CREATE CONSTRAINT TRIGGER invoices_event AFTER INSERT OR UPDATE ON invoices DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION record_event('invoice', 'invoice_line_items');
CREATE CONSTRAINT TRIGGER estimates_event AFTER INSERT OR UPDATE ON estimates DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION record_event('estimate', 'estimate_line_items');
CREATE CONSTRAINT TRIGGER proposals_event AFTER INSERT OR UPDATE ON proposals DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION record_event('proposal', '');

-- A write NOTIFYs only when it queued a webhook delivery (issue #31, written by hand).
--
-- PostgreSQL serializes the commits of every transaction that sent a NOTIFY, in every
-- database of the server: the sender takes one server-wide lock before its commit and holds
-- it through the commit's WAL flush. With a NOTIFY in every write, the writers of different
-- organizations queued on that lock: 8 organizations, 32 connections, this 2-core machine,
-- 833-1123 inserts/s with it and 1311-1553/s without (`npm run bench -- raw`).
--
-- Who needs to hear of a commit: the webhook delivery loops, of a delivery to send (the
-- NOTIFY stays for exactly those writes), and the open subscriptions, which now read their
-- organization's events by seq (src/events/streams.ts: after a NOTIFY of the organization,
-- and on a short timer while any is open). seq is handed out in commit order, so a reader
-- that passes seq N has seen every event before it.
--
-- The payload is the organization's id, once per statement (PostgreSQL folds repeated
-- payloads of a transaction into one).

-- Queues a delivery of an event to every enabled endpoint of its organization that wants it,
-- and NOTIFYs the delivery loops when there is one.
CREATE FUNCTION queue_event_deliveries(org uuid, event text, seq bigint, kind text, record_key uuid) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  queued bigint;
BEGIN
  INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, event_id, event_seq, record_id)
  SELECT gen_random_uuid(), org, e.id, event, seq, record_key
  FROM webhook_endpoints e
  WHERE e.organization_id = org AND e.enabled
    AND (cardinality(e.event_types) = 0 OR kind = ANY (e.event_types));
  GET DIAGNOSTICS queued = ROW_COUNT;
  IF queued > 0 THEN
    PERFORM pg_notify('crm_events', org::text);
  END IF;
END $$;

CREATE OR REPLACE FUNCTION record_event() RETURNS trigger LANGUAGE plpgsql AS $$
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
  PERFORM queue_event_deliveries(NEW.organization_id, event_id, NEW.change_seq, event_type, NEW.id);
  RETURN NULL;
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
  PERFORM queue_event_deliveries(NEW.organization_id, event_id, event_seq, event_type, NEW.id);
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION write_record_events(item text, changes record_change[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  request text := nullif(current_setting('crm.request_id', true), '');
  queued_for uuid[];
BEGIN
  WITH written AS (
    INSERT INTO events (organization_id, id, seq, type, resource, record_id, object, previous, request_id)
    SELECT c.organization_id, new_event_id(), c.seq, item || '.' || c.kind, item, c.record_id, c.object, c.previous, request
    FROM unnest(changes) WITH ORDINALITY AS c
    ORDER BY c.ordinality
    RETURNING organization_id, id, seq, type, record_id
  ), delivered AS (
    INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, event_id, event_seq, record_id)
    SELECT gen_random_uuid(), w.organization_id, e.id, w.id, w.seq, w.record_id
    FROM written w JOIN webhook_endpoints e ON e.organization_id = w.organization_id
    WHERE e.enabled AND (cardinality(e.event_types) = 0 OR w.type = ANY (e.event_types))
    RETURNING organization_id
  )
  SELECT array_agg(DISTINCT organization_id) INTO queued_for FROM delivered;
  PERFORM pg_notify('crm_events', o::text) FROM unnest(queued_for) AS o;
END $$;

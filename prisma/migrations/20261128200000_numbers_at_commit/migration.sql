-- Change numbers taken as the transaction commits, not at its first write (issue #31, written
-- by hand: Prisma cannot express triggers).
--
-- A change number (a record's change_seq, its event's seq) comes from the organization's
-- counters row, and the row stays locked until the transaction ends: that is what puts the
-- numbers in commit order with no gaps. Taken by the first write, the lock was held for the
-- rest of the transaction, and the service's writes are BEGIN, INSERT, COMMIT from Node: the
-- row stayed locked while the INSERT's answer waited its turn in a busy event loop. Under 32
-- concurrent creates into one organization, 8 of 10 database sessions waited on that lock
-- while its holder sat idle in its transaction (pg_stat_activity, sampled every 250 ms).
--
-- Now a write takes a provisional number: the negative of a value from a global sequence, no
-- lock, increasing in the order of writes. Its event is written with it. When the transaction
-- commits, a deferred trigger per changed row, fired in the order of the writes, numbers the
-- change (the record and its event, and writes the event's webhook deliveries) and counts its
-- totals: the counters row and the totals' row are locked from there to the end of the
-- commit, inside the database. The numbers are still dense and in commit order, and readers
-- never see a provisional one: it exists only inside the transaction that wrote it.
--
-- Measured with bench/raw-inserts.ts (one organization, the bench's own connections): with
-- 2 ms between the INSERT and its COMMIT, 8 writers made 280 creates/s numbered at the write
-- and 966 numbered at commit, 32 writers 240 and 777. Without the pause the extra UPDATEs
-- cost 5-15% (1,125 against 1,010 creates/s on 8 connections).
--
-- On PostgreSQL and PGlite. On Citus, which refuses statement triggers and runs the triggers
-- on the tenant's node, the numbers are taken as before, at the write. Invoice and estimate
-- numbers still come from the counters row as they are created: such a create holds it from
-- its document number to its commit.

-- Provisional change numbers: only their order within a transaction matters.
CREATE SEQUENCE pending_change_order;

-- A write in progress in an organization, until its transaction ends: a shared lock, so
-- writers never wait for each other. await_open_writes waits for every one of them to end;
-- the idempotency check (http/idempotency-outcome.ts) needs that before it looks at what a
-- request whose answer was lost committed. The counters row, which it waited for before,
-- is now locked only as the transaction commits.
CREATE FUNCTION await_open_writes(org uuid) RETURNS void LANGUAGE sql AS $$
  SELECT pg_advisory_xact_lock(72707370, hashtext(org::text))
$$;

-- BEFORE INSERT OR UPDATE, per row: the version, a provisional change number and the mark of
-- a write in progress. The numbering at commit (a negative number made positive) leaves the
-- row as it is.
CREATE FUNCTION stamp_pending_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD.change_seq < 0 AND NEW.change_seq > 0 THEN
    RETURN NEW;
  END IF;
  PERFORM pg_advisory_xact_lock_shared(72707370, hashtext(NEW.organization_id::text));
  NEW.change_seq := -nextval('pending_change_order');
  NEW.version := CASE WHEN TG_OP = 'UPDATE' THEN OLD.version + 1 ELSE 1 END;
  RETURN NEW;
END $$;

-- As before (statement_triggers), the changes in the order they were made.
CREATE OR REPLACE FUNCTION record_changes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM write_record_events(TG_ARGV[0], ARRAY(
      SELECT ROW(n.organization_id, n.id, n.change_seq, 'created', to_jsonb(n) - 'organization_id' - 'change_seq', NULL)::record_change
      FROM new_rows n ORDER BY abs(n.change_seq)));
  ELSE
    PERFORM write_record_events(TG_ARGV[0], ARRAY(
      SELECT ROW(
        n.organization_id, n.id, n.change_seq,
        CASE
          WHEN o.deleted_at IS NULL AND n.deleted_at IS NOT NULL THEN 'deleted'
          WHEN o.deleted_at IS NOT NULL AND n.deleted_at IS NULL THEN 'restored'
          -- A transition is named for what happened: job.started, invoice.paid, estimate.accepted.
          WHEN (j.was ->> 'status') IS DISTINCT FROM (j.now ->> 'status') THEN
            CASE j.now ->> 'status' WHEN 'in_progress' THEN 'started' ELSE j.now ->> 'status' END
          ELSE 'updated'
        END,
        j.now - 'organization_id' - 'change_seq',
        (SELECT jsonb_object_agg(f.key, f.value) FROM jsonb_each(j.was) f
         WHERE f.key NOT IN ('version', 'updated_at', 'change_seq') AND f.value IS DISTINCT FROM j.now -> f.key)
      )::record_change
      FROM old_rows o
      JOIN new_rows n ON n.organization_id = o.organization_id AND n.id = o.id
      CROSS JOIN LATERAL (SELECT to_jsonb(o) AS was, to_jsonb(n) AS now) j
      ORDER BY abs(n.change_seq)));
  END IF;
  RETURN NULL;
END $$;

-- The numbering at commit: a deferred trigger per row written, fired in the order of the
-- writes. Each takes the next number for the change's event (found by its provisional
-- number), its webhook deliveries and the record, unless a later change of the same record in
-- the transaction took its place. Only statements on one row by its key, which PostgreSQL
-- plans once per session: one statement numbering the whole transaction was planned anew at
-- each commit (1.3 ms, against 0.2 for the rest of a create's triggers). The UPDATEs it makes
-- are not changes: the triggers they fire let them pass.
CREATE FUNCTION number_event(org uuid, provisional bigint) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  taken bigint := next_change_seq(org);
  event text;
  event_type text;
  record uuid;
BEGIN
  -- Its time, too: events in the order of their numbers are in the order of their times
  -- (migration event_time), whichever way a transaction's changes were written.
  UPDATE events SET seq = taken, created_at = greatest(created_at, clock_timestamp())
  WHERE organization_id = org AND seq = provisional
  RETURNING id, type, record_id INTO event, event_type, record;
  -- Its webhook deliveries are written now, with the number: written with the provisional
  -- one and numbered here, each delivery left a dead row version in the index the delivery
  -- workers scan for pending ones (webhook deliveries of 2,000 creates drained at 65/s
  -- against 155 before).
  IF FOUND THEN
    INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, event_id, event_seq, record_id)
    SELECT gen_random_uuid(), org, e.id, event, taken, record
    FROM webhook_endpoints e
    WHERE e.organization_id = org AND e.enabled AND (cardinality(e.event_types) = 0 OR event_type = ANY (e.event_types));
  END IF;
  RETURN taken;
END $$;

-- Events of a statement and their NOTIFYs, in the order of the changes (ordered by the
-- absolute change number: a provisional one is negative). Their deliveries are written as
-- they are numbered, at commit (number_event).
CREATE OR REPLACE FUNCTION write_record_events(item text, changes record_change[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  request text := nullif(current_setting('crm.request_id', true), '');
  announced bigint;
BEGIN
  WITH written AS (
    INSERT INTO events (organization_id, id, seq, type, resource, record_id, object, previous, request_id)
    SELECT c.organization_id, new_event_id(), c.seq, item || '.' || c.kind, item, c.record_id, c.object, c.previous, request
    FROM unnest(changes) WITH ORDINALITY AS c
    ORDER BY c.ordinality
    RETURNING organization_id, id, seq
  )
  SELECT count(pg_notify('crm_events', w.organization_id::text || ' ' || w.id)) INTO announced
  FROM (SELECT * FROM written ORDER BY abs(seq)) w;
END $$;

-- As before (events_webhooks), except that an event with a provisional number gets its
-- deliveries when it is numbered (number_event).
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
  IF NEW.change_seq > 0 THEN
    INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, event_id, event_seq, record_id)
    SELECT gen_random_uuid(), NEW.organization_id, e.id, event_id, NEW.change_seq, NEW.id
    FROM webhook_endpoints e
    WHERE e.organization_id = NEW.organization_id AND e.enabled
      AND (cardinality(e.event_types) = 0 OR event_type = ANY (e.event_types));
  END IF;
  PERFORM pg_notify('crm_events', NEW.organization_id::text || ' ' || event_id);
  RETURN NULL;
END $$;

-- As before (resource_triggers, statement_triggers), with the numbering at commit where the
-- statement triggers run: <tbl>_change stamps a provisional number, the statement triggers
-- pass the numbering's own UPDATEs by, and the deferred <tbl>_numbering numbers the changes.
CREATE OR REPLACE FUNCTION install_resource_triggers(tbl text, item text, split text DEFAULT '', children text DEFAULT '')
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  citus boolean := EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus');
  at_commit boolean := NOT citus;
  not_numbering text := $w$WHEN (current_setting('crm.numbering', true) IS DISTINCT FROM 'on')$w$;
  enum_type text;
  old_trigger text;
BEGIN
  IF citus THEN
    -- The triggers only touch rows of the same organization, so on the shard's own node.
    PERFORM set_config('citus.enable_unsafe_triggers', 'on', true);
    IF NOT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = tbl::regclass) THEN
      -- Shards made over one connection per node: the foreign key to organizations (a
      -- reference table) that follows in the same transaction needs that.
      PERFORM set_config('citus.multi_shard_modify_mode', 'sequential', true);
      PERFORM create_distributed_table(tbl, 'organization_id', colocate_with => 'organization_counters');
    END IF;
    FOR enum_type IN
      SELECT DISTINCT t.typname FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
      WHERE a.attrelid = tbl::regclass AND a.attnum > 0 AND NOT a.attisdropped AND t.typtype = 'e'
        AND NOT EXISTS (SELECT 1 FROM pg_cast c WHERE c.castsource = t.oid AND c.casttarget = 'text'::regtype)
    LOOP
      EXECUTE format('CREATE FUNCTION %I(%I) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS %L',
        enum_type || '_text', enum_type, 'SELECT textin(enum_out($1))');
      EXECUTE format('CREATE CAST (%I AS text) WITH FUNCTION %I(%I)', enum_type, enum_type || '_text', enum_type);
    END LOOP;
  END IF;
  FOREACH old_trigger IN ARRAY ARRAY['_change', '_count', '_count_update', '_count_delete', '_event', '_event_update', '_numbering'] LOOP
    EXECUTE format('DROP TRIGGER IF EXISTS %I ON %I', tbl || old_trigger, tbl);
  END LOOP;
  EXECUTE format('CREATE TRIGGER %I BEFORE INSERT OR UPDATE ON %I FOR EACH ROW EXECUTE FUNCTION %I()',
    tbl || '_change', tbl, CASE WHEN at_commit THEN 'stamp_pending_change' ELSE 'stamp_change' END);
  IF citus THEN
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR DELETE OR UPDATE OF %s ON %I FOR EACH ROW EXECUTE FUNCTION count_records(%L)',
      tbl || '_count', CASE WHEN split = '' THEN 'deleted_at' ELSE format('%I, deleted_at', split) END, tbl, split);
  ELSE
    -- Inserts and updates are counted at commit, by <tbl>_numbering.
    EXECUTE format('CREATE TRIGGER %I AFTER DELETE ON %I REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION count_changes(%L)',
      tbl || '_count_delete', tbl, split);
  END IF;
  IF citus OR children <> '' THEN
    -- At commit, before <tbl>_numbering (triggers on one row fire in the order of their
    -- names) numbers the event it writes; not for the numbering's own UPDATE.
    EXECUTE format('CREATE CONSTRAINT TRIGGER %I AFTER INSERT OR UPDATE ON %I DEFERRABLE INITIALLY DEFERRED FOR EACH ROW %s EXECUTE FUNCTION record_event(%L, %L)',
      tbl || '_event', tbl, CASE WHEN at_commit THEN 'WHEN (NEW.change_seq < 0)' ELSE '' END, item, children);
  ELSE
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT ON %I REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION record_changes(%L)',
      tbl || '_event', tbl, item);
    EXECUTE format('CREATE TRIGGER %I AFTER UPDATE ON %I REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT %s EXECUTE FUNCTION record_changes(%L)',
      tbl || '_event_update', tbl, not_numbering, item);
  END IF;
  IF at_commit THEN
    -- The record's change number, then its totals: the totals' row is locked until the
    -- commit as well (an INSERT's count, taken as the statement ended, kept writers queued
    -- just as the number did), and always after the counters row, as every writer does, so
    -- two transactions never wait for each other. TG_ARGV[0]: the split column, '' for
    -- none. The table's name is written in: a statement naming it through EXECUTE is planned
    -- each time it runs.
    EXECUTE format($f$
      CREATE OR REPLACE FUNCTION %1$I() RETURNS trigger LANGUAGE plpgsql AS $body$
      DECLARE
        split text := TG_ARGV[0];
        was_counted boolean := TG_OP = 'UPDATE' AND OLD.deleted_at IS NULL;
        counted boolean := NEW.deleted_at IS NULL;
        was text := CASE WHEN TG_OP = 'INSERT' THEN NULL WHEN split = '' THEN '' ELSE to_jsonb(OLD) ->> split END;
        now text := CASE WHEN split = '' THEN '' ELSE to_jsonb(NEW) ->> split END;
      BEGIN
        PERFORM set_config('crm.numbering', 'on', true);
        UPDATE %2$I SET change_seq = number_event(NEW.organization_id, NEW.change_seq)
        WHERE organization_id = NEW.organization_id AND id = NEW.id AND change_seq = NEW.change_seq;
        IF NOT FOUND THEN
          -- A later change of the record in this transaction has its number to take.
          PERFORM number_event(NEW.organization_id, NEW.change_seq);
        END IF;
        PERFORM set_config('crm.numbering', '', true);
        IF was_counted AND counted AND was = now THEN
          RETURN NULL;
        END IF;
        IF was_counted THEN
          UPDATE record_counts SET count = count - 1 WHERE organization_id = NEW.organization_id AND resource = %2$L AND status = was;
        END IF;
        IF counted THEN
          INSERT INTO record_counts (organization_id, resource, status, count) VALUES (NEW.organization_id, %2$L, now, 1)
          ON CONFLICT (organization_id, resource, status) DO UPDATE SET count = record_counts.count + 1;
        END IF;
        RETURN NULL;
      END $body$
    $f$, tbl || '_numbering', tbl);
    EXECUTE format('CREATE CONSTRAINT TRIGGER %I AFTER INSERT OR UPDATE ON %I DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.change_seq < 0) EXECUTE FUNCTION %I(%L)',
      tbl || '_numbering', tbl, tbl || '_numbering', split);
  END IF;
END $$;

SELECT install_resource_triggers('customers', 'customer');
SELECT install_resource_triggers('jobs', 'job', 'status');
SELECT install_resource_triggers('emails', 'email', 'type');
SELECT install_resource_triggers('invoices', 'invoice', 'status', 'invoice_line_items');
SELECT install_resource_triggers('estimates', 'estimate', 'status', 'estimate_line_items');
SELECT install_resource_triggers('proposals', 'proposal', 'status');

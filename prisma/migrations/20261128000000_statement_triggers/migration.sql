-- Totals and events once per statement, not once per row (issue #28, written by hand: Prisma
-- cannot express triggers). A batch or an import chunk writes 100 records in one INSERT; the
-- row triggers then ran 100 upserts of record_counts and 100 event inserts, each with its
-- webhook lookup: most of the INSERT's time inside PostgreSQL. The statement triggers read
-- the statement's rows from its transition tables and write each total once and all the
-- events in one INSERT, in the order of their change numbers. What they write is what the
-- row triggers wrote: the same totals, and one event per changed record with the same
-- type, object, previous values, request id, deliveries and NOTIFY.
--
-- Kept per row:
-- * <tbl>_change: it stamps each row before it is written (version, change number).
-- * The events of a table with lines (invoices, estimates): the event carries the lines,
--   written after the record in the same transaction, so it is still written at commit
--   (a trigger with transition tables cannot be deferred).
-- * Everything on Citus, which refuses statement triggers on distributed tables (each
--   shard would fire its own).
--
-- Events of a statement are visible, like its records, only once its transaction commits:
-- the change numbers, taken on the organization's counters row held until commit, give
-- their order, as before.

-- A record's change as its event announces it (what record_changes builds, per row).
CREATE TYPE record_change AS (organization_id uuid, record_id uuid, seq bigint, kind text, object jsonb, previous jsonb);

-- A new event's id: evt_ and 32 hex digits, the first 12 the clock's milliseconds, the other
-- 20 from a random UUID. (Only the statement triggers' events: the others keep random ids.) New events then go to the end of the events' primary key (organization, id), not
-- anywhere in it: with half a million events, 100 random ids took 5 to 6 ms to insert, 100
-- growing ones 3.7 (EXPLAIN ANALYZE; 2 ms into an empty table).
CREATE FUNCTION new_event_id() RETURNS text LANGUAGE sql VOLATILE AS $$
  SELECT 'evt_' || lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0')
    || substr(replace(gen_random_uuid()::text, '-', ''), 13)
$$;

-- Writes the events of `changes` (in their order), their webhook deliveries and a NOTIFY
-- for each, as record_event does for one record.
CREATE FUNCTION write_record_events(item text, changes record_change[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  request text := nullif(current_setting('crm.request_id', true), '');
  announced bigint;
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
  )
  SELECT count(pg_notify('crm_events', w.organization_id::text || ' ' || w.id)) INTO announced
  FROM (SELECT * FROM written ORDER BY seq) w;
END $$;

-- AFTER INSERT and AFTER UPDATE, FOR EACH STATEMENT, with the statement's rows as new_rows
-- (and old_rows for an update). TG_ARGV[0]: the item name events carry (`customer`).
CREATE FUNCTION record_changes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM write_record_events(TG_ARGV[0], ARRAY(
      SELECT ROW(n.organization_id, n.id, n.change_seq, 'created', to_jsonb(n) - 'organization_id' - 'change_seq', NULL)::record_change
      FROM new_rows n ORDER BY n.change_seq));
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
      ORDER BY n.change_seq));
  END IF;
  RETURN NULL;
END $$;

-- AFTER INSERT, UPDATE and DELETE, FOR EACH STATEMENT: record_counts moved by the statement's
-- rows, each (organization, split value) once. TG_ARGV[0]: the split column, '' for none.
-- A total is lowered only where it exists, as count_records does.
CREATE FUNCTION count_changes() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  split text := TG_ARGV[0];
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO record_counts AS c (organization_id, resource, status, count)
    SELECT n.organization_id, TG_TABLE_NAME, CASE WHEN split = '' THEN '' ELSE to_jsonb(n) ->> split END, count(*)
    FROM new_rows n WHERE n.deleted_at IS NULL
    GROUP BY 1, 3
    ON CONFLICT (organization_id, resource, status) DO UPDATE SET count = c.count + excluded.count;
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE record_counts c SET count = c.count - g.n
    FROM (SELECT o.organization_id, CASE WHEN split = '' THEN '' ELSE to_jsonb(o) ->> split END AS status, count(*) AS n
          FROM old_rows o WHERE o.deleted_at IS NULL GROUP BY 1, 2) g
    WHERE c.organization_id = g.organization_id AND c.resource = TG_TABLE_NAME AND c.status = g.status;
  ELSE
    WITH moved AS (
      SELECT o.organization_id,
        CASE WHEN split = '' THEN '' ELSE to_jsonb(o) ->> split END AS status_before, o.deleted_at IS NULL AS was_live,
        CASE WHEN split = '' THEN '' ELSE to_jsonb(n) ->> split END AS status_after, n.deleted_at IS NULL AS live
      FROM old_rows o JOIN new_rows n ON n.organization_id = o.organization_id AND n.id = o.id
    ), delta AS (
      SELECT organization_id, status, sum(d) AS d FROM (
        SELECT organization_id, status_before AS status, -1 AS d FROM moved WHERE was_live
        UNION ALL
        SELECT organization_id, status_after, 1 FROM moved WHERE live
      ) x GROUP BY 1, 2 HAVING sum(d) <> 0
    ), added AS (
      INSERT INTO record_counts AS c (organization_id, resource, status, count)
      SELECT organization_id, TG_TABLE_NAME, status, d FROM delta WHERE d > 0
      ON CONFLICT (organization_id, resource, status) DO UPDATE SET count = c.count + excluded.count
    )
    UPDATE record_counts c SET count = c.count + d.d
    FROM delta d
    WHERE d.d < 0 AND c.organization_id = d.organization_id AND c.resource = TG_TABLE_NAME AND c.status = d.status;
  END IF;
  RETURN NULL;
END $$;

-- As before (see the resource_triggers migration for the arguments and Citus), now with the
-- statement triggers where they can run. Calling it again on a table replaces the triggers
-- an earlier version installed.
CREATE OR REPLACE FUNCTION install_resource_triggers(tbl text, item text, split text DEFAULT '', children text DEFAULT '')
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  citus boolean := EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus');
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
  FOREACH old_trigger IN ARRAY ARRAY['_change', '_count', '_count_update', '_count_delete', '_event', '_event_update'] LOOP
    EXECUTE format('DROP TRIGGER IF EXISTS %I ON %I', tbl || old_trigger, tbl);
  END LOOP;
  EXECUTE format('CREATE TRIGGER %I BEFORE INSERT OR UPDATE ON %I FOR EACH ROW EXECUTE FUNCTION stamp_change()',
    tbl || '_change', tbl);
  IF citus THEN
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR DELETE OR UPDATE OF %s ON %I FOR EACH ROW EXECUTE FUNCTION count_records(%L)',
      tbl || '_count', CASE WHEN split = '' THEN 'deleted_at' ELSE format('%I, deleted_at', split) END, tbl, split);
  ELSE
    -- A trigger with transition tables takes one event: three of them.
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT ON %I REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_changes(%L)',
      tbl || '_count', tbl, split);
    EXECUTE format('CREATE TRIGGER %I AFTER UPDATE ON %I REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_changes(%L)',
      tbl || '_count_update', tbl, split);
    EXECUTE format('CREATE TRIGGER %I AFTER DELETE ON %I REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION count_changes(%L)',
      tbl || '_count_delete', tbl, split);
  END IF;
  IF citus OR children <> '' THEN
    EXECUTE format('CREATE CONSTRAINT TRIGGER %I AFTER INSERT OR UPDATE ON %I DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION record_event(%L, %L)',
      tbl || '_event', tbl, item, children);
  ELSE
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT ON %I REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION record_changes(%L)',
      tbl || '_event', tbl, item);
    EXECUTE format('CREATE TRIGGER %I AFTER UPDATE ON %I REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION record_changes(%L)',
      tbl || '_event_update', tbl, item);
  END IF;
END $$;

SELECT install_resource_triggers('customers', 'customer');
SELECT install_resource_triggers('jobs', 'job', 'status');
SELECT install_resource_triggers('emails', 'email', 'type');
SELECT install_resource_triggers('invoices', 'invoice', 'status', 'invoice_line_items');
SELECT install_resource_triggers('estimates', 'estimate', 'status', 'estimate_line_items');
SELECT install_resource_triggers('proposals', 'proposal', 'status');

-- A new import is announced (on every instance's LISTEN), so one of them starts it at once
-- rather than at its next look for due imports.
CREATE FUNCTION announce_import() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('crm_imports', NEW.organization_id::text || ' ' || NEW.id::text);
  RETURN NULL;
END $$;
CREATE TRIGGER imports_due AFTER INSERT ON imports FOR EACH ROW EXECUTE FUNCTION announce_import();

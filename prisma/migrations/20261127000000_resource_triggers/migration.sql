-- One call gives a resource's table its three triggers (Prisma cannot express triggers):
--   SELECT install_resource_triggers('notes', 'note');
-- tbl: the table, named as the REST path (its totals are counted under that name).
-- item: the item name its events carry (note.created, note.updated, ...).
-- split: the column the list's totals are split by ('status'), '' for none.
-- children: the table of its lines, sent with its events ('invoice_line_items'), '' for none.
-- The triggers are those the earlier migrations wrote by hand for each table:
-- <tbl>_change stamps the version and the organization's change sequence (change_sync),
-- <tbl>_count keeps record_counts (record_counts), and the deferred <tbl>_event writes the
-- event and its webhook deliveries when the transaction commits (events_webhooks).
--
-- On Citus (a database with the citus extension) a tenant's table must also be distributed
-- by organization_id, co-located with organization_counters, as the organization_counters
-- migration did for the first tables: this does it when the table is not distributed yet.
-- Citus refuses a foreign key from a table not yet distributed to a distributed one
-- (customers), so call this right after the CREATE TABLE, before the migration's foreign
-- keys. An enumeration of its columns also gets the immutable cast to text that migration
-- gave the first ones (Prisma's INSERT ... RETURNING "status"::text is refused on a
-- distributed table without it). On plain PostgreSQL and PGlite that part does nothing.
CREATE FUNCTION install_resource_triggers(tbl text, item text, split text DEFAULT '', children text DEFAULT '')
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  enum_type text;
BEGIN
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
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
  EXECUTE format('CREATE TRIGGER %I BEFORE INSERT OR UPDATE ON %I FOR EACH ROW EXECUTE FUNCTION stamp_change()',
    tbl || '_change', tbl);
  EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR DELETE OR UPDATE OF %s ON %I FOR EACH ROW EXECUTE FUNCTION count_records(%L)',
    tbl || '_count', CASE WHEN split = '' THEN 'deleted_at' ELSE format('%I, deleted_at', split) END, tbl, split);
  EXECUTE format('CREATE CONSTRAINT TRIGGER %I AFTER INSERT OR UPDATE ON %I DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION record_event(%L, %L)',
    tbl || '_event', tbl, item, children);
END $$;

-- On Citus, API keys live on the coordinator alone (a Citus local table), no longer as a
-- reference table copied to every node. A change to a reference table commits on every node
-- in two phases, and PostgreSQL cannot prepare a transaction that sent a NOTIFY: the
-- api_keys_changes trigger, which tells every instance a key changed, made each revoke,
-- scope or expiry change fail there (`keys revoke` answered "cannot PREPARE a transaction
-- that has executed LISTEN, UNLISTEN, or NOTIFY"). On the coordinator alone the change
-- commits in one phase, and the NOTIFY is heard where instances listen. No table refers to
-- api_keys; its key to organizations (a reference table) is what makes Citus keep it as a
-- local table in its metadata. On plain PostgreSQL and PGlite this does nothing.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
    RETURN;
  END IF;
  -- Read only here: pg_dist_partition exists only with the extension.
  IF NOT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = 'api_keys'::regclass AND partmethod = 'n' AND repmodel = 't') THEN
    RETURN;
  END IF;
  ALTER TABLE api_keys DROP CONSTRAINT api_keys_organization_id_fkey;
  -- Keeps the table's rows, indexes and triggers (api_keys_changes with them).
  PERFORM undistribute_table('api_keys');
  ALTER TABLE api_keys ADD CONSTRAINT api_keys_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES organizations(id) ON DELETE RESTRICT ON UPDATE NO ACTION;
END $$;

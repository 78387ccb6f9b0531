-- Instances cache API key lookups; this tells each of them when a key changes in a way
-- that matters to authentication, whoever changed it (account page, CLI, plain SQL).
-- Prisma cannot express triggers; written by hand. The payload is the key's id.
CREATE FUNCTION notify_api_key_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('api_key_changes', OLD.id::text);
  RETURN NULL;
END $$;

CREATE TRIGGER api_keys_changes
AFTER UPDATE OF hash, organization_id, scopes, expires_at, revoked_at OR DELETE ON api_keys
FOR EACH ROW EXECUTE FUNCTION notify_api_key_change();

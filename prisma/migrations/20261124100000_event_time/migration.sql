-- An event is stamped no earlier than the change it announces (written by hand). Its default,
-- now(), is the start of the change's transaction, while the record's created_at and
-- updated_at come from the application's clock during the transaction: the event looked
-- older than its own cause. The event's time is now the later of the clock when it is
-- written (at commit, by record_event) and the record's own timestamps, so ordering events
-- by time agrees with their order of changes and with the records they carry.
CREATE FUNCTION stamp_event_time() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.created_at := greatest(
    clock_timestamp(),
    (NEW.object ->> 'created_at')::timestamptz,
    (NEW.object ->> 'updated_at')::timestamptz
  );
  RETURN NEW;
END $$;

CREATE TRIGGER events_time BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION stamp_event_time();

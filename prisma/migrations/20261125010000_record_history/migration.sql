-- A record's history (GET /v1/{resource}/{id}/events, events?object_id=): its events, newest first.
-- CreateIndex
CREATE INDEX "events_organization_id_record_id_seq_idx" ON "events"("organization_id", "record_id", "seq");

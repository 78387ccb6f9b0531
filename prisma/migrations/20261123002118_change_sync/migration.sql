-- AlterTable
ALTER TABLE "customers" ADD COLUMN     "change_seq" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "deleted_at" TIMESTAMPTZ(3),
ADD COLUMN     "version" INTEGER NOT NULL DEFAULT 1;

-- AlterTable
ALTER TABLE "emails" ADD COLUMN     "change_seq" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "deleted_at" TIMESTAMPTZ(3),
ADD COLUMN     "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
ADD COLUMN     "version" INTEGER NOT NULL DEFAULT 1;

-- AlterTable
ALTER TABLE "estimates" ADD COLUMN     "change_seq" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "deleted_at" TIMESTAMPTZ(3),
ADD COLUMN     "version" INTEGER NOT NULL DEFAULT 1;

-- AlterTable
ALTER TABLE "idempotency_keys" ADD COLUMN     "etag" TEXT;

-- AlterTable
ALTER TABLE "invoices" ADD COLUMN     "change_seq" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "deleted_at" TIMESTAMPTZ(3),
ADD COLUMN     "version" INTEGER NOT NULL DEFAULT 1;

-- AlterTable
ALTER TABLE "jobs" ADD COLUMN     "change_seq" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "deleted_at" TIMESTAMPTZ(3),
ADD COLUMN     "version" INTEGER NOT NULL DEFAULT 1;

-- AlterTable
ALTER TABLE "organizations" ADD COLUMN     "change_seq" BIGINT NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "proposals" ADD COLUMN     "change_seq" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "deleted_at" TIMESTAMPTZ(3),
ADD COLUMN     "version" INTEGER NOT NULL DEFAULT 1;

-- CreateIndex
CREATE INDEX "customers_organization_id_change_seq_idx" ON "customers"("organization_id", "change_seq");

-- CreateIndex
CREATE INDEX "customers_organization_id_updated_at_idx" ON "customers"("organization_id", "updated_at");

-- CreateIndex
CREATE INDEX "emails_organization_id_change_seq_idx" ON "emails"("organization_id", "change_seq");

-- CreateIndex
CREATE INDEX "emails_organization_id_updated_at_idx" ON "emails"("organization_id", "updated_at");

-- CreateIndex
CREATE INDEX "estimates_organization_id_change_seq_idx" ON "estimates"("organization_id", "change_seq");

-- CreateIndex
CREATE INDEX "estimates_organization_id_updated_at_idx" ON "estimates"("organization_id", "updated_at");

-- CreateIndex
CREATE INDEX "invoices_organization_id_change_seq_idx" ON "invoices"("organization_id", "change_seq");

-- CreateIndex
CREATE INDEX "invoices_organization_id_updated_at_idx" ON "invoices"("organization_id", "updated_at");

-- CreateIndex
CREATE INDEX "jobs_organization_id_change_seq_idx" ON "jobs"("organization_id", "change_seq");

-- CreateIndex
CREATE INDEX "jobs_organization_id_updated_at_idx" ON "jobs"("organization_id", "updated_at");

-- CreateIndex
CREATE INDEX "proposals_organization_id_change_seq_idx" ON "proposals"("organization_id", "change_seq");

-- CreateIndex
CREATE INDEX "proposals_organization_id_updated_at_idx" ON "proposals"("organization_id", "updated_at");

-- Versions and the change sequence (Prisma cannot express triggers; written by hand).
-- Every insert and update of a business record takes the next number of its organization's
-- change sequence. Taking it updates the organization row, whose lock is held until the
-- transaction ends, so an organization's changes commit in the order of their numbers: a
-- reader that sees number n can already see every change numbered below n. That is what
-- lets a sync cursor be just a number (docs/API.md, "Incremental sync").
CREATE FUNCTION stamp_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE organizations SET change_seq = change_seq + 1 WHERE id = NEW.organization_id
  RETURNING change_seq INTO NEW.change_seq;
  NEW.version := CASE WHEN TG_OP = 'UPDATE' THEN OLD.version + 1 ELSE 1 END;
  RETURN NEW;
END $$;

-- Records that exist already get numbers in any order: they are all committed.
CREATE SEQUENCE change_seq_backfill;
UPDATE customers SET change_seq = nextval('change_seq_backfill');
UPDATE jobs SET change_seq = nextval('change_seq_backfill');
UPDATE emails SET change_seq = nextval('change_seq_backfill');
UPDATE invoices SET change_seq = nextval('change_seq_backfill');
UPDATE estimates SET change_seq = nextval('change_seq_backfill');
UPDATE proposals SET change_seq = nextval('change_seq_backfill');
UPDATE organizations SET change_seq = (SELECT last_value FROM change_seq_backfill);
DROP SEQUENCE change_seq_backfill;

CREATE TRIGGER customers_change BEFORE INSERT OR UPDATE ON customers FOR EACH ROW EXECUTE FUNCTION stamp_change();
CREATE TRIGGER jobs_change BEFORE INSERT OR UPDATE ON jobs FOR EACH ROW EXECUTE FUNCTION stamp_change();
CREATE TRIGGER emails_change BEFORE INSERT OR UPDATE ON emails FOR EACH ROW EXECUTE FUNCTION stamp_change();
CREATE TRIGGER invoices_change BEFORE INSERT OR UPDATE ON invoices FOR EACH ROW EXECUTE FUNCTION stamp_change();
CREATE TRIGGER estimates_change BEFORE INSERT OR UPDATE ON estimates FOR EACH ROW EXECUTE FUNCTION stamp_change();
CREATE TRIGGER proposals_change BEFORE INSERT OR UPDATE ON proposals FOR EACH ROW EXECUTE FUNCTION stamp_change();

-- Deleted records leave the maintained counts (and come back when restored).
CREATE OR REPLACE FUNCTION count_records() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  split text := TG_ARGV[0];
BEGIN
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.deleted_at IS NULL THEN
    INSERT INTO record_counts (organization_id, resource, status, count)
    VALUES (NEW.organization_id, TG_TABLE_NAME, CASE WHEN split = '' THEN '' ELSE to_jsonb(NEW) ->> split END, 1)
    ON CONFLICT (organization_id, resource, status) DO UPDATE SET count = record_counts.count + 1;
  END IF;
  IF TG_OP IN ('DELETE', 'UPDATE') AND OLD.deleted_at IS NULL THEN
    UPDATE record_counts SET count = count - 1
    WHERE organization_id = OLD.organization_id AND resource = TG_TABLE_NAME
      AND status = CASE WHEN split = '' THEN '' ELSE to_jsonb(OLD) ->> split END;
  END IF;
  RETURN NULL;
END $$;

DROP TRIGGER customers_count ON customers;
DROP TRIGGER jobs_count ON jobs;
DROP TRIGGER emails_count ON emails;
DROP TRIGGER invoices_count ON invoices;
DROP TRIGGER estimates_count ON estimates;
DROP TRIGGER proposals_count ON proposals;
CREATE TRIGGER customers_count AFTER INSERT OR DELETE OR UPDATE OF deleted_at ON customers FOR EACH ROW EXECUTE FUNCTION count_records('');
CREATE TRIGGER jobs_count AFTER INSERT OR DELETE OR UPDATE OF status, deleted_at ON jobs FOR EACH ROW EXECUTE FUNCTION count_records('status');
CREATE TRIGGER emails_count AFTER INSERT OR DELETE OR UPDATE OF type, deleted_at ON emails FOR EACH ROW EXECUTE FUNCTION count_records('type');
CREATE TRIGGER invoices_count AFTER INSERT OR DELETE OR UPDATE OF status, deleted_at ON invoices FOR EACH ROW EXECUTE FUNCTION count_records('status');
CREATE TRIGGER estimates_count AFTER INSERT OR DELETE OR UPDATE OF status, deleted_at ON estimates FOR EACH ROW EXECUTE FUNCTION count_records('status');
CREATE TRIGGER proposals_count AFTER INSERT OR DELETE OR UPDATE OF status, deleted_at ON proposals FOR EACH ROW EXECUTE FUNCTION count_records('status');

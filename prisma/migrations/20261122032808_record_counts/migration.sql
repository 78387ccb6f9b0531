-- CreateTable
CREATE TABLE "record_counts" (
    "organization_id" UUID NOT NULL,
    "resource" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "count" BIGINT NOT NULL,

    CONSTRAINT "record_counts_pkey" PRIMARY KEY ("organization_id","resource","status")
);

-- AddForeignKey
ALTER TABLE "record_counts" ADD CONSTRAINT "record_counts_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- Triggers keep record_counts exact (Prisma cannot express triggers; written by hand).
-- TG_ARGV[0] names the column that splits the count (status, or type for e-mails).
CREATE FUNCTION count_records() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  split text := TG_ARGV[0];
BEGIN
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO record_counts (organization_id, resource, status, count)
    VALUES (NEW.organization_id, TG_TABLE_NAME, CASE WHEN split = '' THEN '' ELSE to_jsonb(NEW) ->> split END, 1)
    ON CONFLICT (organization_id, resource, status) DO UPDATE SET count = record_counts.count + 1;
  END IF;
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    UPDATE record_counts SET count = count - 1
    WHERE organization_id = OLD.organization_id AND resource = TG_TABLE_NAME
      AND status = CASE WHEN split = '' THEN '' ELSE to_jsonb(OLD) ->> split END;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER customers_count AFTER INSERT OR DELETE ON customers FOR EACH ROW EXECUTE FUNCTION count_records('');
CREATE TRIGGER jobs_count AFTER INSERT OR DELETE OR UPDATE OF status ON jobs FOR EACH ROW EXECUTE FUNCTION count_records('status');
CREATE TRIGGER emails_count AFTER INSERT OR DELETE OR UPDATE OF type ON emails FOR EACH ROW EXECUTE FUNCTION count_records('type');
CREATE TRIGGER invoices_count AFTER INSERT OR DELETE OR UPDATE OF status ON invoices FOR EACH ROW EXECUTE FUNCTION count_records('status');
CREATE TRIGGER estimates_count AFTER INSERT OR DELETE OR UPDATE OF status ON estimates FOR EACH ROW EXECUTE FUNCTION count_records('status');
CREATE TRIGGER proposals_count AFTER INSERT OR DELETE OR UPDATE OF status ON proposals FOR EACH ROW EXECUTE FUNCTION count_records('status');

-- Counts of the records that exist already.
INSERT INTO record_counts (organization_id, resource, status, count)
SELECT organization_id, 'customers', '', count(*) FROM customers GROUP BY organization_id
UNION ALL SELECT organization_id, 'jobs', status::text, count(*) FROM jobs GROUP BY organization_id, status
UNION ALL SELECT organization_id, 'emails', type::text, count(*) FROM emails GROUP BY organization_id, type
UNION ALL SELECT organization_id, 'invoices', status::text, count(*) FROM invoices GROUP BY organization_id, status
UNION ALL SELECT organization_id, 'estimates', status::text, count(*) FROM estimates GROUP BY organization_id, status
UNION ALL SELECT organization_id, 'proposals', status::text, count(*) FROM proposals GROUP BY organization_id, status;

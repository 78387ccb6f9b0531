-- Lists that answer what screens ask (CONTRACT section 10, issue #27): every sort key of every
-- list over live records (WHERE deleted_at IS NULL, as every list query reads) and then id,
-- the keyset's tie-breaker, so a page of any sort is an index range, not a sort of the
-- organization's rows; trigram indexes for each list's `search` columns; the overdue-invoices
-- screen and the relation filters' children by status. The external-id keys leave out records
-- without one: a key that held every live row (all with a NULL external_id, deduplicated into a
-- tiny index) was the planner's cheapest way to an organization's rows when its statistics were
-- stale (a freshly loaded organization), and every list then sorted all of them.

-- DropIndex
DROP INDEX "customers_external_id_live_key";

-- DropIndex
DROP INDEX "customers_organization_id_updated_at_idx";

-- DropIndex
DROP INDEX "emails_external_id_live_key";

-- DropIndex
DROP INDEX "emails_organization_id_updated_at_idx";

-- DropIndex
DROP INDEX "estimates_external_id_live_key";

-- DropIndex
DROP INDEX "estimates_organization_id_updated_at_idx";

-- DropIndex
DROP INDEX "invoices_external_id_live_key";

-- DropIndex
DROP INDEX "invoices_organization_id_updated_at_idx";

-- DropIndex
DROP INDEX "jobs_external_id_live_key";

-- DropIndex
DROP INDEX "jobs_organization_id_updated_at_idx";

-- DropIndex
DROP INDEX "proposals_external_id_live_key";

-- DropIndex
DROP INDEX "proposals_organization_id_updated_at_idx";

-- CreateIndex
CREATE INDEX "customers_organization_id_updated_at_id_idx" ON "customers"("organization_id", "updated_at", "id");

-- CreateIndex
CREATE INDEX "customers_name_live_idx" ON "customers"("organization_id", "name", "id") WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE INDEX "customers_email_live_idx" ON "customers"("organization_id", "email", "id") WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE INDEX "customers_phone_live_idx" ON "customers"("organization_id", "phone") WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE UNIQUE INDEX "customers_external_id_live_key" ON "customers"("organization_id", "external_id") WHERE (deleted_at IS NULL AND external_id IS NOT NULL);

-- CreateIndex
CREATE INDEX "emails_organization_id_updated_at_id_idx" ON "emails"("organization_id", "updated_at", "id");

-- CreateIndex
CREATE INDEX "emails_sent_at_live_idx" ON "emails"("organization_id", "sent_at", "id") WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE INDEX "emails_subject_trgm_idx" ON "emails" USING GIN ("subject" gin_trgm_ops);

-- CreateIndex
CREATE INDEX "emails_from_address_trgm_idx" ON "emails" USING GIN ("from_address" gin_trgm_ops);

-- CreateIndex
CREATE INDEX "emails_to_address_trgm_idx" ON "emails" USING GIN ("to_address" gin_trgm_ops);

-- CreateIndex
CREATE UNIQUE INDEX "emails_external_id_live_key" ON "emails"("organization_id", "external_id") WHERE (deleted_at IS NULL AND external_id IS NOT NULL);

-- CreateIndex
CREATE INDEX "estimates_organization_id_updated_at_id_idx" ON "estimates"("organization_id", "updated_at", "id");

-- CreateIndex
CREATE INDEX "estimates_number_live_idx" ON "estimates"("organization_id", "number", "id") WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE INDEX "estimates_status_live_idx" ON "estimates"("organization_id", "status", "id") WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE INDEX "estimates_total_amount_live_idx" ON "estimates"("organization_id", "total_amount", "id") WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE INDEX "estimates_issued_at_live_idx" ON "estimates"("organization_id", "issued_at", "id") WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE INDEX "estimates_valid_until_live_idx" ON "estimates"("organization_id", "valid_until", "id") WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE INDEX "estimates_number_trgm_idx" ON "estimates" USING GIN ("number" gin_trgm_ops);

-- CreateIndex
CREATE UNIQUE INDEX "estimates_external_id_live_key" ON "estimates"("organization_id", "external_id") WHERE (deleted_at IS NULL AND external_id IS NOT NULL);

-- CreateIndex
CREATE INDEX "invoices_organization_id_updated_at_id_idx" ON "invoices"("organization_id", "updated_at", "id");

-- CreateIndex
CREATE INDEX "invoices_number_live_idx" ON "invoices"("organization_id", "number", "id") WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE INDEX "invoices_status_live_idx" ON "invoices"("organization_id", "status", "id") WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE INDEX "invoices_total_amount_live_idx" ON "invoices"("organization_id", "total_amount", "id") WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE INDEX "invoices_issued_at_live_idx" ON "invoices"("organization_id", "issued_at", "id") WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE INDEX "invoices_due_date_live_idx" ON "invoices"("organization_id", "due_date", "id") WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE INDEX "invoices_paid_at_live_idx" ON "invoices"("organization_id", "paid_at", "id") WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE INDEX "invoices_status_due_date_live_idx" ON "invoices"("organization_id", "status", "due_date", "id") WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE INDEX "invoices_status_customer_live_idx" ON "invoices"("organization_id", "status", "customer_id") WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE INDEX "invoices_number_trgm_idx" ON "invoices" USING GIN ("number" gin_trgm_ops);

-- CreateIndex
CREATE UNIQUE INDEX "invoices_external_id_live_key" ON "invoices"("organization_id", "external_id") WHERE (deleted_at IS NULL AND external_id IS NOT NULL);

-- CreateIndex
CREATE INDEX "jobs_organization_id_updated_at_id_idx" ON "jobs"("organization_id", "updated_at", "id");

-- CreateIndex
CREATE INDEX "jobs_title_live_idx" ON "jobs"("organization_id", "title", "id") WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE INDEX "jobs_status_live_idx" ON "jobs"("organization_id", "status", "id") WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE INDEX "jobs_scheduled_at_live_idx" ON "jobs"("organization_id", "scheduled_at", "id") WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE INDEX "jobs_completed_at_live_idx" ON "jobs"("organization_id", "completed_at", "id") WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE INDEX "jobs_status_customer_live_idx" ON "jobs"("organization_id", "status", "customer_id") WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE INDEX "jobs_title_trgm_idx" ON "jobs" USING GIN ("title" gin_trgm_ops);

-- CreateIndex
CREATE INDEX "jobs_description_trgm_idx" ON "jobs" USING GIN ("description" gin_trgm_ops);

-- CreateIndex
CREATE UNIQUE INDEX "jobs_external_id_live_key" ON "jobs"("organization_id", "external_id") WHERE (deleted_at IS NULL AND external_id IS NOT NULL);

-- CreateIndex
CREATE INDEX "proposals_organization_id_updated_at_id_idx" ON "proposals"("organization_id", "updated_at", "id");

-- CreateIndex
CREATE INDEX "proposals_title_live_idx" ON "proposals"("organization_id", "title", "id") WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE INDEX "proposals_status_live_idx" ON "proposals"("organization_id", "status", "id") WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE INDEX "proposals_total_amount_live_idx" ON "proposals"("organization_id", "total_amount", "id") WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE INDEX "proposals_title_trgm_idx" ON "proposals" USING GIN ("title" gin_trgm_ops);

-- CreateIndex
CREATE UNIQUE INDEX "proposals_external_id_live_key" ON "proposals"("organization_id", "external_id") WHERE (deleted_at IS NULL AND external_id IS NOT NULL);

-- Descending sorts of nullable keys put nulls last, which an ascending index read backwards
-- cannot give (nulls first) and Prisma cannot declare: these are SQL only, and
-- scripts/schema-diff.ts leaves exactly them out of the comparison with the schema.

-- CreateIndex
CREATE INDEX "customers_email_desc_live_idx" ON "customers"("organization_id", "email" DESC NULLS LAST, "id" DESC) WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE INDEX "jobs_scheduled_at_desc_live_idx" ON "jobs"("organization_id", "scheduled_at" DESC NULLS LAST, "id" DESC) WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE INDEX "jobs_completed_at_desc_live_idx" ON "jobs"("organization_id", "completed_at" DESC NULLS LAST, "id" DESC) WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE INDEX "invoices_issued_at_desc_live_idx" ON "invoices"("organization_id", "issued_at" DESC NULLS LAST, "id" DESC) WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE INDEX "invoices_due_date_desc_live_idx" ON "invoices"("organization_id", "due_date" DESC NULLS LAST, "id" DESC) WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE INDEX "invoices_paid_at_desc_live_idx" ON "invoices"("organization_id", "paid_at" DESC NULLS LAST, "id" DESC) WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE INDEX "estimates_issued_at_desc_live_idx" ON "estimates"("organization_id", "issued_at" DESC NULLS LAST, "id" DESC) WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE INDEX "estimates_valid_until_desc_live_idx" ON "estimates"("organization_id", "valid_until" DESC NULLS LAST, "id" DESC) WHERE (deleted_at IS NULL);

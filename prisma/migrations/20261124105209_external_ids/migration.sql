-- Integration keys on every resource: an external id unique among the organization's live
-- records (deleted ones keep theirs without blocking a new holder), and string metadata.
-- AlterTable
ALTER TABLE "customers" ADD COLUMN     "external_id" TEXT,
ADD COLUMN     "metadata" JSONB NOT NULL DEFAULT '{}';

-- AlterTable
ALTER TABLE "emails" ADD COLUMN     "external_id" TEXT,
ADD COLUMN     "metadata" JSONB NOT NULL DEFAULT '{}';

-- AlterTable
ALTER TABLE "estimates" ADD COLUMN     "external_id" TEXT,
ADD COLUMN     "metadata" JSONB NOT NULL DEFAULT '{}';

-- AlterTable
ALTER TABLE "invoices" ADD COLUMN     "external_id" TEXT,
ADD COLUMN     "metadata" JSONB NOT NULL DEFAULT '{}';

-- AlterTable
ALTER TABLE "jobs" ADD COLUMN     "external_id" TEXT,
ADD COLUMN     "metadata" JSONB NOT NULL DEFAULT '{}';

-- AlterTable
ALTER TABLE "proposals" ADD COLUMN     "external_id" TEXT,
ADD COLUMN     "metadata" JSONB NOT NULL DEFAULT '{}';

-- CreateIndex
CREATE UNIQUE INDEX "customers_external_id_live_key" ON "customers"("organization_id", "external_id") WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE UNIQUE INDEX "emails_external_id_live_key" ON "emails"("organization_id", "external_id") WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE UNIQUE INDEX "estimates_external_id_live_key" ON "estimates"("organization_id", "external_id") WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE UNIQUE INDEX "invoices_external_id_live_key" ON "invoices"("organization_id", "external_id") WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE UNIQUE INDEX "jobs_external_id_live_key" ON "jobs"("organization_id", "external_id") WHERE (deleted_at IS NULL);

-- CreateIndex
CREATE UNIQUE INDEX "proposals_external_id_live_key" ON "proposals"("organization_id", "external_id") WHERE (deleted_at IS NULL);

-- Test mode: each live organization may have one test twin (mode 'test', live_id naming the
-- live one). svc_test_ keys belong to the twin, so test data is apart from live data by the
-- organization key every table is keyed and scoped by.
ALTER TABLE "organizations" ADD COLUMN "mode" TEXT NOT NULL DEFAULT 'live',
ADD COLUMN "live_id" UUID;

-- CreateIndex
CREATE UNIQUE INDEX "organizations_live_id_key" ON "organizations"("live_id");

-- AddForeignKey
ALTER TABLE "organizations" ADD CONSTRAINT "organizations_live_id_fkey" FOREIGN KEY ("live_id") REFERENCES "organizations"("id") ON DELETE SET NULL ON UPDATE CASCADE;

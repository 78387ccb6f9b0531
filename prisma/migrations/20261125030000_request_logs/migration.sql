-- CreateTable
CREATE TABLE "request_logs" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "request_id" TEXT NOT NULL,
    "method" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "status" INTEGER NOT NULL,
    "duration_ms" INTEGER NOT NULL,
    "error_code" TEXT,
    "key_prefix" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "request_logs_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "request_logs_organization_id_created_at_id_idx" ON "request_logs"("organization_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "request_logs_organization_id_request_id_idx" ON "request_logs"("organization_id", "request_id");

-- CreateIndex
CREATE INDEX "request_logs_created_at_idx" ON "request_logs"("created_at");

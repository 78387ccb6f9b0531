import { defineConfig } from 'prisma/config';

// The service applies migrations itself (src/db/migrator.ts); this file only tells the
// Prisma CLI where the schema and migrations live, for `prisma generate` and, where the
// native engine exists, `prisma migrate status`.
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://localhost:5432/unused' },
});

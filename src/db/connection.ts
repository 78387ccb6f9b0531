// Chooses the database from configuration: PostgreSQL when DATABASE_URL is set, otherwise
// the embedded PGlite in DATA_DIR. Both get the same generated client and migrations.
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { PrismaClient } from '../generated/prisma/client.js';
import { lockDataDir } from './data-dir-lock.js';
import { pgliteSql, poolSql, type Sql } from './sql.js';

export interface Database {
  kind: 'pglite' | 'postgres';
  prisma: PrismaClient;
  sql: Sql;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string;
  dataDir: string;
  /** Pool size per instance, PostgreSQL only. */
  poolSize?: number;
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.databaseUrl ? openPostgres(options.databaseUrl, options.poolSize ?? 10) : openEmbedded(options.dataDir);
}

async function openPostgres(connectionString: string, max: number): Promise<Database> {
  const pool = new pg.Pool({ connectionString, max, connectionTimeoutMillis: 5000 });
  // An idle client losing its connection (database restart) must not crash the process.
  pool.on('error', () => undefined);
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  return {
    kind: 'postgres',
    prisma,
    sql: poolSql(pool),
    async close() {
      await prisma.$disconnect();
      await pool.end();
    },
  };
}

async function openEmbedded(dataDir: string): Promise<Database> {
  const unlock = lockDataDir(dataDir);
  try {
    const db = await PGlite.create(dataDir, { extensions: { pg_trgm } });
    const prisma = new PrismaClient({ adapter: new PrismaPGlite(db) });
    return {
      kind: 'pglite',
      prisma,
      sql: pgliteSql(db),
      async close() {
        await prisma.$disconnect();
        await db.close();
        unlock();
      },
    };
  } catch (error) {
    unlock();
    throw error;
  }
}

// The few raw-SQL needs (migrations, readiness, advisory locks) over either driver.
import type { PGlite } from '@electric-sql/pglite';
import type pg from 'pg';
import { unboundedQuery } from './query-deadline.js';

export interface Sql {
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  /** Runs a script of several statements. */
  exec(text: string): Promise<void>;
  /** Runs `fn` on one connection, holding a session-level advisory lock. */
  withLock<T>(key: number, fn: (sql: Sql) => Promise<T>): Promise<T>;
  /**
   * Runs `fn` on one connection, which `send`s messages of statements, values written in (one
   * round trip each; each statement's rows answered). A transaction left open by a failure
   * is rolled back before the connection goes back. PostgreSQL's pools only.
   */
  session?<T>(fn: (send: Send) => Promise<T>): Promise<T>;
}

/** Sends one message of statements and answers each statement's rows. */
export type Send = (text: string) => Promise<Array<Array<Record<string, unknown>>>>;

export function pgliteSql(db: PGlite): Sql {
  const sql: Sql = {
    async query<T>(text: string, params?: unknown[]) {
      return (await db.query<T>(text, params)).rows;
    },
    async exec(text) {
      await db.exec(text);
    },
    // One process owns the data directory (see data-dir-lock.ts) and PGlite runs one
    // statement at a time, so there is no other session to exclude.
    withLock: (_key, fn) => fn(sql),
  };
  return sql;
}

type Query = (text: string, params?: unknown[]) => Promise<pg.QueryResult>;

function clientSql(query: Query): Omit<Sql, 'withLock'> {
  return {
    async query<T>(text: string, params?: unknown[]) {
      return (await query(text, params)).rows as T[];
    },
    async exec(text) {
      await query(text);
    },
  };
}

/** `onSend`: told of each message a session sends (tests count round trips, as Prisma's query log tells its statements). */
export function poolSql(pool: pg.Pool, onSend?: (text: string) => void): Sql {
  return {
    ...clientSql((text, params) => pool.query(text, params)),
    async withLock(key, fn) {
      const client = await pool.connect();
      // What runs under the lock (migrations) may take its time: no client-side deadline.
      const query = unboundedQuery(client) as Query;
      try {
        await query('SELECT pg_advisory_lock($1)', [key]);
        const locked: Sql = { ...clientSql(query), withLock: () => Promise.reject(new Error('lock already held')) };
        return await fn(locked);
      } finally {
        await query('SELECT pg_advisory_unlock($1)', [key]).catch(() => undefined);
        client.release();
      }
    },
    async session(fn) {
      const client = await pool.connect();
      const send: Send = async (text) => {
        onSend?.(text);
        const results = (await client.query(text)) as pg.QueryResult | pg.QueryResult[];
        return (Array.isArray(results) ? results : [results]).map((result) => result.rows);
      };
      try {
        const result = await fn(send);
        client.release();
        return result;
      } catch (error) {
        // A statement that fails leaves the rest of its message unrun, and its transaction
        // open and aborted: ended here, or the connection goes back to the pool unusable.
        await client.query('ROLLBACK').then(
          () => client.release(),
          (lost: Error) => client.release(lost),
        );
        throw error;
      }
    },
  };
}

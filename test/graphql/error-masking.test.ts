import { GraphQLError } from 'graphql';
import { describe, expect, it } from 'vitest';
import { apiError } from '../../src/errors.js';
import { isDatabaseUnreachable, isTransientConflict, safeError } from '../../src/graphql/error-policy.js';
import { openDatabase } from '../../src/db/connection.js';
import { migratedDatabase } from '../helpers/databases.js';
import { createLogger } from '../../src/logger.js';

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  return { lines, log: createLogger('info', (line) => lines.push(JSON.parse(line))) };
}

describe('error masking', () => {
  it('an unexpected error becomes INTERNAL; its details go only to the log, with the request id', () => {
    const { lines, log } = capture();
    const error = new GraphQLError('wrapped', { originalError: new Error('relation "customers" does not exist at SELECT * FROM customers') });
    const safe = safeError(error, log, 'req-1');
    expect(safe.message).toBe('An internal error occurred.');
    expect(safe.extensions.code).toBe('INTERNAL');
    expect(JSON.stringify(safe.toJSON())).not.toMatch(/SELECT|relation|stack/);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'error', msg: 'internal error', request_id: 'req-1' });
    expect(JSON.stringify(lines[0])).toContain('SELECT * FROM customers');
    expect((lines[0]!.err as { stack: string }).stack).toContain('Error:');
  });

  it('an unreachable database becomes UNAVAILABLE with Retry-After', () => {
    const { log } = capture();
    const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    expect(isDatabaseUnreachable(new Error('driver failed', { cause }))).toBe(true);
    const safe = safeError(new Error('driver failed', { cause }), log, 'req-2');
    expect(safe.extensions.code).toBe('UNAVAILABLE');
    expect(safe.extensions.http).toEqual({ headers: { 'Retry-After': '5' } });
    expect(isDatabaseUnreachable(Object.assign(new Error('x'), { code: 'P1017' }))).toBe(true);
    // A statement past its deadline (a lock wait, under load) says so rather than "unreachable".
    const slow = safeError(Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }), log, 'req-3');
    expect(slow.extensions.code).toBe('UNAVAILABLE');
    expect(slow.message).toBe('The database did not answer in time (it is busy); retry shortly.');
    expect(isDatabaseUnreachable(new Error('unique constraint failed'))).toBe(false);
  });

  it('a transaction PostgreSQL ended to break a deadlock becomes a CONFLICT to retry, not INTERNAL', async () => {
    const test = await migratedDatabase('postgres');
    const db = await openDatabase({ databaseUrl: test.env.DATABASE_URL, dataDir: '' });
    try {
      const [a, b] = await Promise.all(['A', 'B'].map((name) => db.prisma.organization.create({ data: { name } })));
      // Two transactions take the same two rows in opposite orders: PostgreSQL ends one.
      let release!: () => void;
      const bothHoldOne = new Promise<void>((resolve) => (release = resolve));
      let holding = 0;
      const cross = (first: string, second: string) =>
        db.prisma.$transaction(async (tx) => {
          await tx.organization.update({ where: { id: first }, data: { name: `${first}-1` } });
          if (++holding === 2) release();
          await bothHoldOne;
          await tx.organization.update({ where: { id: second }, data: { name: `${second}-2` } });
        }, { timeout: 20_000 });
      const outcomes = await Promise.allSettled([cross(a!.id, b!.id), cross(b!.id, a!.id)]);
      const failed = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
      expect(failed).toHaveLength(1);
      expect(isTransientConflict(failed[0]!.reason)).toBe(true);
      const { log } = capture();
      const safe = safeError(failed[0]!.reason, log, 'req-d');
      expect(safe.extensions.code).toBe('CONFLICT');
      expect(safe.extensions.http).toEqual({ headers: { 'Retry-After': '1' } });
      expect(isTransientConflict(new Error('unique constraint failed'))).toBe(false);
    } finally {
      await db.close();
      await test.drop();
    }
  });

  it('our own coded errors and graphql-js request errors pass, the latter as BAD_REQUEST', () => {
    const { lines, log } = capture();
    const forbidden = apiError('FORBIDDEN', 'no');
    expect(safeError(new GraphQLError('no', { originalError: forbidden, path: ['customers'] }), log).toJSON()).toMatchObject({ message: 'no', path: ['customers'], extensions: { code: 'FORBIDDEN' } });
    const syntax = safeError(new GraphQLError('Syntax Error: Unexpected <EOF>.'), log);
    expect(syntax.extensions.code).toBe('BAD_REQUEST');
    expect(syntax.message).toBe('Syntax Error: Unexpected <EOF>.');
    expect(lines).toEqual([]);
  });
});

// Names for the statements Prisma sends to PostgreSQL, so each connection prepares a statement
// once and then only binds and executes it: unnamed, every statement was parsed, analysed and
// planned anew, the same list query for every request. The name is the text's, so a name
// always means one text on every connection (node-postgres refuses a name reused for another
// text).
import { createHash } from 'node:crypto';
import type { SqlQuery } from '@prisma/driver-adapter-utils';

/**
 * Distinct texts named per open database (the service opens one); past them, statements go
 * unnamed as before. Prisma's statements come from a bounded set of query shapes, but a
 * connection keeps every statement it prepared until it closes, so a shape that varies
 * without bound (a list of values written out) must not grow its memory without bound.
 */
export const MAX_NAMED_STATEMENTS = 1_000;

/** How every name begins (a test's proxy tells the service's prepared statements by it). */
export const STATEMENT_NAME_PREFIX = 'crm_';

/**
 * A statement name generator for `@prisma/adapter-pg`. Statements without parameters are left
 * unnamed: transaction control (BEGIN, COMMIT, savepoints) and SQL with its values written in,
 * which PostgreSQL parses in a moment or which would be prepared once and never used again; a
 * BEGIN also stays a simple query, which the request's name is added to (db/request-naming.ts).
 */
export function statementNames(max = MAX_NAMED_STATEMENTS): (query: SqlQuery) => string | undefined {
  const names = new Map<string, string>();
  return ({ sql, args }) => {
    if (args.length === 0) return undefined;
    let name = names.get(sql);
    if (name === undefined && names.size < max) {
      name = `${STATEMENT_NAME_PREFIX}${createHash('sha1').update(sql).digest('base64url')}`;
      names.set(sql, name);
    }
    return name;
  };
}

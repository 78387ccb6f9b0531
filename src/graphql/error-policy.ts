// What a client may see of an error. Errors we raise carry a code and pass as they are.
// Anything else becomes INTERNAL (or UNAVAILABLE when the database is unreachable): the
// details go to the log under the request id, never to the client.
import { GraphQLError, type DocumentNode, type ExecutionResult, type Source, type SourceLocation } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { Context } from '../context.js';
import { apiError, errorHeaders, isErrorCode, statusOf } from '../errors.js';
import { Response } from '../http/fetch.js';
import type { Logger } from '../logger.js';

// Also the overload cases: no pool connection free in time, a statement cancelled at its
// timeout, a connection closed at the client's own deadline (db/query-deadline.ts) or found
// broken, a transaction that could not start in time.
const UNREACHABLE =
  /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|Connection terminated|connection timeout|Can't reach database|DatabaseNotReachable|ConnectionClosed|SocketTimeout|Server has closed the connection|Timed out fetching a new connection|timeout exceeded when trying to connect|canceling statement due to statement timeout|is not queryable|Unable to start a transaction in the given time/i;
// Prisma's codes for: can't reach, timed out, server closed the connection, pool timeout.
const UNREACHABLE_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024', '57014']);

export function isDatabaseUnreachable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current && depth < 5; depth++) {
    const e = current as { message?: unknown; code?: unknown; kind?: unknown; cause?: unknown; meta?: { driverAdapterError?: unknown } };
    if (UNREACHABLE_CODES.has(String(e.code))) return true;
    if (UNREACHABLE.test(`${String(e.message ?? '')} ${String(e.code ?? '')} ${String(e.kind ?? '')}`)) return true;
    // A raw query's failure (P2010) names the driver's reason (SocketTimeout, ...) in its meta.
    current = e.cause ?? e.meta?.driverAdapterError;
  }
  return false;
}

// A transaction the database ended to break a deadlock, or one that could not be serialized
// (Prisma's P2034, PostgreSQL's 40P01 and 40001): nothing it wrote was kept, and the same
// request may succeed at once, so the client hears a conflict to retry, not a server fault.
const CONFLICT_CODES = new Set(['P2034', '40P01', '40001']);
const CONFLICT = /deadlock detected|could not serialize access/i;

export function isTransientConflict(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current && depth < 5; depth++) {
    const e = current as { message?: unknown; code?: unknown; cause?: unknown };
    if (CONFLICT_CODES.has(String(e.code)) || CONFLICT.test(String(e.message ?? ''))) return true;
    current = e.cause;
  }
  return false;
}

function isCoded(error: unknown): boolean {
  return error instanceof GraphQLError && isErrorCode(error.extensions?.code);
}

/** Replaces an unexpected error by a safe one, logging the original. */
export function safeError(error: unknown, log: Logger, requestId?: string): GraphQLError {
  let original: unknown = error;
  while (original instanceof GraphQLError && !isCoded(original) && original.originalError) {
    original = (original as GraphQLError).originalError;
  }
  if (isCoded(original)) return original as GraphQLError;
  if (original instanceof GraphQLError) {
    // graphql-js's own request errors (syntax, validation, variable coercion) and scalar
    // parse errors: the request is at fault. The outer message names the variable.
    const outer = error as GraphQLError;
    return new GraphQLError(outer.message, { nodes: outer.nodes, path: outer.path, extensions: { code: 'BAD_REQUEST' } });
  }
  if (isDatabaseUnreachable(original)) {
    log.warn('database unavailable', { request_id: requestId, error: (original as Error)?.message });
    // A statement past its deadline is most often a wait for a lock under load, not an outage.
    const slow = /statement timeout|lock timeout|57014|55P03/.test(String((original as Error)?.message ?? '') + String((original as { code?: unknown })?.code ?? ''));
    return apiError('UNAVAILABLE', slow ? 'The database did not answer in time (it is busy); retry shortly.' : 'The database is unreachable; retry shortly.', { headers: { 'Retry-After': '5' } });
  }
  if (isTransientConflict(original)) {
    log.warn('transaction conflict', { request_id: requestId, error: (original as Error)?.message });
    return apiError('CONFLICT', 'The change conflicted with a concurrent one and was not made; retry.', { headers: { 'Retry-After': '1' } });
  }
  const e = original as Error;
  log.error('internal error', { request_id: requestId, err: { name: e?.name, message: e?.message, stack: e?.stack } });
  return apiError('INTERNAL', 'An internal error occurred.');
}

/** Offsets in `source` of line/column locations, for errors that carry locations but no nodes. */
function positionsOf(source: Source, locations: readonly SourceLocation[]): number[] {
  const lineStarts = [0];
  for (let i = 0; i < source.body.length; i++) if (source.body[i] === '\n') lineStarts.push(i + 1);
  return locations.map(({ line, column }) => (lineStarts[line - 1] ?? 0) + column - 1);
}

/**
 * `safe` at the place `from` occurred. Compiled execution's errors carry locations but no
 * AST nodes; the positions in the document's source give the same locations, which survive
 * the serializer (it rebuilds errors from nodes or positions).
 */
function withPath(safe: GraphQLError, from: GraphQLError, document?: DocumentNode): GraphQLError {
  const path = safe.path ?? from.path;
  if (!path || (safe.path && (safe.nodes || safe.positions))) return safe;
  const nodes = safe.nodes ?? from.nodes;
  const locations = safe.locations ?? from.locations;
  const source = nodes ? undefined : document?.loc?.source;
  const positions = source && locations ? positionsOf(source, locations) : undefined;
  return new GraphQLError(safe.message, { nodes, source, positions, path, extensions: safe.extensions });
}

function rootValuesAllNull(data: Record<string, unknown>): boolean {
  for (const key in data) if (data[key] !== null) return false;
  return true;
}

/**
 * The HTTP status of a GraphQL result, by the GraphQL-over-HTTP rule for both media types:
 * a request refused before execution (syntax, validation, variables, bounds, limits) has no
 * `data` and answers its error's status (400, 401, 429...); once execution has started the
 * answer is 200 with the errors beside the data. One exception keeps retries working: when
 * nothing resolved because the database was unreachable, 503.
 */
export function resultStatus(result: ExecutionResult): number {
  const codes = (result.errors ?? []).map((e) => e.extensions?.code);
  if (result.data === undefined || result.data === null) return codes.length > 0 ? Math.max(...codes.map(statusOf)) : 200;
  return codes.includes('UNAVAILABLE') && rootValuesAllNull(result.data) ? 503 : 200;
}

/** A GraphQL error answered outside the executor: its status and headers, no internal fields. */
export function graphqlErrorResponse(error: GraphQLError): Response {
  const { http: _internal, ...extensions } = error.extensions ?? {};
  return Response.json({ errors: [{ message: error.message, extensions }] }, { status: statusOf(extensions.code), headers: errorHeaders(error) });
}

/**
 * The one place GraphQL errors are made safe: execution errors are masked with the request
 * id in hand (onExecuteDone, which REST routes pass through too); every other error of a
 * /graphql request (parse, validation, variables, plugins) when the result is processed.
 * The result's HTTP status is decided here too (see resultStatus).
 */
export function useErrorPolicy(log: Logger): Plugin<Context> {
  return {
    onResultProcess({ result, setResult, serverContext }) {
      if (Array.isArray(result) || isAsyncIterable(result)) return;
      const single = result as ExecutionResult & { stringify?: (result: ExecutionResult) => string };
      if (!single.errors?.length) return;
      const requestId = (serverContext as { requestId?: string }).requestId;
      const errors = single.errors.map((error) => withPath(safeError(error, log, requestId), error as GraphQLError));
      // One key order whichever executor produced the result: errors, data, extensions.
      const safe: ExecutionResult = { errors, ...('data' in single ? { data: single.data } : {}) };
      const http = { ...(single.extensions?.http as object | undefined), status: resultStatus(safe) };
      setResult({ ...safe, extensions: { ...single.extensions, http }, ...(single.stringify ? { stringify: single.stringify } : {}) });
    },
    onExecute({ args }) {
      const requestId = (args.contextValue as Context).requestId;
      return {
        onExecuteDone({ result, setResult }) {
          if (isAsyncIterable(result)) return;
          const single = result as ExecutionResult;
          if (!single.errors?.length) return;
          setResult({ ...single, errors: single.errors.map((error) => withPath(safeError(error, log, requestId), error as GraphQLError, args.document as DocumentNode)) });
        },
      };
    },
  };
}

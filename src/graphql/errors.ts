// What a client may see of an error. Errors we raise carry a code and pass as they are.
// Anything else becomes INTERNAL (or UNAVAILABLE when the database is unreachable): the
// details go to the log under the request id, never to the client.
import { GraphQLError, type ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Context } from '../context.js';
import { apiError, ERROR_STATUS } from '../errors.js';
import type { Logger } from '../logger.js';

const UNREACHABLE =
  /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|Connection terminated|connection timeout|Can't reach database|DatabaseNotReachable|Server has closed the connection|Timed out fetching a new connection/i;
// Prisma's codes for: can't reach, timed out, server closed the connection, pool timeout.
const UNREACHABLE_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024']);

export function isDatabaseUnreachable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current && depth < 5; depth++) {
    const e = current as { message?: unknown; code?: unknown; kind?: unknown; cause?: unknown };
    if (UNREACHABLE_CODES.has(String(e.code))) return true;
    if (UNREACHABLE.test(`${String(e.message ?? '')} ${String(e.code ?? '')} ${String(e.kind ?? '')}`)) return true;
    current = e.cause;
  }
  return false;
}

function isCoded(error: unknown): boolean {
  return error instanceof GraphQLError && typeof error.extensions.code === 'string' && error.extensions.code in ERROR_STATUS;
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
    return new GraphQLError(outer.message, { nodes: outer.nodes, path: outer.path, extensions: { ...outer.extensions, code: 'BAD_REQUEST' } });
  }
  if (isDatabaseUnreachable(original)) {
    log.warn('database unreachable', { request_id: requestId, error: (original as Error)?.message });
    return apiError('UNAVAILABLE', 'The database is unreachable; retry shortly.', { headers: { 'Retry-After': '5' } });
  }
  const e = original as Error;
  log.error('internal error', { request_id: requestId, err: { name: e?.name, message: e?.message, stack: e?.stack } });
  return apiError('INTERNAL', 'An internal error occurred.');
}

function withPath(safe: GraphQLError, from: GraphQLError): GraphQLError {
  return safe.path || !from.path ? safe : new GraphQLError(safe.message, { nodes: from.nodes, path: from.path, extensions: safe.extensions });
}

function withCode(error: GraphQLError): GraphQLError {
  return isCoded(error) ? error : new GraphQLError(error.message, { nodes: error.nodes, path: error.path, extensions: { ...error.extensions, code: 'BAD_REQUEST' } });
}

/**
 * Masks execution errors with the request id in hand, and gives graphql-js's own request
 * errors (syntax, validation, variables) the contract's BAD_REQUEST code.
 */
export function useErrorPolicy(log: Logger): Plugin<Context> {
  return {
    onResultProcess({ result, setResult }) {
      const single = result as ExecutionResult;
      if (Array.isArray(result) || !single.errors?.some((e) => !isCoded(e))) return;
      setResult({ ...single, errors: single.errors.map((e) => withCode(e as GraphQLError)) });
    },
    onExecute({ args }) {
      const requestId = (args.contextValue as Context).requestId;
      return {
        onExecuteDone({ result, setResult }) {
          const single = result as ExecutionResult;
          if (!single.errors?.length) return;
          setResult({ ...single, errors: single.errors.map((error) => withPath(safeError(error, log, requestId), error)) });
        },
      };
    },
  };
}

// The error vocabulary shared by GraphQL (`extensions.code`) and REST (the problem's `code`,
// status and title), in one table: the only place a code becomes an HTTP status, a title or
// a documented meaning. Every error is a GraphQLError made by apiError; GraphQL renders it
// as itself (graphql/error-policy.ts), REST as a problem document (http/problem.ts).
import { GraphQLError } from 'graphql';

export const ERRORS = {
  BAD_REQUEST: { status: 400, title: 'Bad Request', description: 'Invalid parameters or body; `errors` names each offending one.' },
  UNAUTHENTICATED: { status: 401, title: 'Unauthorized', description: 'Missing, malformed, unknown, revoked or expired API key.' },
  FORBIDDEN: { status: 403, title: 'Forbidden', description: 'The API key lacks the scope this needs.' },
  NOT_FOUND: { status: 404, title: 'Not Found', description: 'No such record in this organization.' },
  METHOD_NOT_ALLOWED: { status: 405, title: 'Method Not Allowed', description: 'The path does not take this method; `Allow` lists those it takes.' },
  CONFLICT: { status: 409, title: 'Conflict', description: "Refused because of a record's current state, or a request with this Idempotency-Key still running." },
  PRECONDITION_FAILED: { status: 412, title: 'Precondition Failed', description: 'The record changed since the version the request names.' },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'Content Too Large', description: 'The body is over 1 MiB.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported Media Type', description: 'The body is not JSON.' },
  RATE_LIMITED: { status: 429, title: 'Too Many Requests', description: 'Rate limit exceeded; wait `Retry-After` seconds.' },
  INTERNAL: { status: 500, title: 'Internal Server Error', description: 'Internal error; retry later.' },
  UNAVAILABLE: { status: 503, title: 'Service Unavailable', description: 'Temporarily unavailable; retry after `Retry-After` seconds.' },
} as const satisfies Record<string, { status: number; title: string; description: string }>;

export type ErrorCode = keyof typeof ERRORS;

export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && code in ERRORS;
}

export interface FieldError {
  param: string;
  message: string;
}

export function statusOf(code: unknown): number {
  return isErrorCode(code) ? ERRORS[code].status : 500;
}

/** The code of an error made by apiError (INTERNAL for anything else). */
export function codeOf(error: GraphQLError): ErrorCode {
  const code = error.extensions?.code;
  return isErrorCode(code) ? code : 'INTERNAL';
}

/** An error made by apiError with a code of the caller's (any 4xx), as opposed to a failure of the service's. */
export function isRefusal(error: unknown): error is GraphQLError {
  return error instanceof GraphQLError && codeOf(error) !== 'INTERNAL';
}

export function apiError(
  code: ErrorCode,
  message: string,
  extra: { errors?: FieldError[]; headers?: Record<string, string>; details?: Record<string, unknown> } = {},
): GraphQLError {
  return new GraphQLError(message, {
    extensions: {
      code,
      // Public facts a client acts on (a record's current version, ...).
      ...extra.details,
      ...(extra.errors ? { errors: extra.errors } : {}),
      // Headers that go with the error (WWW-Authenticate, Retry-After). Internal: renderers
      // send them as headers and never show them in a body. The status follows from the code.
      ...(extra.headers ? { http: { headers: extra.headers } } : {}),
    },
  });
}

/** A BAD_REQUEST listing every offending field. */
export function invalidInput(errors: FieldError[]): GraphQLError {
  const summary = errors.map((e) => `${e.param}: ${e.message}`).join('; ');
  return apiError('BAD_REQUEST', `Invalid input. ${summary}`, { errors });
}

/** The response headers an error carries (WWW-Authenticate, Retry-After, rate-limit headers). */
export function errorHeaders(error: GraphQLError): Record<string, string> {
  return (error.extensions?.http as { headers?: Record<string, string> } | undefined)?.headers ?? {};
}

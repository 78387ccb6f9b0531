// The error vocabulary shared by GraphQL (`extensions.code`) and REST (problem `code` and
// HTTP status). The status table is the one place a code becomes an HTTP status.
import { GraphQLError } from 'graphql';

export const ERROR_STATUS = {
  BAD_REQUEST: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface FieldError {
  param: string;
  message: string;
}

export function statusOf(code: unknown): number {
  return typeof code === 'string' && code in ERROR_STATUS ? ERROR_STATUS[code as ErrorCode] : 500;
}

export function apiError(
  code: ErrorCode,
  message: string,
  extra: { errors?: FieldError[]; headers?: Record<string, string> } = {},
): GraphQLError {
  return new GraphQLError(message, {
    extensions: {
      code,
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

// REST's renderer of the error vocabulary (errors.ts): every REST error is an RFC 9457
// problem document, with the code's status and title, the request id, and the fields at
// fault. GraphQL renders the same errors as themselves (graphql/error-policy.ts).
import type { GraphQLError } from 'graphql';
import { codeOf, ERRORS, errorHeaders, type FieldError } from '../errors.js';
import { Response } from './fetch.js';

/** `members`: extension members of the problem (RFC 9457 section 3.2), such as `current`. */
export function problemResponse(error: GraphQLError, requestId: string, members?: Record<string, unknown>, headers?: Record<string, string>): Response {
  const { status, title } = ERRORS[codeOf(error)];
  const errors = error.extensions?.errors as FieldError[] | undefined;
  const body = {
    type: 'about:blank',
    title,
    status,
    detail: error.message,
    code: codeOf(error),
    request_id: requestId,
    ...(errors && errors.length > 0 ? { errors } : {}),
    ...members,
  };
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/problem+json', ...errorHeaders(error), ...headers } });
}

// Every REST error is an RFC 9457 problem document.
import type { GraphQLError } from 'graphql';
import { errorHeaders, statusOf, type FieldError } from '../errors.js';
import { Response } from './fetch.js';

export interface Problem {
  status: number;
  code: string;
  detail: string;
  errors?: FieldError[];
  headers?: Record<string, string>;
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export function problemResponse(problem: Problem, requestId: string): Response {
  const title = TITLES[problem.status] ?? 'Error';
  const body = {
    type: 'about:blank',
    title,
    status: problem.status,
    detail: problem.detail,
    code: problem.code,
    request_id: requestId,
    ...(problem.errors && problem.errors.length > 0 ? { errors: problem.errors } : {}),
  };
  return new Response(JSON.stringify(body), {
    status: problem.status,
    headers: { 'content-type': 'application/problem+json', ...problem.headers },
  });
}

/** A coded error (see errors.ts) as a problem document. */
export function errorProblemResponse(error: GraphQLError, requestId: string): Response {
  const code = String(error.extensions?.code ?? 'INTERNAL');
  const errors = error.extensions?.errors as FieldError[] | undefined;
  return problemResponse({ status: statusOf(code), code, detail: error.message, errors, headers: errorHeaders(error) }, requestId);
}

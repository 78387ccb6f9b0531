// One request's log entry, made after its response: what the server already logs (method,
// path, status, duration, key prefix) and, for an error, its code read from a copy of the
// error body (REST's problem `code`, GraphQL's first `extensions.code`). Nothing else of a
// body, and never the query string.
import type { Response } from '../http/fetch.js';
import type { RequestLogWriter } from './writer.js';

export interface Served {
  organizationId: string;
  keyPrefix: string;
  requestId: string;
  method: string;
  path: string;
  status: number;
  durationMs: number;
}

// Error bodies are small documents of ours; anything larger is not read.
const MAX_ERROR_BODY = 64 * 1024;

/** The error's code in an error body of ours, or null. */
export function errorCodeOf(text: string): string | null {
  try {
    const body = JSON.parse(text) as { code?: unknown; errors?: { extensions?: { code?: unknown } }[] };
    const code = typeof body.code === 'string' ? body.code : body.errors?.[0]?.extensions?.code;
    return typeof code === 'string' && code.length <= 64 ? code : null;
  } catch {
    return null;
  }
}

/** Hands the entry to the writer; an error's code is read in the background (the response goes out meanwhile). */
export function recordRequest(writer: RequestLogWriter, served: Served, response: Response): void {
  const createdAt = new Date();
  const entry = { ...served, createdAt, errorCode: null as string | null };
  const type = response.headers.get('content-type') ?? '';
  const length = Number(response.headers.get('content-length') ?? 0);
  if (served.status < 400 || !type.includes('json') || length > MAX_ERROR_BODY || !response.body) return writer.record(entry);
  void response
    .clone()
    .text()
    .then((text) => (text.length <= MAX_ERROR_BODY ? errorCodeOf(text) : null))
    .catch(() => null)
    .then((errorCode) => writer.record({ ...entry, errorCode }));
}

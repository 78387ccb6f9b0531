// The body of POST /v1/imports: the CSV file itself, under the imports' own size cap
// (MAX_IMPORT_BYTES, see plan.ts), refused as soon as it passes it like any other body.
import { apiError } from '../errors.js';
import { readBody } from '../http/read-body.js';
import { MAX_IMPORT_BYTES } from './plan.js';

export async function csvBody(request: Request): Promise<string> {
  const type = request.headers.get('content-type') ?? '';
  if (!/^text\/(csv|plain)\s*(;|$)/i.test(type)) throw apiError('UNSUPPORTED_MEDIA_TYPE', 'The body must be the CSV file: send Content-Type: text/csv.');
  return readBody(request, MAX_IMPORT_BYTES);
}

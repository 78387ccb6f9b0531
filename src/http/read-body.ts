// Reads a request body under one size cap, for REST bodies and GraphQL documents alike:
// refused on its declared Content-Length, and again as soon as the bytes read pass the cap,
// so no client can make the process hold more. Bytes that are not UTF-8 are refused, not
// silently replaced.
import { apiError } from '../errors.js';

export const MAX_BODY_BYTES = 1024 * 1024;

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The body as text; throws PAYLOAD_TOO_LARGE or BAD_REQUEST errors (see errors.ts). */
export async function readBody(request: Request, limit = MAX_BODY_BYTES): Promise<string> {
  const tooLarge = () => apiError('PAYLOAD_TOO_LARGE', `The body must be at most ${limit} bytes.`);
  if (Number(request.headers.get('content-length') ?? 0) > limit) throw tooLarge();
  if (!request.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > limit) throw tooLarge();
    chunks.push(chunk);
  }
  try {
    return UTF8.decode(Buffer.concat(chunks));
  } catch {
    throw apiError('BAD_REQUEST', 'The body is not valid UTF-8.', { errors: [{ param: 'body', message: 'is not valid UTF-8' }] });
  }
}

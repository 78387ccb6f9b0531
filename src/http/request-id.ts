import { randomUUID } from 'node:crypto';

// A client's own id is echoed when it is short and plain; anything else is replaced, so
// the header can never carry log-injection or oversized values.
const SANE = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdFor(request: Request): string {
  const own = request.headers.get('x-request-id');
  return own && SANE.test(own) ? own : randomUUID();
}

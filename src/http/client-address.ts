// Who is calling, for the per-address budget of requests without a valid key. Behind
// reverse proxies every request arrives from a proxy; each proxy appends the address it saw
// to X-Forwarded-For, so with `trustProxy` proxies in front the client is that many entries
// from the right. Entries further left are the client's own word and are never trusted.
import type { IncomingMessage } from 'node:http';

export function clientAddress(request: Request, socket: IncomingMessage['socket'] | undefined, trustProxy: number): string {
  const direct = socket?.remoteAddress ?? 'unknown';
  if (trustProxy === 0) return direct;
  const forwarded = (request.headers.get('x-forwarded-for') ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  return forwarded[forwarded.length - trustProxy] ?? forwarded[0] ?? direct;
}

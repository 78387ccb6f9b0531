// A proxy in front of the API that answers the first request of each Idempotency-Key as the
// server does when a request with that key is still running (409 with Retry-After), then
// forwards everything: the clients must wait and retry, not raise.
import { createServer, request as forward, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export async function startInFlightProxy(target: string): Promise<{ url: string; refused: () => number; close: () => Promise<void> }> {
  const seen = new Set<string>();
  const upstream = new URL(target);
  const server: Server = createServer((req, res) => {
    const key = req.headers['idempotency-key'];
    if (typeof key === 'string' && !seen.has(key)) {
      seen.add(key);
      req.resume();
      res.writeHead(409, { 'content-type': 'application/problem+json', 'retry-after': '1' });
      res.end(JSON.stringify({ type: 'about:blank', title: 'Conflict', status: 409, code: 'CONFLICT', detail: 'A request with this Idempotency-Key is still in progress; retry shortly.', request_id: 'proxy' }));
      return;
    }
    const proxied = forward({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    req.pipe(proxied);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    refused: () => seen.size,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

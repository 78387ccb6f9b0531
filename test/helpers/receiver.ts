// A webhook receiver for tests: an HTTP server that records every request (headers and the
// exact body bytes) and answers what the test tells it to, and lets a test wait for the
// n-th request instead of sleeping.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** What to answer the next request (and the ones after, until changed): 204 by default. */
  answer(next: (request: Received) => Answer | Promise<Answer>): void;
  /** Resolves once `count` requests have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  let respond: (request: Received) => Answer | Promise<Answer> = () => ({ status: 204 });
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      received.push(request);
      for (const waiter of waiters.filter((w) => received.length >= w.count)) waiter.resolve();
      void Promise.resolve(respond(request)).then(({ status, headers }) => {
        if (!res.destroyed) res.writeHead(status, headers).end();
      });
    });
  });
  server.keepAliveTimeout = 1;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    answer: (next) => {
      respond = next;
    },
    waitFor(count, timeoutMs = 20_000) {
      if (received.length >= count) return Promise.resolve(received);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`only ${received.length} of ${count} webhook requests arrived`)), timeoutMs);
        waiters.push({ count, resolve: () => (clearTimeout(timer), resolve(received)) });
      });
    },
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

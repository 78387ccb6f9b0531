import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { DB_KINDS, freshDatabase, migratedDatabase } from '../helpers/databases.js';
import { makeKeys } from '../helpers/api.js';
import { runNpm, startNpm, startServer } from '../helpers/processes.js';

/**
 * Sends the start of a POST and holds the rest back, so the request stays in flight.
 * `Expect: 100-continue` makes the server say when it has taken the request in, so the
 * test does not depend on timing.
 */
function halfSentRequest(url: string, key: string, body: string) {
  const { port } = new URL(url);
  const socket = net.connect(Number(port), '127.0.0.1');
  let response = '';
  let arrived: () => void;
  const taken = new Promise<void>((resolve) => (arrived = resolve));
  socket.on('data', (chunk) => {
    response += chunk.toString();
    if (response.includes('100 Continue')) arrived();
  });
  const done = new Promise<string>((resolve) => socket.on('close', () => resolve(response)));
  const head = `POST /graphql HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAuthorization: Bearer ${key}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`;
  socket.write(head + body.slice(0, 10));
  // The rest is written without half-closing the socket: Node's HTTP server aborts a request
  // whose client ends its side before the answer is out, which under load raced the answer.
  // The server closes the connection itself after answering (Connection: close).
  return { taken, finish: () => socket.write(body.slice(10)), done };
}

describe.each(DB_KINDS)('server lifecycle on %s', (kind) => {
  it('on SIGTERM stops accepting, finishes the request in flight, closes the database and exits 0', async () => {
    const db = await migratedDatabase(kind);
    const { key } = await makeKeys(db, { key: { org: 'Acme' } });
    const server = await startServer(db.env);
    try {
      const inFlight = halfSentRequest(server.url, key!, JSON.stringify({ query: '{ apiVersion }' }));
      await inFlight.taken;
      server.process.kill('SIGTERM');
      // The line is written in the same turn that closes the listening socket (serve.ts).
      await expect.poll(() => server.output()).toContain('"msg":"shutting down"');

      // New work is refused: the connection is refused, or (if the kernel had already
      // queued it) answered 503 without being served.
      const late = await fetch(`${server.url}/healthz`).then((r) => r.status, () => 'refused');
      expect(['refused', 503]).toContain(late);
      inFlight.finish();
      const raw = await inFlight.done;
      expect(raw).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200/);
      expect(raw).toContain('{"data":{"apiVersion":"1"}}');
      expect(await server.exited).toBe(0);
      expect(server.output()).toContain('"msg":"stopped"');
    } finally {
      await server.stop();
      await db.drop();
    }
  });
  // A second start reusing the data: test/server/first-run.test.ts, after its migrating starts.
});

describe('the embedded data folder belongs to one process', () => {
  it('the CLI refuses at once, with a clear message, while the server holds the folder', async () => {
    const db = await migratedDatabase('pglite');
    const server = await startServer(db.env);
    try {
      const result = await runNpm('cli', ['keys', 'create', '--org', 'Acme'], db.env);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/is in use by another process \(pid \d+\)/);
      expect(result.stdout).toBe('');
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    } finally {
      await server.stop();
      await db.drop();
    }
  });

  it('a second server refuses to start on the same folder', async () => {
    const db = await migratedDatabase('pglite');
    const server = await startServer(db.env);
    try {
      await expect(startServer(db.env)).rejects.toThrow(/exited with 1[\s\S]*in use by another process/);
    } finally {
      await server.stop();
      await db.drop();
    }
  });
});

describe('npm start', () => {
  it('stops gracefully when a process manager sends npm SIGTERM, leaving no server behind', async () => {
    const db = await freshDatabase('postgres');
    try {
      const server = await startNpm('start', db.env);
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      expect(await server.stop('SIGTERM')).toBe(0);
      expect(server.output()).toContain('"msg":"stopped"');
      // An orphaned server would still answer on its port.
      await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
    } finally {
      await db.drop();
    }
  });
});

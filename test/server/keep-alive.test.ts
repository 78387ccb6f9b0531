// Idle client connections stay open longer than a proxy keeps its own (75 s by default), so a
// client or load balancer reusing one after a pause gets an answer, not a reset.
import { Agent, request, type IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveInProcess, type ServedInstance } from '../helpers/api.js';
import { migratedDatabase, type TestDatabase } from '../helpers/databases.js';

/** GET on the agent's kept-alive connection; answers the response and the socket it used. */
function get(url: string, agent: Agent): Promise<{ response: IncomingMessage; socket: Socket }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/healthz`, { agent }, (response) => {
      response.resume();
      response.on('end', () => resolve({ response, socket: req.socket! }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('kept-alive connections', () => {
  let db: TestDatabase;
  let other: TestDatabase;
  let server: ServedInstance;
  let shortLived: ServedInstance;

  beforeAll(async () => {
    db = await migratedDatabase('pglite');
    server = await serveInProcess(db.env);
    other = await migratedDatabase('pglite');
    shortLived = await serveInProcess({ ...other.env, HTTP_KEEP_ALIVE_SECONDS: '1' });
  });
  afterAll(async () => {
    await server.stop();
    await shortLived.stop();
    await db.drop();
    await other.drop();
  });

  it('say how long they are kept, and answer a request sent after 6 s of silence on the same connection', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const first = await get(server.url, agent);
    expect(first.response.headers['keep-alive']).toBe('timeout=75');
    // Node's old default (5 s) closed the connection here, under the client's next request.
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    const second = await get(server.url, agent);
    expect(second.response.statusCode).toBe(200);
    expect(second.socket).toBe(first.socket);
    agent.destroy();
  }, 20_000);

  it('HTTP_KEEP_ALIVE_SECONDS sets it: the server closes the idle connection then', async () => {
    // A raw socket: Node's own agent closes its side early on the server's hint.
    const { port } = new URL(shortLived.url);
    const socket = connect(Number(port), '127.0.0.1');
    let answer = '';
    const answered = new Promise<void>((resolve) => socket.on('data', (chunk) => (answer += chunk.toString()).includes('\r\n\r\n') && resolve()));
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.write('GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n');
    await answered;
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    expect(answer.toLowerCase()).toContain('keep-alive: timeout=1');
    const idleFrom = performance.now();
    await closed;
    expect(performance.now() - idleFrom).toBeGreaterThanOrEqual(900);
  });
});

// `cli listen --forward-to URL`: a process of its own, as a developer runs it, against a
// server it reaches only by its address. A change made through the API arrives at a real
// receiver within a second, as a webhook endpoint would receive it (the event with its seq,
// signed: the Standard Webhooks library verifies it with the secret listen printed), with one
// line per event; --events filters; Ctrl-C (SIGINT) ends it with exit code 0.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rest, startApi, type Api } from '../helpers/api.js';
import { DB_KINDS } from '../helpers/databases.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface Listener {
  process: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves once the output holds `pattern` (stdout or stderr). */
  waitFor(pattern: RegExp): Promise<RegExpMatchArray>;
  exited: Promise<number | null>;
}

function startListen(args: string[], key: string): Listener {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'listen', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, CRM_API_KEY: key },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const waiters: Array<{ pattern: RegExp; resolve: (match: RegExpMatchArray) => void }> = [];
  const check = () => {
    for (const waiter of [...waiters]) {
      const match = (stdout + stderr).match(waiter.pattern) ?? stdout.match(waiter.pattern) ?? stderr.match(waiter.pattern);
      if (match) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(match);
      }
    }
  };
  child.stdout!.on('data', (chunk: Buffer) => ((stdout += chunk.toString('utf8')), check()));
  child.stderr!.on('data', (chunk: Buffer) => ((stderr += chunk.toString('utf8')), check()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    process: child,
    stdout: () => stdout,
    stderr: () => stderr,
    waitFor: (pattern) =>
      new Promise((resolve, reject) => {
        waiters.push({ pattern, resolve });
        check();
        void exited.then(() => reject(new Error(`listen exited before printing ${pattern}: ${stdout}${stderr}`)));
      }),
    exited,
  };
}

function verified(secret: string, request: { headers: Record<string, unknown>; body: string }) {
  const headers = Object.fromEntries(['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => [name, String(request.headers[name])]));
  return new Webhook(secret).verify(request.body, headers) as { id: string; seq: number; type: string; data: { object: { id: string; name: string } } };
}

describe.each(DB_KINDS)('cli listen on %s', (kind) => {
  let api: Api;
  let receiver: Receiver;
  let acme: ReturnType<typeof rest>;

  beforeAll(async () => {
    receiver = await startReceiver();
    api = await startApi(kind, { acme: { org: 'Acme' }, other: { org: 'Other Co' }, fresh: { org: 'Fresh Co' } });
    acme = rest(api, api.keys.acme!);
    // An event before listening began: it is not forwarded.
    expect((await acme.post('/customers', { name: 'Before' })).status).toBe(201);
  });
  afterAll(async () => {
    await api.stop();
    await receiver.close();
  });

  it('forwards a change made through the API within a second, signed, with its seq, and stops on SIGINT', async () => {
    const listener = startListen(['--url', api.url, '--forward-to', `${receiver.url}/hooks`], api.keys.acme!);
    try {
      const secret = (await listener.waitFor(/^Signing secret: (whsec_\S+)$/m))[1]!;
      await listener.waitFor(/^Ready: listening for events\.$/m);
      const start = receiver.received.length;
      const created = await acme.post('/customers', { name: 'Ada' });
      expect(created.status).toBe(201);
      const madeAt = Date.now();
      // Another organization's change is never forwarded.
      expect((await rest(api, api.keys.other!).post('/customers', { name: 'Not theirs' })).status).toBe(201);
      const [request] = (await receiver.waitFor(start + 1)).slice(start);
      expect(request!.at - madeAt).toBeLessThan(1000);
      const event = verified(secret, request!);
      const [stored] = (await acme.get(`/customers/${created.body.id}/events`)).body.data;
      expect(event).toEqual(stored);
      expect(event).toMatchObject({ type: 'customer.created', seq: 2, data: { object: { id: created.body.id, name: 'Ada' } } });
      expect(request!.headers['webhook-id']).toBe(event.id);
      expect(request!.headers['content-type']).toBe('application/json');
      await listener.waitFor(/^2 customer\.created -> 204$/m);

      // A second change, then a stop: the first change's neighbour arrives too, once, in order.
      expect((await acme.patch(`/customers/${created.body.id}`, { name: 'Ada L.' })).status).toBe(200);
      await listener.waitFor(/^3 customer\.updated -> 204$/m);
      listener.process.kill('SIGINT');
      expect(await listener.exited).toBe(0);
      expect(listener.stderr()).toContain('Stopped.');
      const forwarded = receiver.received.slice(start).map((r) => JSON.parse(r.body) as { seq: number; data: { object: { name: string } } });
      expect(forwarded.map((e) => [e.seq, e.data.object.name])).toEqual([[2, 'Ada'], [3, 'Ada L.']]);
      expect(listener.stdout().trim().split('\n').slice(1)).toEqual(['2 customer.created -> 204', '3 customer.updated -> 204']);
    } finally {
      listener.process.kill('SIGKILL');
    }
  });

  it('forwards only the --events types, and prints what the receiver answered', async () => {
    receiver.answer(() => ({ status: 500 }));
    const listener = startListen(['--url', api.url, '--forward-to', `${receiver.url}/hooks`, '--events', 'customer.deleted'], api.keys.acme!);
    try {
      await listener.waitFor(/^Ready: listening for events\.$/m);
      const start = receiver.received.length;
      const created = await acme.post('/customers', { name: 'Short-lived' });
      expect((await acme.delete(`/customers/${created.body.id}`)).status).toBe(204);
      const line = await listener.waitFor(/^(\d+) customer\.deleted -> 500$/m);
      const [request] = receiver.received.slice(start);
      expect(receiver.received.length - start).toBe(1);
      expect(JSON.parse(request!.body)).toMatchObject({ type: 'customer.deleted', seq: Number(line[1]), data: { object: { id: created.body.id } } });
      listener.process.kill('SIGINT');
      expect(await listener.exited).toBe(0);
    } finally {
      listener.process.kill('SIGKILL');
      receiver.answer(() => ({ status: 204 }));
    }
  });

  it('forwards from the first event when the organization had none yet', async () => {
    const listener = startListen(['--url', api.url, '--forward-to', `${receiver.url}/hooks`], api.keys.fresh!);
    try {
      await listener.waitFor(/^Ready: listening for events\.$/m);
      const start = receiver.received.length;
      const fresh = rest(api, api.keys.fresh!);
      const first = await fresh.post('/customers', { name: 'First' });
      await listener.waitFor(/^1 customer\.created -> 204$/m);
      expect((await fresh.post('/customers', { name: 'Second' })).status).toBe(201);
      await listener.waitFor(/^2 customer\.created -> 204$/m);
      const bodies = receiver.received.slice(start).map((r) => JSON.parse(r.body) as { seq: number; data: { object: { id: string } } });
      expect(bodies.map((b) => b.seq)).toEqual([1, 2]);
      expect(bodies[0]!.data.object.id).toBe(first.body.id);
      listener.process.kill('SIGINT');
      expect(await listener.exited).toBe(0);
    } finally {
      listener.process.kill('SIGKILL');
    }
  });

  it('refuses to start without a key or a --forward-to URL, and stops on a refused key or an unknown --events type', async () => {
    const noKey = startListen(['--forward-to', `${receiver.url}/hooks`], '');
    expect(await noKey.exited).toBe(2);
    expect(noKey.stderr()).toContain('CRM_API_KEY');
    const noTarget = startListen(['--url', api.url], api.keys.acme!);
    expect(await noTarget.exited).toBe(2);
    expect(noTarget.stderr()).toContain('--forward-to');
    const badKey = startListen(['--url', api.url, '--forward-to', `${receiver.url}/hooks`], 'svc_live_NOTAREALKEYNOTAREALKEYNOTAREALKE');
    expect(await badKey.exited).toBe(1);
    expect(badKey.stderr()).toContain('A valid API key is required');
    const badType = startListen(['--url', api.url, '--forward-to', `${receiver.url}/hooks`, '--events', 'customer.exploded'], api.keys.acme!);
    expect(await badType.exited).toBe(1);
    expect(badType.stderr()).toContain('customer.exploded');
  });
});

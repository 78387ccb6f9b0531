// When an open subscription ends without its client asking: its key revoked, expired or
// stripped of its read scopes (on every instance), its reader too slow (over a real socket),
// its instance cut off from the database's notifications, the server shutting down. Each
// ends with an error saying why and, where events may be missed, the id to catch up from.
import { request as httpRequest } from 'node:http';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKey } from '../../src/auth/api-keys.js';
import { STREAM_LIMITS } from '../../src/events/streams.js';
import { makeKeys, rest, serveInProcess, startApi } from '../helpers/api.js';
import { DB_KINDS, migratedDatabase } from '../helpers/databases.js';
import { startServer } from '../helpers/processes.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';
import { inProcess, type InProcess } from './in-process.js';
import { endOf, subscribe, SUBSCRIPTION, type Message, type Stream } from './sse.js';

const BASE = 'http://test';

describe.each(DB_KINDS)('open streams end when their key stops working, on %s', (kind) => {
  // One database for the three (each makes its own keys): a fresh PGlite takes seconds.
  let app: InProcess;
  beforeAll(async () => {
    app = await inProcess(kind);
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('revoked: its streams end within a second (401, KEY_REVOKED); another key\'s stream goes on', async () => {
    const revoked = await app.key();
    const kept = await app.key();
    const open = (key: string) => subscribe(BASE, key, { fetcher: app.fetch });
    const [first, second, other] = [await open(revoked.key), await open(revoked.key), await open(kept.key)];
    await app.createCustomers(1, 'Before ');
    for (const stream of [first!, second!, other!]) expect((await stream.events(1))[0]!.data.object.name).toBe('Before 1');
    const at = performance.now();
    await app.db.prisma.apiKey.update({ where: { id: revoked.id }, data: { revokedAt: new Date() } });
    const ends = await Promise.all([first!.rest(), second!.rest()]);
    expect(performance.now() - at).toBeLessThan(2000);
    for (const messages of ends) {
      expect(messages).toHaveLength(2);
      expect(endOf(messages)).toMatchObject({ message: 'The API key of this subscription was revoked or deleted; the stream has ended.', extensions: { code: 'UNAUTHENTICATED', reason: 'KEY_REVOKED' } });
    }
    await app.createCustomers(1, 'After ');
    expect((await other!.events(1))[0]!.data.object.name).toBe('After 1');
    other!.close();
    // And the key cannot open another.
    expect((await open(revoked.key)).status).toBe(401);
  });

  it('expired: its stream ends when the key expires (KEY_EXPIRED), and at once when its expiry is moved to the past', async () => {
    const expiresAt = new Date(Date.now() + 3000);
    const soon = await app.key(undefined, expiresAt);
    const later = await app.key(undefined, new Date(Date.now() + 3_600_000));
    const [ending, moved] = [await subscribe(BASE, soon.key, { fetcher: app.fetch }), await subscribe(BASE, later.key, { fetcher: app.fetch })];
    const end = endOf(await ending.rest());
    expect(Date.now()).toBeGreaterThanOrEqual(expiresAt.getTime());
    expect(Date.now()).toBeLessThan(expiresAt.getTime() + 1000);
    expect(end).toMatchObject({ message: 'The API key of this subscription expired; the stream has ended.', extensions: { code: 'UNAUTHENTICATED', reason: 'KEY_EXPIRED' } });
    await app.db.prisma.apiKey.update({ where: { id: later.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expect(endOf(await moved.rest())).toMatchObject({ extensions: { code: 'UNAUTHENTICATED', reason: 'KEY_EXPIRED' } });
  });

  it('re-scoped: a key that keeps a read scope streams what it may read now; one left without any is ended (403, SCOPE_REMOVED)', async () => {
    const narrowed = await app.key();
    const stripped = await app.key();
    const [narrow, none] = [await subscribe(BASE, narrowed.key, { fetcher: app.fetch }), await subscribe(BASE, stripped.key, { fetcher: app.fetch })];
    await app.db.prisma.apiKey.update({ where: { id: narrowed.id }, data: { scopes: ['jobs:read'] } });
    await app.db.prisma.apiKey.update({ where: { id: stripped.id }, data: { scopes: ['webhooks:read'] } });
    expect(endOf(await none.rest())).toMatchObject({ extensions: { code: 'FORBIDDEN', reason: 'SCOPE_REMOVED' } });
    // The re-check has run for both keys: the customer is not shown any more, its job is.
    await app.createCustomers(1, 'Hidden ');
    const customer = await app.db.prisma.customer.findFirstOrThrow({ where: { name: 'Hidden 1' } });
    await app.db.prisma.$executeRawUnsafe(`INSERT INTO jobs (id, organization_id, customer_id, title, updated_at) VALUES (gen_random_uuid(), $1::uuid, $2::uuid, 'Shown', now())`, app.organizationId, customer.id);
    expect((await narrow.events(1)).map((event) => event.type)).toEqual(['job.created']);
    narrow.close();
  });
});

describe('open streams on every instance', () => {
  it('end when their key is revoked by SQL, on both instances of one database', async () => {
    const api = await startApi('postgres', { gone: { org: 'Acme' }, kept: { org: 'Acme' } });
    const second = await serveInProcess(api.db.env);
    const sql = new pg.Client({ connectionString: api.db.env.DATABASE_URL });
    await sql.connect();
    try {
      const onFirst = await subscribe(api.url, api.keys.gone!);
      const onSecond = await subscribe(second.url, api.keys.gone!);
      const other = await subscribe(second.url, api.keys.kept!);
      const customer = (await rest(api, api.keys.kept!).post('/customers', { name: 'Seen by all' })).body;
      for (const stream of [onFirst, onSecond, other]) expect((await stream.events(1))[0]!.data.object.id).toBe(customer.id);
      const at = performance.now();
      await sql.query('UPDATE api_keys SET revoked_at = now() WHERE hash = $1', [hashKey(api.keys.gone!)]);
      for (const messages of await Promise.all([onFirst.rest(), onSecond.rest()])) {
        expect(endOf(messages)).toMatchObject({ extensions: { code: 'UNAUTHENTICATED', reason: 'KEY_REVOKED' } });
      }
      expect(performance.now() - at).toBeLessThan(2000);
      const next = (await rest(api, api.keys.kept!).post('/customers', { name: 'Still streamed' })).body;
      expect((await other.events(1))[0]!.data.object.id).toBe(next.id);
      other.close();
    } finally {
      await sql.end();
      await second.stop();
      await api.stop();
    }
  }, 60_000);

  it(`count one key's streams together: ${STREAM_LIMITS.perKey} across two instances, then a 429 on either`, async () => {
    const api = await startApi('postgres', { acme: { org: 'Acme' } });
    const second = await serveInProcess(api.db.env);
    try {
      const streams = [];
      for (let i = 0; i < STREAM_LIMITS.perKey; i++) {
        streams.push(await subscribe(i % 2 ? second.url : api.url, api.keys.acme!));
        expect(streams.at(-1)!.status).toBe(200);
      }
      for (const url of [api.url, second.url]) {
        const refused = await subscribe(url, api.keys.acme!);
        expect(refused.status).toBe(429);
        expect((await refused.rest())[0]!.payload!.errors![0]!.extensions.code).toBe('RATE_LIMITED');
      }
      // A stream closed on one instance makes room on the other.
      streams[0]!.close();
      await expect.poll(async () => {
        const again = await subscribe(second.url, api.keys.acme!);
        if (again.status === 200) streams.push(again);
        return again.status;
      }).toBe(200);
      for (const stream of streams) stream.close();
    } finally {
      await second.stop();
      await api.stop();
    }
  }, 60_000);
});

describe('a slow reader over a real socket', () => {
  it('is ended once its backlog is full, holds no more, and is told the last event it was sent', async () => {
    const app = await inProcess('postgres');
    const server = await app.listen();
    try {
      const { key } = await app.key();
      await app.createCustomers(150, 'Big ');
      // A client that reads the first event, then stops reading from its socket.
      let text = '';
      const response = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
        const request = httpRequest(`${server.url}/graphql`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'text/event-stream' } }, resolve);
        request.on('error', reject);
        request.end(JSON.stringify({ query: SUBSCRIPTION }));
      });
      expect(response.statusCode).toBe(200);
      response.setEncoding('utf8');
      await app.db.prisma.$executeRawUnsafe(`UPDATE customers SET name = 'Big ' || repeat('x', 100000) WHERE organization_id = $1::uuid`, app.organizationId);
      await new Promise<void>((resolve) =>
        response.on('data', function first(chunk: string) {
          text += chunk;
          if (!text.includes('event: next')) return;
          response.off('data', first);
          response.pause();
          resolve();
        }),
      );
      // 15 MB of events are more than the sockets hold: the rest waits in the server, up to its bound.
      await expect.poll(() => app.events.streams.count(), { timeout: 10_000 }).toBe(0);
      const ended = new Promise<void>((resolve) => response.on('end', resolve));
      response.on('data', (chunk: string) => (text += chunk));
      response.resume();
      await ended;
      const messages: Message[] = text
        .split('\n\n')
        .filter((block) => block.startsWith('event: '))
        .map((block) => {
          const data = /^data: (.*)$/m.exec(block)?.[1];
          return { event: /^event: (\w+)/.exec(block)![1] as Message['event'], ...(data ? { payload: JSON.parse(data) } : {}) };
        });
      const received = messages.flatMap((m) => (m.payload?.data?.events ? [m.payload.data.events] : []));
      expect(received.length).toBeGreaterThan(0);
      expect(received.length).toBeLessThan(150);
      expect(endOf(messages)).toMatchObject({ extensions: { code: 'UNAVAILABLE', reason: 'SLOW_READER', lastEventId: received.at(-1)!.id } });
    } finally {
      await server.close();
      await app.stop();
    }
  }, 60_000);
});

describe('an instance that loses the database', () => {
  it("ends its streams saying they may have missed events; the client reconnects and catches up with after= (events committed through another instance meanwhile)", async () => {
    const db = await migratedDatabase('postgres');
    const keys = await makeKeys(db, { acme: { org: 'Acme' } });
    const target = new URL(db.env.DATABASE_URL!);
    const proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    const proxied = new URL(db.env.DATABASE_URL!);
    proxied.host = `127.0.0.1:${proxy.port}`;
    const cutOff = await serveInProcess({ DATABASE_URL: proxied.toString() });
    const direct = await serveInProcess(db.env);
    const acme = rest({ url: direct.url }, keys.acme!);
    try {
      const stream = await subscribe(cutOff.url, keys.acme!);
      const seen = (await acme.post('/customers', { name: 'Seen' })).body;
      const [event] = await stream.events(1);
      expect(event!.data.object.id).toBe(seen.id);
      proxy.cut();
      const end = endOf(await stream.rest());
      expect(end).toMatchObject({ extensions: { code: 'UNAVAILABLE', reason: 'EVENTS_INTERRUPTED', lastEventId: event!.id } });
      expect(end.message).toBe(`This server lost its connection to the database and may have missed events. Reconnect, then catch up with GET /v1/events?after=${event!.id}.`);
      const missed = [];
      for (const name of ['Missed 1', 'Missed 2', 'Missed 3']) missed.push((await acme.post('/customers', { name })).body.id);
      // While it is cut off, it refuses a new stream (503, retry) rather than stream nothing.
      const refused = await subscribe(cutOff.url, keys.acme!);
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).not.toBeNull();
      proxy.restore();
      let again: Stream | undefined;
      await expect
        .poll(
          async () => {
            const next = await subscribe(cutOff.url, keys.acme!);
            if (next.status === 200) again = next;
            else await next.rest();
            return next.status;
          },
          { timeout: 10_000, interval: 200 },
        )
        .toBe(200);
      const caughtUp = await rest({ url: cutOff.url }, keys.acme!).get(`/events?after=${end.extensions.lastEventId}`);
      expect(caughtUp.body.data.map((e: { data: { object: { id: string } } }) => e.data.object.id)).toEqual(missed);
      const after = (await acme.post('/customers', { name: 'Live again' })).body;
      expect((await again!.events(1))[0]!.data.object.id).toBe(after.id);
      again!.close();
    } finally {
      await cutOff.stop();
      await direct.stop();
      await proxy.close();
      await db.drop();
    }
  }, 60_000);
});

describe.each(DB_KINDS)('shutdown with open streams on %s', (kind) => {
  it('ends them (SHUTTING_DOWN, then complete) and exits 0 at once', async () => {
    const db = await migratedDatabase(kind);
    const keys = await makeKeys(db, { acme: { org: 'Acme' } });
    const server = await startServer(db.env);
    try {
      const streams = [await subscribe(server.url, keys.acme!), await subscribe(server.url, keys.acme!)];
      const exited = server.stop('SIGTERM');
      for (const messages of await Promise.all(streams.map((stream) => stream.rest()))) {
        expect(endOf(messages)).toMatchObject({ extensions: { code: 'UNAVAILABLE', reason: 'SHUTTING_DOWN' } });
      }
      // Exit code 0 is the "at once": a stream that held the server open would meet the
      // shutdown grace (10 s), whose forced exit is 1. No wall-clock bound: closing PGlite
      // alone took over 5 s on a loaded machine.
      expect(await exited).toBe(0);
    } finally {
      await server.stop('SIGKILL');
      await db.drop();
    }
  }, 60_000);
});

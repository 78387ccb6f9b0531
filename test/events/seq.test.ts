// `seq` on every event: per organization, 1, 2, 3, ... in commit order, no gaps, none
// repeated, and a write that fails takes no number. Shown on REST and GraphQL events, in
// webhook bodies (verified with the Standard Webhooks reference library) and subscription
// messages; `GET /v1/events?seq=` fetches exactly one. Across two app instances on one
// PostgreSQL database with concurrent writers, a reader walking `after` never sees a gap.
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/auth/api-keys.js';
import { allScopes } from '../../src/auth/scopes.js';
import '../../src/schema/index.js';
import { openDatabase, type Database } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrator.js';
import { createEventHub } from '../../src/events/hub.js';
import { createLogger } from '../../src/logger.js';
import { createRateLimiter } from '../../src/rate-limit.js';
import { createApp } from '../../src/server.js';
import { gql, rest, startApi, type Api } from '../helpers/api.js';
import { DB_KINDS, freshDatabase, type TestDatabase } from '../helpers/databases.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { subscribe } from './sse.js';

const LOCAL = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_TIMEOUT_MS: '2000' };

interface ListedEvent {
  id: string;
  seq: number;
  type: string;
  data: { object: { id: string } };
}

describe.each(DB_KINDS)('seq on %s', (kind) => {
  let api: Api;
  let acme: ReturnType<typeof rest>;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    api = await startApi(kind, { acme: { org: 'Acme' }, customersOnly: { org: 'Acme', scopes: 'customers:read' }, other: { org: 'Other Co' } }, LOCAL);
    acme = rest(api, api.keys.acme!);
  });
  afterAll(async () => {
    await api.stop();
    await receiver.close();
  });

  const allEvents = async (client = acme) => (await client.get('/events?limit=100')).body.data as ListedEvent[];

  it('numbers every event 1, 2, 3, ... per organization; failed and refused writes take no number', async () => {
    const customer = (await acme.post('/customers', { name: 'Parent' })).body;
    const job = (await acme.post('/jobs', { customer_id: customer.id, title: 'Holds the parent' })).body;
    // Fails inside its transaction, after the update took its number: the customer still has a job.
    expect((await acme.delete(`/customers/${customer.id}`)).status).toBe(409);
    // Refused: a scheduled job cannot be completed.
    expect((await acme.post(`/jobs/${job.id}/complete`)).status).toBe(409);
    const after = (await acme.post('/customers', { name: 'After the failures' })).body;
    expect((await acme.patch(`/customers/${after.id}`, { name: 'Renamed' })).status).toBe(200);

    const events = (await allEvents()).reverse();
    expect(events.map((e) => [e.seq, e.type, e.data.object.id])).toEqual([
      [1, 'customer.created', customer.id],
      [2, 'job.created', job.id],
      [3, 'customer.created', after.id],
      [4, 'customer.updated', after.id],
    ]);
    // Another organization counts from 1 on its own.
    const other = rest(api, api.keys.other!);
    await other.post('/customers', { name: 'Elsewhere' });
    expect((await allEvents(other)).map((e) => e.seq)).toEqual([1]);
  });

  it('answers one event by its number: REST ?seq=, GET /events/{id}, GraphQL events(seq:)', async () => {
    const events = await allEvents();
    const job = events.find((e) => e.type === 'job.created')!;
    const one = await acme.get(`/events?seq=${job.seq}`);
    expect(one.status).toBe(200);
    expect(one.body.data).toEqual([expect.objectContaining({ id: job.id, seq: job.seq, type: 'job.created' })]);
    expect(one.body.pagination).toMatchObject({ total: 1, has_more: false });
    expect(typeof one.body.data[0].seq).toBe('number');
    expect((await acme.get(`/events/${job.id}`)).body).toMatchObject({ id: job.id, seq: job.seq });
    // Not yet taken, or not readable with the key's scopes: an empty list.
    expect((await acme.get('/events?seq=100000')).body).toMatchObject({ data: [], pagination: { total: 0 } });
    expect((await rest(api, api.keys.customersOnly!).get(`/events?seq=${job.seq}`)).body.data).toEqual([]);
    // With another filter, both must hold.
    expect((await acme.get(`/events?seq=${job.seq}&type=customer.created`)).body.data).toEqual([]);
    for (const bad of ['0', '-3', 'abc', '1.5']) {
      const refused = await acme.get(`/events?seq=${bad}`);
      expect(refused.status, bad).toBe(400);
      expect(refused.body.errors.map((e: { param: string }) => e.param)).toEqual(['seq']);
    }
    const data = await gql<{ events: { data: Array<{ id: string; seq: number }> } }>(api, api.keys.acme!, 'query($seq: Int) { events(seq: $seq) { data { id seq } } }', { seq: job.seq });
    expect(data.events.data).toEqual([{ id: job.id, seq: job.seq }]);
  });

  it('carries seq in webhook bodies and subscription messages', async () => {
    const endpoint = (await acme.post('/webhook_endpoints', { url: `${receiver.url}/hook`, event_types: ['customer.created'] })).body as { secret: string };
    const stream = await subscribe(api.url, api.keys.acme!, { types: ['customer.created'], query: 'subscription($types: [String!]) { events(types: $types) { id seq type data } }' });
    const start = receiver.received.length;
    const customer = (await acme.post('/customers', { name: 'Announced' })).body;
    const [event] = await allEvents();
    expect(event).toMatchObject({ type: 'customer.created', data: { object: { id: customer.id } } });

    const [streamed] = (await stream.events(1)) as unknown as ListedEvent[];
    stream.close();
    expect(streamed).toMatchObject({ id: event!.id, seq: event!.seq });

    const [delivered] = (await receiver.waitFor(start + 1)).slice(start);
    const headers = Object.fromEntries(['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => [name, String(delivered!.headers[name])]));
    const body = new Webhook(endpoint.secret).verify(delivered!.body, headers) as ListedEvent;
    expect(body).toMatchObject({ id: event!.id, seq: event!.seq, type: 'customer.created' });
    expect(delivered!.body).toContain(`"seq":${event!.seq},`);
  });
});

describe('seq across two instances on PostgreSQL, with concurrent writers', () => {
  let test: TestDatabase;
  const dbs: Database[] = [];
  const stops: Array<() => Promise<void>> = [];

  afterAll(async () => {
    for (const stop of stops) await stop();
    for (const db of dbs) await db.close();
    await test?.drop();
  });

  it('stays dense, unique and in commit order: 4 writers x 25 creates (one writer invoices, numbered) through two apps, failed writes between', async () => {
    test = await freshDatabase('postgres');
    const log = createLogger('silent');
    const apps: Array<ReturnType<typeof createApp>> = [];
    for (let i = 0; i < 2; i++) {
      const db = await openDatabase({ databaseUrl: test.env.DATABASE_URL, dataDir: '' });
      dbs.push(db);
      if (i === 0) await migrate(db.sql);
      const events = createEventHub(db, log);
      stops.push(() => events.close());
      apps.push(createApp({ db, log, rateLimiter: createRateLimiter({ max: 1_000_000, windowSeconds: 60, log }), events }));
    }
    const organization = await dbs[0]!.prisma.organization.create({ data: { name: 'Acme' } });
    const { key } = await createApiKey(dbs[0]!.prisma, { organizationId: organization.id, name: 'test', scopes: allScopes() });
    const call = async (app: number, method: string, path: string, body?: unknown) => {
      const response = await apps[app]!.fetch(`http://crm.test/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: response.status, body: response.status === 204 ? null : await response.json() };
    };

    const parent = (await call(0, 'POST', '/customers', { name: 'Parent' })).body;
    const held = (await call(1, 'POST', '/jobs', { customer_id: parent.id, title: 'Holds the parent' })).body;
    const first = ((await call(0, 'GET', '/events?limit=1')).body.data as ListedEvent[])[0]!;
    expect(first.seq).toBe(2);

    // A reader on the second app walks `after` while the writes commit: commit order is seq
    // order, so every page continues exactly where the last one ended.
    const WRITERS = 4;
    const CREATES = 25;
    const total = 2 + WRITERS * CREATES;
    let writing = true;
    const seen: number[] = [first.seq];
    const reader = (async () => {
      let last = first;
      while (seen.length < total - 1) {
        // Read before the page is asked for: an empty page after the writes ended is the end.
        const ended = !writing;
        const page = (await call(1, 'GET', `/events?after=${last.id}&limit=100`)).body.data as ListedEvent[];
        for (const event of page) {
          expect(event.seq, `after ${last.seq}`).toBe(last.seq + 1);
          seen.push(event.seq);
          last = event;
        }
        if (page.length === 0 && ended) break;
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    // Its failure is reported where it is awaited, after the writers.
    reader.catch(() => undefined);

    const failures: number[] = [];
    const writers = Array.from({ length: WRITERS }, async (_, writer) => {
      const made: Array<{ id: string; number?: string }> = [];
      for (let i = 0; i < CREATES; i++) {
        // The last writer makes invoices: each takes an invoice number before its change number
        // (both under the organization's change lock), beside creates that take only the latter.
        const created =
          writer === WRITERS - 1
            ? await call((writer + i) % 2, 'POST', '/invoices', { customer_id: parent.id, currency: 'EUR', line_items: [{ description: 'Visit', quantity: 1, unit_amount: 100 }] })
            : await call((writer + i) % 2, 'POST', '/customers', { name: `Writer ${writer} #${i}` });
        expect(created.status).toBe(201);
        made.push(created.body);
        // Between the creates: a delete that fails inside its transaction, after taking its number.
        if (i % 5 === 2) failures.push((await call(writer % 2, 'DELETE', `/customers/${parent.id}`)).status);
      }
      return made;
    });
    const made = (await Promise.all(writers)).flat();
    writing = false;
    await reader;
    expect(failures).toEqual(Array(WRITERS * 5).fill(409));

    const rows = await dbs[0]!.prisma.event.findMany({ where: { organizationId: organization.id }, orderBy: { seq: 'asc' }, select: { seq: true, recordId: true } });
    expect(rows.map((row) => Number(row.seq))).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    expect(new Set(rows.slice(2).map((row) => row.recordId))).toEqual(new Set(made.map((customer) => customer.id)));
    expect(rows.slice(0, 2).map((row) => row.recordId)).toEqual([parent.id, held.id]);
    expect(seen).toEqual(Array.from({ length: total - 1 }, (_, i) => i + 2));
    const numbers = made.map((record) => record.number).filter((number) => number !== undefined);
    expect(numbers.sort()).toEqual(Array.from({ length: CREATES }, (_, i) => `INV-${String(i + 1).padStart(6, '0')}`));
    // The organization's counter is where the events end: the failed deletes gave theirs back.
    expect(Number((await dbs[0]!.prisma.organizationCounter.findUniqueOrThrow({ where: { organizationId: organization.id } })).changeSeq)).toBe(total);
  }, 120_000);
});

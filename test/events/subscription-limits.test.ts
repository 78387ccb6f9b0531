// What a subscription may cost the server: refused without a read scope, bounded per key and
// per instance, one database statement per event whatever the number of streams, and a
// bounded backlog per reader. In process (the statements are counted where Prisma runs them),
// through the app's fetch handler exactly as the HTTP server calls it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STREAM_LIMITS } from '../../src/events/streams.js';
import { DB_KINDS } from '../helpers/databases.js';
import { inProcess, type InProcess } from './in-process.js';
import { endOf, subscribe, type Stream } from './sse.js';

const BASE = 'http://test';
/** The test's own writes (app.createCustomers), as Prisma's log shows them. */
const CUSTOMER_INSERT = /^INSERT INTO "public"\."customers"/;

describe.each(DB_KINDS)('subscription limits on %s', (kind) => {
  let app: InProcess;
  const open = (key: string, types?: string[]) => subscribe(BASE, key, { fetcher: app.fetch, types });

  beforeAll(async () => {
    // Reads of events are set off by writes alone, so their statements can be counted: the
    // timer is off, and the organization has a webhook endpoint, so each write NOTIFYs (a
    // write that queues no delivery sends none; stream-follow.test.ts has the timer's reads).
    app = await inProcess(kind, { perInstance: 30, pollMs: 3_600_000 });
    await app.db.prisma.webhookEndpoint.create({ data: { organizationId: app.organizationId, url: 'http://127.0.0.1:9/unused', eventTypes: [], secret: 'unused' } });
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('a key without any read scope is refused (403 naming the scopes it needs), not kept open', async () => {
    const { key } = await app.key(['webhooks:read', 'customers:write']);
    const refused = await open(key);
    expect(refused.status).toBe(403);
    const [message, end] = await refused.rest();
    expect(message!.payload!.errors![0]).toMatchObject({ extensions: { code: 'FORBIDDEN' } });
    expect(message!.payload!.errors![0]!.message).toMatch(/events:read.*customers:read/);
    expect(end).toEqual({ event: 'complete' });
    expect(app.events.streams.count()).toBe(0);
  });

  it(`a key has at most ${STREAM_LIMITS.perKey} open streams: one more is a 429 saying so, and closing one makes room`, async () => {
    const { key } = await app.key();
    const streams: Stream[] = [];
    for (let i = 0; i < STREAM_LIMITS.perKey; i++) {
      streams.push(await open(key));
      expect(streams.at(-1)!.status).toBe(200);
    }
    const refused = await open(key);
    expect(refused.status).toBe(429);
    const [message] = await refused.rest();
    expect(message!.payload!.errors![0]).toMatchObject({ extensions: { code: 'RATE_LIMITED' } });
    expect(message!.payload!.errors![0]!.message).toBe(`This API key already has ${STREAM_LIMITS.perKey} open subscriptions, the most a key may have at once; close one first.`);
    // Another key of the same organization has its own allowance.
    const other = await open((await app.key()).key);
    expect(other.status).toBe(200);
    streams[0]!.close();
    await expect.poll(() => app.events.streams.count()).toBe(STREAM_LIMITS.perKey);
    const again = await open(key);
    expect(again.status).toBe(200);
    for (const stream of [...streams, other, again]) stream.close();
    await expect.poll(() => app.events.streams.count()).toBe(0);
  });

  it('an instance has at most its number of open streams: one more is a 429 with Retry-After', async () => {
    const streams: Stream[] = [];
    for (let i = 0; i < 30; i++) {
      streams.push(await open((await app.key()).key));
      expect(streams.at(-1)!.status).toBe(200);
    }
    const refused = await open((await app.key()).key);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('5');
    const [message] = await refused.rest();
    expect(message!.payload!.errors![0]!.message).toBe('This server has 30 open subscriptions, the most it takes; retry shortly.');
    for (const stream of streams) stream.close();
    await expect.poll(() => app.events.streams.count()).toBe(0);
  });

  it('one committed event costs one statement whether 1 or 30 streams are open, each stream filtered by its scopes and types in memory', async () => {
    async function fanOut(streams: Stream[], expected: Stream[]) {
      // What ran before (opening streams, an earlier event's load) is reported first: none for a few polls.
      let quiet = 0;
      await expect.poll(() => (quiet = app.statements().length === 0 ? quiet + 1 : 0), { interval: 50, timeout: 10_000 }).toBeGreaterThanOrEqual(3);
      await app.createCustomers(1, `Fan-out ${streams.length} `);
      const received = await Promise.all(expected.map((stream) => stream.events(1)));
      expect(new Set(received.map(([event]) => event!.data.object.name)).size).toBe(1);
      // Beside its INSERT (and a key's last-use write, at most once a minute), the event's load.
      // Prisma reports a statement when it is done, and the load (which the INSERT's commit
      // set off) may be reported first: both are read, in either order, once their count has
      // held for a few polls (one load per stream would show, late or not).
      const seen: string[] = [];
      let last = -1;
      let held = 0;
      await expect
        .poll(() => {
          seen.push(...app.statements().filter((sql) => !/"api_keys"/.test(sql)));
          const complete = seen.some((sql) => CUSTOMER_INSERT.test(sql)) && seen.length > 1;
          held = complete && seen.length === last ? held + 1 : 0;
          last = seen.length;
          return held;
        }, { interval: 50, timeout: 10_000 })
        .toBeGreaterThanOrEqual(3);
      return seen.filter((sql) => !CUSTOMER_INSERT.test(sql));
    }
    const one = await open((await app.key()).key);
    const alone = await fanOut([one], [one]);
    const many: Stream[] = [one];
    for (let i = 0; i < 27; i++) many.push(await open((await app.key()).key));
    // Two that must not receive it: a key that reads jobs only, a stream of invoice.paid only.
    const jobsOnly = await open((await app.key(['jobs:read'])).key);
    const paidOnly = await open((await app.key()).key, ['invoice.paid']);
    // Closed whatever the outcome: this instance takes 30 streams, and the next test opens one.
    try {
      const crowd = await fanOut([...many, jobsOnly, paidOnly], many);
      expect(alone).toHaveLength(1);
      expect(alone[0]).toMatch(/FROM "public"\."events"/);
      expect(crowd).toEqual(alone);
      // The filtered streams got nothing: the next customer event is what the others get next.
      const job = await app.db.prisma.customer.findFirstOrThrow({ where: { organizationId: app.organizationId } });
      await app.db.prisma.$executeRawUnsafe(`INSERT INTO jobs (id, organization_id, customer_id, title, updated_at) VALUES (gen_random_uuid(), $1::uuid, $2::uuid, 'A job', now())`, app.organizationId, job.id);
      expect((await jobsOnly.events(1))[0]!.type).toBe('job.created');
    } finally {
      for (const stream of [...many, jobsOnly, paidOnly]) stream.close();
    }
    await expect.poll(() => app.events.streams.count()).toBe(0);
  });

  it(`a reader that falls behind by more than ${STREAM_LIMITS.backlogEvents} events is ended, told where to catch up from, and holds nothing`, async () => {
    const { key } = await app.key();
    const slow = await open(key);
    await app.createCustomers(1, 'Seen ');
    const [seen] = await slow.events(1);
    // The reader stops reading: everything committed now waits for it, up to the bound.
    await app.createCustomers(STREAM_LIMITS.backlogEvents + 50, 'Missed ');
    // Each of the 150 events is heard, loaded and queued before the bound is passed: under a
    // loaded CI run on Node 24 that once took over the default 10 s, and on a slower machine
    // over 30 s (2026-11-29, its suites at twice their usual time).
    await expect.poll(() => app.events.streams.count(), { timeout: 90_000 }).toBe(0);
    const messages = await slow.rest();
    const error = endOf(messages);
    const received = messages.flatMap((m) => (m.payload?.data?.events ? [m.payload.data.events] : []));
    const last = received.at(-1)?.id ?? seen!.id;
    expect(error).toMatchObject({ extensions: { code: 'UNAVAILABLE', reason: 'SLOW_READER', lastEventId: last } });
    expect(error.message).toContain(`Reconnect, then catch up with GET /v1/events?after=${last}`);
    // What it missed is there to catch up with, from the id it was given.
    const caughtUp = await app.fetch(`${BASE}/v1/events?after=${last}&limit=100`, { headers: { authorization: `Bearer ${key}` } });
    const page = (await caughtUp.json()) as { data: Array<{ data: { object: { name: string } } }> };
    expect(page.data[0]!.data.object.name).toMatch(/^Missed /);
    expect(page.data).toHaveLength(100);
  }, 150_000);
});

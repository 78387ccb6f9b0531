// How an instance feeds its open subscriptions without a NOTIFY (a write that queued no
// webhook delivery sends none): it follows each organization with an open stream by seq, from
// its latest event when the first stream opened, reading what committed since on a timer.
// In process, through the app's fetch handler.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/databases.js';
import { inProcess, type InProcess } from './in-process.js';
import { subscribe } from './sse.js';

const QUERY = 'subscription { events { id seq type data } }';

describe.each(DB_KINDS)('streams following their organization on %s', (kind) => {
  let app: InProcess;

  beforeAll(async () => {
    // Room for a burst bigger than one read (500 events) in one reader's backlog.
    app = await inProcess(kind, { backlogEvents: 5000, backlogBytes: 16 * 1024 * 1024 });
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('a stream gets every event committed after it opened, in seq order, none before, also a burst of more than one read', async () => {
    await app.createCustomers(3, 'Before ');
    const before = await app.db.prisma.event.aggregate({ where: { organizationId: app.organizationId }, _max: { seq: true } });
    const stream = await subscribe('http://test', (await app.key()).key, { fetcher: app.fetch, query: QUERY });
    expect(stream.status).toBe(200);
    await app.createCustomers(1200, 'Burst ');
    const received = await stream.events(1200);
    const seqs = received.map((event) => Number((event as unknown as { seq: number }).seq));
    const first = Number(before._max.seq) + 1;
    expect(seqs).toEqual(Array.from({ length: 1200 }, (_, i) => first + i));
    expect(received.every((event) => event.type === 'customer.created' && String(event.data.object.name).startsWith('Burst '))).toBe(true);
    // A second stream opened now starts from here: the next event is the first it gets.
    const late = await subscribe('http://test', (await app.key()).key, { fetcher: app.fetch, query: QUERY });
    await app.createCustomers(1, 'After ');
    const [next] = await late.events(1);
    expect(next!.data.object.name).toBe('After 1');
    expect((await stream.events(1))[0]!.id).toBe(next!.id);
    stream.close();
    late.close();
    await expect.poll(() => app.events.streams.count()).toBe(0);
  });
});

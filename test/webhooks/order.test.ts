// Deliveries go out concurrently, yet one record's events reach an endpoint in commit order:
// a record's next event is not sent while the one before it is unanswered or waiting for a
// retry. The receiver holds every answer until the test releases them, so whatever the
// service sends meanwhile piles up in plain view.
import { describe, expect, it } from 'vitest';
import { rest, startApi } from '../helpers/api.js';
import { DB_KINDS } from '../helpers/databases.js';
import { startReceiver } from '../helpers/receiver.js';

// Held answers must not time out; a failed attempt is retried 0.2 s later.
const ENV = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_SCHEDULE: '0.2,0.2,0.2', WEBHOOK_TIMEOUT_MS: '30000', RATE_LIMIT_MAX: '100000' };
const RECORDS = 12;
const UPDATES = 4;

interface Sent {
  id: string;
  seq: number;
  type: string;
  record: string;
}

describe.each(DB_KINDS)('webhook order on %s', (kind) => {
  it('sends different records at once, and each record\'s events in commit order, a retry holding back that record\'s later events', async () => {
    const receiver = await startReceiver();
    const api = await startApi(kind, { acme: { org: 'Acme' } }, ENV);
    try {
      const acme = rest(api, api.keys.acme!);
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const attemptsOf = new Map<string, number>();
      let failing: string | undefined;
      receiver.answer(async (request) => {
        await released;
        const id = String(request.headers['webhook-id']);
        attemptsOf.set(id, (attemptsOf.get(id) ?? 0) + 1);
        // The first attempt of one record's creation fails: its updates must wait for the retry.
        return { status: id === failing && attemptsOf.get(id) === 1 ? 500 : 204 };
      });
      expect((await acme.post('/webhook_endpoints', { url: `${receiver.url}/order` })).status).toBe(201);

      const created = await Promise.all(Array.from({ length: RECORDS }, (_, i) => acme.post('/customers', { name: `Ordered ${i}` })));
      const ids = created.map((response) => response.body.id as string);
      // Every record's first event is under way at once, its answer held.
      const held = (await receiver.waitFor(RECORDS)).slice(0, RECORDS).map((r) => JSON.parse(r.body).data.object.id as string);
      expect(new Set(held)).toEqual(new Set(ids));
      // Each record changes UPDATES more times while its first delivery is unanswered.
      await Promise.all(ids.map(async (id) => {
        for (let n = 1; n <= UPDATES; n++) expect((await acme.patch(`/customers/${id}`, { name: `Ordered ${id} v${n + 1}` })).status).toBe(200);
      }));
      // Nothing more of any record went out: each has one delivery under way.
      expect(receiver.received.length).toBe(RECORDS);
      failing = String(receiver.received.find((r) => JSON.parse(r.body).data.object.id === ids[0])!.headers['webhook-id']);
      release();

      const total = RECORDS * (1 + UPDATES);
      const all = (await receiver.waitFor(total + 1, 30_000)).map((r): Sent => {
        const event = JSON.parse(r.body);
        return { id: String(r.headers['webhook-id']), seq: event.seq, type: event.type, record: event.data.object.id };
      });
      // Every event exactly once, but the failed one twice.
      expect(new Set(all.map((s) => s.id)).size).toBe(total);
      expect(all.filter((s) => s.id === failing)).toHaveLength(2);
      for (const id of ids) {
        const mine = all.filter((s) => s.record === id);
        const once = mine.filter((s, i) => i === 0 || s.id !== mine[i - 1]!.id);
        expect(once.map((s) => s.type)).toEqual(['customer.created', ...Array<string>(UPDATES).fill('customer.updated')]);
        // In arrival order, the events' seqs (commit order) ascend.
        expect(once.map((s) => s.seq)).toEqual(once.map((s) => s.seq).sort((a, b) => a - b));
      }
      // The retried creation came before any update of its record.
      const first = all.filter((s) => s.record === ids[0]);
      expect(first.slice(0, 2).map((s) => s.id)).toEqual([failing, failing]);
    } finally {
      await api.stop();
      await receiver.close();
    }
  }, 60_000);

  it('a resend of an event whose delivery waits for its retry goes out at once (the twin does not hold it back)', async () => {
    const receiver = await startReceiver();
    // The first attempt's retry is an hour away.
    const api = await startApi(kind, { acme: { org: 'Acme' } }, { ...ENV, WEBHOOK_RETRY_SCHEDULE: '3600' });
    try {
      const acme = rest(api, api.keys.acme!);
      receiver.answer(() => ({ status: 500 }));
      expect((await acme.post('/webhook_endpoints', { url: `${receiver.url}/twin` })).status).toBe(201);
      expect((await acme.post('/customers', { name: 'Twin' })).status).toBe(201);
      const [failed] = await receiver.waitFor(1);
      const eventId = String(failed!.headers['webhook-id']);
      receiver.answer(() => ({ status: 204 }));
      expect((await acme.post(`/events/${eventId}/resend`, {})).status).toBeLessThan(300);
      const [, resent] = await receiver.waitFor(2, 10_000);
      expect(resent!.headers['webhook-id']).toBe(eventId);
    } finally {
      await api.stop();
      await receiver.close();
    }
  });
});


// Two instances on one PostgreSQL database share the deliveries: every event reaches the
// receiver exactly once, whichever instance took it (each due delivery is claimed by one).
import { describe, expect, it } from 'vitest';
import { rest, serveInProcess, startApi } from '../helpers/api.js';
import { startReceiver } from '../helpers/receiver.js';

const ENV = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', RATE_LIMIT_MAX: '100000' };
const EVENTS = 1000;

describe('webhooks from two instances', () => {
  it(`delivers ${EVENTS} events exactly once`, async () => {
    const receiver = await startReceiver();
    const api = await startApi('postgres', { acme: { org: 'Acme' } }, ENV);
    const second = await serveInProcess({ ...api.db.env, ...ENV });
    try {
      const [one, two] = [rest(api, api.keys.acme!), rest({ url: second.url }, api.keys.acme!)];
      expect((await one.post('/webhook_endpoints', { url: `${receiver.url}/both` })).status).toBe(201);
      // Writes arrive through both instances, 16 at a time.
      for (let batch = 0; batch < EVENTS / 16; batch++) {
        const writes = Array.from({ length: Math.min(16, EVENTS - batch * 16) }, (_, i) => (i % 2 ? one : two).post('/customers', { name: `C${batch}-${i}` }));
        for (const response of await Promise.all(writes)) expect(response.status).toBe(201);
      }
      const received = await receiver.waitFor(EVENTS, 60_000);
      const ids = received.map((request) => String(request.headers['webhook-id']));
      expect(new Set(ids).size).toBe(EVENTS);
      // Nothing more comes: a last write's delivery is the only one after them.
      await one.post('/customers', { name: 'Last' });
      await receiver.waitFor(EVENTS + 1);
      expect(new Set(receiver.received.map((request) => String(request.headers['webhook-id']))).size).toBe(receiver.received.length);
    } finally {
      await second.stop();
      await api.stop();
      await receiver.close();
    }
  }, 120_000);
});

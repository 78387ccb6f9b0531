// GraphQL subscriptions over server-sent events, fed by the event log: a subscriber hears
// what commits through any instance, only of its organization and of what its key may read.
import { describe, expect, it } from 'vitest';
import { rest, serveInProcess, startApi } from '../helpers/api.js';
import { DB_KINDS } from '../helpers/databases.js';
import { subscribe } from './sse.js';

describe.each(DB_KINDS)('subscriptions on %s', (kind) => {
  it('stream the events of the organization, of the types asked for and the resources the key may read', async () => {
    const api = await startApi(kind, { acme: { org: 'Acme' }, customersOnly: { org: 'Acme', scopes: 'customers:read,customers:write' }, other: { org: 'Other Co' } });
    try {
      const acme = rest(api, api.keys.acme!);
      const all = await subscribe(api.url, api.keys.acme!);
      const created = await subscribe(api.url, api.keys.acme!, { types: ['customer.created'] });
      const narrow = await subscribe(api.url, api.keys.customersOnly!);
      for (const stream of [all, created, narrow]) expect([stream.status, stream.headers.get('content-type')]).toEqual([200, 'text/event-stream']);
      await rest(api, api.keys.other!).post('/customers', { name: 'Elsewhere' });
      const customer = (await acme.post('/customers', { name: 'Streamed' })).body;
      await acme.patch(`/customers/${customer.id}`, { name: 'Streamed again' });
      const job = (await acme.post('/jobs', { customer_id: customer.id, title: 'Seen by all' })).body;
      expect((await all.events(3)).map((e) => [e.type, e.data.object.id])).toEqual([
        ['customer.created', customer.id],
        ['customer.updated', customer.id],
        ['job.created', job.id],
      ]);
      expect((await created.events(1)).map((e) => e.data.object.id)).toEqual([customer.id]);
      await acme.post('/customers', { name: 'Second' });
      expect((await narrow.events(3)).map((e) => e.type)).toEqual(['customer.created', 'customer.updated', 'customer.created']);
      for (const stream of [all, created, narrow]) stream.close();
    } finally {
      await api.stop();
    }
  }, 60_000);
});

describe('subscriptions across instances', () => {
  it('hear an event committed through another instance', async () => {
    const api = await startApi('postgres', { acme: { org: 'Acme' } });
    const second = await serveInProcess(api.db.env);
    try {
      const stream = await subscribe(second.url, api.keys.acme!);
      const customer = (await rest(api, api.keys.acme!).post('/customers', { name: 'From A' })).body;
      const [event] = await stream.events(1);
      expect(event).toMatchObject({ type: 'customer.created', data: { object: { id: customer.id, name: 'From A' } } });
      stream.close();
    } finally {
      await second.stop();
      await api.stop();
    }
  }, 60_000);
});

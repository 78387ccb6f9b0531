// An event is stamped no earlier than the change it announces: its created_at is at or after
// the record's created_at and updated_at as the API answered them, for creates, updates,
// transitions, deletes and restores; and ordered by time, events keep the order of their
// changes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/databases.js';
import { startInstances, type Answer, type Client, type Instances } from './apps.js';

const LINE = { description: 'Work', quantity: 1, unit_amount: 100 };

interface Stamped {
  id: string;
  version: number;
  created_at: string;
  updated_at: string;
}

const time = (iso: string) => Date.parse(iso);

describe.each(DB_KINDS)('event time on %s', (kind) => {
  let instances: Instances;
  let api: Client;
  /** Each record version the API answered, by `id:version`. */
  const answered = new Map<string, Stamped>();

  beforeAll(async () => {
    instances = await startInstances(kind, 1);
    api = instances.clients[0]!;
  });
  afterAll(() => instances.close());

  async function record(answer: Promise<Answer>, status = 200): Promise<Stamped> {
    const { status: got, body } = await answer;
    expect(got).toBe(status);
    answered.set(`${body.id}:${body.version}`, body);
    return body;
  }

  it('every event is at or after the record it announces, and events in time order are in change order', async () => {
    const customer = await record(api.post('/customers', { name: 'Ada' }), 201);
    await record(api.patch(`/customers/${customer.id}`, { phone: '+14155550123' }));
    const job = await record(api.post('/jobs', { customer_id: customer.id, title: 'Fence' }), 201);
    await record(api.patch(`/jobs/${job.id}`, { title: 'Fence and gate' }));
    await record(api.post(`/jobs/${job.id}/start`));
    await record(api.post(`/jobs/${job.id}/complete`));
    const invoice = await record(api.post('/invoices', { customer_id: customer.id, job_id: job.id, currency: 'USD', line_items: [LINE] }), 201);
    await record(api.patch(`/invoices/${invoice.id}`, { line_items: [LINE, LINE] }));
    await record(api.post(`/invoices/${invoice.id}/send`));
    await record(api.post(`/invoices/${invoice.id}/pay`));
    const proposal = await record(api.post('/proposals', { customer_id: customer.id, title: 'Deck', total_amount: 100, currency: 'USD' }), 201);
    await record(api.post(`/proposals/${proposal.id}/send`));
    await record(api.post(`/proposals/${proposal.id}/accept`));
    const email = await record(api.post('/emails', { customer_id: customer.id, type: 'incoming', from: 'a@x.example', to: 'b@x.example', subject: 'Hi' }), 201);
    expect((await api.delete(`/emails/${email.id}`)).status).toBe(204);
    await record(api.post(`/emails/${email.id}/restore`));

    const { status, body } = await api.get('/events?limit=100');
    expect(status).toBe(200);
    const events = body.data as Array<{ id: string; type: string; created_at: string; data: { object: Stamped } }>;
    expect(events).toHaveLength(16);
    for (const event of events) {
      const object = event.data.object;
      const why = `${event.type} ${event.created_at} vs ${object.created_at} / ${object.updated_at}`;
      expect(time(event.created_at), why).toBeGreaterThanOrEqual(time(object.updated_at));
      expect(time(event.created_at), why).toBeGreaterThanOrEqual(time(object.created_at));
      // The record as the API answered it for this change (a delete answers no body).
      const answer = answered.get(`${object.id}:${object.version}`);
      if (event.type.endsWith('.deleted')) continue;
      expect(answer, event.type).toBeDefined();
      expect(answer!.updated_at).toBe(object.updated_at);
      expect(time(event.created_at), why).toBeGreaterThanOrEqual(time(answer!.updated_at));
    }
    // Newest first: in change order, and so (never earlier than its cause) in time order too.
    const times = events.map((event) => time(event.created_at));
    expect(times).toEqual([...times].sort((x, y) => y - x));
  });
});

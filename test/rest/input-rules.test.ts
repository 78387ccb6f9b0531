// Input that used to slip through or earn a 500: impossible dates, lax e-mail addresses,
// invisible names, and a Host header that is not a host.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rest, startApi, type Api } from '../helpers/api.js';
import { DB_KINDS } from '../helpers/databases.js';

describe.each(DB_KINDS)('input rules on %s', (kind) => {
  let api: Api;
  let acme: ReturnType<typeof rest>;
  let customerId: string;

  beforeAll(async () => {
    api = await startApi(kind, { acme: { org: 'Acme' } });
    acme = rest(api, api.keys.acme!);
    customerId = (await acme.post('/customers', { name: 'Ada' })).body.id;
  });
  afterAll(() => api.stop());

  it.each([
    ['/jobs', 'scheduled_at', '2026-02-30T00:00:00Z'],
    ['/jobs', 'scheduled_at', '0000-01-01T00:00:00Z'],
    ['/jobs', 'scheduled_at', '2026-01-01T24:00:00Z'],
    ['/invoices', 'due_date', '2026-02-30'],
    ['/invoices', 'due_date', '0000-06-01'],
  ])('POST %s refuses %s = %s, naming the field', async (path, field, value) => {
    const valid = path === '/jobs' ? { title: 'T' } : { currency: 'USD', line_items: [{ description: 'x', quantity: 1, unit_amount: 1 }] };
    const body = { customer_id: customerId, ...valid, [field]: value };
    const response = await acme.post(path, body);
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([expect.objectContaining({ param: field })]);
  });

  it('a leap day is a real day', async () => {
    expect((await acme.post('/jobs', { customer_id: customerId, title: 'Leap', scheduled_at: '2028-02-29T12:00:00Z' })).status).toBe(201);
  });

  it.each(['a@b..cd', '.a@b.cd', 'a.@b.cd', 'a@-b.cd', 'a@b.c', 'a@b', 'a b@c.de'])('refuses the e-mail address %s', async (email) => {
    const response = await acme.post('/customers', { name: 'X', email });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([{ param: 'email', message: 'must be a valid e-mail address' }]);
  });

  it('accepts ordinary and international addresses', async () => {
    for (const email of ['ada.lovelace+crm@analytical.example.co.uk', 'jörg@bücher.example']) {
      expect((await acme.post('/customers', { name: 'X', email })).status).toBe(201);
    }
  });

  it('a name of invisible characters only is blank', async () => {
    const response = await acme.post('/customers', { name: '\u200b\u2060 \u00a0' });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([{ param: 'name', message: 'must not be blank' }]);
  });

  it('an invalid Host header is a 400 problem without internals', async () => {
    const { port } = new URL(api.url);
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/v1/customers', headers: { host: 'bad host' } }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'BAD_REQUEST', errors: [{ param: 'Host' }] });
    expect(answer.body).not.toMatch(/at |Error|TypeError/);
  });
});

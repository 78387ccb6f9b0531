// Changing records over REST: PATCH (JSON merge patch), DELETE (soft) and restore, the
// transitions as POST /{resource}/{id}/{move}, versions with ETag / If-Match / If-None-Match,
// and the business rules that refuse a change because of a record's state.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, gql, rest, startApi, type Api } from '../helpers/api.js';
import { DB_KINDS } from '../helpers/databases.js';

const LINE = { description: 'Work', quantity: 2, unit_amount: 5000 };

describe.each(DB_KINDS)('REST changes on %s', (kind) => {
  let api: Api;
  let acme: ReturnType<typeof rest>;
  let other: ReturnType<typeof rest>;
  let readOnly: ReturnType<typeof rest>;

  beforeAll(async () => {
    api = await startApi(kind, {
      acme: { org: 'Acme' },
      other: { org: 'Other Co' },
      readOnly: { org: 'Acme', scopes: 'customers:read,invoices:read' },
    });
    acme = rest(api, api.keys.acme!);
    other = rest(api, api.keys.other!);
    readOnly = rest(api, api.keys.readOnly!);
  });
  afterAll(() => api.stop());

  const newCustomer = async (name = 'Ada') => (await acme.post('/customers', { name, email: `${name.toLowerCase()}@x.example` })).body;
  const newInvoice = async (customerId: string) => (await acme.post('/invoices', { customer_id: customerId, currency: 'EUR', line_items: [LINE] })).body;

  it('every record carries version 1 and deleted_at null when created, and its ETag', async () => {
    const created = await acme.post('/customers', { name: 'Versioned' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ version: 1, deleted_at: null });
    expect(created.headers.get('etag')).toBe('"1"');
    const fetched = await acme.get(`/customers/${created.body.id}`);
    expect(fetched.headers.get('etag')).toBe('"1"');
  });

  it('PATCH merges the fields given, null clears an optional one, and the version grows by one', async () => {
    const ada = await newCustomer();
    const response = await call(`${api.url}/v1/customers/${ada.id}`, {
      method: 'PATCH',
      key: api.keys.acme,
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ email: 'ADA@new.example', phone: null }),
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id: ada.id, name: 'Ada', email: 'ada@new.example', phone: null, version: 2 });
    expect(response.headers.get('etag')).toBe('"2"');
    expect(new Date(response.body.updated_at).getTime()).toBeGreaterThanOrEqual(new Date(ada.updated_at).getTime());
    expect((await acme.get(`/customers/${ada.id}`)).body).toEqual(response.body);
  });

  it('PATCH validates like a create and names every offending field at once, changing nothing', async () => {
    const ada = await newCustomer();
    const response = await acme.patch(`/customers/${ada.id}`, { name: '  ', email: 'not-an-address', nickname: 'A' });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual(
      expect.arrayContaining([
        { param: 'name', message: 'must not be blank' },
        { param: 'email', message: 'must be a valid e-mail address' },
        { param: 'nickname', message: 'is not a known field' },
      ]),
    );
    expect((await acme.get(`/customers/${ada.id}`)).body.version).toBe(1);
    const cleared = await acme.patch(`/customers/${ada.id}`, { name: null });
    expect(cleared.status).toBe(400);
    expect(cleared.body.errors).toEqual([{ param: 'name', message: 'is required' }]);
  });

  it('PATCH of a missing, foreign or malformed id is a 404', async () => {
    const foreign = (await other.post('/customers', { name: 'Foreign' })).body;
    expect((await acme.patch(`/customers/${foreign.id}`, { name: 'Mine' })).status).toBe(404);
    expect((await acme.patch('/customers/00000000-0000-4000-8000-000000000000', { name: 'X' })).status).toBe(404);
    expect((await acme.patch('/customers/not-a-uuid', { name: 'X' })).status).toBe(404);
    expect((await other.get(`/customers/${foreign.id}`)).body.name).toBe('Foreign');
  });

  it('PATCH of a status is a 400 that points to the transitions', async () => {
    const ada = await newCustomer();
    const job = (await acme.post('/jobs', { customer_id: ada.id, title: 'Boiler' })).body;
    const response = await acme.patch(`/jobs/${job.id}`, { status: 'completed', title: 'Boiler service' });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([{ param: 'status', message: 'is changed by the transitions: POST /jobs/:id/start | complete | cancel' }]);
  });

  it('PATCH and DELETE with a body of another type are a 415', async () => {
    const ada = await newCustomer();
    const response = await call(`${api.url}/v1/customers/${ada.id}`, { method: 'PATCH', key: api.keys.acme, headers: { 'content-type': 'text/plain' }, body: 'name=x' });
    expect(response.status).toBe(415);
  });

  it('emails cannot be edited (405 with Allow), but can be created, deleted and restored', async () => {
    const ada = await newCustomer();
    const email = await acme.post('/emails', { customer_id: ada.id, type: 'incoming', from: 'ada@x.example', to: 'desk@acme.example', subject: 'Hello' });
    expect(email.status).toBe(201);
    expect(email.body).toMatchObject({ subject: 'Hello', version: 1, deleted_at: null, updated_at: expect.any(String) });
    const patch = await acme.patch(`/emails/${email.body.id}`, { subject: 'Changed' });
    expect(patch.status).toBe(405);
    expect(patch.headers.get('allow')).toBe('GET, DELETE');
    expect((await acme.delete(`/emails/${email.body.id}`)).status).toBe(204);
    expect((await acme.post(`/emails/${email.body.id}/restore`)).body).toMatchObject({ subject: 'Hello', version: 3 });
  });

  it('POST creates estimates and proposals too', async () => {
    const ada = await newCustomer();
    const estimate = await acme.post('/estimates', { customer_id: ada.id, currency: 'USD', line_items: [LINE], valid_until: '2026-12-31' });
    expect(estimate.status).toBe(201);
    expect(estimate.body).toMatchObject({ number: expect.stringMatching(/^EST-\d{6}$/), status: 'draft', total_amount: 10000 });
    const proposal = await acme.post('/proposals', { customer_id: ada.id, title: 'Roof', total_amount: 5000, currency: 'USD' });
    expect(proposal.status).toBe(201);
    expect(proposal.headers.get('location')).toBe(`/v1/proposals/${proposal.body.id}`);
  });

  it('transitions run as POST /{resource}/{id}/{move} and answer the record with its new version', async () => {
    const ada = await newCustomer();
    const invoice = await newInvoice(ada.id);
    const sent = await acme.post(`/invoices/${invoice.id}/send`);
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ status: 'sent', version: 2, issued_at: expect.any(String) });
    expect(sent.headers.get('etag')).toBe('"2"');
    const paid = await acme.post(`/invoices/${invoice.id}/pay`);
    expect(paid.body).toMatchObject({ status: 'paid', version: 3, paid_at: expect.any(String) });

    const job = (await acme.post('/jobs', { customer_id: ada.id, title: 'Boiler' })).body;
    expect((await acme.post(`/jobs/${job.id}/start`)).body.status).toBe('in_progress');
    expect((await acme.post(`/jobs/${job.id}/complete`)).body).toMatchObject({ status: 'completed', completed_at: expect.any(String) });

    const estimate = (await acme.post('/estimates', { customer_id: ada.id, currency: 'USD', line_items: [LINE] })).body;
    expect((await acme.post(`/estimates/${estimate.id}/send`)).body.status).toBe('sent');
    expect((await acme.post(`/estimates/${estimate.id}/decline`)).body.status).toBe('declined');
    const proposal = (await acme.post('/proposals', { customer_id: ada.id, title: 'Roof', total_amount: 5000, currency: 'USD' })).body;
    expect((await acme.post(`/proposals/${proposal.id}/send`)).body.status).toBe('sent');
    expect((await acme.post(`/proposals/${proposal.id}/accept`)).body.status).toBe('accepted');
  });

  it('an illegal transition is a 409 CONFLICT naming the current status; an unknown one a 404', async () => {
    const ada = await newCustomer();
    const invoice = await newInvoice(ada.id);
    const response = await acme.post(`/invoices/${invoice.id}/pay`);
    expect(response.status).toBe(409);
    expect(response.body).toMatchObject({ code: 'CONFLICT', errors: [{ param: 'status', message: 'is draft' }] });
    expect(response.body.detail).toMatch(/its status is draft/);
    expect((await acme.post(`/invoices/${invoice.id}/approve`)).status).toBe(404);
  });

  it('a draft invoice can change its lines, currency, dates and job; a sent one is immutable (409)', async () => {
    const ada = await newCustomer();
    const job = (await acme.post('/jobs', { customer_id: ada.id, title: 'Boiler' })).body;
    const invoice = await newInvoice(ada.id);
    const changed = await acme.patch(`/invoices/${invoice.id}`, {
      currency: 'USD',
      due_date: '2027-01-31',
      job_id: job.id,
      line_items: [{ description: 'Parts', quantity: 3, unit_amount: 700 }, { description: 'Labour', quantity: 1, unit_amount: 9000 }],
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ currency: 'USD', due_date: '2027-01-31', job_id: job.id, total_amount: 11100, number: invoice.number, version: 2 });
    expect(changed.body.line_items).toEqual([
      { description: 'Parts', quantity: 3, unit_amount: 700, amount: 2100 },
      { description: 'Labour', quantity: 1, unit_amount: 9000, amount: 9000 },
    ]);
    const bad = await acme.patch(`/invoices/${invoice.id}`, { line_items: [], currency: 'XXY' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: { param: string }) => e.param).sort()).toEqual(['currency', 'line_items']);
    expect((await acme.patch(`/invoices/${invoice.id}`, { customer_id: ada.id })).body.errors).toEqual([{ param: 'customer_id', message: 'is not a known field' }]);

    await acme.post(`/invoices/${invoice.id}/send`);
    const refused = await acme.patch(`/invoices/${invoice.id}`, { currency: 'EUR' });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/its status is sent/);
    expect((await acme.get(`/invoices/${invoice.id}`)).body.currency).toBe('USD');
  });

  it('DELETE answers 204; the record leaves the item, the list, its total and relations, and restore brings it back', async () => {
    const ada = await newCustomer('Deletable');
    const job = (await acme.post('/jobs', { customer_id: ada.id, title: 'Gutter' })).body;
    const totalBefore = (await acme.get('/jobs')).body.pagination.total;
    const deleted = await acme.delete(`/jobs/${job.id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.headers.get('etag')).toBe('"2"');
    expect((await acme.get(`/jobs/${job.id}`)).status).toBe(404);
    const list = (await acme.get('/jobs?limit=100')).body;
    expect(list.data.map((j: { id: string }) => j.id)).not.toContain(job.id);
    expect(list.pagination.total).toBe(totalBefore - 1);
    const nested = await gql(api, api.keys.acme!, 'query($id: ID!) { customer(id: $id) { jobs { id } } }', { id: ada.id });
    expect(nested.customer.jobs).toEqual([]);
    expect((await acme.delete(`/jobs/${job.id}`)).status).toBe(404);
    expect((await acme.patch(`/jobs/${job.id}`, { title: 'x' })).status).toBe(404);

    const restored = await acme.post(`/jobs/${job.id}/restore`);
    expect(restored.status).toBe(200);
    expect(restored.body).toMatchObject({ id: job.id, title: 'Gutter', deleted_at: null, version: 3 });
    expect((await acme.get('/jobs')).body.pagination.total).toBe(totalBefore);
    const again = await acme.post(`/jobs/${job.id}/restore`);
    expect(again.status).toBe(409);
    expect(again.body.detail).toMatch(/not deleted/);
  });

  it('financial records: an invoice or estimate that left draft cannot be deleted (409)', async () => {
    const ada = await newCustomer();
    const draft = await newInvoice(ada.id);
    expect((await acme.delete(`/invoices/${draft.id}`)).status).toBe(204);
    const sent = await newInvoice(ada.id);
    await acme.post(`/invoices/${sent.id}/send`);
    const refused = await acme.delete(`/invoices/${sent.id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/its status is sent/);
    const estimate = (await acme.post('/estimates', { customer_id: ada.id, currency: 'USD', line_items: [LINE] })).body;
    await acme.post(`/estimates/${estimate.id}/send`);
    expect((await acme.delete(`/estimates/${estimate.id}`)).status).toBe(409);
    expect((await acme.get(`/estimates/${estimate.id}`)).status).toBe(200);
  });

  it('a customer that live records refer to cannot be deleted (409 naming them); once they are gone it can', async () => {
    const ada = await newCustomer('Holder');
    const invoice = await newInvoice(ada.id);
    await acme.post(`/invoices/${invoice.id}/send`);
    const job = (await acme.post('/jobs', { customer_id: ada.id, title: 'Fence' })).body;
    const refused = await acme.delete(`/customers/${ada.id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/still has 1 job, 1 invoice/);
    expect(refused.body.errors).toEqual(
      expect.arrayContaining([
        { param: 'jobs', message: '1 live record refer to it' },
        { param: 'invoices', message: '1 live record refer to it' },
      ]),
    );
    expect((await acme.get(`/customers/${ada.id}`)).body.version).toBe(1);

    const lone = await newCustomer('Lone');
    const lonesJob = (await acme.post('/jobs', { customer_id: lone.id, title: 'Shed' })).body;
    expect((await acme.delete(`/jobs/${lonesJob.id}`)).status).toBe(204);
    expect((await acme.delete(`/customers/${lone.id}`)).status).toBe(204);
    // A deleted customer is no longer a valid reference, and its job cannot come back alone.
    const orphan = await acme.post('/jobs', { customer_id: lone.id, title: 'Ghost' });
    expect(orphan.status).toBe(400);
    expect(orphan.body.errors).toEqual([{ param: 'customer_id', message: 'does not name a record of this organization' }]);
    const restoreJob = await acme.post(`/jobs/${lonesJob.id}/restore`);
    expect(restoreJob.status).toBe(409);
    expect(restoreJob.body.detail).toMatch(/its customer is deleted/);
    expect((await acme.post(`/customers/${lone.id}/restore`)).status).toBe(200);
    expect((await acme.post(`/jobs/${lonesJob.id}/restore`)).status).toBe(200);
    expect(job.id).toBeDefined();
  });

  it('deleted records leave the aggregates', async () => {
    const before = await gql(api, api.keys.acme!, '{ customerCount invoiceSummary { status count } }');
    const ada = await newCustomer('Counted');
    const invoice = await newInvoice(ada.id);
    await acme.delete(`/invoices/${invoice.id}`);
    await acme.delete(`/customers/${ada.id}`);
    const after = await gql(api, api.keys.acme!, '{ customerCount invoiceSummary { status count } }');
    expect(after).toEqual(before);
  });

  it('If-Match makes a change conditional: a stale version is a 412 carrying the current record', async () => {
    const ada = await newCustomer();
    const first = await acme.patch(`/customers/${ada.id}`, { name: 'Ada L.' }, { 'if-match': '"1"' });
    expect(first.status).toBe(200);
    expect(first.headers.get('etag')).toBe('"2"');
    const stale = await acme.patch(`/customers/${ada.id}`, { name: 'Ada Byron' }, { 'if-match': '"1"' });
    expect(stale.status).toBe(412);
    expect(stale.headers.get('content-type')).toBe('application/problem+json');
    expect(stale.headers.get('etag')).toBe('"2"');
    expect(stale.body).toMatchObject({ code: 'PRECONDITION_FAILED', status: 412, current: { id: ada.id, name: 'Ada L.', version: 2 } });
    expect((await acme.delete(`/customers/${ada.id}`, { 'if-match': '"1"' })).status).toBe(412);
    expect((await acme.post(`/customers/${ada.id}/restore`, undefined, { 'if-match': '"2"' })).status).toBe(409);
    expect((await acme.patch(`/customers/${ada.id}`, { name: 'Any' }, { 'if-match': '*' })).status).toBe(200);
    const malformed = await acme.patch(`/customers/${ada.id}`, { name: 'X' }, { 'if-match': 'version 3' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.errors).toEqual([{ param: 'If-Match', message: 'must be a version as its ETag gives it, such as "3"' }]);
  });

  it('If-Match on transitions and restore', async () => {
    const ada = await newCustomer();
    const invoice = await newInvoice(ada.id);
    expect((await acme.post(`/invoices/${invoice.id}/send`, undefined, { 'if-match': '"7"' })).status).toBe(412);
    expect((await acme.post(`/invoices/${invoice.id}/send`, undefined, { 'if-match': '"1"' })).status).toBe(200);
    const draft = await newInvoice(ada.id);
    await acme.delete(`/invoices/${draft.id}`, { 'if-match': '"1"' });
    const stale = await acme.post(`/invoices/${draft.id}/restore`, undefined, { 'if-match': '"1"' });
    expect(stale.status).toBe(412);
    expect((await acme.post(`/invoices/${draft.id}/restore`, undefined, { 'if-match': '"2"' })).body.version).toBe(3);
  });

  it('concurrent PATCHes from the same version: exactly one wins, the others get 412', async () => {
    const ada = await newCustomer();
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => acme.patch(`/customers/${ada.id}`, { name: `Writer ${i}` }, { 'if-match': '"1"' })),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([200, 412, 412, 412, 412, 412, 412, 412]);
    const winner = answers.find((a) => a.status === 200)!.body;
    const now = (await acme.get(`/customers/${ada.id}`)).body;
    expect(now).toMatchObject({ name: winner.name, version: 2 });
    for (const loser of answers.filter((a) => a.status === 412)) expect(loser.body.current).toMatchObject({ name: winner.name, version: 2 });
  });

  it('concurrent PATCHes without If-Match all apply, one version each', async () => {
    const ada = await newCustomer();
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => acme.patch(`/customers/${ada.id}`, { phone: `+4915100000${i}0` })));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(answers.map((a) => a.body.version).sort()).toEqual([2, 3, 4, 5, 6, 7]);
    expect((await acme.get(`/customers/${ada.id}`)).body.version).toBe(7);
  });

  it('If-None-Match on GET answers 304 while the record is unchanged', async () => {
    const ada = await newCustomer();
    const unchanged = await fetch(`${api.url}/v1/customers/${ada.id}`, { headers: { authorization: `Bearer ${api.keys.acme}`, 'if-none-match': '"1"' } });
    expect(unchanged.status).toBe(304);
    expect(unchanged.headers.get('etag')).toBe('"1"');
    expect(await unchanged.text()).toBe('');
    await acme.patch(`/customers/${ada.id}`, { name: 'Changed' });
    const changed = await acme.get(`/customers/${ada.id}`, { 'if-none-match': '"1"' });
    expect(changed.status).toBe(200);
    expect(changed.body.name).toBe('Changed');
  });

  it('Idempotency-Key works on PATCH, DELETE and transitions: a retry replays, changes nothing', async () => {
    const ada = await newCustomer();
    const first = await acme.patch(`/customers/${ada.id}`, { name: 'Once' }, { 'idempotency-key': 'patch-1' });
    const retry = await acme.patch(`/customers/${ada.id}`, { name: 'Once' }, { 'idempotency-key': 'patch-1' });
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(retry.body).toEqual(first.body);
    expect((await acme.get(`/customers/${ada.id}`)).body.version).toBe(2);
    expect((await acme.patch(`/customers/${ada.id}`, { name: 'Other' }, { 'idempotency-key': 'patch-1' })).status).toBe(400);

    const invoice = await newInvoice(ada.id);
    await acme.post(`/invoices/${invoice.id}/send`, undefined, { 'idempotency-key': 'send-1' });
    const resent = await acme.post(`/invoices/${invoice.id}/send`, undefined, { 'idempotency-key': 'send-1' });
    expect(resent.status).toBe(200);
    expect(resent.body.version).toBe(2);

    const job = (await acme.post('/jobs', { customer_id: ada.id, title: 'Once' })).body;
    expect((await acme.delete(`/jobs/${job.id}`, { 'idempotency-key': 'del-1' })).status).toBe(204);
    const again = await acme.delete(`/jobs/${job.id}`, { 'idempotency-key': 'del-1' });
    expect(again.status).toBe(204);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });

  it('X:write covers update, delete, restore and transitions of X; a read key gets 403 naming it', async () => {
    const ada = await newCustomer();
    const invoice = await newInvoice(ada.id);
    const patch = await readOnly.patch(`/customers/${ada.id}`, { name: 'Nope' });
    expect(patch.status).toBe(403);
    expect(patch.body.detail).toBe('This API key lacks the scope customers:write.');
    expect((await readOnly.delete(`/customers/${ada.id}`)).status).toBe(403);
    expect((await readOnly.post(`/customers/${ada.id}/restore`)).status).toBe(403);
    const send = await readOnly.post(`/invoices/${invoice.id}/send`);
    expect(send.status).toBe(403);
    expect(send.body.detail).toBe('This API key lacks the scope invoices:write.');
    expect((await acme.get(`/invoices/${invoice.id}`)).body.status).toBe('draft');
  });

  it('GraphQL: update, delete and restore with expectedVersion; a stale version is a PRECONDITION_FAILED carrying the current version', async () => {
    const ada = await newCustomer();
    const updated = await gql(api, api.keys.acme!, 'mutation($id: ID!) { updateCustomer(id: $id, input: { name: "Ada G" }, expectedVersion: 1) { name version } }', { id: ada.id });
    expect(updated.updateCustomer).toEqual({ name: 'Ada G', version: 2 });
    const stale = await call(`${api.url}/graphql`, {
      method: 'POST',
      key: api.keys.acme,
      json: { query: 'mutation($id: ID!) { updateCustomer(id: $id, input: { name: "Late" }, expectedVersion: 1) { name } }', variables: { id: ada.id } },
    });
    expect(stale.body.errors[0].extensions).toEqual({ code: 'PRECONDITION_FAILED', currentVersion: 2 });
    const deleted = await gql(api, api.keys.acme!, 'mutation($id: ID!) { deleteCustomer(id: $id) { id deletedAt version } }', { id: ada.id });
    expect(deleted.deleteCustomer).toMatchObject({ id: ada.id, deletedAt: expect.any(String), version: 3 });
    const restored = await gql(api, api.keys.acme!, 'mutation($id: ID!) { restoreCustomer(id: $id, expectedVersion: 3) { deletedAt version } }', { id: ada.id });
    expect(restored.restoreCustomer).toEqual({ deletedAt: null, version: 4 });
    const invoice = await newInvoice(ada.id);
    await gql(api, api.keys.acme!, 'mutation($id: ID!) { sendInvoice(id: $id) { id } }', { id: invoice.id });
    const illegal = await call(`${api.url}/graphql`, {
      method: 'POST',
      key: api.keys.acme,
      json: { query: 'mutation($id: ID!) { updateInvoice(id: $id, input: { currency: "USD" }) { id } }', variables: { id: invoice.id } },
    });
    expect(illegal.body.errors[0].extensions).toMatchObject({ code: 'CONFLICT', status: 'sent' });
  });
});

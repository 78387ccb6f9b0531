// Duplicate customers and their merge (CONTRACT section 10): GET /v1/customers/duplicates
// groups the live customers sharing an e-mail or a phone; POST /v1/customers/{id}/merge moves
// every child of the sources to the target and deletes the sources, in one transaction, each
// change an event. Another organization's look-alikes never group or merge.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, gql, rest, startApi, type Api } from '../helpers/api.js';
import { DB_KINDS } from '../helpers/databases.js';

const LINE = { description: 'Work', quantity: 1, unit_amount: 5000 };
const NOWHERE = '0190e1b2-0000-7000-8000-000000000000';

type Client = ReturnType<typeof rest>;
type Json = Record<string, any>;

describe.each(DB_KINDS)('customer duplicates and merge on %s', (kind) => {
  let api: Api;
  let listing: Client;
  let acme: Client;
  let other: Client;

  beforeAll(async () => {
    api = await startApi(kind, {
      listing: { org: 'Listing Co' },
      acme: { org: 'Acme' },
      other: { org: 'Other Co' },
      readJobsOnly: { org: 'Acme', scopes: 'jobs:read' },
      customersOnly: { org: 'Acme', scopes: 'customers:read,customers:write' },
    });
    listing = rest(api, api.keys.listing!);
    acme = rest(api, api.keys.acme!);
    other = rest(api, api.keys.other!);
  });
  afterAll(() => api.stop());

  const customer = async (client: Client, body: Json) => {
    const created = await client.post('/customers', body);
    expect(created.status).toBe(201);
    return created.body as Json;
  };
  /** The customers as REST shows them now, oldest first (the order of a group). */
  const current = async (client: Client, ...ids: string[]) => {
    const records = await Promise.all(ids.map(async (id) => (await client.get(`/customers/${id}`)).body as Json));
    return records.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  };
  /** The events a request wrote (newest first), by its X-Request-Id. */
  const eventsOf = async (requestId: string) => {
    const page = await acme.get('/events?limit=100');
    expect(page.status).toBe(200);
    return (page.body.data as Json[]).filter((event) => event.request_id === requestId);
  };

  describe('GET /v1/customers/duplicates', () => {
    let groups: Json[];

    beforeAll(async () => {
      const a1 = await customer(listing, { name: 'A One', email: 'same@x.example', phone: '+14155550001' });
      const a2 = await customer(listing, { name: 'A Two', email: 'SAME@x.example' });
      const b1 = await customer(listing, { name: 'B One', phone: '+14155550001' });
      const d1 = await customer(listing, { name: 'D One', email: 'b-dup@x.example' });
      const d2 = await customer(listing, { name: 'D Two', email: 'b-dup@x.example', phone: '+14155550002' });
      await customer(listing, { name: 'Alone', email: 'alone@x.example', phone: '+14155550009' });
      // A deleted customer shares nothing any more.
      const gone = await customer(listing, { name: 'Gone', email: 'same@x.example', phone: '+14155550002' });
      expect((await listing.delete(`/customers/${gone.id}`)).status).toBe(204);
      // Another organization's look-alikes, of every kind.
      await customer(other, { name: 'Their A', email: 'same@x.example', phone: '+14155550001' });
      await customer(other, { name: 'Their B', email: 'alone@x.example', phone: '+14155550009' });
      await customer(other, { name: 'Their D', email: 'b-dup@x.example', phone: '+14155550002' });
      await customer(other, { name: 'Their A2', email: 'same@x.example' });
      groups = [
        { key: 'email', value: 'b-dup@x.example', count: 2, customers: await current(listing, d1.id, d2.id) },
        { key: 'email', value: 'same@x.example', count: 2, customers: await current(listing, a1.id, a2.id) },
        { key: 'phone', value: '+14155550001', count: 2, customers: await current(listing, a1.id, b1.id) },
      ];
    });

    it('groups the live customers sharing an e-mail (without case) or a phone, e-mail groups first, each by value, its customers oldest first as REST shows them', async () => {
      const response = await listing.get('/customers/duplicates');
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ data: groups, pagination: { page: 1, limit: 20, total: 3, next_cursor: null, has_more: false } });
    });

    it('pages by cursor and by page number, in the same order', async () => {
      const first = await listing.get('/customers/duplicates?limit=2');
      expect(first.body.data).toEqual(groups.slice(0, 2));
      expect(first.body.pagination).toMatchObject({ page: 1, limit: 2, total: 3, has_more: true });
      const next = await listing.get(`/customers/duplicates?limit=2&cursor=${first.body.pagination.next_cursor}`);
      expect(next.body).toEqual({ data: groups.slice(2), pagination: { page: 2, limit: 2, total: 3, next_cursor: null, has_more: false } });
      const second = await listing.get('/customers/duplicates?limit=2&page=2');
      expect(second.body.data).toEqual(groups.slice(2));
    });

    it('names every bad parameter, and a cursor of another list or organization', async () => {
      const bad = await listing.get('/customers/duplicates?limit=101&bogus=1');
      expect(bad.status).toBe(400);
      expect(bad.body.errors.map((e: Json) => e.param)).toEqual(['bogus']);
      const tooMany = await listing.get('/customers/duplicates?limit=101');
      expect(tooMany.status).toBe(400);
      expect(tooMany.body.errors).toEqual([{ param: 'limit', message: 'must be an integer from 1 to 100' }]);
      const customersCursor = (await listing.get('/customers?limit=1')).body.pagination.next_cursor;
      const foreign = await listing.get(`/customers/duplicates?cursor=${customersCursor}`);
      expect(foreign.status).toBe(400);
      expect(foreign.body.errors[0].param).toBe('cursor');
      const theirs = (await other.get('/customers/duplicates?limit=1')).body.pagination.next_cursor;
      expect((await listing.get(`/customers/duplicates?cursor=${theirs}`)).body.errors[0].param).toBe('cursor');
    });

    it('another organization sees only its own groups, never grouped with look-alikes elsewhere', async () => {
      const response = await other.get('/customers/duplicates');
      expect(response.body.data.map((g: Json) => [g.key, g.value, g.count, g.customers.map((c: Json) => c.name)])).toEqual([['email', 'same@x.example', 2, ['Their A', 'Their A2']]]);
      expect(response.body.pagination.total).toBe(1);
    });

    it('is GraphQL customerDuplicates, with the same groups', async () => {
      const data = await gql(api, api.keys.listing!, '{ customerDuplicates { data { key value count customers { id name email phone } } pagination { total } } }');
      expect(data.customerDuplicates.pagination.total).toBe(3);
      expect(data.customerDuplicates.data).toEqual(groups.map((g) => ({ ...g, customers: g.customers.map((c: Json) => ({ id: c.id, name: c.name, email: c.email, phone: c.phone })) })));
    });

    it('needs customers:read', async () => {
      const response = await rest(api, api.keys.readJobsOnly!).get('/customers/duplicates');
      expect(response.status).toBe(403);
      expect(response.body.detail).toContain('customers:read');
    });
  });

  describe('POST /v1/customers/{id}/merge', () => {
    /** A customer with one child of each kind, a deleted job besides. */
    const withChildren = async (name: string, body: Json = {}): Promise<Json & { children: Record<'jobs' | 'emails' | 'invoices' | 'estimates' | 'proposals', string[]> }> => {
      const record = await customer(acme, { name, ...body });
      const job = (await acme.post('/jobs', { customer_id: record.id, title: `${name}'s job` })).body;
      const dropped = (await acme.post('/jobs', { customer_id: record.id, title: `${name}'s old job` })).body;
      expect((await acme.delete(`/jobs/${dropped.id}`)).status).toBe(204);
      const email = (await acme.post('/emails', { customer_id: record.id, type: 'incoming', from: 'x@x.example', to: 'desk@acme.example', subject: name })).body;
      const invoice = (await acme.post('/invoices', { customer_id: record.id, job_id: job.id, currency: 'USD', line_items: [LINE] })).body;
      const estimate = (await acme.post('/estimates', { customer_id: record.id, currency: 'USD', line_items: [LINE] })).body;
      const proposal = (await acme.post('/proposals', { customer_id: record.id, title: name, total_amount: 100, currency: 'USD' })).body;
      const children = { jobs: [job.id, dropped.id], emails: [email.id], invoices: [invoice.id], estimates: [estimate.id], proposals: [proposal.id] };
      for (const ids of Object.values(children)) for (const id of ids) expect(id).toEqual(expect.any(String));
      return { ...record, children };
    };
    const childrenOf = (...owners: Array<{ children: Record<string, string[]> }>) =>
      owners.flatMap((owner) => Object.entries(owner.children).flatMap(([path, ids]) => ids.map((id) => ({ path, id }))));

    it('moves every child of each source to the target (each a <child>.updated event), deletes the sources (each a customer.deleted event) and answers the target', async () => {
      const target = await withChildren('Keeper', { email: 'dup@acme.example' });
      const s1 = await withChildren('Copy one', { email: 'dup@acme.example' });
      const s2 = await withChildren('Copy two', { phone: '+14155550100' });
      const before = (await acme.get(`/customers/${target.id}`)).body;

      const merged = await acme.post(`/customers/${target.id}/merge`, { source_ids: [s1.id, s2.id] });
      expect(merged.status).toBe(200);
      expect(merged.body).toEqual(before);
      expect(merged.headers.get('etag')).toBe(`"${before.version}"`);

      for (const { path, id } of childrenOf(s1, s2)) {
        const child = await call(`${api.url}/v1/${path}/${id}`, { key: api.keys.acme });
        // A deleted child is not served, but its history shows where it went.
        if (child.status === 404) continue;
        expect(child.body.customer_id, `${path} ${id}`).toBe(target.id);
      }
      for (const source of [s1, s2]) expect((await acme.get(`/customers/${source.id}`)).status).toBe(404);
      expect((await acme.get(`/jobs?customer_id=${target.id}`)).body.pagination.total).toBe(3);

      const events = await eventsOf(merged.headers.get('x-request-id')!);
      const moved = childrenOf(s1, s2);
      const ownerOf = new Map<string, string>([...childrenOf(s1).map(({ id }) => [id, s1.id] as const), ...childrenOf(s2).map(({ id }) => [id, s2.id] as const)]);
      expect(events.map((e) => e.type).sort()).toEqual([...moved.map(({ path }) => `${path.replace(/s$/, '')}.updated`), 'customer.deleted', 'customer.deleted'].sort());
      for (const { id } of moved) {
        const event = events.find((e) => e.data.object.id === id)!;
        expect(event.data.object.customer_id).toBe(target.id);
        expect(event.data.previous_attributes.customer_id).toBe(ownerOf.get(id));
      }
      const deleted = events.filter((e) => e.type === 'customer.deleted').map((e) => e.data.object.id);
      expect(deleted.sort()).toEqual([s1.id, s2.id].sort());
      // In the order of their numbers, the events' times never go back (events of records with
      // lines are written at commit, the others when their statement ends).
      const bySeq = [...events].sort((a, b) => Number(a.seq) - Number(b.seq));
      expect(bySeq.map((e) => `${e.created_at} ${e.type}`)).toEqual(bySeq.map((e) => `${e.created_at} ${e.type}`).sort((a, b) => a.slice(0, 24).localeCompare(b.slice(0, 24))));
      // The moved deleted job comes back beside the customer kept.
      const restored = await acme.post(`/jobs/${s2.children.jobs[1]}/restore`);
      expect(restored.status).toBe(200);
      expect(restored.body.customer_id).toBe(target.id);
    });

    it('names every fault of source_ids at once and changes nothing', async () => {
      const target = await customer(acme, { name: 'Target' });
      const source = await withChildren('Source');
      const removed = await customer(acme, { name: 'Removed' });
      await acme.delete(`/customers/${removed.id}`);
      const theirs = await customer(other, { name: 'Look-alike', email: 'dup@acme.example' });
      const refused = await acme.post(`/customers/${target.id}/merge`, { source_ids: [target.id, 'nope', source.id, source.id.toUpperCase(), theirs.id, removed.id] });
      expect(refused.status).toBe(400);
      expect(refused.body.errors).toEqual([
        { param: 'source_ids[0]', message: 'is the customer merged into: a customer cannot be merged into itself' },
        { param: 'source_ids[1]', message: 'must be a UUID' },
        { param: 'source_ids[3]', message: 'names a customer already named' },
        { param: 'source_ids[4]', message: 'does not name a record of this organization' },
        { param: 'source_ids[5]', message: 'does not name a record of this organization' },
      ]);
      expect(await eventsOf(refused.headers.get('x-request-id')!)).toEqual([]);
      expect((await acme.get(`/customers/${source.id}`)).status).toBe(200);
      expect((await acme.get(`/jobs/${source.children.jobs[0]}`)).body.customer_id).toBe(source.id);
      expect((await other.get(`/customers/${theirs.id}`)).body).toMatchObject({ deleted_at: null, version: 1 });

      const empty = await acme.post(`/customers/${target.id}/merge`, { source_ids: [] });
      expect(empty.body.errors).toEqual([{ param: 'source_ids', message: 'must name at least one customer to merge' }]);
      const tooMany = await acme.post(`/customers/${target.id}/merge`, { source_ids: Array.from({ length: 101 }, (_, i) => `0190e1b2-0000-7000-8000-${String(i).padStart(12, '0')}`) });
      expect(tooMany.status).toBe(400);
      expect(tooMany.body.errors).toEqual([{ param: 'source_ids', message: 'must name at most 100 customers' }]);
      const bodiless = await call(`${api.url}/v1/customers/${target.id}/merge`, { method: 'POST', key: api.keys.acme });
      expect(bodiless.status).toBe(400);
      expect(bodiless.body.errors).toEqual([{ param: 'source_ids', message: 'is required' }]);
      const missing = await acme.post(`/customers/${target.id}/merge`, { sources: [source.id] });
      expect(missing.status).toBe(400);
      expect(missing.body.errors).toEqual(expect.arrayContaining([{ param: 'sources', message: 'is not a known field' }, { param: 'source_ids', message: 'is required' }]));
    });

    it('answers 404 for a target that is missing, deleted, malformed or another organization\'s', async () => {
      const source = await customer(acme, { name: 'Orphan source' });
      const removed = await customer(acme, { name: 'Removed target' });
      await acme.delete(`/customers/${removed.id}`);
      const theirs = await customer(other, { name: 'Their target' });
      for (const target of [NOWHERE, removed.id, 'nope', theirs.id]) {
        const response = await acme.post(`/customers/${target}/merge`, { source_ids: [source.id] });
        expect(response.status, target).toBe(404);
      }
      expect((await acme.get(`/customers/${source.id}`)).status).toBe(200);
      // Nor can another organization merge into its customer one of ours.
      const across = await other.post(`/customers/${theirs.id}/merge`, { source_ids: [source.id] });
      expect(across.body.errors).toEqual([{ param: 'source_ids[0]', message: 'does not name a record of this organization' }]);
      expect((await acme.get(`/customers/${source.id}`)).status).toBe(200);
    });

    it('needs the write scope of every kind of record it moves, besides customers:write (403 naming them)', async () => {
      const target = await customer(acme, { name: 'Scoped target' });
      const source = await customer(acme, { name: 'Scoped source' });
      const refused = await rest(api, api.keys.customersOnly!).post(`/customers/${target.id}/merge`, { source_ids: [source.id] });
      expect(refused.status).toBe(403);
      for (const scope of ['jobs:write', 'invoices:write', 'estimates:write', 'proposals:write']) expect(refused.body.detail).toContain(scope);
      expect((await acme.get(`/customers/${source.id}`)).status).toBe(200);
    });

    it('honours If-Match on the target (412 with the current record), and Prefer: dry-run changes nothing', async () => {
      const target = await customer(acme, { name: 'Versioned target' });
      await acme.patch(`/customers/${target.id}`, { name: 'Versioned target 2' });
      const source = await customer(acme, { name: 'Versioned source' });
      const stale = await acme.post(`/customers/${target.id}/merge`, { source_ids: [source.id] }, { 'if-match': '"1"' });
      expect(stale.status).toBe(412);
      expect(stale.body.current).toMatchObject({ id: target.id, version: 2 });
      const dry = await acme.post(`/customers/${target.id}/merge`, { source_ids: [source.id] }, { 'if-match': '"2"', prefer: 'dry-run' });
      expect(dry.status).toBe(200);
      expect(dry.headers.get('dry-run')).toBe('true');
      expect((await acme.get(`/customers/${source.id}`)).status).toBe(200);
      const merged = await acme.post(`/customers/${target.id}/merge`, { source_ids: [source.id] }, { 'if-match': '"2"' });
      expect(merged.status).toBe(200);
      expect((await acme.get(`/customers/${source.id}`)).status).toBe(404);
    });

    it('is GraphQL mergeCustomers(id, input: { sourceIds }), its faults named in GraphQL words', async () => {
      const target = await customer(acme, { name: 'GraphQL target' });
      const source = await customer(acme, { name: 'GraphQL source' });
      const mutation = 'mutation($id: ID!, $sources: [ID!]!) { mergeCustomers(id: $id, input: { sourceIds: $sources }) { id name } }';
      const refused = await call(`${api.url}/graphql`, { method: 'POST', key: api.keys.acme, json: { query: mutation, variables: { id: target.id, sources: [target.id] } } });
      expect(refused.body.errors[0].extensions).toMatchObject({ code: 'BAD_REQUEST', errors: [{ param: 'sourceIds[0]', message: expect.stringContaining('merged into') }] });
      const data = await gql(api, api.keys.acme!, mutation, { id: target.id, sources: [source.id] });
      expect(data.mergeCustomers).toEqual({ id: target.id, name: 'GraphQL target' });
      expect((await acme.get(`/customers/${source.id}`)).status).toBe(404);
    });

    it('leaves no child under a deleted customer when children are created for a source during the merge', async () => {
      const target = await customer(acme, { name: 'Concurrent target' });
      const source = await customer(acme, { name: 'Concurrent source' });
      const create = (i: number) => acme.post('/jobs', { customer_id: source.id, title: `Racing ${i}` });
      // Creates sent before, with and after the merge: some commit first and move, the others find the source deleted.
      const early = [0, 1, 2, 3].map(create);
      const merging = acme.post(`/customers/${target.id}/merge`, { source_ids: [source.id] });
      const creates = await Promise.all([...early, ...Array.from({ length: 16 }, (_, i) => create(i + 4))]);
      expect((await merging).status).toBe(200);
      for (const made of creates) {
        if (made.status === 201) expect((await acme.get(`/jobs/${made.body.id}`)).body.customer_id).toBe(target.id);
        else expect(made.body.errors).toEqual([{ param: 'customer_id', message: 'does not name a record of this organization' }]);
      }
      const made = creates.filter((c) => c.status === 201).length;
      expect((await acme.get(`/jobs?customer_id=${target.id}`)).body.pagination.total).toBe(made);
      expect((await acme.get(`/jobs?customer_id=${source.id}`)).body.pagination.total).toBe(0);
    });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  BadRequest,
  Conflict,
  CrmClient,
  CrmError,
  Forbidden,
  NotFound,
  PreconditionFailed,
  RateLimited,
  ServerError,
  Unauthorized,
  verifyWebhook,
  WebhookVerificationError,
  type CrmEvent,
  type Customer,
  type Tombstone,
} from '../src/index.js';
import { startInFlightProxy } from '../../../test/helpers/in-flight-proxy.js';
import { startApi, type Api } from '../../../test/helpers/api.js';
import { ANY_DATABASE } from '../../../test/helpers/databases.js';
import { call } from '../../../test/helpers/api.js';

describe('JavaScript client against the real server', () => {
  let api: Api;
  let crm: CrmClient;
  beforeAll(async () => {
    // Webhooks to a receiver of this test, on the loopback address, over http.
    api = await startApi(ANY_DATABASE, { full: { org: 'Acme' }, readOnly: { org: 'Acme', scopes: 'customers:read' }, limited: { org: 'Limited' } }, {
      RATE_LIMIT_MAX: '1000',
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    });
    crm = new CrmClient({ apiKey: api.keys.full, baseUrl: `${api.url}/v1` });
  });
  afterAll(() => api.stop());

  it('creates, gets and lists, with pagination', async () => {
    const ada = await crm.customers.create({ name: 'Ada Lovelace', email: 'ada@example.com' });
    expect(ada).toMatchObject({ name: 'Ada Lovelace', email: 'ada@example.com' });
    expect(await crm.customers.get(ada.id)).toEqual(ada);
    const job = await crm.jobs.create({ customer_id: ada.id, title: 'Boiler' });
    const invoice = await crm.invoices.create({ customer_id: ada.id, job_id: job.id, currency: 'USD', line_items: [{ description: 'Work', quantity: 2, unit_amount: 500 }] });
    expect(invoice.total_amount).toBe(1000);
    const page = await crm.customers.list({ search: 'ada', limit: 5 });
    expect(page.pagination).toMatchObject({ page: 1, limit: 5, total: 1 });
    expect((await crm.invoices.list({ status: 'draft' })).data.map((i) => i.number)).toEqual([invoice.number]);
    for (const list of [() => crm.emails.list(), () => crm.estimates.list(), () => crm.proposals.list()]) expect((await list()).pagination.total).toBe(0);
  });

  it('waits and retries a 409 carrying Retry-After (an Idempotency-Key still in flight)', async () => {
    const proxy = await startInFlightProxy(api.url);
    try {
      const through = new CrmClient({ apiKey: api.keys.full, baseUrl: `${proxy.url}/v1` });
      expect((await through.customers.create({ name: 'JS in flight' })).name).toBe('JS in flight');
      expect(proxy.refused()).toBe(1);
      expect(new Conflict(409, 'CONFLICT', 'x', [], null)).toBeInstanceOf(CrmError);
    } finally {
      await proxy.close();
    }
  });

  it('iterates over every page', async () => {
    for (let i = 0; i < 7; i++) await crm.customers.create({ name: `Paged ${i}` });
    const names: string[] = [];
    for await (const customer of crm.customers.iterate({ search: 'paged', limit: 3 })) names.push(customer.name);
    expect(names).toHaveLength(7);
    expect(new Set(names).size).toBe(7);
  });

  it('raises a typed error for each kind of problem, with its details', async () => {
    const bad = await crm.customers.create({ name: '' }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(BadRequest);
    expect(bad).toMatchObject({ status: 400, code: 'BAD_REQUEST', errors: [{ param: 'name', message: 'must not be blank' }] });
    expect((bad as CrmError).requestId).toMatch(/^[0-9a-f-]{36}$/);
    await expect(new CrmClient({ apiKey: 'svc_live_nope', baseUrl: `${api.url}/v1` }).customers.list()).rejects.toBeInstanceOf(Unauthorized);
    await expect(new CrmClient({ apiKey: api.keys.readOnly, baseUrl: `${api.url}/v1` }).invoices.list()).rejects.toBeInstanceOf(Forbidden);
    await expect(crm.customers.get('00000000-0000-4000-8000-000000000000')).rejects.toBeInstanceOf(NotFound);
    const failing = new CrmClient({
      apiKey: 'k',
      maxRetries: 0,
      fetch: async () => new Response(JSON.stringify({ status: 500, code: 'INTERNAL', detail: 'An internal error occurred.', request_id: 'r1' }), { status: 500 }),
    });
    await expect(failing.customers.list()).rejects.toMatchObject({ name: 'ServerError', status: 500, requestId: 'r1' });
    expect(ServerError.prototype).toBeInstanceOf(CrmError);
  });

  it('retries a 429 after Retry-After, and raises RateLimited when out of retries', async () => {
    const limitedApi = await startApi(ANY_DATABASE, { key: { org: 'Acme' } }, { RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW_SECONDS: '2' });
    try {
      const impatient = new CrmClient({ apiKey: limitedApi.keys.key, baseUrl: `${limitedApi.url}/v1`, maxRetries: 0 });
      await impatient.customers.list();
      await impatient.customers.list();
      await expect(impatient.customers.list()).rejects.toBeInstanceOf(RateLimited);
      const patient = new CrmClient({ apiKey: limitedApi.keys.key, baseUrl: `${limitedApi.url}/v1`, maxRetries: 3 });
      const started = Date.now();
      expect((await patient.customers.list()).pagination.total).toBe(0);
      expect(Date.now() - started).toBeGreaterThan(500);
    } finally {
      await limitedApi.stop();
    }
  });

  it('a create retried after a lost response creates one record', async () => {
    let dropped = false;
    const flaky = new CrmClient({
      apiKey: api.keys.full,
      baseUrl: `${api.url}/v1`,
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        if (!dropped && init?.method === 'POST') {
          dropped = true; // the server created it, but the answer never arrives
          throw new TypeError('fetch failed: connection reset');
        }
        return response;
      },
    });
    const created = await flaky.customers.create({ name: 'Exactly once' });
    expect(dropped).toBe(true);
    const matches = await call(`${api.url}/v1/customers?search=${encodeURIComponent('Exactly once')}`, { key: api.keys.full });
    expect(matches.body.data.map((c: { id: string }) => c.id)).toEqual([created.id]);
  });

  it('updates with a merge patch: null clears a field, and the version grows by one', async () => {
    const customer = await crm.customers.create({ name: 'JS Patch', email: 'patch.js@example.com', phone: '+14155550100' });
    expect(customer).toMatchObject({ version: 1, deleted_at: null });
    const updated = await crm.customers.update(customer.id, { name: 'JS Patched', phone: null });
    expect(updated).toMatchObject({ id: customer.id, name: 'JS Patched', email: 'patch.js@example.com', phone: null, version: 2 });
    expect(await crm.customers.get(customer.id)).toEqual(updated);
    expect((await crm.customers.update(customer.id, { email: 'patched.js@example.com' }, { ifMatch: 2 })).version).toBe(3);
  });

  it('a conditional update of a stale record throws PreconditionFailed carrying the current record', async () => {
    const read = await crm.customers.create({ name: 'JS Stale' });
    const fresh = await crm.customers.updateIfUnchanged(read, { name: 'JS Fresh' });
    expect(fresh).toMatchObject({ name: 'JS Fresh', version: read.version + 1 });
    const stale = await crm.customers.updateIfUnchanged(read, { name: 'JS Lost update' }).catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(PreconditionFailed);
    expect(stale).toBeInstanceOf(CrmError);
    expect(stale).toMatchObject({ status: 412, code: 'PRECONDITION_FAILED' });
    expect((stale as PreconditionFailed).current).toMatchObject({ id: read.id, name: 'JS Fresh', version: fresh.version });
    expect((await crm.customers.get(read.id)).name).toBe('JS Fresh');
    await expect(crm.customers.delete(read.id, { ifMatch: read.version })).rejects.toBeInstanceOf(PreconditionFailed);
  });

  it('deletes (then the record is not found) and restores', async () => {
    const customer = await crm.customers.create({ name: 'JS Deleted' });
    expect(await crm.customers.delete(customer.id)).toBeUndefined();
    await expect(crm.customers.get(customer.id)).rejects.toBeInstanceOf(NotFound);
    const restored = await crm.customers.restore(customer.id);
    expect(restored).toMatchObject({ id: customer.id, name: 'JS Deleted', deleted_at: null });
    expect(restored.version).toBeGreaterThan(customer.version);
    expect(await crm.customers.get(customer.id)).toEqual(restored);
    const email = await crm.emails.create({ customer_id: customer.id, type: 'outgoing', from: 'us@example.com', to: 'them@example.com', subject: 'Hello' });
    await crm.emails.delete(email.id);
    await expect(crm.emails.get(email.id)).rejects.toBeInstanceOf(NotFound);
    expect('update' in crm.emails).toBe(false);
  });

  it('moves records through their transitions; a sent invoice cannot be edited (Conflict)', async () => {
    const customer = await crm.customers.create({ name: 'JS Transitions' });
    const invoice = await crm.invoices.create({ customer_id: customer.id, currency: 'USD', line_items: [{ description: 'Work', quantity: 1, unit_amount: 900 }] });
    const sent = await crm.invoices.transition(invoice.id, 'send', { ifMatch: invoice.version });
    expect(sent).toMatchObject({ status: 'sent', version: invoice.version + 1 });
    await expect(crm.invoices.update(invoice.id, { currency: 'EUR' })).rejects.toBeInstanceOf(Conflict);
    await expect(crm.invoices.transition(invoice.id, 'pay', { ifMatch: invoice.version })).rejects.toBeInstanceOf(PreconditionFailed);
    expect((await crm.invoices.transition(invoice.id, 'pay')).status).toBe('paid');
    const job = await crm.jobs.create({ customer_id: customer.id, title: 'Boiler' });
    expect((await crm.jobs.transition(job.id, 'start')).status).toBe('in_progress');
    expect((await crm.jobs.transition(job.id, 'complete')).status).toBe('completed');
    const proposal = await crm.proposals.create({ customer_id: customer.id, title: 'Plan', currency: 'USD', total_amount: 100 });
    await crm.proposals.transition(proposal.id, 'send');
    expect((await crm.proposals.transition(proposal.id, 'decline')).status).toBe('declined');
    expect(() => crm.invoices.transition(invoice.id, 'start' as 'send')).toThrow(TypeError);
  });

  it('an update retried after a lost response is applied once (the retry reuses its Idempotency-Key)', async () => {
    const customer = await crm.customers.create({ name: 'JS Once' });
    const keys: string[] = [];
    let dropped = false;
    const flaky = new CrmClient({
      apiKey: api.keys.full,
      baseUrl: `${api.url}/v1`,
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        if (init?.method === 'PATCH') keys.push(new Headers(init.headers).get('idempotency-key')!);
        if (!dropped && init?.method === 'PATCH') {
          dropped = true; // the server applied it, but the answer never arrives
          throw new TypeError('fetch failed: connection reset');
        }
        return response;
      },
    });
    const updated = await flaky.customers.update(customer.id, { name: 'JS Once more' });
    expect(keys).toHaveLength(2);
    expect(keys[1]).toBe(keys[0]);
    expect(updated.version).toBe(customer.version + 1);
    expect((await crm.customers.get(customer.id)).version).toBe(customer.version + 1);
  });

  it('syncs: every change and tombstone page by page, then resumes from the saved cursor', async () => {
    const kept = await crm.customers.create({ name: 'JS Sync kept' });
    const gone = await crm.customers.create({ name: 'JS Sync gone' });
    const first = crm.customers.sync({ limit: 2 });
    const seen: Array<Customer | Tombstone> = [];
    for await (const record of first) seen.push(record);
    expect(seen.length).toBeGreaterThan(2); // more than one page was followed
    expect(seen.map((r) => r.id)).toEqual(expect.arrayContaining([kept.id, gone.id]));
    expect(first.cursor).toEqual(expect.any(String));
    const saved = first.cursor!;

    await crm.customers.update(kept.id, { name: 'JS Sync changed' });
    await crm.customers.delete(gone.id);
    const resumed = crm.customers.sync({ cursor: saved, limit: 1 });
    const changes: Array<Customer | Tombstone> = [];
    for await (const record of resumed) changes.push(record);
    expect(changes.map((r) => r.id).sort()).toEqual([kept.id, gone.id].sort());
    expect(changes.find((r) => r.id === kept.id)).toMatchObject({ name: 'JS Sync changed', version: kept.version + 1 });
    expect(changes.find((r) => r.id === gone.id)).toMatchObject({ id: gone.id, deleted: true, deleted_at: expect.any(String) });
    expect((changes.find((r) => r.id === gone.id) as Tombstone).version).toBeGreaterThan(gone.version);
    expect(resumed.cursor).not.toBe(saved);

    const nothing: unknown[] = [];
    for await (const record of crm.customers.sync({ cursor: resumed.cursor })) nothing.push(record);
    expect(nothing).toEqual([]);
    const since: unknown[] = [];
    for await (const record of crm.customers.sync({ updatedSince: new Date(Date.now() + 60_000) })) since.push(record);
    expect(since).toEqual([]);
  });

  it('sorts, filters (ranges, sets, related records), expands and shapes lists and items, in REST\'s words', async () => {
    const acme = await crm.customers.create({ name: 'JS Sorted Acme', email: 'sorted@acme.example' });
    const other = await crm.customers.create({ name: 'JS Sorted Other' });
    const job = await crm.jobs.create({ customer_id: acme.id, title: 'JS sorted job', scheduled_at: '2026-12-01T09:00:00Z' });
    const invoice = async (customer: string, due: string, amount: number, moves: Array<'send' | 'pay'>) => {
      const created = await crm.invoices.create({ customer_id: customer, job_id: customer === acme.id ? job.id : undefined, currency: 'EUR', due_date: due, line_items: [{ description: 'x', quantity: 1, unit_amount: amount }] });
      for (const move of moves) await crm.invoices.transition(created.id, move);
      return created.id;
    };
    const later = await invoice(acme.id, '2026-11-01', 500, ['send']);
    const first = await invoice(acme.id, '2026-10-01', 100, ['send']);
    const dearer = await invoice(acme.id, '2026-11-01', 900, ['send']);
    const paid = await invoice(acme.id, '2026-10-15', 300, ['send', 'pay']);
    await invoice(acme.id, '2026-12-15', 700, ['send']); // not yet due
    await invoice(other.id, '2026-10-01', 100, ['send']); // another customer's

    const overdue = await crm.invoices.list({
      orderBy: ['due_date', '-total_amount'],
      where: { status: ['sent'], due_date: { lt: '2026-12-01' }, customer: { search: 'js sorted acme' } },
      expand: ['customer', 'job'],
      fields: ['number', 'due_date', 'total_amount'],
    });
    expect(overdue.data.map((i) => i.id)).toEqual([first, dearer, later]);
    expect(overdue.pagination.total).toBe(3);
    const [row] = overdue.data;
    expect(Object.keys(row!).sort()).toEqual(['customer', 'due_date', 'id', 'job', 'number', 'total_amount']);
    // Typed as asked: the expanded customer's fields, and no field left out.
    expect(row!.customer?.email).toBe('sorted@acme.example');
    expect(row!.job?.title).toBe('JS sorted job');
    // @ts-expect-error status was not asked for
    expect(row!.status).toBeUndefined();

    // One value for a set, a bare value for an exact match, Dates for timestamps, filters beside the paging options.
    expect((await crm.invoices.list({ status: 'paid', total_amount: 300, customer_id: acme.id })).data.map((i) => i.id)).toEqual([paid]);
    expect((await crm.jobs.list({ where: { scheduled_at: { gte: new Date('2026-12-01T00:00:00Z'), lt: new Date('2026-12-02T00:00:00Z') }, customer_id: acme.id } })).data.map((j) => j.id)).toEqual([job.id]);
    // A relation's range, one level deep: customers with a sent invoice due before November.
    const withOverdue = await crm.customers.list({ where: { invoices: { status: 'sent', due_date: { lt: '2026-11-01' } }, search: 'js sorted' }, orderBy: '-name' });
    expect(withOverdue.data.map((c) => c.id)).toEqual([other.id, acme.id]);
    const names: string[] = [];
    for await (const c of crm.customers.iterate({ where: { search: 'js sorted' }, orderBy: 'name', fields: ['name'], limit: 1 })) names.push(c.name);
    expect(names).toEqual(['JS Sorted Acme', 'JS Sorted Other']);

    // An item's shape: expand and fields on get.
    const one = await crm.invoices.get(first, { expand: ['customer'], fields: ['number'] });
    expect(Object.keys(one).sort()).toEqual(['customer', 'id', 'number']);
    expect(one.customer?.id).toBe(acme.id);

    // What the server refuses, each named as sent.
    const refused = await crm.invoices.list({ where: { due_date: { lt: 'soon' } } }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(BadRequest);
    expect((refused as BadRequest).errors.map((e) => e.param)).toEqual(['due_date[lt]']);
    // Types refuse what the server would: an unknown sort, status, operator, field or reference.
    const wrong = [
      // @ts-expect-error colour is not a sortable field
      () => crm.invoices.list({ orderBy: 'colour' }),
      // @ts-expect-error lost is not an invoice status
      () => crm.invoices.list({ where: { status: 'lost' } }),
      // @ts-expect-error between is not an operator
      () => crm.invoices.list({ where: { due_date: { between: '2026-12-01' } } }),
      // @ts-expect-error a customer refers to no other record
      () => crm.customers.get(acme.id, { expand: ['customer'] }),
      // @ts-expect-error colour is not a field of an invoice
      () => crm.invoices.list({ fields: ['colour'] }),
    ];
    for (const call of wrong) await expect(call()).rejects.toBeInstanceOf(BadRequest);
  });

  it('has a method for every operation of the OpenAPI document', async () => {
    const document = (await call(`${api.url}/v1/openapi.json`)).body;
    const camel = (name: string) => name.replace(/_(\w)/g, (_, c: string) => c.toUpperCase());
    const missing = '00000000-0000-4000-8000-000000000000';
    type Method = (...args: unknown[]) => Promise<unknown>;
    for (const [path, methods] of Object.entries(document.paths as Record<string, Record<string, unknown>>)) {
      const [, name, id, action] = path.split('/');
      // /webhook_endpoints is crm.webhookEndpoints.
      const resource = (crm as unknown as Record<string, Record<string, Method>>)[camel(name!)];
      expect(resource, path).toBeDefined();
      for (const method of Object.keys(methods)) {
        const operation =
          id === 'by_external_id'
            ? 'upsert'
            : !action && id && !id.startsWith('{')
              ? id // customers.batch, customers.duplicates
              : !action
                ? { get: id ? 'get' : 'list', patch: 'update', delete: 'delete', post: 'create' }[method]!
                : action === 'restore' || typeof resource![action] === 'function' || !('transition' in resource!)
                  ? camel(action) // restore, customers.merge; events.resend, webhookEndpoints.rotateSecret and .deliveries
                  : 'transition';
        expect(typeof resource![operation], `${method.toUpperCase()} ${path}`).toBe('function');
        const run = resource![operation]!;
        if (operation === 'transition') {
          // The client knows the move: it throws TypeError for one it does not know, before any request.
          await expect(run(missing, action!)).rejects.toBeInstanceOf(NotFound);
        } else if (operation === 'merge') {
          // Into a customer that does not exist (the source must be a live one).
          const source = await crm.customers.create({ name: 'JS merge source' });
          await expect(run(missing, [source.id])).rejects.toBeInstanceOf(NotFound);
        } else if (operation === 'upsert') {
          // The method calls this route: the operation judges the body (every create requires a field).
          const refused = await run('js-route', {}, { dryRun: true }).catch((e: unknown) => e);
          expect(refused, path).toBeInstanceOf(BadRequest);
          expect((refused as BadRequest).errors.length, path).toBeGreaterThan(0);
        } else if (operation === 'batch') {
          // The method calls this route: a dry run answers what it would write.
          expect(await run([{ op: 'delete', id: missing }], 'partial', { dryRun: true }), path).toEqual({ results: [expect.objectContaining({ index: 0, status: 404 })] });
        } else if (operation === 'duplicates') {
          expect(await run(), path).toMatchObject({ data: expect.any(Array), pagination: { page: 1 } });
        } else if (action && operation !== 'restore') {
          // The method calls this route: an unknown record is NotFound (not a 405 or a route miss).
          await expect(run(name === 'events' ? 'evt_00000000000000000000000000000000' : missing)).rejects.toBeInstanceOf(NotFound);
        }
      }
    }
  });

  it('upserts and batches by external id, filters on integration keys, and dry runs keep nothing', async () => {
    const created = await crm.customers.upsert('js-crm-1', { name: 'JS Upserted', metadata: { tier: 'gold', region: 'eu' } });
    expect(created).toMatchObject({ external_id: 'js-crm-1', metadata: { tier: 'gold', region: 'eu' }, version: 1 });
    const updated = await crm.customers.upsert('js-crm-1', { name: 'JS Upserted again', metadata: { tier: 'silver' } });
    expect(updated).toMatchObject({ id: created.id, name: 'JS Upserted again', metadata: { tier: 'silver', region: 'eu' }, version: 2 });
    // An update merges metadata key by key; null removes one.
    expect((await crm.customers.update(created.id, { metadata: { region: null } })).metadata).toEqual({ tier: 'silver' });
    expect((await crm.customers.list({ external_id: 'js-crm-1' })).data.map((c) => c.id)).toEqual([created.id]);
    expect((await crm.customers.list({ where: { metadata: { tier: 'silver' } } })).data.map((c) => c.id)).toEqual([created.id]);

    const { results } = await crm.customers.batch([
      { op: 'create', external_id: 'js-batch-1', data: { name: 'JS Batch 1' } },
      { op: 'upsert', external_id: 'js-crm-1', data: { name: 'JS Upserted by batch' } },
      { op: 'update', external_id: 'js-batch-1', data: { phone: '+14155550199' } },
      { op: 'delete', id: created.id, if_match: 4 },
    ]);
    expect(results.map((r) => [r.index, r.status])).toEqual([[0, 201], [1, 200], [2, 200], [3, 204]]);
    expect(results[2]!.record).toMatchObject({ external_id: 'js-batch-1', phone: '+14155550199' });
    await expect(crm.customers.get(created.id)).rejects.toBeInstanceOf(NotFound);
    // Atomic: a refusal throws, naming the item's field, and nothing is written.
    const refused = await crm.customers.batch([{ op: 'create', data: { name: 'JS never' } }, { op: 'create', data: { name: 'JS bad', email: 'nope' } }]).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(BadRequest);
    expect((refused as BadRequest).errors.map((e) => e.param)).toEqual(['items[1].email']);
    expect((await crm.customers.list({ search: 'JS never' })).pagination.total).toBe(0);
    // Partial: each refused item in its result.
    const partial = await crm.customers.batch([{ op: 'create', data: { name: 'JS partial' } }, { op: 'update', external_id: 'js-nobody', data: { name: 'x' } }], 'partial');
    expect(partial.results.map((r) => r.status)).toEqual([201, 404]);
    expect(partial.results[1]).toMatchObject({ index: 1, error: { code: 'NOT_FOUND', errors: [{ param: 'external_id' }] } });
    expect((await crm.emails.batch([{ op: 'delete', external_id: 'js-nobody' }], 'partial')).results[0]!.status).toBe(404);
    // @ts-expect-error e-mails cannot be updated, so a batch of them has no update
    const emailUpdate: Parameters<typeof crm.emails.batch>[0] = [{ op: 'update', id: created.id }];
    expect(emailUpdate).toHaveLength(1);

    // Dry runs answer what the write would, and keep nothing.
    const tried = await crm.customers.create({ name: 'JS dry run' }, { dryRun: true });
    expect(tried).toMatchObject({ name: 'JS dry run', version: 1 });
    await expect(crm.customers.get(tried.id)).rejects.toBeInstanceOf(NotFound);
    const batchTried = await crm.customers.batch([{ op: 'upsert', external_id: 'js-dry', data: { name: 'JS dry batch' } }], 'atomic', { dryRun: true });
    expect(batchTried.results[0]).toMatchObject({ status: 201, record: { external_id: 'js-dry' } });
    expect((await crm.customers.list({ external_id: 'js-dry' })).pagination.total).toBe(0);
    const kept = (await crm.customers.list({ external_id: 'js-batch-1' })).data[0]!;
    await expect(crm.customers.update(kept.id, { name: 'JS stale' }, { ifMatch: 1, dryRun: true })).rejects.toBeInstanceOf(PreconditionFailed);
    expect(await crm.customers.update(kept.id, { name: 'JS renamed' }, { dryRun: true })).toMatchObject({ name: 'JS renamed', version: kept.version + 1 });
    await crm.customers.delete(kept.id, { dryRun: true });
    expect(await crm.customers.get(kept.id)).toEqual(kept);
  });

  it('finds duplicate customers and merges them, their records moving along', async () => {
    const kept = await crm.customers.create({ name: 'JS Kept', email: 'js.twin@example.com' });
    const twin = await crm.customers.create({ name: 'JS Twin', email: 'JS.Twin@example.com' });
    const job = await crm.jobs.create({ customer_id: twin.id, title: 'JS twin job' });
    const group = (await crm.customers.duplicates({ limit: 100 })).data.find((g) => g.key === 'email' && g.value === 'js.twin@example.com');
    expect(group).toMatchObject({ count: 2, customers: [{ id: kept.id }, { id: twin.id }] });
    expect(await crm.customers.merge(kept.id, [twin.id], { dryRun: true })).toEqual(kept);
    expect((await crm.jobs.get(job.id)).customer_id).toBe(twin.id);
    expect(await crm.customers.merge(kept.id, [twin.id], { ifMatch: kept.version })).toEqual(kept);
    expect((await crm.jobs.get(job.id)).customer_id).toBe(kept.id);
    await expect(crm.customers.get(twin.id)).rejects.toBeInstanceOf(NotFound);
    expect((await crm.customers.duplicates({ limit: 100 })).data.some((g) => g.value === 'js.twin@example.com')).toBe(false);
    const refused = await crm.customers.merge(kept.id, [kept.id]).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(BadRequest);
    expect((refused as BadRequest).errors.map((e) => e.param)).toEqual(['source_ids[0]']);
  });

  it('imports a CSV file in the background, and lists the requests made', async () => {
    const started = await crm.imports.create('name,external_id,metadata.team\nJS Imported,js-import-1,blue\n', { resource: 'customers', mode: 'upsert' });
    expect(started).toEqual({ id: expect.any(String), status: expect.stringMatching(/^(pending|running|completed)$/) });
    // It runs in the background: wait for it to end (no import left running behind this test).
    let progress = await crm.imports.get(started.id);
    for (const deadline = Date.now() + 20_000; progress.status !== 'completed' && progress.status !== 'failed' && Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
      progress = await crm.imports.get(started.id);
    }
    expect(progress).toMatchObject({ id: started.id, status: 'completed', resource: 'customers', mode: 'upsert', total: 1, created: 1, failed: 0 });
    expect((await crm.customers.list({ external_id: 'js-import-1' })).data.map((c) => c.metadata)).toEqual([{ team: 'blue' }]);
    const refused = await crm.imports.create('nickname\nx\n', { resource: 'customers' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(BadRequest);
    const logged = await crm.requestLogs.list({ request_id: (refused as BadRequest).requestId! });
    expect(logged.data.map((r) => [r.method, r.status, r.error_code])).toEqual([['POST', 400, 'BAD_REQUEST']]);
    for await (const log of crm.requestLogs.iterate({ status: '4xx', limit: 5 })) expect(log.status).toBeGreaterThanOrEqual(400);
  });

  it('lists, gets and pages events; catches up after an event and resumes from the cursor', async () => {
    const customer = await crm.customers.create({ name: 'JS Evented' });
    await crm.customers.update(customer.id, { name: 'JS Evented twice' });
    const latest = await crm.events.list({ limit: 2 });
    expect(latest.data.map((e) => e.type)).toEqual(['customer.updated', 'customer.created']);
    const [updated, created] = latest.data as [CrmEvent, CrmEvent];
    expect(updated).toMatchObject({ id: expect.stringMatching(/^evt_[0-9a-f]{32}$/), data: { object: { id: customer.id, name: 'JS Evented twice' }, previous_attributes: { name: 'JS Evented' } } });
    expect(await crm.events.get(created.id)).toEqual(created);
    await expect(crm.events.get('evt_00000000000000000000000000000000')).rejects.toBeInstanceOf(NotFound);
    const types: string[] = [];
    for await (const event of crm.events.iterate({ type: 'customer.created', limit: 2 })) types.push(event.type);
    expect(types.length).toBe((await crm.events.list({ type: 'customer.created' })).pagination.total);
    expect(new Set(types)).toEqual(new Set(['customer.created']));

    // Catching up after `created`, one a page: the update; then, from the cursor, what came since.
    const since = crm.events.since(created.id, { limit: 1 });
    const seen: CrmEvent[] = [];
    for await (const event of since) seen.push(event);
    expect(seen.map((e) => e.id)).toEqual([updated.id]);
    expect(since.cursor).toEqual(expect.any(String));
    const later = await crm.customers.create({ name: 'JS Evented later' });
    const other = await crm.customers.create({ name: 'JS Evented last' });
    const resumed = crm.events.since(null, { cursor: since.cursor, limit: 1 });
    const caughtUp: CrmEvent[] = [];
    for await (const event of resumed) caughtUp.push(event);
    expect(caughtUp.map((e) => [e.type, (e.data.object as { id: string }).id])).toEqual([
      ['customer.created', later.id],
      ['customer.created', other.id],
    ]);
    const nothing: CrmEvent[] = [];
    for await (const event of resumed) nothing.push(event);
    expect(nothing).toEqual([]);
    const typed: string[] = [];
    for await (const event of crm.events.since(created.id, { type: 'customer.updated' })) typed.push(event.id);
    expect(typed).toEqual([updated.id]);
    expect(() => crm.events.since()).toThrow(TypeError);
    await expect(crm.events.list({ after: 'evt_00000000000000000000000000000000' })).rejects.toBeInstanceOf(BadRequest);
  });

  it('receives real webhook deliveries and verifies them with the endpoint secret; rotation, resend and the delivery log', async () => {
    const received: Array<{ headers: IncomingHttpHeaders; body: Buffer }> = [];
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks) });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    /** The deliveries of the event about record `id` (of `type`), once `count` have arrived. */
    const deliveriesOf = async (id: string, type: string, count = 1) => {
      for (const started = Date.now(); Date.now() - started < 20_000; await new Promise((r) => setTimeout(r, 50))) {
        const found = received.filter((r) => {
          const event = JSON.parse(r.body.toString('utf8')) as CrmEvent;
          return event.type === type && (event.data.object as { id: string }).id === id;
        });
        if (found.length >= count) return found;
      }
      throw new Error(`no delivery of ${type} ${id}`);
    };
    const endpoint = await crm.webhookEndpoints.create({ url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, description: 'JS receiver', event_types: ['customer.created'] });
    try {
      expect(endpoint).toMatchObject({ secret: expect.stringMatching(/^whsec_/), event_types: ['customer.created'], enabled: true, description: 'JS receiver' });
      expect(await crm.webhookEndpoints.get(endpoint.id)).not.toHaveProperty('secret');
      expect((await crm.webhookEndpoints.list()).data.map((e) => e.id)).toContain(endpoint.id);
      const all: string[] = [];
      for await (const e of crm.webhookEndpoints.iterate()) all.push(e.id);
      expect(all).toContain(endpoint.id);

      const customer = await crm.customers.create({ name: 'JS Hooked' });
      const [delivery] = await deliveriesOf(customer.id, 'customer.created');
      const event = await verifyWebhook(delivery!.body, delivery!.headers, endpoint.secret);
      expect(event).toMatchObject({ type: 'customer.created', data: { object: customer } });
      expect(delivery!.headers['webhook-id']).toBe(event.id);
      expect(await crm.events.get(event.id)).toEqual(event);
      // The body as a string verifies too; the secret without its prefix as well.
      expect((await verifyWebhook(delivery!.body.toString('utf8'), delivery!.headers, endpoint.secret.slice('whsec_'.length))).id).toBe(event.id);
      const other = await crm.webhookEndpoints.create({ url: 'http://127.0.0.1:9/never', enabled: false });
      await expect(verifyWebhook(delivery!.body, delivery!.headers, other.secret)).rejects.toBeInstanceOf(WebhookVerificationError);
      await crm.webhookEndpoints.delete(other.id);
      await expect(crm.webhookEndpoints.get(other.id)).rejects.toBeInstanceOf(NotFound);

      // Resent by hand: the same event (the same webhook-id) arrives again.
      expect((await crm.events.resend(event.id, endpoint.id)).id).toBe(event.id);
      const [, again] = await deliveriesOf(customer.id, 'customer.created', 2);
      expect(again!.headers['webhook-id']).toBe(event.id);
      expect((await verifyWebhook(again!.body, again!.headers, endpoint.secret)).id).toBe(event.id);

      // After a rotation, deliveries carry two signatures: the new secret and the old one verify.
      const rotated = await crm.webhookEndpoints.rotateSecret(endpoint.id);
      expect(rotated.secret).not.toBe(endpoint.secret);
      const next = await crm.customers.create({ name: 'JS Hooked after rotation' });
      const [signedTwice] = await deliveriesOf(next.id, 'customer.created');
      expect(String(signedTwice!.headers['webhook-signature']).split(' ')).toHaveLength(2);
      expect((await verifyWebhook(signedTwice!.body, signedTwice!.headers, rotated.secret)).data.object).toEqual(next);
      expect((await verifyWebhook(signedTwice!.body, signedTwice!.headers, endpoint.secret)).data.object).toEqual(next);

      const updated = await crm.webhookEndpoints.update(endpoint.id, { description: null, event_types: [] });
      expect(updated).toMatchObject({ id: endpoint.id, description: null, event_types: [] });
      let log = (await crm.webhookEndpoints.deliveries(endpoint.id, { limit: 100 })).data;
      for (const started = Date.now(); log.length < 3 && Date.now() - started < 10_000; ) log = (await crm.webhookEndpoints.deliveries(endpoint.id, { limit: 100 })).data;
      expect(log.filter((a) => a.event_id === event.id)).toHaveLength(2);
      expect(log[0]).toMatchObject({ status_code: 204, error: null, duration_ms: expect.any(Number) });
    } finally {
      await crm.webhookEndpoints.delete(endpoint.id);
      await new Promise((resolve) => receiver.close(resolve));
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, gql, rest, startApi, type Api, type KeySpec } from '../helpers/api.js';
import { DB_KINDS } from '../helpers/databases.js';
import { getNamedType, getNullableType, isListType, type GraphQLObjectType } from 'graphql';
import { ROUTES } from '../../src/rest/router.js';
import { schema } from '../../src/schema/index.js';
import { registeredResources } from '../../src/schema/registry.js';
import { exampleBody, parentsFirst, referTo } from '../helpers/examples.js';

/** A record of every resource, by item (`customer`, `job`, ...). */
type OrgData = Record<string, string>;

/**
 * A record of every resource from its create's example, parents first, each referring to
 * the organization's own parents, and each tagged by its external id (`theirs-job`).
 */
async function fill(api: Api, key: string, tag: string): Promise<OrgData> {
  const records: OrgData = {};
  for (const resource of parentsFirst()) {
    const { item } = resource;
    const body = { ...(await exampleBody(rest(api, key), resource, referTo(records))), external_id: `${tag}-${item}` };
    const created = await rest(api, key).post(`/${resource.path}`, body);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    records[item] = created.body.id;
  }
  return records;
}

// The other side: another organization, or the caller's own test mode (svc_test_ keys work
// in a test twin of the organization: neither mode may see the other's data).
const OTHERS: Array<[string, KeySpec]> = [
  ['another organization', { org: 'Theirs' }],
  ['its own test mode', { org: 'Mine', mode: 'test' }],
];

describe.each(DB_KINDS.flatMap((kind) => OTHERS.map(([name, spec]) => ({ kind, name, spec }))))('isolation from $name on $kind', ({ kind, spec }) => {
  let api: Api;
  let mine: OrgData;
  let theirs: OrgData;
  let seen: string[];

  beforeAll(async () => {
    api = await startApi(kind, { mine: { org: 'Mine' }, theirs: spec });
    mine = await fill(api, api.keys.mine!, 'mine');
    theirs = await fill(api, api.keys.theirs!, 'theirs');
    seen = [];
  });
  afterAll(() => api.stop());

  const foreignIds = () => Object.values(theirs);
  function expectNothingForeign(body: unknown) {
    const text = JSON.stringify(body);
    seen.push(text);
    for (const id of foreignIds()) expect(text).not.toContain(id);
    expect(text).not.toContain('theirs');
  }

  it('every REST list shows only the caller\'s rows and counts', async () => {
    for (const route of ROUTES.filter((r) => r.kind === 'list')) {
      const response = await rest(api, api.keys.mine!).get(route.path);
      expect(response.status).toBe(200);
      // The event log, webhook endpoints and the request log are not records made here: only nothing foreign.
      if (['events', 'webhook_endpoints', 'request_logs'].includes(route.resource.path)) {
        expectNothingForeign(response.body);
        continue;
      }
      expect(response.body.pagination.total, route.path).toBe(1);
      expectNothingForeign(response.body);
      const item = registeredResources().find((r) => r.path === route.resource.path)!.item;
      const filtered = await rest(api, api.keys.mine!).get(`${route.path}?external_id=theirs-${item}`);
      expect(filtered.body.pagination.total, `${route.path} filtered`).toBe(0);
    }
  });

  it('every REST item route answers 404 for the other organization\'s ids', async () => {
    for (const { path, item } of registeredResources()) {
      const route = ROUTES.find((r) => r.kind === 'item' && r.path === `/${path}/{id}`)!;
      const response = await rest(api, api.keys.mine!).get(`/${path}/${theirs[item]}`);
      expect(response.status, route.path).toBe(404);
      expectNothingForeign(response.body);
    }
  });

  it('creates refuse references to the other organization (400 naming the field)', async () => {
    const job = await rest(api, api.keys.mine!).post('/jobs', { customer_id: theirs.customer, title: 'x' });
    expect(job.status).toBe(400);
    expect(job.body.errors).toEqual([{ param: 'customer_id', message: 'does not name a record of this organization' }]);
    const invoice = await rest(api, api.keys.mine!).post('/invoices', { customer_id: mine.customer, job_id: theirs.job, currency: 'USD', line_items: [{ description: 'x', quantity: 1, unit_amount: 1 }] });
    expect(invoice.status).toBe(400);
    expect(invoice.body.errors).toEqual([{ param: 'job_id', message: 'does not name a record of this organization' }]);
    expectNothingForeign(invoice.body);
  });

  it('GraphQL items, relations, aggregates and transitions never reach the other organization', async () => {
    const key = api.keys.mine!;
    for (const { item } of registeredResources()) {
      const data = await gql(api, key, `query($id: ID!) { ${item}(id: $id) { id } }`, { id: theirs[item] });
      expect(data[item], item).toBeNull();
    }
    // Every list of records a customer has (its jobs, invoices, ...), one level down.
    const relations = Object.values((schema.getType('Customer') as GraphQLObjectType).getFields())
      .filter((field) => isListType(getNullableType(field.type)) && registeredResources().some((r) => r.type === getNamedType(field.type).name))
      .map((field) => `${field.name} { id }`);
    expect(relations.length).toBeGreaterThan(0);
    const everything = await gql(api, key, `{ customers { data { id ${relations.join(' ')} } pagination { total } } customerCount invoiceSummary { count totalAmount } }`);
    expect(everything.customerCount).toBe(1);
    const invoice = (await rest(api, key).get(`/invoices/${mine.invoice}`)).body;
    expect(everything.invoiceSummary).toEqual([{ count: 1, totalAmount: String(invoice.total_amount) }]);
    expectNothingForeign(everything);
    // Every transition (a mutation of the record's id alone) of every resource.
    const moves = ROUTES.filter((route) => route.kind === 'move' && registeredResources().some((r) => r.path === route.resource.path));
    const transitions = moves.map((route) => ({ route, field: schema.getMutationType()!.getFields()[/result: (\w+)/.exec(route.document)![1]!]! }))
      .filter(({ field }) => field.args.every((arg) => arg.name === 'id' || arg.name === 'expectedVersion'));
    expect(transitions.length).toBeGreaterThan(3);
    for (const { route, field } of transitions) {
      const id = theirs[registeredResources().find((r) => r.path === route.resource.path)!.item];
      const response = await call(`${api.url}/graphql`, { method: 'POST', key, json: { query: `mutation($id: ID!) { ${field.name}(id: $id) { id } }`, variables: { id } } });
      expect(response.body.errors[0].extensions.code, field.name).toBe('NOT_FOUND');
    }
    // And the other organization's records did not move.
    const untouched = await gql(api, api.keys.theirs!, `query($id: ID!) { invoice(id: $id) { status } }`, { id: theirs.invoice });
    expect(untouched.invoice.status).toBe('draft');
  });
});

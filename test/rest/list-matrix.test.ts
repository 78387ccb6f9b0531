// Every sort key, range operator and set of every list, read from the schema (each list's
// `<Type>OrderBy` and `<Type>Where`), checked against what the fixtures hold: a resource's
// list declaration is tested by declaring it.
import { getNamedType, isEnumType, isInputObjectType, type GraphQLEnumType, type GraphQLInputObjectType } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRoutes } from '../../src/rest/routes.js';
import { snakeCase } from '../../src/rest/names.js';
import { schema } from '../../src/schema/index.js';
import { gql, rest, startApi, type Api } from '../helpers/api.js';
import { DB_KINDS } from '../helpers/databases.js';

type Row = Record<string, unknown> & { id: string };

const LISTS = buildRoutes(schema).filter((route) => route.kind === 'list' && route.where && route.orderBy);
const RANGE_OPS = { gt: (a: number, b: number) => a > b, gte: (a: number, b: number) => a >= b, lt: (a: number, b: number) => a < b, lte: (a: number, b: number) => a <= b };

/** A field's value as a number to compare (dates and timestamps by time). */
const numeric = (value: unknown) => (typeof value === 'number' ? value : Date.parse(String(value)));

describe.each(DB_KINDS)('every list sort and filter on %s', (kind) => {
  let api: Api;
  let acme: ReturnType<typeof rest>;
  const all = new Map<string, Row[]>();

  beforeAll(async () => {
    api = await startApi(kind, { acme: { org: 'Acme' } });
    acme = rest(api, api.keys.acme!);
    const key = api.keys.acme!;
    const customers: string[] = [];
    for (const [name, email] of [['carol', 'carol@x.example'], ['alice', null], ['bert', 'bert@x.example']] as const) {
      customers.push((await acme.post('/customers', { name, ...(email ? { email } : {}) })).body.id);
    }
    const jobs: string[] = [];
    for (const [i, title] of ['paint', 'boiler', 'roof'].entries()) {
      jobs.push((await acme.post('/jobs', { customer_id: customers[i], title, ...(i < 2 ? { scheduled_at: `2026-12-0${3 - i}T09:00:00Z` } : {}) })).body.id);
    }
    await acme.post(`/jobs/${jobs[0]}/start`);
    await acme.post(`/jobs/${jobs[0]}/complete`);
    for (const [i, type] of ['incoming', 'outgoing', 'incoming'].entries()) {
      await gql(api, key, 'mutation($input: CreateEmailInput!) { createEmail(input: $input) { id } }', {
        input: { customerId: customers[i], type, from: 'a@x.example', to: `to${i}@x.example`, subject: `mail ${i}`, sentAt: `2026-11-0${i + 1}T10:00:00Z` },
      });
    }
    for (const [resource, date] of [['invoices', 'due_date'], ['estimates', 'valid_until']] as const) {
      for (const [i, moves] of [[], ['send'], ['send', resource === 'invoices' ? 'pay' : 'accept']].entries()) {
        const created = await acme.post(`/${resource}`, {
          customer_id: customers[i],
          job_id: jobs[i],
          currency: 'EUR',
          ...(i !== 1 ? { [date]: `2026-12-${10 + i * 7}` } : {}),
          line_items: [{ description: 'work', quantity: 1, unit_amount: [5000, 300, 9000][i] }],
        });
        expect(created.status, JSON.stringify(created.body)).toBe(201);
        for (const move of moves) expect((await acme.post(`/${resource}/${created.body.id}/${move}`)).status).toBe(200);
      }
    }
    for (const [i, title] of ['kitchen', 'attic', 'garden'].entries()) {
      const created = await acme.post('/proposals', { customer_id: customers[i], title, total_amount: [700, 100, 400][i], currency: 'EUR' });
      if (i === 2) await acme.post(`/proposals/${created.body.id}/send`);
    }
    for (const route of LISTS) all.set(route.resource.path, (await acme.get(`/${route.resource.path}?limit=100`)).body.data);
  });
  afterAll(() => api.stop());

  const list = async (path: string): Promise<Row[]> => {
    const response = await acme.get(path);
    expect(response.status, `${path}: ${JSON.stringify(response.body)}`).toBe(200);
    expect(response.body.pagination.total).toBe(response.body.data.length);
    return response.body.data;
  };

  describe.each(LISTS.map((route) => [route.resource.path, route] as const))('/%s', (path, route) => {
    const orderValues = route.orderBy!.getValues().map((v) => v.name).filter((v) => v.endsWith('_ASC'));
    const whereFields = Object.values(route.where!.getFields());

    it.each(orderValues.map((value) => snakeCase(value.slice(0, -4).toLowerCase().replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()))))('order_by=%s and -%s', async (field) => {
      const records = all.get(path)!;
      expect(records.length).toBeGreaterThanOrEqual(3);
      const asc = await list(`/${path}?order_by=${field}&limit=100`);
      const desc = await list(`/${path}?order_by=-${field}&limit=100`);
      for (const sorted of [asc, desc]) {
        expect(sorted.map((r) => r.id).sort()).toEqual(records.map((r) => r.id).sort());
        // Nulls last either way.
        const firstNull = sorted.findIndex((r) => r[field] === null);
        if (firstNull >= 0) expect(sorted.slice(firstNull).every((r) => r[field] === null)).toBe(true);
      }
      const values = (rows: Row[]) => rows.map((r) => r[field]).filter((v) => v !== null);
      const setType = whereFields.find((f) => snakeCase(f.name) === field);
      const named = setType && getNamedType(setType.type);
      if (named && isInputObjectType(named) && named.getFields().in) {
        // Enumerations: their declared order.
        const declared = (getNamedType(named.getFields().in!.type) as GraphQLEnumType).getValues().map((v) => v.name);
        const ranks = values(asc).map((v) => declared.indexOf(String(v)));
        expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
      } else if (values(asc).every((v) => !Number.isNaN(numeric(v)) && !/^[a-z]/.test(String(v)))) {
        const numbers = values(asc).map(numeric);
        expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
      }
      // A walk by cursor, one at a time, meets the same records in the same order.
      for (const [sign, sorted] of [['', asc], ['-', desc]] as const) {
        const walked: string[] = [];
        let next: string | null = `/${path}?order_by=${sign}${field}&limit=1`;
        while (next) {
          const page = await acme.get(next);
          expect(page.status, JSON.stringify(page.body)).toBe(200);
          walked.push(...page.body.data.map((r: Row) => r.id));
          next = page.body.pagination.next_cursor ? `/${path}?cursor=${page.body.pagination.next_cursor}&limit=1` : null;
        }
        expect(walked, `${sign}${field}`).toEqual(sorted.map((r) => r.id));
      }
      // Descending is ascending reversed among distinct values (text sorts by the database's collation).
      if (new Set(values(asc)).size === values(asc).length) expect(values(desc)).toEqual(values(asc).reverse());
    });

    const ranges = whereFields.filter((f) => /Range$/.test(getNamedType(f.type).name));
    it.each(ranges.map((f) => snakeCase(f.name)))('%s[gt|gte|lt|lte] and the exact value', async (field) => {
      const records = all.get(path)!;
      const present = records.filter((r) => r[field] !== null);
      expect(present.length).toBeGreaterThan(0);
      const pivot = present[Math.floor(present.length / 2)]![field];
      for (const [op, holds] of Object.entries(RANGE_OPS)) {
        const found = await list(`/${path}?${field}[${op}]=${encodeURIComponent(String(pivot))}&limit=100`);
        const expected = present.filter((r) => holds(numeric(r[field]), numeric(pivot))).map((r) => r.id);
        expect(found.map((r) => r.id).sort(), `${field}[${op}]=${pivot}`).toEqual(expected.sort());
      }
      const exact = await list(`/${path}?${field}=${encodeURIComponent(String(pivot))}&limit=100`);
      expect(exact.map((r) => r.id).sort()).toEqual(present.filter((r) => numeric(r[field]) === numeric(pivot)).map((r) => r.id).sort());
    });

    const sets = whereFields.filter((f) => {
      const named = getNamedType(f.type);
      return isInputObjectType(named) && !!named.getFields().in;
    });
    it.each(sets.map((f) => snakeCase(f.name)))('%s as a set', async (field) => {
      const records = all.get(path)!;
      const set = getNamedType(sets.find((f) => snakeCase(f.name) === field)!.type) as GraphQLInputObjectType;
      const enumeration = getNamedType(set.getFields().in!.type);
      expect(isEnumType(enumeration)).toBe(true);
      const values = (enumeration as GraphQLEnumType).getValues().map((v) => v.name);
      for (const pair of [values.slice(0, 1), values.slice(0, 2)]) {
        const found = await list(`/${path}?${field}=${pair.join(',')}&limit=100`);
        expect(found.map((r) => r.id).sort()).toEqual(records.filter((r) => pair.includes(String(r[field]))).map((r) => r.id).sort());
      }
    });
  });
});

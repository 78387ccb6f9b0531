// Every sort key, range operator and set of every list, read from the schema (each list's
// `<Type>OrderBy` and `<Type>Where`), checked against records made from each resource's
// create example: a resource's list declaration is tested by declaring it.
import { getNamedType, isEnumType, isInputObjectType, isScalarType, type GraphQLEnumType, type GraphQLInputObjectType } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '../../src/rest/router.js';
import { buildRoutes } from '../../src/rest/routes.js';
import { camelCase, snakeCase } from '../../src/rest/names.js';
import { schema } from '../../src/schema/index.js';
import { listSpecOf, type ListField } from '../../src/schema/list-query.js';
import { registeredResources } from '../../src/schema/registry.js';
import { rest, startApi, type Api } from '../helpers/api.js';
import { DB_KINDS } from '../helpers/databases.js';
import { exampleBody, parentsFirst, referTo } from '../helpers/examples.js';

type Row = Record<string, unknown> & { id: string };

const LISTS = buildRoutes(schema).filter((route) => route.kind === 'list' && route.where && route.orderBy);
const RANGE_OPS = { gt: (a: number, b: number) => a > b, gte: (a: number, b: number) => a >= b, lt: (a: number, b: number) => a < b, lte: (a: number, b: number) => a <= b };

const FACTORS = [1, 3, 2, 4];
const shifted = (text: string, days: number) => {
  const date = new Date(Date.parse(text) + days * 86_400_000).toISOString();
  return /^\d{4}-\d{2}-\d{2}$/.test(text) ? date.slice(0, 10) : date;
};

/**
 * The i-th of four bodies made from one example (REST names): numbers times 1, 3, 2 or 4 (line
 * items' too, so totals differ), dates 0, 2, 1 or 3 days on, the list's text fields after `c`,
 * `a`, `b` or `d`, an external id of its own, and in the second, the list's optional fields
 * left out (nulls sort last).
 */
function variant(body: Record<string, unknown>, fields: Record<string, ListField>, i: number): Record<string, unknown> {
  const vary = (value: unknown, field?: ListField): unknown => {
    if (typeof value === 'number') return value * FACTORS[i]!;
    if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}/.test(value)) return shifted(value, FACTORS[i]! - 1);
    if (typeof value === 'string' && field?.kind === 'text' && field.sort) return `${'cabd'[i]}${value}`;
    if (Array.isArray(value)) return value.map((item) => vary(item));
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, vary(inner)]));
    return value;
  };
  return Object.fromEntries(
    Object.entries(body).flatMap(([name, value]) => {
      const field = fields[camelCase(name)];
      if (i === 1 && field?.nullable && !/_id$/.test(name)) return [];
      return [[name, /_id$/.test(name) ? value : vary(value, field)]];
    }).concat([['external_id', `record-${'cabd'[i]}`]]),
  );
}

/** A field's value as a number to compare (dates and timestamps by time). */
const numeric = (value: unknown) => (typeof value === 'number' ? value : Date.parse(String(value)));

describe.each(DB_KINDS)('every list sort and filter on %s', (kind) => {
  let api: Api;
  let acme: ReturnType<typeof rest>;
  const all = new Map<string, Row[]>();

  beforeAll(async () => {
    api = await startApi(kind, { acme: { org: 'Acme' } });
    acme = rest(api, api.keys.acme!);
    // Four records of every resource, from its create's example, made to differ where the
    // list sorts and filters (see variant); parents first, the i-th referring to the i-th.
    const made = new Map<string, string[]>();
    for (const resource of parentsFirst()) {
      const { item } = resource;
      const fields = listSpecOf(resource.type).fields;
      const verbs = ROUTES.filter((r) => r.kind === 'move' && r.method === 'POST' && r.path.startsWith(`/${resource.path}/{id}/`)).map((r) => r.path.split('/').at(-1)!);
      made.set(item, []);
      for (const i of [0, 1, 2, 3]) {
        const refer = referTo(Object.fromEntries([...made].map(([parent, ids]) => [parent, ids[i]!])));
        const created = await acme.post(`/${resource.path}`, variant(await exampleBody(acme, resource, refer), fields, i));
        expect(created.status, JSON.stringify(created.body)).toBe(201);
        made.get(item)!.push(created.body.id);
        // The i-th record takes up to i moves, the first that succeed in order (start, then
        // complete): statuses differ, and two records reach the last (two completion times).
        let moved = 0;
        for (const verb of verbs) if (moved < i && (await acme.post(`/${resource.path}/${created.body.id}/${verb}`)).status === 200) moved++;
      }
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

    it.each(orderValues.map((value) => snakeCase(value.slice(0, -4).toLowerCase().replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()))))('order_by=%s, ascending and descending', async (field) => {
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
      // The records differ where they are sorted, or the order would prove nothing.
      expect(new Set(values(asc).map(String)).size, `distinct ${field} values`).toBeGreaterThan(1);
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

    // Exact values: text, ids and booleans (not search, metadata, ranges, sets or relations).
    const exact = whereFields.filter((f) => f.name !== 'search' && isScalarType(getNamedType(f.type)) && getNamedType(f.type).name !== 'JSON');
    it.each(exact.map((f) => snakeCase(f.name)))('%s= an exact value', async (field) => {
      const records = all.get(path)!;
      const present = records.filter((r) => r[field] !== null && r[field] !== undefined);
      expect(present.length, `records with a ${field}`).toBeGreaterThan(0);
      const value = String(present[0]![field]);
      const found = await list(`/${path}?${field}=${encodeURIComponent(value)}&limit=100`);
      expect(found.map((r) => r.id).sort()).toEqual(records.filter((r) => String(r[field]) === value).map((r) => r.id).sort());
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

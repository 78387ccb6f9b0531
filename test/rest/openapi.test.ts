import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import { getNamedType, getNullableType, isInputObjectType, isObjectType, type GraphQLEnumType, type GraphQLInputField } from 'graphql';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { openDatabase } from '../../src/db/connection.js';
import { fingerprint } from '../../src/http/idempotency.js';
import { snakeCase } from '../../src/rest/names.js';
import { ROUTES } from '../../src/rest/router.js';
import { schema } from '../../src/schema/index.js';
import { registeredResources } from '../../src/schema/registry.js';
import { call, gql, rest, startApi, type Api, type JsonResponse } from '../helpers/api.js';
import { createExample } from '../helpers/examples.js';

const run = promisify(execFile);

/**
 * A query parameter's value as its declaration says to write it: arrays comma-separated
 * (form, not exploded), objects as deepObject (`due_date[lt]=`), nested one more level for a
 * relation's range (`invoices[due_date][lt]=`).
 */
function serialize(p: { name: string }, value: unknown): string {
  const pairs: string[] = [];
  const add = (name: string, v: unknown) => {
    if (Array.isArray(v)) pairs.push(`${name}=${v.map((item) => encodeURIComponent(String(item))).join(',')}`);
    else if (v && typeof v === 'object') for (const [key, inner] of Object.entries(v)) add(`${name}[${key}]`, inner);
    else pairs.push(`${name}=${encodeURIComponent(String(v))}`);
  };
  add(p.name, value);
  return pairs.join('&');
}

/** Values a parameter's schema allows, to send: every property of an object on its own. */
function sampleValues(schema: any): unknown[] {
  if (schema.type === 'object' && !schema.properties) return [{ key: sampleValues(schema.additionalProperties)[0] }];
  if (schema.type === 'object') return Object.entries<any>(schema.properties).flatMap(([key, inner]) => sampleValues(inner).map((v) => ({ [key]: v })));
  // Two different items (for order_by: two different fields).
  if (schema.type === 'array') return [[...new Set([schema.items.enum[0], schema.items.enum.at(-1)])]];
  if (schema.enum) return [schema.enum[0]];
  if (schema.format === 'date') return ['2026-12-01'];
  if (schema.format === 'date-time') return ['2026-12-01T00:00:00Z'];
  if (schema.format === 'uuid') return ['00000000-0000-4000-8000-000000000000'];
  if (schema.type === 'integer') return [schema.minimum ?? 100];
  if (schema.type === 'boolean') return [false];
  return ['acme'];
}

describe('OpenAPI document', () => {
  let api: Api;
  let document: any;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  formats.default(ajv);
  beforeAll(async () => {
    // An hour's window: 'spent' can be driven to a 429 faster than its allowance refills.
    api = await startApi(
      'postgres',
      { acme: { org: 'Acme' }, explorer: { org: 'Acme' }, readOnly: { org: 'Acme', scopes: 'customers:read' }, spent: { org: 'Acme' } },
      { RATE_LIMIT_WINDOW_SECONDS: '3600', WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' },
    );
    const response = await call(`${api.url}/v1/openapi.json`);
    expect(response.status).toBe(200);
    document = response.body;
    ajv.addSchema(document, 'openapi');
  });
  afterAll(() => api.stop());

  /**
   * A real response against what the document says of its operation and status: the body
   * against the schema; every required header present; every header sent that the document
   * names anywhere declared for this status, its value matching the header's schema.
   */
  function conforms(path: string, method: string, response: JsonResponse, status: number) {
    const where = `${method.toUpperCase()} ${path} ${response.status}`;
    expect(response.status, `${where}: ${JSON.stringify(response.body)}`).toBe(status);
    const declared = document.paths[path][method].responses[status];
    expect(declared, where).toBeDefined();
    if (declared.content) {
      const [mediaType] = Object.keys(declared.content);
      expect(response.headers.get('content-type'), where).toContain(mediaType);
      const escape = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');
      const pointer = `/paths/${escape(path)}/${method}/responses/${status}/content/${escape(mediaType!)}/schema`;
      expect(ajv.validate({ $ref: `openapi#${pointer}` }, response.body), `${where}: ${ajv.errorsText()}`).toBe(true);
    } else {
      expect(response.body, `${where}: no body`).toBeUndefined();
    }
    const headers: Record<string, any> = declared.headers ?? {};
    for (const [name, header] of Object.entries(headers)) {
      const definition = header.$ref ? document.components.headers[header.$ref.split('/').pop()] : header;
      const value = response.headers.get(name);
      if (value === null) {
        expect(definition.required ?? false, `${where}: ${name} is missing`).toBe(false);
        continue;
      }
      const typed = definition.schema.type === 'integer' ? Number(value) : value;
      expect(ajv.validate(definition.schema, typed), `${where}: ${name}: ${value} (${ajv.errorsText()})`).toBe(true);
    }
    for (const name of documentedHeaders()) {
      if (response.headers.has(name)) expect(Object.keys(headers), `${where}: ${name} is sent but not declared`).toContain(name);
    }
  }
  /** Every response header the document names, anywhere. */
  const documentedHeaders = () =>
    new Set(
      Object.values<any>(document.paths)
        .flatMap((methods) => Object.values<any>(methods))
        .flatMap((operation) => Object.values<any>(operation.responses).flatMap((response) => Object.keys(response.headers ?? {}))),
    );

  /** An import of a one-row CSV file (POST /imports answers 202 and where to follow it). */
  const importCsv = (key: string, csv = 'name,email\nImported,imported@x.example\n') =>
    call(`${api.url}/v1/imports?resource=customers`, { method: 'POST', key, body: csv, headers: { 'content-type': 'text/csv' } });
  /** A record's id at an item path: the first of its list, or, for a collection without one (imports), one made. */
  async function idAt(path: string, key: string): Promise<string> {
    const collection = path.split('/{id}')[0]!;
    if (document.paths[collection]?.get) return (await rest(api, key).get(collection)).body.data[0].id;
    expect(collection, `no way to find an id of ${path}`).toBe('/imports');
    return (await importCsv(key)).body.id;
  }

  it('is served without authentication at /v1/openapi.json', async () => {
    expect(document.openapi).toBe('3.1.0');
    expect(document.servers).toEqual([{ url: '/v1' }]);
  });

  it('is valid OpenAPI 3.1, with no warnings from Redocly\'s linter', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'openapi-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'openapi.json'), JSON.stringify(document));
    // The contract's upsert address, /customers/by_external_id/{external_id}, has the shape of
    // /customers/{id}/events; the linter cannot know that an id is a UUID (so never
    // `by_external_id`), which the next assertion checks. Those paths, and only they, are excused.
    const upserts = Object.keys(document.paths).filter((path) => path.includes('/by_external_id/'));
    expect(upserts).toHaveLength(registeredResources().length);
    const pointer = (path: string) => `'#/paths/${path.replace(/~/g, '~0').replace(/\//g, '~1')}'`;
    writeFileSync(join(dir, '.redocly.lint-ignore.yaml'), `openapi.json:\n  no-ambiguous-paths:\n${upserts.map((path) => `    - ${pointer(path)}\n`).join('')}`);
    const { stdout, stderr } = await run(resolve('node_modules', '.bin', 'redocly'), ['lint', 'openapi.json'], {
      cwd: dir,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    });
    const output = stdout + stderr;
    expect(output).toContain('Your API description is valid');
    expect(output).not.toMatch(/You have \d+ warnings?/);
    expect(output).not.toMatch(/\berror/i);
    expect(output).toContain(`${upserts.length} problems are explicitly ignored`);
    for (const upsert of upserts) {
      const [, collection] = upsert.split('/');
      const shaped = Object.keys(document.paths).filter((path) => path.startsWith(`/${collection}/{id}/`));
      expect(shaped.length, upsert).toBeGreaterThan(0);
      for (const path of shaped) {
        for (const operation of Object.values<any>(document.paths[path])) {
          expect(operation.parameters.find((p: { in: string }) => p.in === 'path').schema, path).toEqual({ type: 'string', format: 'uuid' });
        }
      }
    }
  });

  it('has a human-readable reference at /v1/docs, served without a CDN', async () => {
    const page = await fetch(`${api.url}/v1/docs`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("url: '/v1/openapi.json'");
    expect(html).not.toMatch(/https?:\/\//);
    for (const asset of ['swagger-ui-bundle.js', 'swagger-ui.css']) {
      const response = await fetch(`${api.url}/v1/docs/${asset}`);
      expect(response.status, asset).toBe(200);
      expect((await response.arrayBuffer()).byteLength).toBeGreaterThan(10_000);
    }
  });

  it('covers every route and parameter of the service', () => {
    const operations = Object.entries(document.paths).flatMap(([path, methods]) => Object.keys(methods as object).map((m) => `${m.toUpperCase()} ${path}`));
    // The route table the server matches requests against, itself read from the schema.
    // An upsert's address names the external id (the route table's `{id}` in that place).
    const documented = (route: (typeof ROUTES)[number]) => (route.kind === 'upsert' ? route.path.replace('{id}', '{external_id}') : route.path);
    expect(operations.sort()).toEqual(ROUTES.map((route) => `${route.method} ${documented(route)}`).sort());
    // Every registered resource is in it with its five rows.
    for (const { path } of registeredResources()) {
      expect(operations).toEqual(expect.arrayContaining([`GET /${path}`, `POST /${path}`, `GET /${path}/{id}`, `DELETE /${path}/{id}`, `POST /${path}/{id}/restore`]));
    }
    const change = (path: string, method: string) => document.paths[path][method].parameters.map((p: { name: string }) => p.name).sort();
    expect(change('/invoices/{id}', 'patch')).toEqual(['Idempotency-Key', 'If-Match', 'Prefer', 'id']);
    expect(change('/invoices/{id}/send', 'post')).toEqual(['Idempotency-Key', 'If-Match', 'Prefer', 'id']);
    expect(change('/customers/{id}/merge', 'post')).toEqual(['Idempotency-Key', 'If-Match', 'Prefer', 'id']);
    expect(change('/invoices/by_external_id/{external_id}', 'put')).toEqual(['Idempotency-Key', 'Prefer', 'external_id']);
    expect(change('/invoices/batch', 'post')).toEqual(['Idempotency-Key', 'Prefer']);
    expect(change('/invoices', 'post')).toEqual(['Idempotency-Key', 'Prefer']);
    // A view pages, and takes no id, filters, sort or shape.
    expect(change('/customers/duplicates', 'get')).toEqual(['cursor', 'limit', 'page']);
    expect(change('/invoices/{id}', 'get')).toEqual(['If-None-Match', 'expand', 'fields', 'id']);
    expect(change('/customers/{id}', 'get')).toEqual(['If-None-Match', 'fields', 'id']);
    expect(Object.keys(document.paths['/invoices/{id}'].patch.requestBody.content)).toEqual(['application/merge-patch+json', 'application/json']);
    expect(Object.keys(document.paths['/invoices/{id}'].patch.responses)).toEqual(expect.arrayContaining(['200', '404', '409', '412']));
    expect(Object.keys(document.paths['/invoices/{id}'].get.responses)).toEqual(expect.arrayContaining(['200', '304', '404']));
    expect(Object.keys(document.paths['/invoices/{id}'].delete.responses)).toEqual(expect.arrayContaining(['204', '409', '412']));
  });

  /** The query parameter `name` of an operation, as the document declares it. */
  const param = (path: string, name: string, method = 'get') => document.paths[path][method].parameters.find((p: { name: string; in: string }) => p.name === name && p.in === 'query');

  it('declares every filter and sort of every list, read from its GraphQL where and orderBy types', () => {
    const lists = ROUTES.filter((route) => route.kind === 'list' && route.where);
    // Every resource's list sorts and filters (the events and webhook endpoints lists page only).
    expect(lists.map((route) => route.resource.path).sort()).toEqual(registeredResources().map((r) => r.path).sort());
    const scalar: Record<string, object> = { Date: { type: 'string', format: 'date' }, DateTime: { type: 'string', format: 'date-time' }, Int: { type: 'integer' }, ID: { type: 'string', format: 'uuid' }, String: { type: 'string' }, Boolean: { type: 'boolean' } };
    /** What one `<Type>Where` field must be declared as: its schema's shape, by the field's GraphQL type. */
    const expectFilter = (where: string, field: GraphQLInputField, schema: any) => {
      const type = getNamedType(field.type);
      if (field.name === 'search') return expect(schema, where).toMatchObject({ type: 'string', maxLength: 200 });
      // JSON (metadata): keys, each with exactly a string value.
      if (type.name === 'JSON') return expect(schema, where).toMatchObject({ type: 'object', additionalProperties: { type: 'string' } });
      if (!isInputObjectType(type)) {
        expect(scalar[type.name], `${where}: ${type.name}`).toBeDefined();
        return expect(schema, where).toMatchObject(scalar[type.name]!);
      }
      const inner = type.getFields();
      if (inner.in) {
        // A set: every value of the enumeration, as GraphQL declares them.
        const values = (getNamedType(inner.in.type) as GraphQLEnumType).getValues().map((v) => v.name);
        return expect(schema, where).toMatchObject({ type: 'array', items: { type: 'string', enum: values } });
      }
      // A range (gt gte lt lte) or a relation (every filter of the related list): an object of them.
      expect(schema.type, where).toBe('object');
      expect(Object.keys(schema.properties).sort(), where).toEqual(Object.keys(inner).map(snakeCase).sort());
      for (const f of Object.values(inner)) {
        if (inner.gt) expect(schema.properties[f.name], `${where}[${f.name}]`).toMatchObject(scalar[getNamedType(f.type).name]!);
        else expectFilter(`${where}[${snakeCase(f.name)}]`, f, schema.properties[snakeCase(f.name)]);
      }
    };
    for (const route of lists) {
      const path = route.path;
      // order_by: field for each _ASC value, -field for each _DESC one, and nothing else.
      const keys = route.orderBy!.getValues().map((v) => v.name);
      const orderBy = param(path, 'order_by');
      expect(orderBy, path).toMatchObject({ style: 'form', explode: false, schema: { type: 'array' } });
      expect(orderBy.schema.items.enum.map((key: string) => `${key.replace(/^-/, '').toUpperCase()}_${key.startsWith('-') ? 'DESC' : 'ASC'}`).sort(), path).toEqual([...keys].sort());
      for (const field of Object.values(route.where!.getFields())) {
        const name = snakeCase(field.name);
        const declared = param(path, name);
        expect(declared, `${path} ${name}`).toBeDefined();
        const type = getNamedType(field.type);
        const style = isInputObjectType(type) ? (type.getFields().in ? { style: 'form', explode: false } : { style: 'deepObject', explode: true }) : type.name === 'JSON' ? { style: 'deepObject', explode: true } : {};
        expect({ style: declared.style, explode: declared.explode }, `${path} ${name}`).toEqual({ style: undefined, explode: undefined, ...style });
        expectFilter(`${path} ${name}`, field, declared.schema);
      }
    }
    // fields (lists and items: the record's own fields) and expand (its references).
    for (const route of ROUTES.filter((r) => r.kind === 'list' || r.kind === 'item')) {
      const where = `${route.method} ${route.path}`;
      const record = document.components.schemas[route.resource.type];
      expect(param(route.path, 'fields').schema.items.enum, where).toEqual(record.required);
      const references = Object.values(route.record.getFields())
        .filter((field) => isObjectType(getNullableType(field.type)))
        .map((field) => snakeCase(field.name));
      expect(param(route.path, 'expand')?.schema.items.enum ?? [], where).toEqual(references);
      for (const reference of references) expect(record.properties[reference], where).toBeDefined();
    }
  });

  it('declares exactly the parameters the server reads, in the form it reads them', async () => {
    // A key of its own: it sends most of a window's allowance.
    const key = api.keys.explorer!;
    const client = rest(api, key);
    const customer = (await client.post('/customers', { name: 'Filtered', email: 'filtered@x.example' })).body;
    const job = (await client.post('/jobs', { customer_id: customer.id, title: 'Filtered' })).body;
    await client.post('/invoices', { customer_id: customer.id, job_id: job.id, currency: 'USD', line_items: [{ description: 'x', quantity: 1, unit_amount: 5 }] });
    // A record of every resource, so that each item route has an id to answer.
    for (const resource of registeredResources()) await createExample(client, resource);
    await client.post('/webhook_endpoints', { url: 'http://127.0.0.1:9/unused', event_types: ['invoice.paid'] });
    let checked = 0;
    for (const path of Object.keys(document.paths).filter((p) => document.paths[p].get)) {
      const declared: any[] = document.paths[path].get.parameters.filter((p: { in: string }) => p.in === 'query');
      const at = path.includes('{id}') ? path.replace('{id}', await idAt(path, key)) : path;
      // The server names the parameters it knows when refusing one it does not.
      const refused = await client.get(`${at}?nope=1`);
      expect(refused.status, path).toBe(400);
      const known = /known: ([^)]*)\)/.exec(refused.body.errors[0].message)![1]!.split(', ');
      // `expand` is declared where the record refers to another (elsewhere any value is a 400).
      // A list that has a sync takes `include_deleted` (the contract's spelling of its sync)
      // but declares only records: its description sends a mirror to the sync instead.
      const legacy = (name: string) => name === 'include_deleted' && !!document.paths[`${path}/sync`];
      if (known.some(legacy)) expect(document.paths[path].get.description, path).toContain(`GET /v1${path}/sync`);
      expect(declared.map((p) => p.name).sort(), path).toEqual(known.filter((name) => (name !== 'expand' || param(path, 'expand')) && !legacy(name)).sort());
      if (known.includes('expand') && !param(path, 'expand')) expect((await client.get(`${at}?expand=customer`)).status, path).toBe(400);
      // Each sort, filter and shape, written as declared (every property of a range or a
      // relation on its own), is accepted. A sync's filters are its list's (one `<Type>Where`,
      // read by the same code): sending them twice would pass one key's allowance.
      const route = ROUTES.find((r) => r.method === 'GET' && r.path === path)!;
      const paging = route.params.map((p) => p.name);
      for (const p of declared.filter((p) => !paging.includes(p.name) && (route.kind !== 'sync' || p.name === 'fields'))) {
        for (const value of sampleValues(p.schema)) {
          const query = serialize(p, value);
          const response = await client.get(`${at}?${query}`);
          expect(response.status, `${path}?${query}: ${JSON.stringify(response.body)}`).toBe(200);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(300);
  });

  it('real responses of every route match their documented schemas and headers', async () => {
    const key = api.keys.acme!;
    const client = rest(api, key);
    const customer = await client.post('/customers', { name: 'Ada', email: 'ada@x.example' });
    // Her duplicate: GET /customers/duplicates has a group to answer.
    await client.post('/customers', { name: 'Ada L.', email: 'ada@x.example' });
    const job = await client.post('/jobs', { customer_id: customer.body.id, title: 'Boiler' });
    const invoice = await client.post('/invoices', { customer_id: customer.body.id, job_id: job.body.id, currency: 'USD', due_date: '2027-01-01', line_items: [{ description: 'x', quantity: 1, unit_amount: 5 }] });
    // A record of every resource (of other customers), so that each route has one to answer.
    for (const resource of registeredResources()) await createExample(client, resource);

    const endpoint = await client.post('/webhook_endpoints', { url: 'http://127.0.0.1:9/unused', event_types: ['invoice.paid'] });
    conforms('/webhook_endpoints', 'post', endpoint, 201);
    conforms('/customers', 'post', customer, 201);
    conforms('/jobs', 'post', job, 201);
    conforms('/invoices', 'post', invoice, 201);
    expect(customer.headers.get('location')).toBe(`/v1/customers/${customer.body.id}`);
    // Sorted, filtered, with its references expanded: still the documented page and record.
    const expanded = await client.get('/invoices?order_by=due_date,-total_amount&status=draft,sent&due_date[lt]=2027-06-01&customer[search]=ada&expand=customer,job');
    conforms('/invoices', 'get', expanded, 200);
    expect(expanded.body.data.map((i: { id: string }) => i.id)).toEqual([invoice.body.id]);
    expect(expanded.body.data[0]).toMatchObject({ customer: { id: customer.body.id }, job: { id: job.body.id } });
    conforms('/invoices/{id}', 'get', await client.get(`/invoices/${invoice.body.id}?expand[]=customer&expand[]=job`), 200);
    // Writes (upserts and batches have no GET): the tests below.
    for (const path of Object.keys(document.paths).filter((p) => document.paths[p].get)) {
      if (path.includes('{id}/')) continue; // transitions and restore: the next test
      if (path.endsWith('{id}')) {
        conforms(path, 'get', await client.get(path.replace('{id}', await idAt(path, key))), 200);
        conforms(path, 'get', await client.get(path.replace('{id}', '00000000-0000-4000-8000-000000000000')), 404);
        conforms(path, 'get', await client.get(path.replace('{id}', 'not-a-uuid')), 404);
      } else {
        const list = await client.get(path);
        expect(list.body.data.length, path).toBeGreaterThan(0);
        conforms(path, 'get', list, 200);
        conforms(path, 'get', await client.get(`${path}?limit=0`), 400);
        conforms(path, 'get', await call(`${api.url}/v1${path}`), 401);
        // A customers:read key reads /customers (and its duplicates), and the customer events of /events.
        if (!path.startsWith('/customers') && path !== '/events') conforms(path, 'get', await rest(api, api.keys.readOnly!).get(path), 403);
      }
    }
  });

  it('changes answer as documented: PATCH, 304, 412 with the current record, 409, DELETE 204, restore, transitions, tombstones', async () => {
    const client = rest(api, api.keys.acme!);
    const customer = (await client.post('/customers', { name: 'Changes' })).body;
    const invoice = (await client.post('/invoices', { customer_id: customer.id, currency: 'USD', line_items: [{ description: 'x', quantity: 1, unit_amount: 5 }] })).body;
    const job = (await client.post('/jobs', { customer_id: customer.id, title: 'Boiler' })).body;
    conforms('/customers/{id}', 'patch', await client.patch(`/customers/${customer.id}`, { phone: '+441234567890' }), 200);
    conforms('/customers/{id}', 'get', await client.get(`/customers/${customer.id}`, { 'if-none-match': '"2"' }), 304);
    conforms('/customers/{id}', 'patch', await client.patch(`/customers/${customer.id}`, { name: 'Late' }, { 'if-match': '"1"' }), 412);
    conforms('/customers/{id}', 'patch', await client.patch(`/customers/${customer.id}`, { name: '' }), 400);
    conforms('/customers/{id}', 'patch', await client.patch(`/customers/00000000-0000-4000-8000-000000000000`, { name: 'x' }), 404);
    conforms('/customers/{id}', 'delete', await client.delete(`/customers/${customer.id}`), 409);
    conforms('/invoices/{id}/pay', 'post', await client.post(`/invoices/${invoice.id}/pay`), 409);
    conforms('/invoices/{id}/send', 'post', await client.post(`/invoices/${invoice.id}/send`), 200);
    conforms('/jobs/{id}', 'delete', await client.delete(`/jobs/${job.id}`), 204);
    conforms('/jobs/{id}/restore', 'post', await client.post(`/jobs/${job.id}/restore`, undefined, { 'if-match': '"1"' }), 412);
    conforms('/jobs/{id}/restore', 'post', await client.post(`/jobs/${job.id}/restore`), 200);
    conforms('/jobs/{id}/start', 'post', await client.post(`/jobs/${job.id}/start`), 200);
    await client.delete(`/jobs/${job.id}`);
    const sync = await client.get('/jobs/sync');
    expect(sync.body.data.some((row: { deleted?: boolean }) => row.deleted)).toBe(true);
    conforms('/jobs/sync', 'get', sync, 200);
    conforms('/jobs', 'get', await client.get('/jobs?updated_since=2026-01-01T00:00:00Z'), 200);
  });

  it('upserts answer as documented: 201 with Location, 200, refusals; an external id shaped like an action is an external id', async () => {
    const upsert = '/customers/by_external_id/{external_id}';
    const put = (externalId: string, body: unknown, headers: Record<string, string> = {}) =>
      call(`${api.url}/v1/customers/by_external_id/${encodeURIComponent(externalId)}`, { method: 'PUT', key: api.keys.acme, json: body, headers });
    // `events` (as in /customers/{id}/events) names a record by its external id here.
    const created = await put('events', { name: 'Upserted', metadata: { source: 'crm' } });
    conforms(upsert, 'put', created, 201);
    expect(created.body).toMatchObject({ external_id: 'events', metadata: { source: 'crm' }, version: 1 });
    expect(created.headers.get('location')).toBe(`/v1/customers/${created.body.id}`);
    const updated = await put('events', { name: 'Upserted again' });
    conforms(upsert, 'put', updated, 200);
    expect(updated.body).toMatchObject({ id: created.body.id, version: 2 });
    conforms(upsert, 'put', await put('hub/7', { name: '' }), 400);
    conforms(upsert, 'put', await call(`${api.url}/v1/customers/by_external_id/x`, { method: 'PUT', key: api.keys.readOnly, json: { name: 'x' } }), 403);
    // An id with a character a path segment must escape; a retry with its Idempotency-Key is a replay.
    conforms(upsert, 'put', await put('hub/7', { name: 'Once' }, { 'idempotency-key': 'upsert-once' }), 201);
    const replayed = await put('hub/7', { name: 'Once' }, { 'idempotency-key': 'upsert-once' });
    conforms(upsert, 'put', replayed, 201);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body.external_id).toBe('hub/7');
  });

  it('batches answer as documented: every item\'s result, refused items in a partial batch, each atomic refusal', async () => {
    const client = rest(api, api.keys.acme!);
    const batch = '/customers/batch';
    const target = (await client.post('/customers', { name: 'Batched', external_id: 'batch-target' })).body;
    const written = await client.post(batch, {
      items: [
        { op: 'create', external_id: 'batch-1', data: { name: 'B1', metadata: { tier: 'gold' } } },
        { op: 'upsert', external_id: 'batch-2', data: { name: 'B2' } },
        { op: 'update', external_id: 'batch-target', data: { metadata: { tier: 'silver' } }, if_match: 1 },
        { op: 'delete', id: (await client.post('/customers', { name: 'Doomed' })).body.id },
      ],
    });
    conforms(batch, 'post', written, 200);
    expect(written.body.results.map((r: { status: number }) => r.status)).toEqual([201, 201, 200, 204]);
    const partial = await client.post(batch, {
      mode: 'partial',
      items: [
        { op: 'create', data: { name: 'P1' } },
        { op: 'create', data: { name: 'P2', email: 'nope' } },
        { op: 'update', id: target.id, data: { name: 'Stale' }, if_match: 1 },
        { op: 'delete', external_id: 'nobody' },
      ],
    });
    conforms(batch, 'post', partial, 200);
    expect(partial.body.results.map((r: { status: number }) => r.status)).toEqual([201, 400, 412, 404]);
    expect(partial.body.results[1].error).toMatchObject({ code: 'BAD_REQUEST', errors: [{ param: 'email', message: expect.any(String) }] });
    const atomic = (items: unknown[]) => client.post(batch, { items });
    conforms(batch, 'post', await atomic([{ op: 'create', data: { name: 'Fine' } }, { op: 'create', data: { email: 'x' } }]), 400);
    conforms(batch, 'post', await atomic([{ op: 'delete', id: '00000000-0000-4000-8000-000000000000' }]), 404);
    conforms(batch, 'post', await atomic([{ op: 'create', external_id: 'batch-1', data: { name: 'Clash' } }]), 409);
    conforms(batch, 'post', await atomic([{ op: 'update', id: target.id, if_match: 1, data: { name: 'Stale' } }]), 412);
    conforms(batch, 'post', await atomic([]), 400);
    const body = { items: [{ op: 'create', data: { name: 'Replayed batch' } }] };
    conforms(batch, 'post', await client.post(batch, body, { 'idempotency-key': 'batch-replay' }), 200);
    const replay = await client.post(batch, body, { 'idempotency-key': 'batch-replay' });
    conforms(batch, 'post', replay, 200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    // A record with embedded line items and references, in an invoice batch's results.
    const invoices = await client.post('/invoices/batch', { items: [{ op: 'upsert', external_id: 'inv-1', data: { customer_id: target.id, currency: 'EUR', line_items: [{ description: 'x', quantity: 2, unit_amount: 50 }] } }] });
    conforms('/invoices/batch', 'post', invoices, 200);
    expect(invoices.body.results[0].record).toMatchObject({ external_id: 'inv-1', total_amount: 100, line_items: [{ amount: 100 }] });
  });

  it('merges, and every write\'s dry run, answer as documented: the same status and body, with Dry-Run', async () => {
    const client = rest(api, api.keys.acme!);
    const merge = '/customers/{id}/merge';
    const kept = (await client.post('/customers', { name: 'Kept', email: 'merge@x.example' })).body;
    const source = (await client.post('/customers', { name: 'Source', email: 'merge@x.example' })).body;
    const dry = { prefer: 'dry-run' };
    const tried = await client.post(`/customers/${kept.id}/merge`, { source_ids: [source.id] }, dry);
    conforms(merge, 'post', tried, 200);
    expect(tried.headers.get('dry-run')).toBe('true');
    expect((await client.get(`/customers/${source.id}`)).status).toBe(200);
    conforms(merge, 'post', await client.post(`/customers/${kept.id}/merge`, { source_ids: [] }), 400);
    conforms(merge, 'post', await client.post(`/customers/00000000-0000-4000-8000-000000000000/merge`, { source_ids: [source.id] }), 404);
    conforms(merge, 'post', await client.post(`/customers/${kept.id}/merge`, { source_ids: [source.id] }, { 'if-match': '"7"' }), 412);
    conforms(merge, 'post', await client.post(`/customers/${kept.id}/merge`, { source_ids: [source.id] }), 200);
    expect((await client.get(`/customers/${source.id}`)).status).toBe(404);

    // Dry runs of each kind of write, accepted and refused, and of a key that may not write.
    const created = await client.post('/customers', { name: 'Dry' }, dry);
    conforms('/customers', 'post', created, 201);
    expect((await client.get(`/customers/${created.body.id}`)).status).toBe(404);
    conforms('/customers', 'post', await client.post('/customers', { name: '' }, dry), 400);
    conforms('/customers/{id}', 'patch', await client.patch(`/customers/${kept.id}`, { name: 'Late' }, { ...dry, 'if-match': '"99"' }), 412);
    conforms('/customers/{id}', 'delete', await client.delete(`/customers/${kept.id}`, dry), 204);
    conforms('/customers/batch', 'post', await client.post('/customers/batch', { items: [{ op: 'create', data: {} }] }, dry), 400);
    conforms('/customers/batch', 'post', await rest(api, api.keys.readOnly!).post('/customers/batch', { items: [{ op: 'create', data: { name: 'x' } }] }, dry), 403);
    expect((await client.get(`/customers/${kept.id}`)).status).toBe(200);
  });

  it('imports answer as documented: 202 and where to follow the CSV file, refusals', async () => {
    const accepted = await importCsv(api.keys.acme!);
    conforms('/imports', 'post', accepted, 202);
    expect(accepted.headers.get('location')).toBe(`/v1/imports/${accepted.body.id}`);
    conforms('/imports/{id}', 'get', await rest(api, api.keys.acme!).get(`/imports/${accepted.body.id}`), 200);
    const send = (body: string, type: string, query = '?resource=customers') => call(`${api.url}/v1/imports${query}`, { method: 'POST', key: api.keys.acme, body, headers: { 'content-type': type } });
    conforms('/imports', 'post', await send('name\nx\n', 'application/json'), 415);
    conforms('/imports', 'post', await send('name\nx\n', 'text/csv', '?resource=customers&mode=merge'), 400);
    conforms('/imports', 'post', await send('nickname\nx\n', 'text/csv'), 400);
  });

  it('documents every write\'s Prefer: dry-run, and upserts, batches, duplicates and merges from the schema', () => {
    for (const route of ROUTES.filter((r) => r.method !== 'GET')) {
      const path = route.kind === 'upsert' ? route.path.replace('{id}', '{external_id}') : route.path;
      const operation = document.paths[path][route.method.toLowerCase()];
      expect(operation.parameters.filter((p: { name: string; in: string }) => p.name === 'Prefer' && p.in === 'header'), path).toHaveLength(1);
      // A dry run's answer is marked once the key is admitted: every answer but 401 and 429.
      for (const [status, response] of Object.entries<any>(operation.responses)) {
        expect(Object.keys(response.headers).includes('Dry-Run'), `${route.method} ${path} ${status}`).toBe(status !== '401' && status !== '429');
      }
    }
    for (const route of ROUTES.filter((r) => r.method === 'GET')) {
      expect(document.paths[route.path].get.parameters.some((p: { name: string }) => p.name === 'Prefer'), route.path).toBe(false);
    }
    const ops = (schema.getType('BatchOp') as GraphQLEnumType).getValues().map((v) => v.name);
    const batches = ROUTES.filter((r) => r.kind === 'batch');
    expect(batches.map((r) => r.resource.path).sort()).toEqual(registeredResources().map((r) => r.path).sort());
    for (const route of batches) {
      const type = route.resource.type;
      const request = document.components.schemas[`${type}BatchRequest`];
      expect(document.paths[route.path].post.requestBody.content['application/json'].schema.$ref).toBe(`#/components/schemas/${type}BatchRequest`);
      expect(request.properties.items).toMatchObject({ minItems: 1, maxItems: 100 });
      expect(request.properties.mode.enum).toEqual(['atomic', 'partial']);
      const variants: any[] = request.properties.items.items.oneOf;
      // Every op of the schema's BatchOp, but updates where the resource has none (e-mails).
      expect([...new Set(variants.map((v) => v.properties.op.enum[0]))].sort()).toEqual(ops.filter((op) => op !== 'update' || route.inputs?.update).sort());
      for (const variant of variants) {
        const op = variant.properties.op.enum[0];
        const data = op === 'update' ? `Update${type}Input` : op === 'delete' ? undefined : `Create${type}Input`;
        expect(variant.properties.data?.$ref, `${type} ${variant.title}`).toBe(data && `#/components/schemas/${data}`);
        if (data) expect(document.components.schemas[data], data).toBeDefined();
        // An update or a delete names its record by id or by external id; an upsert by external id.
        expect(variant.required.filter((name: string) => name === 'id' || name === 'external_id'), `${type} ${variant.title}`).toHaveLength(op === 'create' ? 0 : 1);
      }
      const result = document.components.schemas[`${type}BatchResponse`].properties.results.items;
      expect(result.properties.record.$ref).toBe(`#/components/schemas/${type}`);
      expect(result.properties.error.$ref).toBe('#/components/schemas/BatchItemError');
    }
    for (const route of ROUTES.filter((r) => r.kind === 'upsert')) {
      const operation = document.paths[route.path.replace('{id}', '{external_id}')].put;
      expect(operation.parameters.find((p: { in: string }) => p.in === 'path')).toMatchObject({ name: 'external_id', required: true, schema: { type: 'string', minLength: 1, maxLength: 255 } });
      expect(operation.requestBody.content['application/json'].schema.$ref).toBe(`#/components/schemas/Create${route.resource.type}Input`);
      expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['200', '201', '400', '409']));
      expect(Object.keys(operation.responses[201].headers)).toContain('Location');
    }
    const duplicates = document.paths['/customers/duplicates'].get.responses[200].content['application/json'].schema;
    expect(duplicates.properties.data.items.$ref).toBe('#/components/schemas/CustomerDuplicateGroup');
    expect(document.components.schemas.CustomerDuplicateGroup.properties.customers.items.$ref).toBe('#/components/schemas/Customer');
    const merge = document.paths['/customers/{id}/merge'].post;
    expect(merge.requestBody.required).toBe(true);
    expect(document.components.schemas.MergeCustomersInput).toMatchObject({ required: ['source_ids'], properties: { source_ids: { type: 'array', items: { type: 'string', format: 'uuid' } } } });
    // Integration keys on every record: metadata's string values under short keys.
    for (const { type } of registeredResources()) {
      expect(document.components.schemas[type].properties.metadata, type).toMatchObject({ type: 'object', additionalProperties: { type: 'string', maxLength: 500 }, maxProperties: 50 });
      expect(document.components.schemas[type].properties.external_id.type, type).toEqual(['string', 'null']);
    }
  });

  it('the answers a client must handle carry their documented headers: replays, repeated keys, refused bodies, rate limits', async () => {
    const client = rest(api, api.keys.acme!);
    // Optional inputs take null.
    const first = await client.post('/customers', { name: 'Replayed', email: null, phone: null }, { 'idempotency-key': 'replay' });
    conforms('/customers', 'post', first, 201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const replay = await client.post('/customers', { name: 'Replayed', email: null, phone: null }, { 'idempotency-key': 'replay' });
    conforms('/customers', 'post', replay, 201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.headers.get('location')).toBe(first.headers.get('location'));

    // A first request still running (just begun) and one that never finished (its process
    // died minutes ago), as the service records them.
    const open = await openDatabase({ databaseUrl: api.db.env.DATABASE_URL!, dataDir: api.db.env.DATA_DIR ?? '' });
    try {
      const apiKey = await open.prisma.apiKey.findFirstOrThrow({ where: { name: 'acme' } });
      const print = fingerprint('POST', '/customers', JSON.stringify({ name: 'Pending' }));
      await open.prisma.idempotencyKey.createMany({
        data: [
          { organizationId: apiKey.organizationId, key: `${apiKey.id}:running`, fingerprint: print },
          { organizationId: apiKey.organizationId, key: `${apiKey.id}:unfinished`, fingerprint: print, createdAt: new Date(Date.now() - 10 * 60_000) },
        ],
      });
    } finally {
      await open.close();
    }
    const running = await client.post('/customers', { name: 'Pending' }, { 'idempotency-key': 'running' });
    conforms('/customers', 'post', running, 409);
    expect(running.headers.get('retry-after')).toBe('1');
    const unfinished = await client.post('/customers', { name: 'Pending' }, { 'idempotency-key': 'unfinished' });
    conforms('/customers', 'post', unfinished, 409);
    expect(unfinished.headers.get('retry-after')).toBeNull();

    const send = (body: string, type: string) => call(`${api.url}/v1/customers`, { method: 'POST', key: api.keys.acme, body, headers: { 'content-type': type } });
    conforms('/customers', 'post', await send('name=Ada', 'text/plain'), 415);
    conforms('/customers', 'post', await send(JSON.stringify({ name: 'x'.repeat(1_100_000) }), 'application/json'), 413);
    conforms('/customers', 'get', await client.get(`/customers?search=${'x'.repeat(201)}`), 400);

    // Spend a key's allowance ten units a request (ten root fields), then one at a time.
    const spent = api.keys.spent!;
    const tenFields = `{ ${Array.from({ length: 10 }, (_, i) => `f${i}: apiVersion`).join(' ')} }`;
    for (let remaining = Infinity; remaining >= 10; ) {
      const response = await call(`${api.url}/graphql`, { method: 'POST', key: spent, json: { query: tenFields } });
      expect(response.status).toBe(200);
      remaining = Number(response.headers.get('ratelimit-remaining'));
    }
    let limited = await rest(api, spent).get('/customers');
    for (let tries = 0; limited.status === 200 && tries < 10; tries++) limited = await rest(api, spent).get('/customers');
    conforms('/customers', 'get', limited, 429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('documents ids, the search bound and nullable optional inputs', () => {
    expect(document.paths['/customers'].get.parameters.find((p: { name: string }) => p.name === 'search').schema.maxLength).toBe(200);
    const itemPaths = Object.keys(document.paths).filter((path) => path.includes('{id}'));
    expect(itemPaths.length).toBeGreaterThan(0);
    for (const operation of itemPaths.filter((path) => !path.startsWith('/events/')).flatMap((path) => Object.values<any>(document.paths[path]))) {
      const id = operation.parameters.find((p: { in: string }) => p.in === 'path');
      expect(id, operation.operationId).toMatchObject({ name: 'id', required: true, description: expect.stringMatching(/\S/), schema: { type: 'string', format: 'uuid' } });
    }
    expect(document.paths['/events/{id}'].get.parameters[0].schema).toEqual({ type: 'string', pattern: '^evt_[0-9a-f]{32}$' });
    // Every property of every input (line items included): nullable exactly when optional.
    const inputs = Object.entries<any>(document.components.schemas).filter(([name]) => name.endsWith('Input'));
    expect(inputs.length).toBeGreaterThan(0);
    const walk = (where: string, schema: any) => {
      for (const [name, property] of Object.entries<any>(schema.properties)) {
        const nullable = Array.isArray(property.type) && property.type.includes('null');
        expect(nullable, `${where}.${name}`).toBe(!schema.required.includes(name));
        if (property.items?.properties) walk(`${where}.${name}[]`, property.items);
      }
    };
    for (const [name, schema] of inputs) walk(name, schema);
  });
});

import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import { getNamedType, getNullableType, isInputObjectType, isObjectType, type GraphQLEnumType, type GraphQLInputField } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connection.js';
import { fingerprint } from '../../src/http/idempotency.js';
import { snakeCase } from '../../src/rest/names.js';
import { ROUTES } from '../../src/rest/router.js';
import { registeredResources } from '../../src/schema/registry.js';
import { call, gql, rest, startApi, type Api, type JsonResponse } from '../helpers/api.js';

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
      { acme: { org: 'Acme' }, readOnly: { org: 'Acme', scopes: 'customers:read' }, spent: { org: 'Acme' } },
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

  it('is served without authentication at /v1/openapi.json', async () => {
    expect(document.openapi).toBe('3.1.0');
    expect(document.servers).toEqual([{ url: '/v1' }]);
  });

  it('is valid OpenAPI 3.1, with no warnings from Redocly\'s linter', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'openapi-')), 'openapi.json');
    writeFileSync(file, JSON.stringify(document));
    const { stdout, stderr } = await run(join('node_modules', '.bin', 'redocly'), ['lint', file], {
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    });
    const output = stdout + stderr;
    expect(output).toContain('Your API description is valid');
    expect(output).not.toMatch(/You have \d+ warnings?/);
    expect(output).not.toMatch(/\berror/i);
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
    expect(operations.sort()).toEqual(ROUTES.map((route) => `${route.method} ${route.path}`).sort());
    // Every registered resource is in it with its five rows.
    for (const { path } of registeredResources()) {
      expect(operations).toEqual(expect.arrayContaining([`GET /${path}`, `POST /${path}`, `GET /${path}/{id}`, `DELETE /${path}/{id}`, `POST /${path}/{id}/restore`]));
    }
    const change = (path: string, method: string) => document.paths[path][method].parameters.map((p: { name: string }) => p.name).sort();
    expect(change('/invoices/{id}', 'patch')).toEqual(['Idempotency-Key', 'If-Match', 'id']);
    expect(change('/invoices/{id}/send', 'post')).toEqual(['Idempotency-Key', 'If-Match', 'id']);
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
    const scalar: Record<string, object> = { Date: { type: 'string', format: 'date' }, DateTime: { type: 'string', format: 'date-time' }, Int: { type: 'integer' }, ID: { type: 'string', format: 'uuid' }, String: { type: 'string' } };
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
    const key = api.keys.acme!;
    const client = rest(api, key);
    const customer = (await client.post('/customers', { name: 'Filtered', email: 'filtered@x.example' })).body;
    const job = (await client.post('/jobs', { customer_id: customer.id, title: 'Filtered' })).body;
    await client.post('/invoices', { customer_id: customer.id, job_id: job.id, currency: 'USD', line_items: [{ description: 'x', quantity: 1, unit_amount: 5 }] });
    await gql(api, key, 'mutation($i: CreateEstimateInput!) { createEstimate(input: $i) { id } }', { i: { customerId: customer.id, currency: 'USD', lineItems: [{ description: 'x', quantity: 1, unitAmount: 1 }] } });
    await gql(api, key, 'mutation($i: CreateProposalInput!) { createProposal(input: $i) { id } }', { i: { customerId: customer.id, title: 'P', totalAmount: 1, currency: 'USD' } });
    await gql(api, key, 'mutation($i: CreateEmailInput!) { createEmail(input: $i) { id } }', { i: { customerId: customer.id, type: 'incoming', from: 'a@x.example', to: 'b@x.example', subject: 'S' } });
    await client.post('/webhook_endpoints', { url: 'http://127.0.0.1:9/unused', event_types: ['invoice.paid'] });
    let checked = 0;
    for (const path of Object.keys(document.paths).filter((p) => document.paths[p].get)) {
      const declared: any[] = document.paths[path].get.parameters.filter((p: { in: string }) => p.in === 'query');
      const at = path.includes('{id}') ? path.replace('{id}', (await client.get(path.split('/{id}')[0]!)).body.data[0].id) : path;
      // The server names the parameters it knows when refusing one it does not.
      const refused = await client.get(`${at}?nope=1`);
      expect(refused.status, path).toBe(400);
      const known = /known: ([^)]*)\)/.exec(refused.body.errors[0].message)![1]!.split(', ');
      // `expand` is declared where the record refers to another (elsewhere any value is a 400).
      expect(declared.map((p) => p.name).sort(), path).toEqual(known.filter((name) => name !== 'expand' || param(path, 'expand')).sort());
      if (known.includes('expand') && !param(path, 'expand')) expect((await client.get(`${at}?expand=customer`)).status, path).toBe(400);
      // Each sort, filter and shape, written as declared (every property of a range or a
      // relation on its own), is accepted.
      const paging = ROUTES.find((r) => r.method === 'GET' && r.path === path)!.params.map((p) => p.name);
      for (const p of declared.filter((p) => !paging.includes(p.name))) {
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
    const job = await client.post('/jobs', { customer_id: customer.body.id, title: 'Boiler' });
    const invoice = await client.post('/invoices', { customer_id: customer.body.id, job_id: job.body.id, currency: 'USD', due_date: '2027-01-01', line_items: [{ description: 'x', quantity: 1, unit_amount: 5 }] });
    await gql(api, key, 'mutation($i: CreateEstimateInput!) { createEstimate(input: $i) { id } }', { i: { customerId: customer.body.id, currency: 'USD', lineItems: [{ description: 'x', quantity: 1, unitAmount: 1 }] } });
    await gql(api, key, 'mutation($i: CreateProposalInput!) { createProposal(input: $i) { id } }', { i: { customerId: customer.body.id, title: 'P', totalAmount: 1, currency: 'USD' } });
    await gql(api, key, 'mutation($i: CreateEmailInput!) { createEmail(input: $i) { id } }', { i: { customerId: customer.body.id, type: 'incoming', from: 'a@x.example', to: 'b@x.example', subject: 'S' } });

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
    for (const path of Object.keys(document.paths)) {
      if (path.includes('{id}/')) continue; // transitions and restore: the next test
      if (path.endsWith('{id}')) {
        const list = await client.get(path.replace('/{id}', ''));
        conforms(path, 'get', await client.get(path.replace('{id}', list.body.data[0].id)), 200);
        conforms(path, 'get', await client.get(path.replace('{id}', '00000000-0000-4000-8000-000000000000')), 404);
        conforms(path, 'get', await client.get(path.replace('{id}', 'not-a-uuid')), 404);
      } else {
        const list = await client.get(path);
        expect(list.body.data.length, path).toBeGreaterThan(0);
        conforms(path, 'get', list, 200);
        conforms(path, 'get', await client.get(`${path}?limit=0`), 400);
        conforms(path, 'get', await call(`${api.url}/v1${path}`), 401);
        // A customers:read key reads /customers, and the customer events of /events.
        if (path !== '/customers' && path !== '/events') conforms(path, 'get', await rest(api, api.keys.readOnly!).get(path), 403);
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
    const sync = await client.get('/jobs?include_deleted=true');
    expect(sync.body.data.some((row: { deleted?: boolean }) => row.deleted)).toBe(true);
    conforms('/jobs', 'get', sync, 200);
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

import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, gql, rest, startApi, type Api } from '../helpers/api.js';

const run = promisify(execFile);

describe('OpenAPI document', () => {
  let api: Api;
  let document: any;
  beforeAll(async () => {
    api = await startApi('postgres', { acme: { org: 'Acme' }, readOnly: { org: 'Acme', scopes: 'customers:read' } });
    const response = await call(`${api.url}/v1/openapi.json`);
    expect(response.status).toBe(200);
    document = response.body;
  });
  afterAll(() => api.stop());

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
    expect(operations.sort()).toEqual(
      [
        'GET /customers', 'POST /customers', 'GET /customers/{id}',
        'GET /jobs', 'POST /jobs', 'GET /jobs/{id}',
        'GET /emails', 'GET /emails/{id}',
        'GET /invoices', 'POST /invoices', 'GET /invoices/{id}',
        'GET /estimates', 'GET /estimates/{id}',
        'GET /proposals', 'GET /proposals/{id}',
      ].sort(),
    );
    const params = (path: string) => document.paths[path].get.parameters.map((p: { name: string }) => p.name).sort();
    expect(params('/customers')).toEqual(['limit', 'page', 'search']);
    expect(params('/emails')).toEqual(['customer_id', 'limit', 'page', 'type']);
    expect(params('/invoices')).toEqual(['customer_id', 'limit', 'page', 'status']);
    expect(document.paths['/invoices'].get.parameters.find((p: { name: string }) => p.name === 'status').schema.enum).toEqual(['all', 'draft', 'sent', 'paid']);
  });

  it('real responses carry the headers the document declares', async () => {
    const client = rest(api, api.keys.acme!);
    const checks: Array<[string, string, number, Headers]> = [];
    const created = await client.post('/customers', { name: 'Headers' });
    checks.push(['/customers', 'post', 201, created.headers]);
    checks.push(['/customers', 'get', 200, (await client.get('/customers')).headers]);
    checks.push(['/customers/{id}', 'get', 200, (await client.get(`/customers/${created.body.id}`)).headers]);
    checks.push(['/customers', 'get', 401, (await call(`${api.url}/v1/customers`)).headers]);
    for (const [path, method, status, headers] of checks) {
      const declared = Object.keys(document.paths[path][method].responses[status].headers ?? {});
      expect(declared.length, `${method} ${path} ${status}`).toBeGreaterThan(0);
      // Idempotent-Replayed is present on replays only.
      for (const name of declared.filter((h) => h !== 'Idempotent-Replayed')) expect(headers.has(name), `${method} ${path} ${status}: ${name}`).toBe(true);
    }
    expect(document.paths['/customers'].get.parameters.find((p: { name: string }) => p.name === 'search').schema.maxLength).toBe(200);
    expect(document.paths['/customers/{id}'].get.parameters[0]).toMatchObject({ description: expect.any(String), schema: { format: 'uuid' } });
  });

  it('real responses of every route match their documented schemas', async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    formats.default(ajv);
    ajv.addSchema(document, 'openapi');
    const key = api.keys.acme!;
    const client = rest(api, key);
    const customer = await client.post('/customers', { name: 'Ada', email: 'ada@x.example' });
    const job = await client.post('/jobs', { customer_id: customer.body.id, title: 'Boiler' });
    const invoice = await client.post('/invoices', { customer_id: customer.body.id, job_id: job.body.id, currency: 'USD', due_date: '2027-01-01', line_items: [{ description: 'x', quantity: 1, unit_amount: 5 }] });
    await gql(api, key, 'mutation($i: CreateEstimateInput!) { createEstimate(input: $i) { id } }', { i: { customerId: customer.body.id, currency: 'USD', lineItems: [{ description: 'x', quantity: 1, unitAmount: 1 }] } });
    await gql(api, key, 'mutation($i: CreateProposalInput!) { createProposal(input: $i) { id } }', { i: { customerId: customer.body.id, title: 'P', totalAmount: 1, currency: 'USD' } });
    await gql(api, key, 'mutation($i: CreateEmailInput!) { createEmail(input: $i) { id } }', { i: { customerId: customer.body.id, type: 'incoming', from: 'a@x.example', to: 'b@x.example', subject: 'S' } });

    const check = (pointer: string, body: unknown) => {
      const ok = ajv.validate({ $ref: `openapi#${pointer}` }, body);
      expect(ok, `${pointer}: ${ajv.errorsText()}`).toBe(true);
    };
    const escape = (path: string) => path.replace(/~/g, '~0').replace(/\//g, '~1');
    for (const [status, body, path, method] of [
      [customer.status, customer.body, '/customers', 'post'],
      [job.status, job.body, '/jobs', 'post'],
      [invoice.status, invoice.body, '/invoices', 'post'],
    ] as const) {
      check(`/paths/${escape(path)}/${method}/responses/${status}/content/application~1json/schema`, body);
    }
    for (const path of Object.keys(document.paths)) {
      if (path.endsWith('{id}')) {
        const list = await client.get(path.replace('/{id}', ''));
        const item = await client.get(path.replace('{id}', list.body.data[0].id));
        check(`/paths/${escape(path)}/get/responses/200/content/application~1json/schema`, item.body);
        const missing = await client.get(path.replace('{id}', '00000000-0000-4000-8000-000000000000'));
        check(`/paths/${escape(path)}/get/responses/404/content/application~1problem+json/schema`, missing.body);
      } else {
        const list = await client.get(path);
        expect(list.body.data.length, path).toBeGreaterThan(0);
        check(`/paths/${escape(path)}/get/responses/200/content/application~1json/schema`, list.body);
        const bad = await client.get(`${path}?limit=0`);
        check(`/paths/${escape(path)}/get/responses/400/content/application~1problem+json/schema`, bad.body);
        const unauthorized = await call(`${api.url}/v1${path}`);
        check(`/paths/${escape(path)}/get/responses/401/content/application~1problem+json/schema`, unauthorized.body);
        if (path !== '/customers') {
          const forbidden = await rest(api, api.keys.readOnly!).get(path);
          expect(forbidden.status).toBe(403);
          check(`/paths/${escape(path)}/get/responses/403/content/application~1problem+json/schema`, forbidden.body);
        }
      }
    }
  });
});

// What a client generator makes of the OpenAPI document: openapi-typescript's types, used
// by a small typed program that reads the headers a client relies on. The program only
// compiles while the document declares them: the same program against the document with
// its response headers taken out must fail on every line that reads one. The program also
// types a sorted, filtered, expanded list call, which is then sent, written the way the
// document's parameter styles say, to a real server.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { openApiDocument } from '../../src/rest/openapi.js';
import { ROUTES } from '../../src/rest/router.js';
import { rest, startApi, type Api } from '../helpers/api.js';
import { ANY_DATABASE } from '../helpers/databases.js';
import { typeCheck } from '../helpers/typescript.js';

/** Overdue invoices of customers matching "acme", the customer beside each: the call the program types and the test sends. */
const OVERDUE = {
  order_by: ['due_date', '-total_amount'],
  status: ['sent'],
  due_date: { lt: '2026-12-01' },
  customer: { search: 'acme' },
  expand: ['customer'],
  fields: ['number', 'due_date', 'total_amount', 'customer_id'],
};

// Lines ending in `// reads a header` must stop compiling once the header is undeclared
// (openapi-typescript then types it `unknown`).
const PROGRAM = `
import type { components, paths } from './api.js';

type List = paths['/customers']['get'];
type Item = paths['/customers/{id}']['get'];
type Create = paths['/customers']['post'];

// Every answer to a counted key: its request id and where the key stands.
export function listed(h: List['responses'][200]['headers']) {
  const requestId: string = h['X-Request-Id']; // reads a header
  const limit: number = h['RateLimit-Limit']; // reads a header
  const remaining: number = h['RateLimit-Remaining']; // reads a header
  const reset: number = h['RateLimit-Reset']; // reads a header
  return { requestId, limit, remaining, reset };
}

export function missing(h: Item['responses'][404]['headers']): number {
  return h['RateLimit-Remaining']; // reads a header
}

// A create: where the record lives, and (on a replay only) that it is an earlier answer.
export function created(h: Create['responses'][201]['headers']) {
  const location: string = h['Location']; // reads a header
  const replayed: 'true' | undefined = h['Idempotent-Replayed']; // reads a header
  // @ts-expect-error a first answer carries no Idempotent-Replayed
  const alwaysReplayed: 'true' = h['Idempotent-Replayed'];
  return { location, replayed, alwaysReplayed };
}

// A repeated Idempotency-Key: retry after Retry-After while the first request runs; a 409
// without it is final.
export function conflict(h: Create['responses'][409]['headers']): number | undefined {
  const retryAfter: number | undefined = h['Retry-After']; // reads a header
  // @ts-expect-error a first request that never finished leaves no Retry-After
  const alwaysRetry: number = h['Retry-After'];
  return retryAfter ?? alwaysRetry;
}

export function limited(h: List['responses'][429]['headers']): number {
  return h['Retry-After']; // reads a header
}

export function unavailable(h: List['responses'][503]['headers']): number {
  return h['Retry-After']; // reads a header
}

export function unauthenticated(h: List['responses'][401]['headers']): string {
  return h['WWW-Authenticate']; // reads a header
}

type Patch = paths['/customers/{id}']['patch'];

// A record's version, to send back as If-Match (or If-None-Match).
export function versioned(h: Item['responses'][200]['headers']): string {
  return h['ETag']; // reads a header
}

// A failed If-Match: the current record's version, when the key may read it.
export function stale(h: Patch['responses'][412]['headers']): string | undefined {
  return h['ETag']; // reads a header
}

// A merge patch: any field may be left out, and null clears an optional one.
export const patch: Patch['requestBody']['content']['application/merge-patch+json'] = { email: null };

// Optional inputs accept null; required ones do not.
export const body: Create['requestBody']['content']['application/json'] = { name: 'Ada', email: null, phone: null };
// @ts-expect-error a required field cannot be null
export const nameless: Create['requestBody']['content']['application/json'] = { name: null };
export const id: Item['parameters']['path']['id'] = '00000000-0000-4000-8000-000000000000';

// A list's sort, filters and shape: typed per resource from the document.
type InvoiceQuery = NonNullable<paths['/invoices']['get']['parameters']['query']>;
export const overdue: InvoiceQuery = ${JSON.stringify(OVERDUE)};
// @ts-expect-error colour is not a sortable field
export const unsortable: InvoiceQuery = { order_by: ['colour'] };
// @ts-expect-error between is not an operator of a range
export const between: InvoiceQuery = { due_date: { between: '2026-12-01' } };
// @ts-expect-error lost is not an invoice status
export const lost: InvoiceQuery = { status: ['lost'] };
// @ts-expect-error an invoice refers to no owner
export const owner: InvoiceQuery = { expand: ['owner'] };
// @ts-expect-error colour is not a field of an invoice
export const colour: InvoiceQuery = { fields: ['colour'] };
// @ts-expect-error a customer's relation filters take the invoice list's filters
export const nested: NonNullable<paths['/customers']['get']['parameters']['query']> = { invoices: { status: ['lost'] } };
export const sentInvoices: NonNullable<paths['/customers']['get']['parameters']['query']> = { invoices: { status: ['sent'], due_date: { lt: '2026-12-01' } } };

// An expanded reference is the whole record, present only when asked for.
type Invoice = components['schemas']['Invoice'];
export function customerName(invoice: Invoice): string | undefined {
  return invoice.customer?.name;
}
// @ts-expect-error without expand=customer there is no customer
export const always = (invoice: Invoice): components['schemas']['Customer'] => invoice.customer;
export const itemShape: NonNullable<paths['/invoices/{id}']['get']['parameters']['query']> = { expand: ['customer', 'job'], fields: ['number'] };

// An upsert by external id: created (201, where it lives) or updated (200, its version).
type Upsert = paths['/customers/by_external_id/{external_id}']['put'];
export const externalId: Upsert['parameters']['path']['external_id'] = 'crm-42';
export const upserted: Upsert['requestBody']['content']['application/json'] = { name: 'Ada', external_id: 'crm-42', metadata: { source: 'crm' } };
export function upsertCreated(h: Upsert['responses'][201]['headers']): string {
  return h['Location']; // reads a header
}
export function upsertUpdated(r: Upsert['responses'][200]['content']['application/json']): number {
  return r.version;
}

// Any write can be a dry run: asked for in Prefer, the answer says so.
export const dryRun: NonNullable<Upsert['parameters']['header']> = { Prefer: 'dry-run' };
export function tried(h: Upsert['responses'][201]['headers']) {
  const marked: 'true' | undefined = h['Dry-Run']; // reads a header
  const applied: 'dry-run' | undefined = h['Preference-Applied']; // reads a header
  // @ts-expect-error a real call's answer carries no Dry-Run
  const alwaysMarked: 'true' = h['Dry-Run'];
  return { marked, applied, alwaysMarked };
}

// A batch: each item one op, with what that op takes.
type Batch = paths['/customers/batch']['post'];
type BatchBody = Batch['requestBody']['content']['application/json'];
export const batch: BatchBody = {
  mode: 'partial',
  items: [
    { op: 'upsert', external_id: 'crm-1', data: { name: 'Ada', metadata: { tier: 'gold' } } },
    { op: 'update', external_id: 'crm-2', data: { metadata: { tier: null } }, if_match: 3 },
    { op: 'delete', id: '00000000-0000-4000-8000-000000000000' },
  ],
};
// @ts-expect-error an upsert names its record by external id
export const anonymous: BatchBody = { items: [{ op: 'upsert', data: { name: 'Ada' } }] };
// @ts-expect-error a create's data is the create input
export const nickname: BatchBody = { items: [{ op: 'create', data: { nickname: 'Ada' } }] };
// @ts-expect-error an e-mail cannot be updated
export const emailUpdate: paths['/emails/batch']['post']['requestBody']['content']['application/json'] = { items: [{ op: 'update', id: '00000000-0000-4000-8000-000000000000' }] };
export function batchNames(r: Batch['responses'][200]['content']['application/json']): Array<string | undefined> {
  return r.results.map((result) => result.record?.name ?? result.error?.errors[0]?.param);
}

// Duplicates page like a list, without filters; a merge names its sources.
type Duplicates = paths['/customers/duplicates']['get'];
export const duplicatesPage: NonNullable<Duplicates['parameters']['query']> = { limit: 10, cursor: 'next' };
// @ts-expect-error duplicates take no fields
export const duplicateFields: NonNullable<Duplicates['parameters']['query']> = { fields: ['name'] };
export function sharedBy(r: Duplicates['responses'][200]['content']['application/json']): string[] {
  return r.data.flatMap((group) => group.customers.map((customer) => \`\${group.key} \${group.value}: \${customer.id}\`));
}
export const merge: paths['/customers/{id}/merge']['post']['requestBody']['content']['application/json'] = { source_ids: ['00000000-0000-4000-8000-000000000000'] };

// A plain list holds records; its sync holds records as they are now and tombstones.
export function names(r: List['responses'][200]['content']['application/json']): string[] {
  return r.data.map((customer) => customer.name);
}
type Sync = paths['/customers/sync']['get'];
type SyncPage = Sync['responses'][200]['content']['application/json'];
export function mirror(r: SyncPage): string[] {
  return r.data.map((row) => ('deleted' in row ? \`gone \${row.id}\` : row.name));
}
// @ts-expect-error a sync's row may be a tombstone, which has no name
export const syncNames = (r: SyncPage): string[] => r.data.map((row) => row.name);
export const resume: NonNullable<Sync['parameters']['query']> = { cursor: 'next', limit: 100, updated_since: '2026-11-01T00:00:00Z' };
// @ts-expect-error a sync is in change order
export const sortedSync: NonNullable<Sync['parameters']['query']> = { order_by: ['name'] };

// Integration keys: filters on every list, and on every record.
export const byKeys: NonNullable<paths['/jobs']['get']['parameters']['query']> = { external_id: 'crm-1', metadata: { tier: 'gold' } };
export function tier(job: components['schemas']['Job']): string | undefined {
  return job.external_id ?? job.metadata['tier'];
}
`;

/** Every response header the document declares, anywhere. */
function declaredHeaders(document: any): Set<string> {
  const operations = Object.values<any>(document.paths).flatMap((methods) => Object.values<any>(methods));
  return new Set(operations.flatMap((operation) => Object.values<any>(operation.responses).flatMap((response) => Object.keys(response.headers ?? {}))));
}

/** The document with every response header taken out. */
function withoutHeaders(document: any) {
  const copy = structuredClone(document);
  delete copy.components.headers;
  for (const operations of Object.values<any>(copy.paths)) {
    for (const operation of Object.values<any>(operations)) for (const response of Object.values<any>(operation.responses)) delete response.headers;
  }
  return copy;
}

/**
 * A query as a generated client writes it from the operation's parameter declarations:
 * `form` with explode false comma-separated, `deepObject` in brackets (a relation's range one
 * bracket deeper), anything else `name=value`. A name the operation does not declare throws.
 */
function querySerializer(parameters: Array<{ name: string; in: string; style?: string; explode?: boolean }>) {
  return (query: Record<string, unknown>) =>
    Object.entries(query)
      .flatMap(([name, value]) => {
        const declared = parameters.find((p) => p.in === 'query' && p.name === name);
        if (!declared) throw new Error(`${name} is not a declared parameter`);
        const pairs: string[] = [];
        const add = (key: string, v: unknown) => {
          if (Array.isArray(v)) pairs.push(`${key}=${v.map((item) => encodeURIComponent(String(item))).join(',')}`);
          else if (v && typeof v === 'object') for (const [inner, w] of Object.entries(v)) add(`${key}[${inner}]`, w);
          else pairs.push(`${key}=${encodeURIComponent(String(v))}`);
        };
        if (declared.style === 'deepObject' || (declared.style === 'form' && declared.explode === false)) add(name, value);
        else pairs.push(`${name}=${encodeURIComponent(String(value))}`);
        return pairs;
      })
      .join('&');
}

describe('a client generated from the OpenAPI document', () => {
  let api: Api;
  beforeAll(async () => {
    api = await startApi(ANY_DATABASE, { acme: { org: 'Acme' } });
  });
  afterAll(() => api?.stop());

  it('sends the typed sorted, filtered, expanded call as the document declares it, and the server answers it', async () => {
    const client = rest(api, api.keys.acme!);
    const customer = async (name: string) => (await client.post('/customers', { name })).body.id as string;
    const [acme, other] = [await customer('Acme Ltd'), await customer('Other Co')];
    const invoice = async (customerId: string, due: string, total: number, moves: string[]) => {
      const created = await client.post('/invoices', { customer_id: customerId, currency: 'EUR', due_date: due, line_items: [{ description: 'x', quantity: 1, unit_amount: total }] });
      for (const move of moves) expect((await client.post(`/invoices/${created.body.id}/${move}`)).status).toBe(200);
      return created.body.id as string;
    };
    const later = await invoice(acme, '2026-11-01', 500, ['send']);
    const first = await invoice(acme, '2026-10-01', 100, ['send']);
    const dearer = await invoice(acme, '2026-11-01', 900, ['send']);
    await invoice(acme, '2026-11-15', 700, []); // a draft
    await invoice(acme, '2026-12-15', 700, ['send']); // not yet due
    await invoice(other, '2026-10-01', 100, ['send']); // another customer's
    const serialize = querySerializer((openApiDocument(ROUTES).paths['/invoices']!.get as { parameters: never }).parameters);
    const query = serialize(OVERDUE);
    expect(query).toBe('order_by=due_date,-total_amount&status=sent&due_date[lt]=2026-12-01&customer[search]=acme&expand=customer&fields=number,due_date,total_amount,customer_id');
    const page = await client.get(`/invoices?${query}`);
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    expect(page.body.data.map((i: { id: string }) => i.id)).toEqual([first, dearer, later]);
    for (const row of page.body.data) {
      expect(Object.keys(row).sort()).toEqual(['customer', 'customer_id', 'due_date', 'id', 'number', 'total_amount']);
      expect(row.customer).toMatchObject({ id: acme, name: 'Acme Ltd' });
    }
    expect(() => serialize({ colour: 'red' })).toThrow('colour is not a declared parameter');
  });

  it('types the response headers, nullable optional inputs and path ids a client uses', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'generated-client-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    mkdirSync(join(dir, 'ablated'));
    const document = openApiDocument(ROUTES);
    writeFileSync(join(dir, 'api.ts'), astToString(await openapiTS(document as never)));
    writeFileSync(join(dir, 'ablated', 'api.ts'), astToString(await openapiTS(withoutHeaders(document))));
    writeFileSync(join(dir, 'program.ts'), PROGRAM);
    writeFileSync(join(dir, 'ablated', 'program.ts'), PROGRAM);
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', skipLibCheck: true },
        files: ['program.ts', 'ablated/program.ts'],
      }),
    );
    const { output, errors } = await typeCheck(dir);
    const errorLines = (file: string) => errors.filter((error) => error.file === file).map((error) => error.line);
    expect(errorLines('program.ts'), output).toEqual([]);
    const reads = PROGRAM.split('\n').flatMap((line, i) => (line.endsWith('// reads a header') ? [i + 1] : []));
    // The program reads every header the document declares.
    const read = PROGRAM.split('\n').filter((line) => line.endsWith('// reads a header')).map((line) => /h\['([^']+)'\]/.exec(line)![1]);
    expect(new Set(read)).toEqual(declaredHeaders(document));
    expect([...new Set(errorLines('ablated/program.ts'))], output).toEqual(reads);
    expect(output.split('\n').filter((line) => line && !/^(ablated\/)?program\.ts\(/.test(line))).toEqual([]);
  });
});

// A validator generated from the OpenAPI document and the server agree on every create
// body field (issue #29): for each field with a constraint keyword (maxLength, pattern,
// format, enum, minimum, maximum, minItems, maxItems), a value just past it is refused by
// both, and a text at its maxLength is accepted by both. The keywords come from the rules
// the server checks with (src/schema/field-rules.ts), so this holds by construction; the
// test is what would notice a rule written twice again.
import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../src/schema/index.js';
import { registeredResources } from '../../src/schema/registry.js';
import { call, rest, startApi, type Api } from '../helpers/api.js';
import { ANY_DATABASE } from '../helpers/databases.js';
import { exampleBody } from '../helpers/examples.js';

type Schema = Record<string, any>;

describe('OpenAPI constraints and the server agree', () => {
  let api: Api;
  let document: Schema;
  const bases: Record<string, () => Record<string, unknown>> = {};
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  formats.default(ajv);

  beforeAll(async () => {
    api = await startApi(ANY_DATABASE, { acme: { org: 'Acme' } }, { RATE_LIMIT_MAX: '100000' });
    document = (await call(`${api.url}/v1/openapi.json`)).body;
    ajv.addSchema(document, 'openapi');
    // Each resource's body is its create's example, referring to one customer.
    const acme = rest(api, api.keys.acme!);
    const customer = (await acme.post('/customers', { name: 'Base' })).body.id as string;
    for (const resource of registeredResources()) {
      const body = await exampleBody(acme, resource, { customerId: customer });
      bases[`/${resource.path}`] = () => structuredClone(body);
    }
  });
  afterAll(() => api.stop());

  /** The schema behind a $ref in the document. */
  const resolve = (schema: Schema): Schema => (schema.$ref ? resolve(schema.$ref.split('/').slice(1).reduce((at: Schema, key: string) => at[key], document)) : schema);
  /** A nullable property's own schema (`anyOf: [x, null]` or `type: [t, 'null']`). */
  const own = (schema: Schema): Schema => resolve(schema.anyOf?.find((s: Schema) => s.type !== 'null') ?? schema);

  /** Values past (or at) a property's constraints: [label, value, valid]. */
  function cases(property: Schema, base: unknown): Array<[string, unknown, boolean]> {
    const s = own(property);
    const out: Array<[string, unknown, boolean]> = [];
    if (s.maxLength !== undefined) {
      out.push([`maxLength ${s.maxLength} + 1`, 'x'.repeat(s.maxLength + 1), false]);
      if (!s.format && (!s.pattern || s.pattern === '\\S')) out.push([`at maxLength ${s.maxLength}`, 'x'.repeat(s.maxLength), true]);
    }
    if (s.pattern === '\\S') out.push(['blank', '   ', false]);
    else if (s.pattern) out.push([`not ${s.pattern}`, '12345', false]);
    if (s.format === 'email') out.push(['not an e-mail', 'not an address', false]);
    if (s.format === 'uuid') out.push(['not a UUID', 'nope', false]);
    if (s.enum && typeof s.enum[0] === 'string') out.push(['outside the enum', 'XXX', false]);
    if (s.minimum !== undefined) out.push([`below minimum ${s.minimum}`, s.minimum - 1, false]);
    if (s.maximum !== undefined) out.push([`above maximum ${s.maximum}`, s.maximum + 1, false]);
    if (s.minItems !== undefined) out.push([`fewer than ${s.minItems} items`, [], false]);
    if (s.maxItems !== undefined && Array.isArray(base)) out.push([`more than ${s.maxItems} items`, Array.from({ length: s.maxItems + 1 }, () => base[0]), false]);
    return out;
  }

  it.each(registeredResources().map((resource) => `/${resource.path}`))('POST %s: every constrained field', async (path) => {
    const schema = resolve(document.paths[path].post.requestBody.content['application/json'].schema);
    const validate = ajv.compile({ $ref: `openapi#/components/schemas/${document.paths[path].post.requestBody.content['application/json'].schema.$ref.split('/').pop()}` });
    const checked: string[] = [];
    const check = async (label: string, body: Record<string, unknown>, valid: boolean) => {
      const byDocument = validate(body);
      const response = await call(`${api.url}/v1${path}`, { method: 'POST', key: api.keys.acme, json: body });
      const byServer = response.status === 201;
      expect([byDocument, byServer], `${path} ${label}: document ${JSON.stringify(validate.errors?.[0])}, server ${response.status} ${JSON.stringify(response.body?.errors)}`).toEqual([valid, valid]);
      checked.push(label);
    };
    await check('the base body', bases[path]!(), true);
    for (const [name, property] of Object.entries(schema.properties as Record<string, Schema>)) {
      const base = bases[path]!()[name];
      for (const [label, value, valid] of cases(property, base)) await check(`${name}: ${label}`, { ...bases[path]!(), [name]: value }, valid);
      // A list of objects: each constrained field of its first item.
      const items = own(property).items && resolve(own(property).items);
      if (items?.properties && Array.isArray(base)) {
        for (const [inner, innerProperty] of Object.entries(items.properties as Record<string, Schema>)) {
          for (const [label, value, valid] of cases(innerProperty, (base[0] as Record<string, unknown>)[inner])) {
            await check(`${name}[0].${inner}: ${label}`, { ...bases[path]!(), [name]: [{ ...(base[0] as object), [inner]: value }] }, valid);
          }
        }
      }
    }
    // Every constrained field was tried, not just the base body.
    expect(checked.length).toBeGreaterThan(4);
  });
});

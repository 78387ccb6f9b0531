import { validate } from 'graphql';
import { describe, expect, it } from 'vitest';
import { ROUTES } from '../../src/rest/router.js';
import { schema } from '../../src/schema/index.js';

describe('the route table', () => {
  it('has a row for every endpoint of the spec, and the get-one routes', () => {
    // At least these: a resource added to the schema adds its rows without editing this list.
    expect(ROUTES.map((r) => `${r.method} ${r.path}`)).toEqual(
      expect.arrayContaining([
        'GET /customers', 'GET /customers/{id}', 'POST /customers',
        'GET /jobs', 'GET /jobs/{id}', 'POST /jobs',
        'GET /emails', 'GET /emails/{id}',
        'GET /invoices', 'GET /invoices/{id}', 'POST /invoices',
        'GET /estimates', 'GET /estimates/{id}',
        'GET /proposals', 'GET /proposals/{id}',
      ]),
    );
  });

  it('takes each row\'s scope from its field, and serves every field the schema marks for REST', () => {
    const marked = [...Object.values(schema.getQueryType()!.getFields()), ...Object.values(schema.getMutationType()!.getFields())].filter((f) => f.extensions.rest);
    // Every list that syncs has a sync row beside it (GET /{path}/sync).
    const syncs = ROUTES.filter((route) => route.kind === 'list' && route.params.some((p) => p.name === 'include_deleted'));
    expect(ROUTES.filter((route) => route.kind === 'sync').map((route) => route.path)).toEqual(syncs.map((route) => `${route.path}/sync`));
    expect(ROUTES).toHaveLength(marked.length + syncs.length);
    for (const route of ROUTES) {
      const field = /result: (\w+)/.exec(route.document)![1]!;
      const declared = (schema.getQueryType()!.getFields()[field] ?? schema.getMutationType()!.getFields()[field])!;
      // The field's own scope, or the one its REST declaration names where the field decides per record (events).
      const scope = (declared.extensions.rest as { scope?: string }).scope ?? (declared.extensions.pothosOptions as { authScopes: { scope: string } }).authScopes.scope;
      expect(route.scope, `${route.method} ${route.path}`).toBe(scope);
    }
  });

  it('runs documents that are valid against the schema (REST executes them without re-validating)', () => {
    for (const route of ROUTES) expect(validate(schema, route.parsed), `${route.method} ${route.path}`).toEqual([]);
  });
});

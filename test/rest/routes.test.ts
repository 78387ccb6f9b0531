import { validate } from 'graphql';
import { describe, expect, it } from 'vitest';
import { ROUTES } from '../../src/rest/router.js';
import { schema } from '../../src/schema/index.js';

describe('the route table', () => {
  it('has a row for every endpoint of the spec, and the get-one routes', () => {
    expect(ROUTES.map((r) => `${r.method} ${r.path}`).sort()).toEqual(
      [
        'GET /customers', 'GET /customers/{id}', 'POST /customers',
        'GET /jobs', 'GET /jobs/{id}', 'POST /jobs',
        'GET /emails', 'GET /emails/{id}',
        'GET /invoices', 'GET /invoices/{id}', 'POST /invoices',
        'GET /estimates', 'GET /estimates/{id}',
        'GET /proposals', 'GET /proposals/{id}',
      ].sort(),
    );
  });

  it('runs documents that are valid against the schema (REST executes them without re-validating)', () => {
    for (const route of ROUTES) expect(validate(schema, route.parsed), `${route.method} ${route.path}`).toEqual([]);
  });
});

// The schema is public (schema.graphql, the OpenAPI document): a request whose every
// operation asks only for introspection (`__schema`, `__type`, `__typename`) is answered
// without an API key, so GraphiQL opens without an error before a key is put in, and schema
// tools (codegen) need none. It reaches no data: it runs with no organization and no scope,
// and anything beside introspection in the document still needs a key.
import { Kind, parse, type DocumentNode, type SelectionSetNode } from 'graphql';
import type { Admission } from '../context.js';
import type { RateState } from '../rate-limit/allowance.js';

function introspectionOnly(set: SelectionSetNode, document: DocumentNode, seen = new Set<string>()): boolean {
  return set.selections.every((selection) => {
    if (selection.kind === Kind.FIELD) return selection.name.value.startsWith('__');
    if (selection.kind === Kind.INLINE_FRAGMENT) return introspectionOnly(selection.selectionSet, document, seen);
    if (seen.has(selection.name.value)) return true;
    seen.add(selection.name.value);
    const fragment = document.definitions.find((d) => d.kind === Kind.FRAGMENT_DEFINITION && d.name.value === selection.name.value);
    return fragment?.kind === Kind.FRAGMENT_DEFINITION && introspectionOnly(fragment.selectionSet, document, seen);
  });
}

/** Whether a GraphQL request body asks for introspection alone (a query operation whose root fields all begin with `__`). */
export function isIntrospectionOnly(body: string): boolean {
  try {
    const { query } = JSON.parse(body) as { query?: unknown };
    if (typeof query !== 'string' || query.length > 100_000) return false;
    const document = parse(query);
    const operations = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
    return operations.length > 0 && operations.every((operation) => operation.operation === 'query' && introspectionOnly(operation.selectionSet, document));
  } catch {
    return false;
  }
}

/** The admission of an introspection without a key: no organization, no scope. */
export function anonymousAdmission(rate: RateState): Admission {
  return {
    auth: { keyId: 'anonymous', keyPrefix: '', organizationId: '00000000-0000-0000-0000-000000000000', scopes: new Set(), expiresAt: null },
    rate,
  };
}

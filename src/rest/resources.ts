// The REST resources, as data. Everything else about a route (its parameters, filters,
// body fields and response shape) is read from the GraphQL schema, so REST cannot drift
// from it. Adding an endpoint is adding a line here.
import type { Scope } from '../auth/scopes.js';

export interface Resource {
  /** URL segment: /v1/{path} and /v1/{path}/{id}. */
  path: string;
  /** GraphQL object type of one record. */
  type: string;
  /** Query fields for the page and the single record. */
  list: string;
  item: string;
  /** Mutation behind POST /v1/{path}, when REST offers one. */
  create?: string;
  read: Scope;
  write?: Scope;
  /** Object-valued fields that are part of the record (not links to other records). */
  embedded?: string[];
}

export const RESOURCES: Resource[] = [
  { path: 'customers', type: 'Customer', list: 'customers', item: 'customer', create: 'createCustomer', read: 'customers:read', write: 'customers:write' },
  { path: 'jobs', type: 'Job', list: 'jobs', item: 'job', create: 'createJob', read: 'jobs:read', write: 'jobs:write' },
  { path: 'emails', type: 'Email', list: 'emails', item: 'email', read: 'emails:read' },
  { path: 'invoices', type: 'Invoice', list: 'invoices', item: 'invoice', create: 'createInvoice', read: 'invoices:read', write: 'invoices:write', embedded: ['lineItems'] },
  { path: 'estimates', type: 'Estimate', list: 'estimates', item: 'estimate', read: 'estimates:read', embedded: ['lineItems'] },
  { path: 'proposals', type: 'Proposal', list: 'proposals', item: 'proposal', read: 'proposals:read' },
];

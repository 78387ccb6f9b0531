import { builder } from './builder.js';
import { ruled, rules } from './field-rules.js';
import { integrationInputs } from './integration-keys.js';
import { relationArgs, relationQuery } from './relations.js';
import { defineCreate, defineResource } from './resource.js';
import { patchData } from './validation.js';

export const Customer = builder.prismaObject('Customer', {
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    email: t.exposeString('email', { nullable: true }),
    phone: t.exposeString('phone', { nullable: true, description: 'E.164, such as +14155550123.' }),
    jobs: t.relation('jobs', { authScopes: { scope: 'jobs:read' }, nullable: true, args: relationArgs, query: relationQuery }),
    emails: t.relation('emails', { authScopes: { scope: 'emails:read' }, nullable: true, args: relationArgs, query: relationQuery }),
    invoices: t.relation('invoices', { authScopes: { scope: 'invoices:read' }, nullable: true, args: relationArgs, query: relationQuery }),
    estimates: t.relation('estimates', { authScopes: { scope: 'estimates:read' }, nullable: true, args: relationArgs, query: relationQuery }),
    proposals: t.relation('proposals', { authScopes: { scope: 'proposals:read' }, nullable: true, args: relationArgs, query: relationQuery }),
  }),
});

/** The rules of a customer's fields: its inputs' descriptions, checks and OpenAPI keywords. */
const FIELDS = { name: rules.text(200, true), email: rules.email(), phone: rules.phone() };

defineResource(Customer, {
  type: 'Customer',
  path: 'customers',
  read: 'customers:read',
  write: 'customers:write',
  description: 'Customers, newest first.',
  list: {
    fields: {
      name: { kind: 'text', sort: true },
      email: { kind: 'text', nullable: true, sort: true, exact: true },
      phone: { kind: 'text', nullable: true, exact: true },
    },
    search: { columns: ['name', 'email'], description: 'Case-insensitive substring of the name or e-mail.' },
    relations: {
      jobs: { type: 'Job', many: true },
      emails: { type: 'Email', many: true },
      invoices: { type: 'Invoice', many: true },
      estimates: { type: 'Estimate', many: true },
      proposals: { type: 'Proposal', many: true },
    },
  },
  update: {
    input: builder.inputType('UpdateCustomerInput', {
      fields: (t) => ({
        ...integrationInputs(t, true),
        name: t.string(ruled(FIELDS.name, 'Cannot be cleared.')),
        email: t.string(ruled(FIELDS.email, 'null clears it.')),
        phone: t.string(ruled(FIELDS.phone, 'null clears it.')),
      }),
    }),
    check: async (_ctx, patch, check) =>
      patchData(patch as { name?: string | null; email?: string | null; phone?: string | null }, {
        name: (name) => check.text('name', name, FIELDS.name),
        email: (email) => check.email('email', email, FIELDS.email),
        phone: (phone) => check.phone('phone', phone),
      }),
  },
});


const CreateCustomerInput = builder.inputType('CreateCustomerInput', {
  fields: (t) => ({
    ...integrationInputs(t),
    name: t.string({ required: true, ...ruled(FIELDS.name) }),
    email: t.string(ruled(FIELDS.email)),
    phone: t.string(ruled(FIELDS.phone)),
  }),
});

defineCreate('Customer', {
  scope: 'customers:write',
  rest: 'customers',
  input: CreateCustomerInput,
  example: { name: 'Grace Hopper', email: 'grace@example.com', phone: '+442071234567' },
  check: async (_ctx, input, check) => ({
    name: check.text('name', input.name, FIELDS.name)!,
    email: check.email('email', input.email, FIELDS.email),
    phone: check.phone('phone', input.phone),
  }),
  create: (tx, data, query) => tx.customer.create({ ...query, data }),
});

import { ruled, rules } from '../field-rules.js';
import { defineCreate, defineResource } from '../resource.js';
import { recordObject } from '../record-object.js';
import { patchData } from '../validation.js';

declare module '../../auth/scopes.js' { interface ScopeNames { 'customers:read': true; 'customers:write': true } }

export const Customer = recordObject('Customer', ['name', 'email', 'phone'], { phone: { description: 'E.164, such as +14155550123.' } });

/** The rules of a customer's fields: its inputs' descriptions, checks and OpenAPI keywords. */
const FIELDS = { name: rules.text(200, true), email: rules.email(), phone: rules.phone() };

defineResource(Customer, {
  path: 'customers',
  list: {
    sort: ['name', 'email'],
    exact: ['email', 'phone'],
    search: { columns: ['name', 'email'], description: 'Case-insensitive substring of the name or e-mail.' },
    // Its children's lists and filters come from their declarations (jobs, invoices, ...).
  },
  update: {
    fields: (t) => ({
      name: t.string(ruled(FIELDS.name, 'Cannot be cleared.')),
      email: t.string(ruled(FIELDS.email, 'null clears it.')),
      phone: t.string(ruled(FIELDS.phone, 'null clears it.')),
    }),
    check: async (_ctx, patch, check) =>
      patchData(patch as { name?: string | null; email?: string | null; phone?: string | null }, {
        name: (name) => check.text('name', name, FIELDS.name),
        email: (email) => check.email('email', email, FIELDS.email),
        phone: (phone) => check.phone('phone', phone),
      }),
  },
});

defineCreate('Customer', {
  fields: (t) => ({
    name: t.string({ required: true, ...ruled(FIELDS.name) }),
    email: t.string(ruled(FIELDS.email)),
    phone: t.string(ruled(FIELDS.phone)),
  }),
  example: { name: 'Grace Hopper', email: 'grace@example.com', phone: '+442071234567' },
  check: async (_ctx, input, check) => ({
    name: check.text('name', input.name, FIELDS.name)!,
    email: check.email('email', input.email, FIELDS.email),
    phone: check.phone('phone', input.phone),
  }),
});

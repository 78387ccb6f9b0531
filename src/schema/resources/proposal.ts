import { ruled, rules } from '../field-rules.js';
import { defineCreate, defineResource } from '../resource.js';
import { recordObject } from '../record-object.js';
import { quoteMoves } from '../transitions.js';
import { patchData } from '../validation.js';

declare module '../../auth/scopes.js' { interface ScopeNames { 'proposals:read': true; 'proposals:write': true } }

export const Proposal = recordObject('Proposal', ['title', 'status', 'totalAmount', 'currency'], {
  totalAmount: { description: 'Minor units of the currency (12550 is 125.50).' },
  currency: { description: 'ISO 4217.' },
});

/** The rules of a proposal's fields: its inputs' descriptions, checks and OpenAPI keywords. */
const FIELDS = { title: rules.text(200, true), totalAmount: rules.amount(), currency: rules.currency() };

defineResource(Proposal, {
  path: 'proposals',
  list: {
    sort: ['title', 'status', 'totalAmount'],
    search: { columns: ['title'], description: 'Case-insensitive substring of the title.' },
  },
  moves: quoteMoves('Proposal'),
  update: {
    fields: (t) => ({
      title: t.string(ruled(FIELDS.title)),
      totalAmount: t.int(ruled(FIELDS.totalAmount)),
      currency: t.string(ruled(FIELDS.currency)),
    }),
    check: async (_ctx, patch, check) =>
      patchData(patch as { title?: string | null; totalAmount?: number | null; currency?: string | null }, {
        title: (title) => check.text('title', title, FIELDS.title),
        totalAmount: (amount) => check.amount('totalAmount', amount),
        currency: (currency) => check.currency('currency', currency),
      }),
    // A proposal that was sent is what the customer saw.
    editable: ['draft'],
  },
});

defineCreate('Proposal', {
  description: 'Creates a draft proposal.',
  fields: (t) => ({
    title: t.string({ required: true, ...ruled(FIELDS.title) }),
    totalAmount: t.int({ required: true, ...ruled(FIELDS.totalAmount) }),
    currency: t.string({ required: true, ...ruled(FIELDS.currency) }),
  }),
  example: { title: 'Renovation', totalAmount: 120000, currency: 'EUR' },
  check: async (ctx, input, check) => {
    const title = check.text('title', input.title, FIELDS.title);
    const totalAmount = check.amount('totalAmount', input.totalAmount);
    const currency = check.currency('currency', input.currency);
    return { title: title!, totalAmount: totalAmount!, currency: currency! };
  },
});

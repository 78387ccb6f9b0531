import { builder } from '../builder.js';
import { QuoteStatus } from '../../generated/prisma/enums.js';
import { enumField } from '../list-query.js';
import { QuoteStatusEnum } from '../enums.js';
import { billingFields, billingList, billingUpdate, defineBillingCreate } from '../line-items.js';
import { defineResource } from '../resource.js';
import { quoteMoves } from '../transitions.js';

declare module '../../auth/scopes.js' { interface ScopeNames { 'estimates:read': true; 'estimates:write': true } }

export const Estimate = builder.prismaObject('Estimate', {
  fields: (t) => ({
    id: t.exposeID('id'),
    status: t.expose('status', { type: QuoteStatusEnum }),
    validUntil: t.expose('validUntil', { type: 'Date', nullable: true }),
  }),
});
billingFields('Estimate', 'EST');

defineResource(Estimate, {
  type: 'Estimate',
  path: 'estimates',
  read: 'estimates:read',
  write: 'estimates:write',
  description: 'Estimates, newest first.',
  split: { arg: 'status', enum: QuoteStatusEnum },
  byCustomer: true,
  list: billingList({
    status: enumField(QuoteStatusEnum, 'QuoteStatus', QuoteStatus),
    validUntil: { kind: 'date', nullable: true, sort: true },
  }),
  embedded: ['lineItems'],
  // Sending is what issues an estimate.
  moves: quoteMoves('Estimate', { send: ['issuedAt'] }),
  update: billingUpdate('validUntil'),
  // Financial records: once sent, an estimate is kept.
  deletable: ['draft'],
});

defineBillingCreate({ type: 'Estimate', scope: 'estimates:write', date: 'validUntil', rest: 'estimates' });

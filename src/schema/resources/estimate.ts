import { billingFields, billingList, billingUpdate, defineBillingCreate } from '../line-items.js';
import { defineResource } from '../resource.js';
import { recordObject } from '../record-object.js';
import { quoteMoves } from '../transitions.js';

declare module '../../auth/scopes.js' { interface ScopeNames { 'estimates:read': true; 'estimates:write': true } }

export const Estimate = recordObject('Estimate', ['status', 'validUntil'], { validUntil: { day: true } });
billingFields('Estimate', 'EST');

defineResource(Estimate, {
  path: 'estimates',
  list: billingList(['status', 'validUntil']),
  embedded: ['lineItems'],
  // Sending is what issues an estimate.
  moves: quoteMoves('Estimate', { send: ['issuedAt'] }),
  update: billingUpdate('validUntil'),
  // Financial records: once sent, an estimate is kept.
  deletable: ['draft'],
});

defineBillingCreate({ type: 'Estimate', date: 'validUntil' });

import { InvoiceStatus } from '../../generated/prisma/enums.js';
import { billingFields, billingList, billingUpdate, defineBillingCreate } from '../line-items.js';
import { defineResource } from '../resource.js';
import { recordObject } from '../record-object.js';
import type { Move } from '../transitions.js';

declare module '../../auth/scopes.js' { interface ScopeNames { 'invoices:read': true; 'invoices:write': true } }

export const Invoice = recordObject('Invoice', ['status', 'dueDate', 'paidAt'], { dueDate: { day: true } });
billingFields('Invoice', 'INV');

defineResource(Invoice, {
  path: 'invoices',
  list: billingList(['status', 'dueDate', 'paidAt']),
  embedded: ['lineItems'],
  moves: {
    sendInvoice: { verb: 'send', from: ['draft'], to: 'sent', stamps: ['issuedAt'] },
    markInvoicePaid: { verb: 'pay', from: ['sent'], to: 'paid', stamps: ['paidAt'] },
  } satisfies Record<string, Move<InvoiceStatus>>,
  update: billingUpdate('dueDate'),
  // Financial records: once sent, an invoice is kept.
  deletable: ['draft'],
});

defineBillingCreate({ type: 'Invoice', date: 'dueDate' });

import { InvoiceStatus } from '../../generated/prisma/enums.js';
import { enumField } from '../list-query.js';
import { builder } from '../builder.js';
import { InvoiceStatusEnum } from '../enums.js';
import { billingFields, billingList, billingUpdate, defineBillingCreate } from '../line-items.js';
import { defineResource } from '../resource.js';
import type { Move } from '../transitions.js';

declare module '../../auth/scopes.js' { interface ScopeNames { 'invoices:read': true; 'invoices:write': true } }

export const Invoice = builder.prismaObject('Invoice', {
  fields: (t) => ({
    id: t.exposeID('id'),
    status: t.expose('status', { type: InvoiceStatusEnum }),
    dueDate: t.expose('dueDate', { type: 'Date', nullable: true }),
    paidAt: t.expose('paidAt', { type: 'DateTime', nullable: true }),
  }),
});
billingFields('Invoice', 'INV');

defineResource(Invoice, {
  type: 'Invoice',
  path: 'invoices',
  read: 'invoices:read',
  write: 'invoices:write',
  description: 'Invoices, newest first.',
  split: { arg: 'status', enum: InvoiceStatusEnum },
  byCustomer: true,
  list: billingList({
    status: enumField(InvoiceStatusEnum, 'InvoiceStatus', InvoiceStatus),
    dueDate: { kind: 'date', nullable: true, sort: true },
    paidAt: { kind: 'datetime', nullable: true, sort: true },
  }),
  embedded: ['lineItems'],
  moves: {
    sendInvoice: { verb: 'send', from: ['draft'], to: 'sent', stamps: ['issuedAt'] },
    markInvoicePaid: { verb: 'pay', from: ['sent'], to: 'paid', stamps: ['paidAt'] },
  } satisfies Record<string, Move<InvoiceStatus>>,
  update: billingUpdate('dueDate'),
  // Financial records: once sent, an invoice is kept.
  deletable: ['draft'],
});

defineBillingCreate({ type: 'Invoice', scope: 'invoices:write', date: 'dueDate', rest: 'invoices' });

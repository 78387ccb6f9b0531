import { InvoiceStatus } from '../generated/prisma/enums.js';
import { enumField } from './list-query.js';
import { builder } from './builder.js';
import { InvoiceStatusEnum } from './enums.js';
import { billingUpdate, defineBillingCreate } from './line-items.js';
import { defineResource } from './resource.js';
import type { Move } from './transitions.js';

export const Invoice = builder.prismaObject('Invoice', {
  fields: (t) => ({
    id: t.exposeID('id'),
    number: t.exposeString('number', { description: 'INV-000001, ...: sequential per organization.' }),
    customerId: t.exposeID('customerId'),
    jobId: t.exposeID('jobId', { nullable: true }),
    status: t.expose('status', { type: InvoiceStatusEnum }),
    currency: t.exposeString('currency', { description: 'ISO 4217.' }),
    lineItems: t.relation('lineItems', { query: { orderBy: { position: 'asc' } } }),
    totalAmount: t.exposeInt('totalAmount', { description: 'Minor units of the currency (12550 is 125.50).' }),
    issuedAt: t.expose('issuedAt', { type: 'DateTime', nullable: true }),
    dueDate: t.expose('dueDate', { type: 'Date', nullable: true }),
    paidAt: t.expose('paidAt', { type: 'DateTime', nullable: true }),
    customer: t.relation('customer', { authScopes: { scope: 'customers:read' }, nullable: true }),
    job: t.relation('job', { nullable: true, authScopes: { scope: 'jobs:read' } }),
  }),
});

defineResource(Invoice, {
  type: 'Invoice',
  path: 'invoices',
  read: 'invoices:read',
  write: 'invoices:write',
  description: 'Invoices, newest first.',
  split: { arg: 'status', enum: InvoiceStatusEnum },
  byCustomer: true,
  list: {
    fields: {
      number: { kind: 'text', sort: true },
      status: enumField(InvoiceStatusEnum, 'InvoiceStatus', InvoiceStatus),
      totalAmount: { kind: 'int', sort: true },
      issuedAt: { kind: 'datetime', nullable: true, sort: true },
      dueDate: { kind: 'date', nullable: true, sort: true },
      paidAt: { kind: 'datetime', nullable: true, sort: true },
      customerId: { kind: 'id', exact: true },
      jobId: { kind: 'id', exact: true },
    },
    search: { columns: ['number'], description: 'Case-insensitive substring of the number.' },
    relations: { customer: { type: 'Customer', many: false }, job: { type: 'Job', many: false } },
  },
  embedded: ['lineItems'],
  moves: {
    sendInvoice: { verb: 'send', from: ['draft'], to: 'sent', stamps: ['issuedAt'] },
    markInvoicePaid: { verb: 'pay', from: ['sent'], to: 'paid', stamps: ['paidAt'] },
  } satisfies Record<string, Move<InvoiceStatus>>,
  update: billingUpdate('Invoice', 'dueDate'),
  // Financial records: once sent, an invoice is kept.
  deletable: ['draft'],
});

defineBillingCreate({ type: 'Invoice', scope: 'invoices:write', date: 'dueDate', rest: 'invoices' });

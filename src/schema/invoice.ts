import { queryFromInfo } from '@pothos/plugin-prisma';
import { nextDocumentNumber } from '../domain/numbering.js';
import type { InvoiceStatus } from '../generated/prisma/enums.js';
import { builder } from './builder.js';
import { InvoiceStatusEnum } from './enums.js';
import { checkDocumentInput, LineItemInput } from './documents.js';
import { pageArgs, pageType, paginate, recordTotal } from './pagination.js';
import { customerFilter } from './references.js';
import { applyMove, type Move } from './transitions.js';
import { isUuid } from './validation.js';

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
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    customer: t.relation('customer', { authScopes: { scope: 'customers:read' }, nullable: true }),
    job: t.relation('job', { nullable: true, authScopes: { scope: 'jobs:read' } }),
  }),
});

const InvoicePage = pageType('Invoice', Invoice);

builder.queryFields((t) => ({
  invoices: t.field({
    type: InvoicePage,
    description: 'Invoices, newest first.',
    authScopes: { scope: 'invoices:read' }, nullable: true,
    args: { ...pageArgs, status: t.arg({ type: InvoiceStatusEnum }), customerId: t.arg.id() },
    resolve: (_root, args, ctx, info) =>
      paginate(
        ctx.prisma.invoice,
        { ...customerFilter(args.customerId), ...(args.status ? { status: args.status } : {}) },
        args,
        queryFromInfo({ context: ctx, info, path: ['data'] }),
        args.customerId ? undefined : recordTotal(ctx, 'invoices', args.status),
      ),
  }),
  invoice: t.prismaField({
    type: 'Invoice',
    nullable: true,
    authScopes: { scope: 'invoices:read' },
    args: { id: t.arg.id({ required: true }) },
    resolve: (query, _root, { id }, ctx) => (isUuid(String(id)) ? ctx.prisma.invoice.findFirst({ ...query, where: { id: String(id) } }) : null),
  }),
}));

const CreateInvoiceInput = builder.inputType('CreateInvoiceInput', {
  fields: (t) => ({
    customerId: t.id({ description: 'Required; a customer of this organization.' }),
    jobId: t.id({ description: 'A job of this organization.' }),
    currency: t.string({ description: 'Required; ISO 4217, such as USD.' }),
    lineItems: t.field({ type: [LineItemInput], description: 'Required; 1 to 100 lines.' }),
    dueDate: t.field({ type: 'Date' }),
  }),
});

builder.mutationField('createInvoice', (t) =>
  t.prismaField({
    type: 'Invoice',
    description: 'Creates a draft invoice with the next number of the organization.',
    authScopes: { scope: 'invoices:write' }, nullable: true,
    args: { input: t.arg({ type: CreateInvoiceInput, required: true }) },
    resolve: async (query, _root, { input }, ctx) => {
      const checked = await checkDocumentInput(ctx, input);
      const organizationId = ctx.auth.organizationId;
      return ctx.prisma.$transaction(async (tx) =>
        tx.invoice.create({
          ...query,
          data: { ...checked, organizationId, number: await nextDocumentNumber(tx, organizationId, 'invoice'), dueDate: input.dueDate ?? null },
        }),
      );
    },
  }),
);

const INVOICE_MOVES: Record<string, Move<InvoiceStatus>> = {
  sendInvoice: { from: ['draft'], to: 'sent', stamps: ['issuedAt'] },
  markInvoicePaid: { from: ['sent'], to: 'paid', stamps: ['paidAt'] },
};

for (const [name, move] of Object.entries(INVOICE_MOVES)) {
  builder.mutationField(name, (t) =>
    t.prismaField({
      type: 'Invoice',
      description: `Moves an invoice from ${move.from.join(' or ')} to ${move.to}.`,
      authScopes: { scope: 'invoices:write' }, nullable: true,
      args: { id: t.arg.id({ required: true }) },
      resolve: async (query, _root, { id }, ctx) => {
        await applyMove(ctx.prisma.invoice, 'invoice', String(id), move);
        return ctx.prisma.invoice.findFirstOrThrow({ ...query, where: { id: String(id) } });
      },
    }),
  );
}

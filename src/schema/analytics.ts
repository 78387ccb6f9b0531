// Aggregates analysts reach for first; scoped by the tenant client like everything else.
import { builder } from './builder.js';
import { prismaWhere } from './list-query.js';
import { InvoiceStatusEnum } from './enums.js';
import { recordTotal } from './pagination.js';
import { invalidInput } from '../errors.js';
import type { InvoiceStatus } from '../generated/prisma/enums.js';

interface InvoiceSummaryRow {
  status: InvoiceStatus;
  currency: string;
  count: number;
  totalAmount: number | bigint;
}

const InvoiceSummary = builder.objectRef<InvoiceSummaryRow>('InvoiceSummary').implement({
  description: 'Invoices of one status and currency: how many, and their total.',
  fields: (t) => ({
    status: t.expose('status', { type: InvoiceStatusEnum }),
    currency: t.exposeString('currency'),
    count: t.exposeInt('count'),
    totalAmount: t.field({
      type: 'BigInt',
      description: 'Sum of total_amount in minor units, exact, as a decimal string ("12550" is 125.50): sums can exceed 32 bits.',
      resolve: (row) => row.totalAmount,
    }),
  }),
});

builder.queryFields((t) => ({
  invoiceSummary: t.field({
    type: [InvoiceSummary],
    description: 'Count and total amount of invoices by status and currency, optionally for invoices created in [from, to).',
    authScopes: { scope: 'invoices:read' }, nullable: true,
    args: { from: t.arg({ type: 'DateTime' }), to: t.arg({ type: 'DateTime' }) },
    resolve: async (_root, { from, to }, ctx) => {
      if (from && to && from > to) throw invalidInput([{ param: 'to', message: 'must not be before from' }]);
      const groups = await ctx.prisma.invoice.groupBy({
        by: ['status', 'currency'],
        where: from || to ? { createdAt: { ...(from ? { gte: from } : {}), ...(to ? { lt: to } : {}) } } : {},
        _count: { _all: true },
        _sum: { totalAmount: true },
        orderBy: [{ status: 'asc' }, { currency: 'asc' }],
      });
      return groups.map((g) => ({ status: g.status, currency: g.currency, count: g._count._all, totalAmount: g._sum.totalAmount ?? 0 }));
    },
  }),
  customerCount: t.int({
    description: 'How many customers, optionally matching a search like the customers list.',
    authScopes: { scope: 'customers:read' }, nullable: true,
    args: { search: t.arg.string() },
    resolve: (_root, { search }, ctx) =>
      search?.trim() ? ctx.prisma.customer.count({ where: { AND: prismaWhere(ctx, 'Customer', { search }, '') } }) : recordTotal(ctx, 'customers')(),
  }),
}));

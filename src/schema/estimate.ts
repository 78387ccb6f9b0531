import { queryFromInfo } from '@pothos/plugin-prisma';
import { nextDocumentNumber } from '../domain/numbering.js';
import type { QuoteStatus } from '../generated/prisma/enums.js';
import { builder } from './builder.js';
import { QuoteStatusEnum } from './enums.js';
import { checkDocumentInput, LineItemInput } from './documents.js';
import { pageArgs, pageType, paginate, recordTotal } from './pagination.js';
import { customerFilter } from './references.js';
import { applyMove, QUOTE_MOVES } from './transitions.js';
import { isUuid } from './validation.js';

export const Estimate = builder.prismaObject('Estimate', {
  fields: (t) => ({
    id: t.exposeID('id'),
    number: t.exposeString('number', { description: 'EST-000001, ...: sequential per organization.' }),
    customerId: t.exposeID('customerId'),
    jobId: t.exposeID('jobId', { nullable: true }),
    status: t.expose('status', { type: QuoteStatusEnum }),
    currency: t.exposeString('currency', { description: 'ISO 4217.' }),
    lineItems: t.relation('lineItems', { query: { orderBy: { position: 'asc' } } }),
    totalAmount: t.exposeInt('totalAmount', { description: 'Minor units of the currency (12550 is 125.50).' }),
    issuedAt: t.expose('issuedAt', { type: 'DateTime', nullable: true }),
    validUntil: t.expose('validUntil', { type: 'Date', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    customer: t.relation('customer', { authScopes: { scope: 'customers:read' }, nullable: true }),
    job: t.relation('job', { nullable: true, authScopes: { scope: 'jobs:read' } }),
  }),
});

const EstimatePage = pageType('Estimate', Estimate);

builder.queryFields((t) => ({
  estimates: t.field({
    type: EstimatePage,
    description: 'Estimates, newest first.',
    authScopes: { scope: 'estimates:read' }, nullable: true,
    args: { ...pageArgs, status: t.arg({ type: QuoteStatusEnum }), customerId: t.arg.id() },
    resolve: (_root, args, ctx, info) =>
      paginate(
        ctx.prisma.estimate,
        { ...customerFilter(args.customerId), ...(args.status ? { status: args.status } : {}) },
        args,
        queryFromInfo({ context: ctx, info, path: ['data'] }),
        args.customerId ? undefined : recordTotal(ctx, 'estimates', args.status),
      ),
  }),
  estimate: t.prismaField({
    type: 'Estimate',
    nullable: true,
    authScopes: { scope: 'estimates:read' },
    args: { id: t.arg.id({ required: true }) },
    resolve: (query, _root, { id }, ctx) => (isUuid(String(id)) ? ctx.prisma.estimate.findFirst({ ...query, where: { id: String(id) } }) : null),
  }),
}));

const CreateEstimateInput = builder.inputType('CreateEstimateInput', {
  fields: (t) => ({
    customerId: t.id({ description: 'Required; a customer of this organization.' }),
    jobId: t.id({ description: 'A job of this organization.' }),
    currency: t.string({ description: 'Required; ISO 4217, such as USD.' }),
    lineItems: t.field({ type: [LineItemInput], description: 'Required; 1 to 100 lines.' }),
    validUntil: t.field({ type: 'Date' }),
  }),
});

builder.mutationField('createEstimate', (t) =>
  t.prismaField({
    type: 'Estimate',
    description: 'Creates a draft estimate with the next number of the organization.',
    authScopes: { scope: 'estimates:write' }, nullable: true,
    args: { input: t.arg({ type: CreateEstimateInput, required: true }) },
    resolve: async (query, _root, { input }, ctx) => {
      const checked = await checkDocumentInput(ctx, input);
      const organizationId = ctx.auth.organizationId;
      return ctx.prisma.$transaction(async (tx) =>
        tx.estimate.create({
          ...query,
          data: { ...checked, organizationId, number: await nextDocumentNumber(tx, organizationId, 'estimate'), validUntil: input.validUntil ?? null },
        }),
      );
    },
  }),
);

for (const [verb, quoteMove] of Object.entries(QUOTE_MOVES)) {
  // Sending is what issues an estimate.
  const move = verb === 'send' ? { ...quoteMove, stamps: ['issuedAt'] } : quoteMove;
  builder.mutationField(`${verb}Estimate`, (t) =>
    t.prismaField({
      type: 'Estimate',
      description: `Moves an estimate from ${move.from.join(' or ')} to ${move.to}.`,
      authScopes: { scope: 'estimates:write' }, nullable: true,
      args: { id: t.arg.id({ required: true }) },
      resolve: async (query, _root, { id }, ctx) => {
        await applyMove<QuoteStatus>(ctx.prisma.estimate, 'estimate', String(id), move);
        return ctx.prisma.estimate.findFirstOrThrow({ ...query, where: { id: String(id) } });
      },
    }),
  );
}

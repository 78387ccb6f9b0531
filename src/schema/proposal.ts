import { queryFromInfo } from '@pothos/plugin-prisma';
import type { QuoteStatus } from '../generated/prisma/enums.js';
import { builder } from './builder.js';
import { QuoteStatusEnum } from './enums.js';
import { pageArgs, pageType, paginate, recordTotal } from './pagination.js';
import { customerFilter, requireReference } from './references.js';
import { applyMove, QUOTE_MOVES } from './transitions.js';
import { InputCheck, isUuid } from './validation.js';

export const Proposal = builder.prismaObject('Proposal', {
  fields: (t) => ({
    id: t.exposeID('id'),
    customerId: t.exposeID('customerId'),
    title: t.exposeString('title'),
    status: t.expose('status', { type: QuoteStatusEnum }),
    totalAmount: t.exposeInt('totalAmount', { description: 'Minor units of the currency (12550 is 125.50).' }),
    currency: t.exposeString('currency', { description: 'ISO 4217.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    customer: t.relation('customer', { authScopes: { scope: 'customers:read' }, nullable: true }),
  }),
});

const ProposalPage = pageType('Proposal', Proposal);

builder.queryFields((t) => ({
  proposals: t.field({
    type: ProposalPage,
    description: 'Proposals, newest first.',
    authScopes: { scope: 'proposals:read' }, nullable: true,
    args: { ...pageArgs, status: t.arg({ type: QuoteStatusEnum }), customerId: t.arg.id() },
    resolve: (_root, args, ctx, info) =>
      paginate(
        ctx.prisma.proposal,
        { ...customerFilter(args.customerId), ...(args.status ? { status: args.status } : {}) },
        args,
        queryFromInfo({ context: ctx, info, path: ['data'] }),
        args.customerId ? undefined : recordTotal(ctx, 'proposals', args.status),
      ),
  }),
  proposal: t.prismaField({
    type: 'Proposal',
    nullable: true,
    authScopes: { scope: 'proposals:read' },
    args: { id: t.arg.id({ required: true }) },
    resolve: (query, _root, { id }, ctx) => (isUuid(String(id)) ? ctx.prisma.proposal.findFirst({ ...query, where: { id: String(id) } }) : null),
  }),
}));

const CreateProposalInput = builder.inputType('CreateProposalInput', {
  fields: (t) => ({
    customerId: t.id({ description: 'Required; a customer of this organization.' }),
    title: t.string({ description: 'Required; 1 to 200 characters.' }),
    totalAmount: t.int({ description: 'Required; minor units, from 0.' }),
    currency: t.string({ description: 'Required; ISO 4217, such as USD.' }),
  }),
});

builder.mutationField('createProposal', (t) =>
  t.prismaField({
    type: 'Proposal',
    description: 'Creates a draft proposal.',
    authScopes: { scope: 'proposals:write' }, nullable: true,
    args: { input: t.arg({ type: CreateProposalInput, required: true }) },
    resolve: async (query, _root, { input }, ctx) => {
      const check = new InputCheck(ctx.inputErrors);
      const customerId = check.id('customerId', input.customerId as string | null | undefined);
      const title = check.text('title', input.title, { max: 200, required: true });
      const totalAmount = check.amount('totalAmount', input.totalAmount);
      const currency = check.currency('currency', input.currency);
      await requireReference(check, ctx.prisma.customer, 'customerId', customerId);
      check.done();
      return ctx.prisma.proposal.create({
        ...query,
        data: { organizationId: ctx.auth.organizationId, customerId: customerId!, title: title!, totalAmount, currency },
      });
    },
  }),
);

for (const [verb, move] of Object.entries(QUOTE_MOVES)) {
  builder.mutationField(`${verb}Proposal`, (t) =>
    t.prismaField({
      type: 'Proposal',
      description: `Moves a proposal from ${move.from.join(' or ')} to ${move.to}.`,
      authScopes: { scope: 'proposals:write' }, nullable: true,
      args: { id: t.arg.id({ required: true }) },
      resolve: async (query, _root, { id }, ctx) => {
        await applyMove<QuoteStatus>(ctx.prisma.proposal, 'proposal', String(id), move);
        return ctx.prisma.proposal.findFirstOrThrow({ ...query, where: { id: String(id) } });
      },
    }),
  );
}

// What invoices and estimates (the billing records) share: line items (input, checks,
// totals) and the create, which checks the input and numbers the record in one transaction.
import type { Context } from '../context.js';
import { nextNumber, type NumberedRecord } from '../domain/numbering.js';
import { builder } from './builder.js';
import { ruled, rules } from './field-rules.js';
import type { ListDeclaration } from './list-query.js';
import { defineCreate, type InputFields } from './resource.js';
import { InputCheck, MAX_AMOUNT, patchData } from './validation.js';

const MAX_LINE_ITEMS = 100;

for (const model of ['InvoiceLineItem', 'EstimateLineItem'] as const) {
  builder.prismaObject(model, {
    description: 'One line: quantity × unit_amount = amount, in minor units of the currency.',
    fields: (t) => ({
      description: t.exposeString('description'),
      quantity: t.exposeInt('quantity'),
      unitAmount: t.exposeInt('unitAmount'),
      amount: t.exposeInt('amount'),
    }),
  });
}

/** The rules of a line's fields, and of an invoice's or estimate's: inputs' descriptions, checks and OpenAPI keywords. */
const LINE = { description: rules.text(500, true), quantity: rules.amount(), unitAmount: rules.amount() };
const BILLING = { jobId: rules.id(false), currency: rules.currency(), lineItems: rules.items(1, MAX_LINE_ITEMS) };

export const LineItemInput = builder.inputType('LineItemInput', {
  fields: (t) => ({
    description: t.string({ required: true, ...ruled(LINE.description) }),
    quantity: t.int({ required: true, ...ruled(LINE.quantity, 'A whole number.') }),
    unitAmount: t.int({ required: true, ...ruled(LINE.unitAmount) }),
  }),
});

type LineItemInputShape = { description?: string | null; quantity?: number | null; unitAmount?: number | null };

export interface CheckedLineItem {
  position: number;
  description: string;
  quantity: number;
  unitAmount: number;
  amount: number;
}

/** Checks the lines and computes each amount and the total. */
export function checkLineItems(check: InputCheck, items: readonly LineItemInputShape[] | null | undefined) {
  if (!items || items.length === 0) {
    check.fail('lineItems', 'must have at least one line item');
    return { lines: [], totalAmount: 0 };
  }
  if (items.length > BILLING.lineItems.max) {
    check.fail('lineItems', `must have at most ${BILLING.lineItems.max} line items`);
    return { lines: [], totalAmount: 0 };
  }
  const lines: CheckedLineItem[] = items.map((item, position) => {
    const at = `lineItems[${position}]`;
    const description = check.text(`${at}.description`, item.description, LINE.description) ?? '';
    const quantity = check.amount(`${at}.quantity`, item.quantity);
    const unitAmount = check.amount(`${at}.unitAmount`, item.unitAmount);
    const amount = quantity * unitAmount;
    if (amount > MAX_AMOUNT) check.fail(`${at}.unitAmount`, `quantity × unit amount must be at most ${MAX_AMOUNT}`);
    return { position, description, quantity, unitAmount, amount };
  });
  const totalAmount = lines.reduce((sum, line) => sum + line.amount, 0);
  if (totalAmount > MAX_AMOUNT) check.fail('lineItems', `the total must be at most ${MAX_AMOUNT}`);
  return { lines, totalAmount };
}

interface BillingInput {
  externalId?: string | null;
  metadata?: unknown;
  customerId?: string | number | null;
  jobId?: string | number | null;
  currency?: string | null;
  lineItems?: readonly LineItemInputShape[] | null;
}

/** Checks a new invoice's or estimate's input on `check`; answers its data. */
function checkBillingInput(input: BillingInput, check: InputCheck) {
  const currency = check.currency('currency', input.currency);
  const { lines, totalAmount } = checkLineItems(check, input.lineItems);
  return { currency: currency!, totalAmount, lineItems: { createMany: { data: lines } } };
}

/**
 * The fields an invoice and an estimate share (their status and dates are their own): added
 * after the object's own, as defineResource adds the common record fields.
 */
export function billingFields<Type extends 'Invoice' | 'Estimate'>(type: Type, prefix: 'INV' | 'EST'): void {
  // One builder for both models: their shared columns and relations have the same names.
  builder.prismaObjectFields(type as 'Invoice', (t) => ({
    number: t.exposeString('number', { description: `${prefix}-000001, ...: sequential per organization.` }),
    currency: t.exposeString('currency', { description: 'ISO 4217.' }),
    lineItems: t.relation('lineItems', { query: { orderBy: { position: 'asc' } } }),
    totalAmount: t.exposeInt('totalAmount', { description: 'Minor units of the currency (12550 is 125.50).' }),
    issuedAt: t.expose('issuedAt', { type: 'DateTime', nullable: true }),
  }));
}

/** The list of invoices or estimates: their shared sorts, then `own` (status, dates). */
export function billingList(own: string[]): ListDeclaration {
  return {
    sort: ['number', 'totalAmount', 'issuedAt', ...own],
    search: { columns: ['number'], description: 'Case-insensitive substring of the number.' },
  };
}

interface BillingCreate {
  type: 'Invoice' | 'Estimate';
  /** The record's own date: an invoice's `dueDate`, an estimate's `validUntil`. */
  date: 'dueDate' | 'validUntil';
}

type BillingDate = 'dueDate' | 'validUntil';

/**
 * The update of a draft invoice or estimate: its lines (replaced as a whole, with the total),
 * currency, date and job. Its customer and number stay; a sent one does not change at all.
 */
export function billingUpdate(date: BillingDate) {
  return {
    fields: (t: InputFields) => ({
      jobId: t.id(ruled(BILLING.jobId, 'A job of this organization; null clears it.')),
      currency: t.string(ruled(BILLING.currency)),
      lineItems: t.field({ type: [LineItemInput], ...ruled(BILLING.lineItems, 'They replace all lines.') }),
      [date]: t.field({ type: 'Date', description: 'null clears it.' }),
    }),
    check: async (_ctx: Pick<Context, 'prisma'>, patch: Record<string, unknown>, check: InputCheck) => {
      const data = patchData(patch, {
        jobId: (id) => check.id('jobId', id as string | null, BILLING.jobId),
        currency: (currency) => check.currency('currency', currency as string | null),
        [date]: (day) => day,
      });
      if (patch.lineItems !== undefined) {
        const { lines, totalAmount } = checkLineItems(check, patch.lineItems as readonly LineItemInputShape[] | null);
        Object.assign(data, { totalAmount, lineItems: { deleteMany: {}, createMany: { data: lines } } });
      }
      return data;
    },
    editable: ['draft'] as const,
  };
}

/** `create<Type>(input)`: a draft with the organization's next number. */
export function defineBillingCreate({ type, date }: BillingCreate): void {
  const kind = type.toLowerCase() as NumberedRecord;
  defineCreate(type, {
    description: `Creates a draft ${kind} with the next number of the organization.`,
    fields: (t) => ({
      currency: t.string({ required: true, ...ruled(BILLING.currency) }),
      lineItems: t.field({ type: [LineItemInput], required: true, ...ruled(BILLING.lineItems) }),
      [date]: t.field({ type: 'Date' }),
    }),
    example: { currency: 'EUR', lineItems: [{ description: 'Labour', quantity: 2, unitAmount: 5000 }], [date]: new Date('2026-12-31') },
    check: async (_ctx, input, check) => ({
      ...checkBillingInput(input as BillingInput, check),
      [date]: (input as unknown as Record<string, Date | null | undefined>)[date] ?? null,
    }),
    // The number is taken in the create's transaction: a create that fails takes none.
    create: async (tx, data, query) => {
      const model = tx[kind] as unknown as { create(args: object): Promise<unknown> };
      return model.create({ ...query, data: { ...data, number: await nextNumber(tx, data.organizationId, kind) } });
    },
  });
}

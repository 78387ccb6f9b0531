// Invoice and estimate numbers are sequential per organization. The counter lives in the
// organization's counters row (organization_counters, made by its first use); incrementing it
// inside the create's transaction takes that row's lock, so concurrent creates queue on it
// and can never hand out the same number twice.
import type { Prisma } from '../generated/prisma/client.js';

export type NumberedRecord = 'invoice' | 'estimate';

export async function nextNumber(
  tx: Prisma.TransactionClient,
  organizationId: string,
  kind: NumberedRecord,
): Promise<string> {
  const invoice = kind === 'invoice';
  // One INSERT ... ON CONFLICT DO UPDATE (Prisma's native upsert).
  const counters = await tx.organizationCounter.upsert({
    where: { organizationId },
    create: invoice ? { organizationId, lastInvoiceNumber: 1 } : { organizationId, lastEstimateNumber: 1 },
    update: invoice ? { lastInvoiceNumber: { increment: 1 } } : { lastEstimateNumber: { increment: 1 } },
    select: { lastInvoiceNumber: true, lastEstimateNumber: true },
  });
  const value = invoice ? counters.lastInvoiceNumber : counters.lastEstimateNumber;
  return (kind === 'invoice' ? 'INV-' : 'EST-') + String(value).padStart(6, '0');
}

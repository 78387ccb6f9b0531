// Invoice and estimate numbers are sequential per organization. The counter lives on the
// organization row; incrementing it inside the create's transaction takes that row's lock,
// so concurrent creates queue on it and can never hand out the same number twice.
import type { Prisma } from '../generated/prisma/client.js';

export type NumberedRecord = 'invoice' | 'estimate';

export async function nextNumber(
  tx: Prisma.TransactionClient,
  organizationId: string,
  kind: NumberedRecord,
): Promise<string> {
  const organization = await tx.organization.update({
    where: { id: organizationId },
    data: kind === 'invoice' ? { lastInvoiceNumber: { increment: 1 } } : { lastEstimateNumber: { increment: 1 } },
    select: { lastInvoiceNumber: true, lastEstimateNumber: true },
  });
  const value = kind === 'invoice' ? organization.lastInvoiceNumber : organization.lastEstimateNumber;
  return (kind === 'invoice' ? 'INV-' : 'EST-') + String(value).padStart(6, '0');
}

// Invoice and estimate numbers are sequential per organization. The counter lives in the
// organization's counters row (organization_counters, made by its first use); the database's
// next_document_number takes the organization's change lock, then increments it inside the
// create's transaction, so concurrent creates queue and can never hand out the same number
// twice (see the change_lock_queue migration for why the lock comes first).
import type { Prisma } from '../generated/prisma/client.js';

export type NumberedRecord = 'invoice' | 'estimate';

export async function nextNumber(
  tx: Prisma.TransactionClient,
  organizationId: string,
  kind: NumberedRecord,
): Promise<string> {
  const [row] = await tx.$queryRaw<Array<{ n: number }>>`SELECT next_document_number(${organizationId}::uuid, ${kind}) AS n`;
  return (kind === 'invoice' ? 'INV-' : 'EST-') + String(row!.n).padStart(6, '0');
}

// The rules of a webhook endpoint and the writes around one, shared by the API
// (schema/webhook.ts) and the account page (web/webhooks-page.ts), so both judge and queue alike.
import type { PrismaClient } from '../generated/prisma/client.js';
import type { InputCheck } from '../schema/validation.js';
import { EVENT_TYPES } from '../events/types.js';
import { resolveAllowed, urlFault, type AddressPolicy } from './address.js';
import { newSecret, type SecretBox } from './secrets.js';

/** Checks an endpoint URL: its text, its form, then (only if those pass) where its host resolves. */
export async function checkEndpointUrl(check: InputCheck, param: string, raw: string | null | undefined, policy: AddressPolicy): Promise<string | null> {
  const before = check.errors.length;
  const url = check.text(param, raw, { max: 2000, required: true });
  if (!url || check.errors.length > before) return url;
  const fault = urlFault(url, policy);
  if (fault) check.fail(param, fault);
  else {
    const resolved = await resolveAllowed(new URL(url).hostname, policy);
    if ('fault' in resolved) check.fail(param, `is not allowed: ${resolved.fault}`);
  }
  return url;
}

/** Checks event types against the ones there are; answers them without repeats. */
export function checkEventTypes(check: InputCheck, param: string, types: readonly string[]): string[] {
  const unique = [...new Set(types)];
  const unknown = unique.filter((type) => !EVENT_TYPES.has(type));
  if (unknown.length > 0) check.fail(param, `has unknown event types: ${unknown.join(', ')} (known: ${[...EVENT_TYPES].sort().join(', ')})`);
  return unique;
}

/** A new signing secret: in the clear to show once, sealed to store. */
export async function endpointSecret(box: () => Promise<SecretBox>): Promise<{ plain: string; sealed: string }> {
  const plain = newSecret();
  return { plain, sealed: (await box()).seal(plain) };
}

type Queue = Pick<PrismaClient, 'webhookDelivery'>;

/** Queues an event again to endpoints (a resend), due now. */
export async function queueDeliveries(
  prisma: Queue,
  organizationId: string,
  endpointIds: string[],
  event: { id: string; seq: bigint; recordId: string },
): Promise<void> {
  await prisma.webhookDelivery.createMany({
    data: endpointIds.map((endpointId) => ({ organizationId, endpointId, eventId: event.id, eventSeq: event.seq, recordId: event.recordId })),
  });
}

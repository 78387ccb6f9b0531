// Test mode, Stripe's way: svc_test_ keys work in a test twin of their organization (an
// organization row of mode 'test' linked to the live one), so test records, numbers, events,
// webhooks, deliveries and limits are apart from live ones by the same organization key
// every table is keyed and scoped by (db/tenant.ts): no query has to remember a mode.
import type { PrismaClient } from '../generated/prisma/client.js';
import { Prisma } from '../generated/prisma/client.js';

export type Mode = 'live' | 'test';
export const MODES: readonly Mode[] = ['live', 'test'];

/** The organization where a key of `mode` works: the live one, or its test twin (made on first use). */
export async function organizationFor(prisma: PrismaClient, live: { id: string; name: string; mode?: string }, mode: Mode): Promise<{ id: string; name: string; mode: string }> {
  if (live.mode === 'test') throw new Error(`"${live.name}" is the test mode of an organization: name the organization itself`);
  if (mode === 'live') return { ...live, mode: 'live' };
  const found = await prisma.organization.findUnique({ where: { liveId: live.id } });
  if (found) return found;
  try {
    // Named after the live organization's id too: no live organization can hold that name first.
    return await prisma.organization.create({ data: { name: `${live.name} (test mode ${live.id})`, mode: 'test', liveId: live.id } });
  } catch (error) {
    // Made at the same moment by another request.
    if (!(error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002')) throw error;
    return prisma.organization.findUniqueOrThrow({ where: { liveId: live.id } });
  }
}

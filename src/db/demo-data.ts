// The demo organization: realistic data in every resource, for `npm run seed` and for the
// first start of a fresh embedded data folder. Seeding again adds a new key, not more data.
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createApiKey } from '../auth/api-keys.js';
import { allScopes } from '../auth/scopes.js';
// The seed key gets every scope: declared as the schema loads.
import '../schema/index.js';
import type { Prisma, PrismaClient } from '../generated/prisma/client.js';
import type { EmailType, InvoiceStatus, JobStatus, QuoteStatus } from '../generated/prisma/enums.js';
import { nextNumber } from '../domain/numbering.js';

const ORGANIZATION = 'Demo Home Services';
const FIRST = ['Ada', 'Grace', 'Alan', 'Katherine', 'Linus', 'Margaret', 'Tim', 'Barbara', 'Dennis', 'Frances', 'Ken', 'Radia'];
const LAST = ['Lovelace', 'Hopper', 'Turing', 'Johnson', 'Torvalds', 'Hamilton', 'Berners-Lee', 'Liskov', 'Ritchie', 'Allen', 'Thompson', 'Perlman'];
const WORK = [
  ['Boiler service', 'Annual boiler inspection and service', 18000],
  ['Kitchen tap replacement', 'Replace leaking mixer tap', 9500],
  ['Bathroom retile', 'Remove old tiles, retile 6 m²', 84000],
  ['Garden fence repair', 'Replace three fence panels', 32000],
  ['Gutter cleaning', 'Clear gutters and downpipes', 12000],
  ['Electrical safety check', 'Full EICR inspection', 21000],
] as const;

// A small deterministic generator, so every seeded database looks the same.
let state = 42;
function random(): number {
  state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
  return state / 2 ** 31;
}
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
// Every seeded date lies at least a day in the past (the offsets below run down to -53),
// so records created after seeding come first in newest-first lists.
const daysAgo = (days: number) => new Date(Date.now() - (days + 60) * 86_400_000);

async function seedData(prisma: Prisma.TransactionClient, organizationId: string) {
  for (let i = 0; i < 40; i++) {
    const first = FIRST[i % FIRST.length]!;
    const last = LAST[Math.floor(i / FIRST.length + i) % LAST.length]!;
    const created = daysAgo(120 - i * 3);
    const customer = await prisma.customer.create({
      data: {
        organizationId,
        name: `${first} ${last}`,
        email: `${first}.${last}${i}@example.com`.toLowerCase().replace(/[^a-z0-9.@-]/g, ''),
        phone: `+4420${String(7_946_0000 + i * 137).padStart(8, '0')}`,
        createdAt: created,
      },
    });
    const [title, description, price] = pick(WORK);
    const jobStatus: JobStatus = pick(['scheduled', 'in_progress', 'completed', 'completed', 'cancelled']);
    const job = await prisma.job.create({
      data: {
        organizationId,
        customerId: customer.id,
        title,
        description,
        status: jobStatus,
        scheduledAt: daysAgo(100 - i * 3),
        completedAt: jobStatus === 'completed' ? daysAgo(95 - i * 3) : null,
        createdAt: daysAgo(110 - i * 3),
      },
    });
    for (const type of ['incoming', 'outgoing'] as EmailType[]) {
      await prisma.email.create({
        data: {
          organizationId,
          customerId: customer.id,
          type,
          fromAddress: type === 'incoming' ? customer.email! : 'office@demo-home.example',
          toAddress: type === 'incoming' ? 'office@demo-home.example' : customer.email!,
          subject: type === 'incoming' ? `Question about ${title.toLowerCase()}` : `Re: ${title}`,
          body: type === 'incoming' ? `Hello, could you tell me more about the ${title.toLowerCase()}?` : `Thanks for getting in touch. We can book you in next week.`,
          sentAt: daysAgo(105 - i * 3),
          createdAt: daysAgo(105 - i * 3),
        },
      });
    }
    const lines = [
      { description, quantity: 1, unitAmount: price },
      { description: 'Call-out charge', quantity: 1, unitAmount: 4500 },
      { description: 'Materials', quantity: 1 + (i % 3), unitAmount: 1250 },
    ].map((line, position) => ({ ...line, position, amount: line.quantity * line.unitAmount, organizationId }));
    const totalAmount = lines.reduce((sum, line) => sum + line.amount, 0);
    const estimateStatus: QuoteStatus = pick(['draft', 'sent', 'accepted', 'declined']);
    await prisma.estimate.create({
      data: {
        organizationId,
        number: await nextNumber(prisma, organizationId, 'estimate'),
        customerId: customer.id,
        jobId: job.id,
        status: estimateStatus,
        currency: 'GBP',
        totalAmount,
        issuedAt: estimateStatus === 'draft' ? null : daysAgo(108 - i * 3),
        validUntil: daysAgo(78 - i * 3),
        createdAt: daysAgo(109 - i * 3),
        lineItems: { createMany: { data: lines.map(({ organizationId: _, ...line }) => line) } },
      },
    });
    const invoiceStatus: InvoiceStatus = pick(['draft', 'sent', 'paid', 'paid']);
    await prisma.invoice.create({
      data: {
        organizationId,
        number: await nextNumber(prisma, organizationId, 'invoice'),
        customerId: customer.id,
        jobId: job.id,
        status: invoiceStatus,
        currency: 'GBP',
        totalAmount,
        issuedAt: invoiceStatus === 'draft' ? null : daysAgo(94 - i * 3),
        dueDate: daysAgo(64 - i * 3),
        paidAt: invoiceStatus === 'paid' ? daysAgo(80 - i * 3) : null,
        createdAt: daysAgo(94 - i * 3),
        lineItems: { createMany: { data: lines.map(({ organizationId: _, ...line }) => line) } },
      },
    });
    if (i % 4 === 0) {
      await prisma.proposal.create({
        data: {
          organizationId,
          customerId: customer.id,
          title: `Proposal: ${title}`,
          status: pick(['draft', 'sent', 'accepted', 'declined']),
          totalAmount: totalAmount * 2,
          currency: 'GBP',
          createdAt: daysAgo(115 - i * 3),
        },
      });
    }
  }
}

/**
 * The demo organization with realistic data in every resource (added only while it has no
 * customers), and a new API key for it with every scope. `npm run seed` and the first start
 * of an embedded data folder use it. Three steps, each safe to run again: the organization,
 * then its records in one transaction, then the key. A seed stopped half-way (Ctrl-C during
 * a slow first start) leaves at most the empty organization, or the records without a key,
 * and the next run finishes it. Not one transaction: on Citus the organization (a reference
 * table, on every node) and the key (on the coordinator) would commit with the records (on
 * the tenant's worker) in two phases, which PostgreSQL refuses to a transaction that sent a
 * NOTIFY, as each record's event does.
 */
export async function seedDemo(prisma: PrismaClient): Promise<{ organization: string; key: string; seeded: boolean }> {
  const organization = await prisma.organization.upsert({ where: { name: ORGANIZATION }, create: { name: ORGANIZATION }, update: {} });
  const seeded = await prisma.$transaction(
    async (tx) => {
      const empty = (await tx.customer.count({ where: { organizationId: organization.id } })) === 0;
      if (empty) await seedData(tx, organization.id);
      return empty;
    },
    // Some 250 statements; on PGlite beside other work that took seconds.
    { maxWait: 60_000, timeout: 300_000 },
  );
  const { key } = await createApiKey(prisma, { organizationId: organization.id, name: 'Seed key', scopes: allScopes() });
  return { organization: ORGANIZATION, key, seeded };
}

/** A file in the embedded data folder, beside crm.lock: the demo is owed to this folder. */
const OWED = 'crm.demo-owed';

/**
 * Marks a fresh embedded folder as owed the demo, before anything is written to it: a first
 * start stopped at any point (migrations and seed take seconds on PGlite) leaves the mark, and
 * the next start writes the demo and prints its key. The seed clears it (clearDemoOwed).
 */
export function markDemoOwed(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(join(dataDir, OWED), '');
}

export function demoOwed(dataDir: string): boolean {
  return existsSync(join(dataDir, OWED));
}

export function clearDemoOwed(dataDir: string): void {
  rmSync(join(dataDir, OWED), { force: true });
}

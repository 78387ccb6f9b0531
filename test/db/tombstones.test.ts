// The tombstone purge's order comes from the Prisma schema: every softly deleted model,
// each purged before the models it refers to, so a deleted customer whose deleted jobs,
// invoices, estimates, proposals and emails are past the retention goes in the same run.
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connection.js';
import { SOFT_DELETED_MODELS } from '../../src/db/tenant.js';
import { purgeOrder, purgeTombstones } from '../../src/db/tombstones.js';
import { getDatamodel } from '../../src/generated/pothos-prisma-types.js';
import { createLogger } from '../../src/logger.js';
import { DB_KINDS, migratedDatabase } from '../helpers/databases.js';

const DAY = 86_400_000;
const lowerFirst = (name: string) => `${name.charAt(0).toLowerCase()}${name.slice(1)}`;

describe('the tombstone purge order', () => {
  it('covers every softly deleted model, each before the ones it refers to', () => {
    const order = purgeOrder();
    expect([...order].sort()).toEqual([...SOFT_DELETED_MODELS].map(lowerFirst).sort());
    for (const child of ['invoice', 'estimate', 'proposal', 'email']) expect(order.indexOf(child), child).toBeLessThan(order.indexOf('job'));
    expect(order.indexOf('job')).toBeLessThan(order.indexOf('customer'));
    expect(order.at(-1)).toBe('customer');
    // The rule itself, over every relation of the schema.
    const models = getDatamodel().datamodel.models;
    for (const [name, model] of Object.entries(models).filter(([name]) => SOFT_DELETED_MODELS.has(name))) {
      for (const field of model.fields.filter((f) => f.kind === 'object' && f.relationFromFields?.length && SOFT_DELETED_MODELS.has(f.type) && f.type !== name)) {
        expect(order.indexOf(lowerFirst(name)), `${name}.${field.name}`).toBeLessThan(order.indexOf(lowerFirst(field.type)));
      }
    }
  });

  it('follows a new model without an edit, and refuses models that refer to each other in a cycle', () => {
    const models = structuredClone(getDatamodel().datamodel.models);
    const note = (refersTo: string) => ({
      fields: [
        { ...models.Customer!.fields.find((f) => f.name === 'deletedAt')! },
        { ...models.Job!.fields.find((f) => f.name === 'customer')!, name: 'parent', type: refersTo },
      ],
      primaryKey: null,
      uniqueIndexes: [],
    });
    models.CallNote = note('Job') as never;
    const order = purgeOrder(models);
    expect(order.indexOf('callNote')).toBeGreaterThanOrEqual(0);
    expect(order.indexOf('callNote')).toBeLessThan(order.indexOf('job'));
    // A job that also refers to its notes: neither can go first.
    models.Job = { ...models.Job!, fields: [...models.Job!.fields, { ...models.Job!.fields.find((f) => f.name === 'customer')!, name: 'note', type: 'CallNote' }] };
    expect(() => purgeOrder(models)).toThrow(/cycle: .*Job.*CallNote|cycle: .*CallNote.*Job/);
  });
});

describe.each(DB_KINDS)('tombstone purge on %s', (kind) => {
  it('purges a deleted customer with its deleted children past the retention in one run, and keeps the rest', async () => {
    const migrated = await migratedDatabase(kind);
    const db = await openDatabase({ databaseUrl: migrated.env.DATABASE_URL, dataDir: migrated.env.DATA_DIR ?? '' });
    try {
      const { prisma } = db;
      const organizationId = (await prisma.organization.create({ data: { name: 'Acme' } })).id;
      const family = async (name: string) => {
        const customerId = (await prisma.customer.create({ data: { organizationId, name } })).id;
        const jobId = (await prisma.job.create({ data: { organizationId, customerId, title: `${name}'s job` } })).id;
        const money = { organizationId, customerId, jobId, currency: 'EUR', totalAmount: 100 };
        const invoiceId = (await prisma.invoice.create({ data: { ...money, number: `INV-${name}` } })).id;
        await prisma.invoiceLineItem.create({ data: { organizationId, invoiceId, position: 1, description: 'Work', quantity: 1, unitAmount: 100, amount: 100 } });
        const estimateId = (await prisma.estimate.create({ data: { ...money, number: `EST-${name}` } })).id;
        await prisma.estimateLineItem.create({ data: { organizationId, estimateId, position: 1, description: 'Work', quantity: 1, unitAmount: 100, amount: 100 } });
        const proposalId = (await prisma.proposal.create({ data: { organizationId, customerId, title: 'Offer', currency: 'EUR', totalAmount: 100 } })).id;
        const emailId = (await prisma.email.create({ data: { organizationId, customerId, type: 'outgoing', fromAddress: 'a@example.com', toAddress: 'b@example.com', subject: 'Hi', body: 'Hello', sentAt: new Date() } })).id;
        return { customerId, jobId, invoiceId, estimateId, proposalId, emailId };
      };
      /** Deletes a family as the API would allow: the children first, then the job, then the customer. */
      const remove = async (records: Awaited<ReturnType<typeof family>>, daysAgo: number) => {
        const at = (extra: number) => ({ deletedAt: new Date(Date.now() - (daysAgo + extra) * DAY) });
        const where = (id: string) => ({ organizationId_id: { organizationId, id } });
        await prisma.invoice.update({ where: where(records.invoiceId), data: at(3) });
        await prisma.estimate.update({ where: where(records.estimateId), data: at(3) });
        await prisma.proposal.update({ where: where(records.proposalId), data: at(3) });
        await prisma.email.update({ where: where(records.emailId), data: at(3) });
        await prisma.job.update({ where: where(records.jobId), data: at(2) });
        await prisma.customer.update({ where: where(records.customerId), data: at(1) });
      };
      const old = await family('Old');
      const recent = await family('Recent');
      const live = await family('Live');
      await remove(old, 40);
      await remove(recent, 5);

      const lines: string[] = [];
      await purgeTombstones(prisma, 30, createLogger('info', (line) => lines.push(line)));
      expect(lines.map((line) => JSON.parse(line)).filter((line) => line.level !== 'info')).toEqual([]);

      const ids = async () => ({
        customers: (await prisma.customer.findMany({ select: { id: true } })).map((r) => r.id).sort(),
        jobs: (await prisma.job.findMany({ select: { id: true } })).map((r) => r.id).sort(),
        invoices: (await prisma.invoice.findMany({ select: { id: true } })).map((r) => r.id).sort(),
        estimates: (await prisma.estimate.findMany({ select: { id: true } })).map((r) => r.id).sort(),
        proposals: (await prisma.proposal.findMany({ select: { id: true } })).map((r) => r.id).sort(),
        emails: (await prisma.email.findMany({ select: { id: true } })).map((r) => r.id).sort(),
        lines: (await prisma.invoiceLineItem.count()) + (await prisma.estimateLineItem.count()),
      });
      const kept = [recent, live];
      expect(await ids()).toEqual({
        customers: kept.map((f) => f.customerId).sort(),
        jobs: kept.map((f) => f.jobId).sort(),
        invoices: kept.map((f) => f.invoiceId).sort(),
        estimates: kept.map((f) => f.estimateId).sort(),
        proposals: kept.map((f) => f.proposalId).sort(),
        emails: kept.map((f) => f.emailId).sort(),
        lines: 4,
      });
      // Each purge said what it removed: one of each resource.
      const purged = lines.map((line) => JSON.parse(line)).filter((line) => line.msg === 'tombstones purged');
      expect(Object.fromEntries(purged.map((line) => [line.resource, line.count]))).toEqual(Object.fromEntries(purgeOrder().map((model) => [model, 1])));
    } finally {
      await db.close();
      await migrated.drop();
    }
  });
});

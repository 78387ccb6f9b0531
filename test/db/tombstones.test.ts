// The tombstone purge's order comes from the Prisma schema: every softly deleted model,
// each purged before the models it refers to, so a deleted record whose deleted children
// are past the retention goes in the same run; tried on a record of every resource.
import { describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/connection.js';
import { SOFT_DELETED_MODELS } from '../../src/db/tenant.js';
import { purgeOrder, purgeTombstones } from '../../src/db/tombstones.js';
import { getDatamodel } from '../../src/generated/pothos-prisma-types.js';
import { createLogger } from '../../src/logger.js';
import '../../src/schema/index.js';
import { registeredResources } from '../../src/schema/registry.js';
import { keysIn, rest, serveInProcess } from '../helpers/api.js';
import { DB_KINDS, migratedDatabase } from '../helpers/databases.js';
import { createExample, parentsFirst, referTo } from '../helpers/examples.js';

const DAY = 86_400_000;
const lowerFirst = (name: string) => `${name.charAt(0).toLowerCase()}${name.slice(1)}`;

describe('the tombstone purge order', () => {
  it('covers every softly deleted model, each before the ones it refers to', () => {
    const order = purgeOrder();
    expect([...order].sort()).toEqual([...SOFT_DELETED_MODELS].map(lowerFirst).sort());
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
  it('purges a deleted record of every resource with its deleted children past the retention in one run, and keeps the rest', async () => {
    const migrated = await migratedDatabase(kind);
    // The instance's own connection (an embedded database has only that one), for the purge.
    let db!: Database;
    let acme!: string;
    const server = await serveInProcess(migrated.env, async (open) => {
      db = open;
      ({ acme } = (await keysIn(open, { acme: { org: 'Acme' } })) as { acme: string });
    });
    try {
      const resources = new Map(registeredResources().map((resource) => [resource.item, resource]));
      // Children first, as the purge goes and as the API allows deleting.
      const order = parentsFirst().map((resource) => resource.item).reverse();
      expect(order).toHaveLength(resources.size);
      // Families made and deleted through the API: a record of every resource, each referring
      // to its family's parents (created first), deleted children first, as the API allows.
      const families: Record<'old' | 'recent' | 'live', Record<string, string>> = { old: {}, recent: {}, live: {} };
      const client = rest(server, acme);
      for (const [name, family] of Object.entries(families)) {
        for (const resource of parentsFirst()) family[resource.item] = (await createExample(client, resource, referTo(family))).id;
        if (name === 'live') continue;
        for (const item of order) expect((await client.delete(`/${resources.get(item)!.path}/${family[item]}`)).status, `DELETE ${item}`).toBe(204);
      }

      const model = (item: string) => db.prisma[item as 'customer'] as unknown as { updateMany(args: object): Promise<unknown>; findMany(args: object): Promise<Array<{ id: string }>> };
      for (const [family, daysAgo] of [[families.old, 40], [families.recent, 5]] as const) {
        for (const item of order) await model(item).updateMany({ where: { id: family[item] }, data: { deletedAt: new Date(Date.now() - daysAgo * DAY) } });
      }
      const lines: string[] = [];
      await purgeTombstones(db.prisma, 30, createLogger('info', (line) => lines.push(line)));
      expect(lines.map((line) => JSON.parse(line)).filter((line) => line.level !== 'info')).toEqual([]);
      for (const item of order) {
        const ids = (await model(item).findMany({ select: { id: true } })).map((row) => row.id).sort();
        expect(ids, item).toEqual([families.recent[item], families.live[item]].sort());
      }
      // Each purge said what it removed: one record of each resource.
      const purged = lines.map((line) => JSON.parse(line)).filter((line) => line.msg === 'tombstones purged');
      expect(Object.fromEntries(purged.map((line) => [line.resource, line.count]))).toEqual(Object.fromEntries(order.map((item) => [item, 1])));
    } finally {
      await server.stop();
      await migrated.drop();
    }
  });
});

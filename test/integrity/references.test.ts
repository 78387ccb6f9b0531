// No live record ever points at a deleted one, however requests race: a delete of a customer
// (or job) against creates, moves and restores of records under it, sent at the same moment
// through two instances on one PostgreSQL database (one instance on PGlite). Exactly one side
// wins each round, and the loser is told why: the delete with 409, the others with 400
// naming the reference (a restore: 409).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isNonNullType, type GraphQLInputObjectType } from 'graphql';
import { getDatamodel } from '../../src/generated/pothos-prisma-types.js';
import { snakeCase } from '../../src/rest/names.js';
import { schema } from '../../src/schema/index.js';
import { registeredResources } from '../../src/schema/registry.js';
import { DB_KINDS } from '../helpers/databases.js';
import { exampleBody } from '../helpers/examples.js';
import { startInstances, type Answer, type Client, type Instances } from './apps.js';

const ROUNDS = 30;
const LINE = { description: 'Work', quantity: 1, unit_amount: 100 };

/** The refusal of a write that names a customer or job being deleted. */
function expectRefusedReference(answer: Answer, param: 'customer_id' | 'job_id') {
  expect(answer.status).toBe(400);
  expect(answer.body.errors).toEqual([{ param, message: 'does not name a record of this organization' }]);
}

describe.each(DB_KINDS)('references under concurrent deletes on %s', (kind) => {
  let instances: Instances;
  let a: Client;
  let b: Client;

  beforeAll(async () => {
    instances = await startInstances(kind, 2);
    [a, b] = [instances.clients[0]!, instances.clients.at(-1)!];
  });
  afterAll(() => instances.close());

  const created = async (answer: Promise<Answer>) => {
    const { status, body } = await answer;
    expect(status).toBe(201);
    return body as { id: string };
  };

  /** Whatever the rounds did: no live record refers to a deleted one (every reference of every resource). */
  async function expectNoOrphans() {
    const models = getDatamodel().datamodel.models;
    const pathOf = (type: string) => registeredResources().find((r) => r.type === type)?.path;
    const references = registeredResources().flatMap((resource) =>
      models[resource.type]!.fields
        .filter((field) => field.kind === 'object' && field.relationFromFields?.length && pathOf(field.type))
        .map((field) => ({ table: resource.path, column: snakeCase(field.relationFromFields!.find((name) => name !== 'organizationId')!), parent: pathOf(field.type)! })),
    );
    expect(references.length).toBeGreaterThan(4);
    const orphans = await instances.db.sql.query<{ name: string; count: number }>(`
      SELECT t.name, count(*)::int AS count FROM (
        ${references
          .map(({ table, column, parent }) => `SELECT '${table}.${column}' AS name FROM ${table} r JOIN ${parent} p ON p.organization_id = r.organization_id AND p.id = r.${column} WHERE r.deleted_at IS NULL AND p.deleted_at IS NOT NULL`)
          .join('\n        UNION ALL ')}
      ) t GROUP BY t.name`);
    expect(orphans).toEqual([]);
  }

  it('a customer delete racing creates of every resource that names a customer: one side wins', async () => {
    const wins = { delete: 0, creates: 0 };
    const children = registeredResources().filter((resource) => {
      const field = (schema.getType(`Create${resource.type}Input`) as GraphQLInputObjectType | undefined)?.getFields().customerId;
      return field && isNonNullType(field.type);
    });
    expect(children.length).toBeGreaterThan(3);
    for (let round = 0; round < ROUNDS; round++) {
      const customer = await created(a.post('/customers', { name: `Racing ${round}` }));
      const bodies = await Promise.all(children.map((resource) => exampleBody(a, resource, { customerId: customer.id })));
      const [deleted, ...creates] = await Promise.all([
        (round % 2 ? a : b).delete(`/customers/${customer.id}`),
        ...children.map((resource, i) => (i % 2 ? b : a).post(`/${resource.path}`, bodies[i])),
      ]);
      if (deleted.status === 204) {
        wins.delete++;
        for (const create of creates) expectRefusedReference(create, 'customer_id');
      } else {
        wins.creates++;
        expect(deleted.status).toBe(409);
        expect(deleted.body.detail).toMatch(/still has/);
        // Every create committed before the delete's check or after its refusal.
        for (const create of creates) expect(create.status).toBe(201);
      }
    }
    expect(wins.delete + wins.creates).toBe(ROUNDS);
    await expectNoOrphans();
  });

  it('a job delete racing an invoice create and an invoice move onto it: one side wins', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const customer = await created(a.post('/customers', { name: `Job owner ${round}` }));
      const job = await created(a.post('/jobs', { customer_id: customer.id, title: 'Roof' }));
      const draft = await created(b.post('/invoices', { customer_id: customer.id, currency: 'USD', line_items: [LINE] }));
      const [deleted, create, move] = await Promise.all([
        (round % 2 ? a : b).delete(`/jobs/${job.id}`),
        b.post('/invoices', { customer_id: customer.id, job_id: job.id, currency: 'USD', line_items: [LINE] }),
        a.patch(`/invoices/${draft.id}`, { job_id: job.id }),
      ]);
      if (deleted.status === 204) {
        expectRefusedReference(create, 'job_id');
        expectRefusedReference(move, 'job_id');
      } else {
        expect(deleted.status).toBe(409);
        expect(create.status).toBe(201);
        expect(move.status).toBe(200);
        expect(move.body.job_id).toBe(job.id);
      }
    }
    await expectNoOrphans();
  });

  it('a job moved onto a customer being deleted: one side wins', async () => {
    const home = await created(a.post('/customers', { name: 'Home' }));
    for (let round = 0; round < ROUNDS; round++) {
      const target = await created(a.post('/customers', { name: `Target ${round}` }));
      const job = await created(b.post('/jobs', { customer_id: home.id, title: `Move ${round}` }));
      const [deleted, move] = await Promise.all([(round % 2 ? a : b).delete(`/customers/${target.id}`), (round % 2 ? b : a).patch(`/jobs/${job.id}`, { customer_id: target.id })]);
      if (deleted.status === 204) {
        expectRefusedReference(move, 'customer_id');
        expect((await a.get(`/jobs/${job.id}`)).body.customer_id).toBe(home.id);
      } else {
        expect(deleted.status).toBe(409);
        expect(move.status).toBe(200);
        expect(move.body.customer_id).toBe(target.id);
      }
    }
    await expectNoOrphans();
  });

  it('a job restored while its customer is being deleted: one side wins', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const customer = await created(a.post('/customers', { name: `Restorer ${round}` }));
      const job = await created(a.post('/jobs', { customer_id: customer.id, title: 'Gone' }));
      expect((await b.delete(`/jobs/${job.id}`)).status).toBe(204);
      const [deleted, restored] = await Promise.all([(round % 2 ? a : b).delete(`/customers/${customer.id}`), (round % 2 ? b : a).post(`/jobs/${job.id}/restore`)]);
      if (deleted.status === 204) {
        expect(restored.status).toBe(409);
        expect(restored.body.errors).toEqual([{ param: 'customer_id', message: 'names a deleted record' }]);
      } else {
        expect(deleted.status).toBe(409);
        expect(restored.status).toBe(200);
        expect(restored.body.deleted_at).toBeNull();
      }
    }
    await expectNoOrphans();
  });
});

// Every operation a resource has, run over every resource the registry holds: a resource
// declared with defineResource and defineCreate (with its example) is tested here without a
// line of test code of its own. REST as a client sends it, on both databases.
import { isNonNullType, type GraphQLInputObjectType } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transitionKind } from '../../src/events/types.js';
import { ROUTES } from '../../src/rest/router.js';
import { snakeCase } from '../../src/rest/names.js';
import { schema } from '../../src/schema/index.js';
import { registeredResources, type RegisteredResource } from '../../src/schema/registry.js';
import type { Move } from '../../src/schema/transitions.js';
import { gql, rest, startApi, type Api } from '../helpers/api.js';
import { createExample, exampleBody } from '../helpers/examples.js';
import { DB_KINDS } from '../helpers/databases.js';

type Client = ReturnType<typeof rest>;
type Row = Record<string, unknown> & { id: string; version: number };

const RESOURCES = registeredResources();

/** The moves that take a record from `status` to one of `to` (breadth first), or undefined. */
function movesTo(moves: readonly Move<string>[], status: string, to: readonly string[]): Move<string>[] | undefined {
  const paths = new Map<string, Move<string>[]>([[status, []]]);
  for (const [at, path] of paths) {
    if (to.includes(at)) return path;
    for (const move of moves) if (move.from.includes(at) && !paths.has(move.to)) paths.set(move.to, [...path, move]);
  }
  return undefined;
}
const hasRoute = (method: string, path: string) => ROUTES.some((route) => route.method === method && route.path === path);

describe.each(DB_KINDS)('every resource, every operation, on %s', (kind) => {
  let api: Api;
  let acme: Client;
  let other: Client;
  let unscoped: Client;

  beforeAll(async () => {
    api = await startApi(kind, { acme: { org: 'Acme' }, other: { org: 'Other Co' }, unscoped: { org: 'Acme', scopes: 'webhooks:read' } });
    acme = rest(api, api.keys.acme!);
    other = rest(api, api.keys.other!);
    unscoped = rest(api, api.keys.unscoped!);
  });
  afterAll(() => api?.stop());

  const createBody = (resource: RegisteredResource, client = acme) => exampleBody(client, resource);
  const create = (resource: RegisteredResource, client = acme): Promise<Row> => createExample(client, resource);

  describe.each(RESOURCES.map((resource) => ({ resource, name: resource.path })))('$name', ({ resource }) => {
    const path = `/${resource.path}`;

    it('create: 201 at its Location with the example\'s values, version 1 and its ETag', async () => {
      const body = await createBody(resource);
      const created = await acme.post(path, body);
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.headers.get('location')).toBe(`/v1${path}/${created.body.id}`);
      expect(created.headers.get('etag')).toBe('"1"');
      expect(created.body).toMatchObject({ version: 1, deleted_at: null, metadata: {}, external_id: null });
      // Every scalar the example sent is answered under its own name, as sent.
      for (const [name, value] of Object.entries(body)) {
        if (!(name in created.body) || typeof value === 'object') continue;
        const answered = created.body[name];
        if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}/.test(value)) expect(Date.parse(answered), name).toBe(Date.parse(value));
        else expect(answered, name).toEqual(value);
      }
    });

    it('create: an empty body is a 400 naming each required field, and writes nothing', async () => {
      const before = (await acme.get(`${path}?limit=1`)).body.pagination.total;
      const refused = await acme.post(path, {});
      expect(refused.status).toBe(400);
      const input = schema.getType(`Create${resource.type}Input`) as GraphQLInputObjectType;
      const required = Object.values(input.getFields()).filter((field) => isNonNullType(field.type)).map((field) => snakeCase(field.name));
      expect(refused.body.errors.map((e: { param: string }) => e.param).sort()).toEqual(required.sort());
      expect((await acme.get(`${path}?limit=1`)).body.pagination.total).toBe(before);
    });

    it('item: the record with its ETag; 304 for If-None-Match; 404 for an unknown id', async () => {
      const record = await create(resource);
      const item = await acme.get(`${path}/${record.id}`);
      expect(item.status).toBe(200);
      expect(item.body).toEqual(record);
      expect(item.headers.get('etag')).toBe('"1"');
      expect((await acme.get(`${path}/${record.id}`, { 'if-none-match': '"1"' })).status).toBe(304);
      expect((await acme.get(`${path}/00000000-0000-4000-8000-000000000000`)).status).toBe(404);
    });

    it('list: newest first, counted, holding the record; GraphQL answers the same record', async () => {
      const record = await create(resource);
      const page = await acme.get(`${path}?limit=100`);
      expect(page.status).toBe(200);
      expect(page.body.data[0]).toEqual(record);
      expect(page.body.pagination.total).toBe(page.body.data.length);
      const answered = await gql(api, api.keys.acme!, `query($id: ID!) { record: ${resource.item}(id: $id) { id version } }`, { id: record.id });
      expect(answered.record).toEqual({ id: record.id, version: 1 });
    });

    it('update: a merge patch of its metadata makes version 2 (or 405 where the resource cannot be edited)', async () => {
      const record = await create(resource);
      const patched = await acme.patch(`${path}/${record.id}`, { metadata: { source: 'suite' } }, { 'if-match': '"1"' });
      if (!hasRoute('PATCH', `${path}/{id}`)) {
        expect(patched.status).toBe(405);
        return;
      }
      expect(patched.status, JSON.stringify(patched.body)).toBe(200);
      expect(patched.body).toMatchObject({ id: record.id, version: 2, metadata: { source: 'suite' } });
      expect(patched.headers.get('etag')).toBe('"2"');
      const stale = await acme.patch(`${path}/${record.id}`, { metadata: { source: 'stale' } }, { 'if-match': '"1"' });
      expect(stale.status).toBe(412);
      expect(stale.body.current).toMatchObject({ version: 2 });
    });

    it('delete and restore: 204, then 404 and out of the list, a tombstone in the sync, back with restore', async () => {
      const record = await create(resource);
      expect((await acme.delete(`${path}/${record.id}`)).status).toBe(204);
      expect((await acme.get(`${path}/${record.id}`)).status).toBe(404);
      expect((await acme.get(`${path}?limit=100`)).body.data.map((row: Row) => row.id)).not.toContain(record.id);
      const sync = await acme.get(`${path}/sync?limit=100`);
      expect(sync.body.data).toContainEqual({ id: record.id, deleted: true, deleted_at: expect.any(String), version: 2 });
      const restored = await acme.post(`${path}/${record.id}/restore`);
      expect(restored.status).toBe(200);
      expect(restored.body).toMatchObject({ id: record.id, version: 3, deleted_at: null });
      expect((await acme.get(`${path}/${record.id}`)).status).toBe(200);
    });

    it('transitions: each move, from a status it leaves, sets its status and stamps with version + 1 and its event; from another status, 409 and nothing changes', async () => {
      const verbs = ROUTES.filter((route) => route.kind === 'move' && route.resource.path === resource.path && !route.input).map((route) => route.verb);
      expect(verbs.sort()).toEqual(resource.moves.map((move) => move.verb).sort());
      for (const move of resource.moves) {
        const record = await create(resource);
        const before = movesTo(resource.moves, record.status as string, move.from);
        expect(before, `${resource.type}: ${move.verb} from ${record.status}`).toBeDefined();
        for (const step of before!) expect((await acme.post(`${path}/${record.id}/${step.verb}`)).status).toBe(200);
        const at = (await acme.get(`${path}/${record.id}`)).body as Row;
        const refused = resource.moves.find((other) => !other.from.includes(at.status as string));
        if (refused) {
          const conflict = await acme.post(`${path}/${record.id}/${refused.verb}`);
          expect(conflict.status, `${refused.verb} from ${at.status}`).toBe(409);
          expect((await acme.get(`${path}/${record.id}`)).body.version).toBe(at.version);
        }
        const moved = await acme.post(`${path}/${record.id}/${move.verb}`);
        expect(moved.status, JSON.stringify(moved.body)).toBe(200);
        expect(moved.body).toMatchObject({ id: record.id, status: move.to, version: at.version + 1 });
        for (const stamp of move.stamps ?? []) expect(moved.body[snakeCase(stamp)], stamp).toEqual(expect.any(String));
        const history = await acme.get(`${path}/${record.id}/events?limit=1`);
        expect(history.body.data[0].type).toBe(`${resource.item}.${transitionKind(move.to)}`);
      }
    });

    it('events: the record\'s history, newest first, one event per change', async () => {
      const record = await create(resource);
      await acme.delete(`${path}/${record.id}`);
      await acme.post(`${path}/${record.id}/restore`);
      const history = await acme.get(`${path}/${record.id}/events`);
      expect(history.status).toBe(200);
      expect(history.body.data.map((event: { type: string }) => event.type)).toEqual([`${resource.item}.restored`, `${resource.item}.deleted`, `${resource.item}.created`]);
      const listed = await acme.get(`/events?type=${resource.item}.created&limit=100`);
      expect(listed.body.data.map((event: { data: { object: { id: string } } }) => event.data.object.id)).toContain(record.id);
    });

    it('scopes: a key without the resource\'s scopes is refused (403 naming the scope) and writes nothing', async () => {
      const record = await create(resource);
      for (const [refused, scope] of [
        [await unscoped.get(path), resource.read],
        [await unscoped.get(`${path}/${record.id}`), resource.read],
        [await unscoped.delete(`${path}/${record.id}`), resource.write],
      ] as const) {
        expect(refused.status).toBe(403);
        expect(refused.body.detail).toContain(scope);
      }
      const before = (await acme.get(`${path}?limit=1`)).body.pagination.total;
      expect((await unscoped.post(path, await createBody(resource))).status).toBe(403);
      expect((await acme.get(`${path}?limit=1`)).body.pagination.total).toBe(before);
      expect((await acme.get(`${path}/${record.id}`)).body.version).toBe(1);
    });

    it('tenancy: another organization neither sees nor changes the record', async () => {
      const record = await create(resource);
      const theirs = await create(resource, other);
      expect((await other.get(`${path}/${record.id}`)).status).toBe(404);
      expect((await other.delete(`${path}/${record.id}`)).status).toBe(404);
      expect((await other.get(`${path}?limit=100`)).body.data.map((row: Row) => row.id)).toEqual(expect.not.arrayContaining([record.id]));
      expect((await acme.get(`${path}/${theirs.id}`)).status).toBe(404);
      expect((await acme.get(`${path}/${record.id}`)).body.version).toBe(1);
    });
  });
});

// What every list of resources is derived from, and guards on what cannot be derived: the
// per-table triggers of the migrations, and the docs. A resource added without them fails here,
// not in production (a 403 on /v1/events, a list whose totals never move).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allScopes, type Scope } from '../../src/auth/scopes.js';
import { openDatabase, type Database } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrator.js';
import { SOFT_DELETED_MODELS } from '../../src/db/tenant.js';
import { getDatamodel } from '../../src/generated/pothos-prisma-types.js';
import { ROUTES } from '../../src/rest/router.js';
import { eventReadScopes, readableResources } from '../../src/schema/event.js';
import { getNamedType, type GraphQLObjectType } from 'graphql';
import { schema } from '../../src/schema/index.js';
import { listSpecOf } from '../../src/schema/list-query.js';
import { dayFields } from '../../src/schema/record-object.js';
import { registeredResources } from '../../src/schema/registry.js';
import { API_DOCS, generatedApiDocs, listTable, scopeTable } from '../../scripts/docs.js';
import { freshDatabase, type TestDatabase } from '../helpers/databases.js';

const resources = () => registeredResources();
const keyWith = (...scopes: Scope[]) => ({ auth: { keyId: 'key', keyPrefix: 'svc_live_key', organizationId: 'org', expiresAt: null, scopes: new Set(scopes) } });

describe('the resource registry', () => {
  it('holds every versioned, softly deleted Prisma model, once', () => {
    const models = getDatamodel().datamodel.models;
    const resourceModels = [...SOFT_DELETED_MODELS].filter((name) => models[name]!.fields.some((field) => field.name === 'version'));
    expect(resources().map((resource) => resource.type).sort()).toEqual(resourceModels.sort());
    for (const resource of resources()) expect(resource.item).toBe(`${resource.type.charAt(0).toLowerCase()}${resource.type.slice(1)}`);
  });

  it('shows each @db.Date column of a resource as a day (Date), which its list filters by day, and no other column', () => {
    // The Prisma datamodel the schema reads has no native types: recordObject's `day` says it.
    const prisma = readFileSync('prisma/schema.prisma', 'utf8');
    for (const { type } of resources()) {
      const model = new RegExp(`^model ${type} \\{([\\s\\S]*?)^\\}`, 'm').exec(prisma)![1]!;
      const days = [...model.matchAll(/^\s+(\w+)\s+DateTime\??\s.*@db\.Date\b/gm)].map((match) => match[1]!).sort();
      const fields = (schema.getType(type) as GraphQLObjectType).getFields();
      expect(Object.keys(fields).filter((name) => getNamedType(fields[name]!.type).name === 'Date').sort(), type).toEqual(days);
      expect([...dayFields(type)].sort(), type).toEqual(days);
      for (const [name, field] of Object.entries(listSpecOf(type).fields)) expect(field.kind === 'date', `${type}.${name}`).toBe(days.includes(name));
    }
  });

  it('declares exactly the scopes that guard routes, every resource\'s read and write among them', () => {
    for (const resource of resources()) {
      expect(allScopes(), `${resource.type}'s read scope`).toContain(resource.read);
      expect(allScopes(), `${resource.type}'s write scope`).toContain(resource.write);
    }
    // No scope is left over, none missing: each one guards some route, each route's is declared.
    expect(allScopes()).toEqual([...new Set(ROUTES.map((route) => route.scope))].sort());
  });

  it('serves every resource on REST under its path and scopes', () => {
    const routes = new Map(ROUTES.map((route) => [`${route.method} ${route.path}`, route]));
    for (const { path, read, write } of resources()) {
      for (const [row, scope] of [[`GET /${path}`, read], [`GET /${path}/{id}`, read], [`DELETE /${path}/{id}`, write], [`POST /${path}/{id}/restore`, write]] as const) {
        expect(routes.get(row)?.scope, row).toBe(scope);
      }
      expect(routes.has(`POST /${path}`), `POST /${path}`).toBe(true);
    }
  });

  it("reads events of exactly the resources a key may read; every resource's read scope reads some", () => {
    // With events:read, imports' events too (import.completed: not a record resource).
    expect(readableResources(keyWith('events:read'))).toEqual([...resources().map((resource) => resource.item), 'import']);
    expect(readableResources(keyWith('webhooks:read'))).toEqual([]);
    for (const resource of resources()) {
      expect(readableResources(keyWith(resource.read)), resource.read).toContain(resource.item);
      expect(eventReadScopes()).toContain(resource.read);
    }
    expect(eventReadScopes()[0]).toBe('events:read');
  });

  it("docs/API.md's scope and list tables are what the schema declares now (npm run docs:generate writes them)", () => {
    const api = readFileSync(API_DOCS, 'utf8');
    expect(api, 'docs/API.md is stale: run npm run docs:generate').toBe(generatedApiDocs(api));
    for (const scope of allScopes()) expect(scopeTable(), scope).toContain(`| \`${scope}\` |`);
    for (const { path } of resources()) expect(listTable(), path).toContain(`| \`/${path}\` |`);
  });
});

// The triggers are SQL in each resource's migration: the same catalog on PGlite and
// PostgreSQL, so one database is enough to read it.
describe('the migrations give every resource its triggers', () => {
  let fresh: TestDatabase;
  let db: Database;
  beforeAll(async () => {
    fresh = await freshDatabase('postgres');
    db = await openDatabase({ databaseUrl: fresh.env.DATABASE_URL, dataDir: '' });
    await migrate(db.sql);
  });
  afterAll(async () => {
    await db?.close();
    await fresh?.drop();
  });

  it('its table is named as its path, with the change stamp, the maintained count and the event trigger naming its item', async () => {
    // tgtype's bits: 4 INSERT, 8 DELETE, 16 UPDATE. Totals and events are kept per statement
    // (count_changes, record_changes) or per row (count_records, record_event: a table with
    // lines' events, and Citus); either way every kind of write they follow fires one, once.
    const triggers = await db.prisma.$queryRaw<{ table: string; fn: string; args: string; type: number }[]>`
      SELECT c.relname AS table, p.proname AS fn, encode(t.tgargs, 'escape') AS args, t.tgtype::int AS type
      FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_proc p ON p.oid = t.tgfoid
      WHERE NOT t.tgisinternal`;
    // Each kind of write fires exactly one of them: summed, the bits are those of each kind once.
    const firedOn = (list: typeof triggers) => list.reduce((bits, trigger) => bits + (trigger.type & 28), 0);
    const COUNTS = ['count_changes', 'count_records'];
    const EVENTS = ['record_changes', 'record_event'];
    for (const { type, path, item } of resources()) {
      const on = triggers.filter((trigger) => trigger.table === path);
      expect(on.map((trigger) => trigger.fn), `triggers on ${path}`).toContain('stamp_change');
      // tgargs: each argument followed by a NUL byte (escaped as \000).
      const events = on.filter((trigger) => EVENTS.includes(trigger.fn));
      expect(firedOn(events), `event triggers on ${path}`).toBe(4 | 16);
      for (const event of events) expect(event.args.split('\\000')[0], `${event.fn}'s resource on ${path}`).toBe(item);
      // The list's totals by status are the trigger's: it splits its counts by the list's enum field.
      const counts = on.filter((trigger) => COUNTS.includes(trigger.fn));
      expect(firedOn(counts), `count triggers on ${path}`).toBe(4 | 8 | 16);
      const split = Object.entries(listSpecOf(type).fields).find(([, field]) => field.kind === 'enum')?.[0] ?? '';
      for (const count of counts) expect(count.args.split('\\000')[0], `${count.fn}'s split column on ${path}`).toBe(split.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`));
    }
    // And no event trigger names a resource the registry does not know.
    const named = new Set(triggers.filter((trigger) => EVENTS.includes(trigger.fn)).map((trigger) => trigger.args.split('\\000')[0]));
    expect([...named].sort()).toEqual(resources().map((resource) => resource.item).sort());
  });
});

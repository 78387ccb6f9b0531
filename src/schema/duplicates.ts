// Duplicate customers and their merge (CONTRACT section 10). `customerDuplicates` groups the
// organization's live customers that share an e-mail or a phone; `mergeCustomers` moves every
// child of the duplicates (sources) to the customer kept (target) and deletes the sources, in
// one transaction. Events come from the triggers on each UPDATE: one `<child>.updated` per
// moved child, one `customer.deleted` per source.
import { queryFromInfo } from '@pothos/plugin-prisma';
import type { GraphQLResolveInfo } from 'graphql';
import type { Scope } from '../auth/scopes.js';
import type { Context } from '../context.js';
import { apiError, invalidInput } from '../errors.js';
import { Prisma, type Customer as CustomerRow } from '../generated/prisma/client.js';
import { getDatamodel } from '../generated/pothos-prisma-types.js';
import { builder } from './builder.js';
import { delegateName, notFound, writing, type Tx } from './changes.js';
import { Customer } from './resources/customer.js';
import { readCursor, writeCursor } from './cursor.js';
import { asksForPagination, MAX_LIMIT, pageWindow, PaginationRef, type Page } from './pagination.js';
import { registeredResources } from './registry.js';
import { restExtension } from './resource.js';
import { InputCheck, isUuid } from './validation.js';

/** Customers listed per group (the oldest first); `count` tells how many share the value. */
export const GROUP_CUSTOMERS = 100;
/** Sources one merge takes, like a batch's items. */
export const MAX_SOURCES = 100;

type Key = 'email' | 'phone';

interface Group {
  key: Key;
  value: string;
  count: number;
  customers: CustomerRow[];
}

const DuplicateKey = builder.enumType('CustomerDuplicateKey', {
  description: 'What the customers of a duplicate group share.',
  values: { email: { description: 'The e-mail address (stored lower-cased, so compared without case).' }, phone: { description: 'The phone number (E.164).' } } as const,
});

const DuplicateGroup = builder.objectRef<Group>('CustomerDuplicateGroup').implement({
  description: 'Live customers sharing an e-mail or a phone. A customer sharing both is in two groups.',
  fields: (t) => ({
    key: t.field({ type: DuplicateKey, resolve: (group) => group.key }),
    value: t.exposeString('value', { description: 'The e-mail or phone they share.' }),
    count: t.exposeInt('count', { description: 'How many live customers share it (at least 2).' }),
    customers: t.field({ type: [Customer], description: `The customers sharing it, oldest first; at most ${GROUP_CUSTOMERS}.`, resolve: (group) => group.customers }),
  }),
});

const DuplicatePage = builder.objectRef<Page<Group>>('CustomerDuplicatePage').implement({
  description: 'One page of duplicate groups: e-mail groups, then phone groups, each in order of the shared value.',
  fields: (t) => ({
    data: t.field({ type: [DuplicateGroup], resolve: (page) => page.data }),
    pagination: t.field({ type: PaginationRef, resolve: (page) => page.pagination! }),
  }),
});

type Position = [Key, string];

const GROUPS = 'customer_duplicates';

/**
 * The groups, by key then value in byte order (COLLATE "C": the same order on every
 * database). E-mails are grouped as stored: every write lower-cases them.
 */
function groupsOf(organizationId: string) {
  const live = Prisma.sql`organization_id = ${organizationId}::uuid AND deleted_at IS NULL`;
  return Prisma.sql`
    SELECT 'email' AS key, email AS value, count(*)::int AS count FROM customers WHERE ${live} AND email IS NOT NULL GROUP BY email HAVING count(*) > 1
    UNION ALL
    SELECT 'phone', phone, count(*)::int FROM customers WHERE ${live} AND phone IS NOT NULL GROUP BY phone HAVING count(*) > 1`;
}

function readPosition(position: string): Position {
  const parsed: unknown = JSON.parse(position);
  const valid = Array.isArray(parsed) && parsed.length === 2 && (parsed[0] === 'email' || parsed[0] === 'phone') && typeof parsed[1] === 'string';
  if (!valid) throw invalidInput([{ param: 'cursor', message: 'is not a cursor of this list (use a nextCursor exactly as received)' }]);
  return parsed as Position;
}

/** The first `GROUP_CUSTOMERS` live customers of each group, as `query` selects them. */
async function membersOf(ctx: Context, groups: Array<{ key: Key; value: string }>, query: object): Promise<Map<string, CustomerRow[]>> {
  const members = new Map<string, CustomerRow[]>();
  if (groups.length === 0) return members;
  const values = (key: Key) => groups.filter((group) => group.key === key).map((group) => group.value);
  const matching = (key: Key) => {
    const wanted = values(key);
    if (wanted.length === 0) return [];
    const column = Prisma.raw(key);
    return [Prisma.sql`SELECT id, created_at, ${key} AS key, ${column} AS value FROM customers
      WHERE organization_id = ${ctx.auth.organizationId}::uuid AND deleted_at IS NULL AND ${column} IN (${Prisma.join(wanted)})`];
  };
  const rows = await ctx.prisma.$queryRaw<Array<{ id: string; key: Key; value: string }>>`
    SELECT id::text AS id, key, value FROM (
      SELECT m.*, row_number() OVER (PARTITION BY key, value ORDER BY created_at, id) AS n
      FROM (${Prisma.join([...matching('email'), ...matching('phone')], ' UNION ALL ')}) m
    ) ranked
    WHERE n <= ${GROUP_CUSTOMERS}
    ORDER BY key, value COLLATE "C", n`;
  const records = await ctx.prisma.customer.findMany({ ...query, where: { id: { in: [...new Set(rows.map((row) => row.id))] } } });
  const byId = new Map(records.map((record) => [record.id, record]));
  for (const row of rows) {
    const record = byId.get(row.id);
    // Deleted since the first read: it no longer shares anything.
    if (record) members.set(`${row.key}|${row.value}`, [...(members.get(`${row.key}|${row.value}`) ?? []), record]);
  }
  return members;
}

async function duplicatePage(ctx: Context, args: { page?: number | null; limit?: number | null; cursor?: string | null }, info: GraphQLResolveInfo): Promise<Page<Group>> {
  const list = { organizationId: ctx.auth.organizationId, key: ctx.cursorKey, resource: GROUPS };
  const cursor = args.cursor == null ? undefined : readCursor(args.cursor, list, {});
  if (cursor && (args.page ?? 1) !== 1) throw invalidInput([{ param: 'page', message: 'cannot be combined with cursor' }]);
  const { page, limit, skip } = pageWindow({ page: cursor?.page ?? args.page, limit: args.limit });
  const after = cursor ? readPosition(cursor.position) : undefined;
  const groups = groupsOf(ctx.auth.organizationId);
  const rows = await ctx.prisma.$queryRaw<Array<{ key: Key; value: string; count: number }>>`
    SELECT key, value, count FROM (${groups}) g
    ${after ? Prisma.sql`WHERE key > ${after[0]} OR (key = ${after[0]} AND value COLLATE "C" > ${after[1]} COLLATE "C")` : Prisma.empty}
    ORDER BY key, value COLLATE "C"
    OFFSET ${after ? 0 : skip} LIMIT ${limit + 1}`;
  const hasMore = rows.length > limit;
  const shown = hasMore ? rows.slice(0, limit) : rows;
  const members = await membersOf(ctx, shown, queryFromInfo({ context: ctx, info, path: ['data', 'customers'] }));
  const data = shown.map((row) => ({ ...row, customers: members.get(`${row.key}|${row.value}`) ?? [] }));
  if (!asksForPagination(info)) return { data };
  // Counted once per walk: later pages carry the total in their cursor.
  const total = cursor?.total ?? (await ctx.prisma.$queryRaw<Array<{ total: number }>>`SELECT count(*)::int AS total FROM (${groups}) g`)[0]!.total;
  const last = shown.at(-1);
  const nextCursor = hasMore && last ? writeCursor(list, { order: 'sorted', page: page + 1, position: JSON.stringify([last.key, last.value]), filters: {}, total }) : null;
  return { data, pagination: { page, limit, total, nextCursor, hasMore } };
}

builder.queryField('customerDuplicates', (t) =>
  t.field({
    type: DuplicatePage,
    nullable: true,
    description: 'Live customers sharing an e-mail or a phone, grouped: e-mail groups, then phone groups, each in order of the shared value.',
    authScopes: { scope: 'customers:read' },
    extensions: restExtension({ path: 'customers', kind: 'view', verb: 'duplicates', embedded: ['customers'] }),
    args: {
      page: t.arg.int({ defaultValue: 1, description: 'Page number, from 1.' }),
      limit: t.arg.int({ defaultValue: 20, description: `Groups per page, 1 to ${MAX_LIMIT}.` }),
      cursor: t.arg.string({ description: "Continues from a page's `nextCursor`." }),
    },
    resolve: (_root, args, ctx, info) => duplicatePage(ctx, args, info),
  }),
);

const NOT_LIVE = 'does not name a record of this organization';

/** A source as named: its place in `sourceIds` and its id. */
interface Source {
  param: string;
  id: string;
}

/**
 * Every fault of `sourceIds` at once, each named `sourceIds[i]`: malformed, the target
 * itself, named twice, or no live customer of this organization. Answers the sources.
 */
async function checkSources(ctx: Context, target: string, sourceIds: readonly string[] | undefined): Promise<Source[]> {
  const check = new InputCheck(ctx.inputErrors);
  if (sourceIds === undefined) check.fail('sourceIds', 'is required');
  else if (sourceIds.length === 0) check.fail('sourceIds', 'must name at least one customer to merge');
  else if (sourceIds.length > MAX_SOURCES) check.fail('sourceIds', `must name at most ${MAX_SOURCES} customers`);
  const sources: Source[] = [];
  const seen = new Set<string>();
  // Too many are not judged one by one (nor looked up).
  const named = sourceIds && sourceIds.length <= MAX_SOURCES ? sourceIds : [];
  named.forEach((raw, i) => {
    const param = `sourceIds[${i}]`;
    const id = check.id(param, raw);
    if (id === null || !isUuid(id)) return;
    if (id === target) check.fail(param, 'is the customer merged into: a customer cannot be merged into itself');
    else if (seen.has(id)) check.fail(param, 'names a customer already named');
    else sources.push({ param, id });
    seen.add(id);
  });
  if (sources.length > 0) {
    const live = new Set((await ctx.prisma.customer.findMany({ where: { id: { in: sources.map((s) => s.id) } }, select: { id: true } })).map((c) => c.id));
    for (const source of sources) if (!live.has(source.id)) check.fail(source.param, NOT_LIVE);
  }
  check.done();
  return sources;
}

/** A customer's children: the soft-deleted models that refer to it (jobs, emails, ...), read from the Prisma schema. */
function childrenOfCustomer(): Array<{ table: string; delegate: string; write: Scope }> {
  const relations = getDatamodel().datamodel.models.Customer!.fields.filter((field) => field.kind === 'object' && field.isList);
  const resources = new Map(registeredResources().map((resource) => [resource.type as string, resource]));
  return relations.flatMap((field) => {
    const resource = resources.get(field.type);
    return resource ? [{ table: resource.path, delegate: delegateName(resource.type), write: resource.write }] : [];
  });
}

/** A merge changes every kind of child it may move: it needs their write scopes too (403 naming the missing). */
function requireChildScopes(ctx: Context): void {
  const missing = [...new Set(childrenOfCustomer().map((child) => child.write))].filter((scope) => !ctx.auth.scopes.has(scope));
  if (missing.length > 0) {
    throw apiError('FORBIDDEN', `This API key lacks the scope ${missing.join(' and ')}, required to merge customers (their records move).`, { details: { scopes: missing } });
  }
}

/**
 * The tables whose events are written when the transaction commits (a deferred event trigger:
 * those with lines, and every table on Citus); the others' are written as each statement
 * ends (see the statement_triggers migration).
 */
async function tablesWithEventsAtCommit(tx: Tx): Promise<Set<string>> {
  const rows = await tx.$queryRaw<Array<{ table: string }>>`
    SELECT c.relname::text AS table FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
    WHERE t.tgdeferrable AND NOT t.tgisinternal AND t.tgname = c.relname || '_event'`;
  return new Set(rows.map((row) => row.table));
}

interface Movable {
  updateMany(args: object): Promise<{ count: number }>;
}

const uuids = (ids: readonly string[]) => Prisma.join(ids.map((id) => Prisma.sql`${id}::uuid`));

/**
 * Merges the sources into `target`. The target and the sources are locked first, in id order
 * (so two merges cannot deadlock), FOR UPDATE: a write that holds a source as its reference
 * (references.ts) commits first and its child is moved with the others, or waits and then
 * finds the source deleted (400). The sources' children are locked next, still before the
 * first change, so no wait for a row happens while the organization's change-sequence lock
 * (taken by the first UPDATE) is held.
 */
async function mergeCustomers(ctx: Context, target: string, sourceIds: readonly string[] | undefined, expectedVersion: number | null | undefined, query: object) {
  requireChildScopes(ctx);
  const targetId = target.toLowerCase();
  const named = await checkSources(ctx, targetId, sourceIds);
  if (!isUuid(targetId)) throw notFound('Customer');
  const sources = named.map((source) => source.id);
  const organizationId = ctx.auth.organizationId;
  return writing(ctx, async (tx: Tx) => {
    const locked = await tx.$queryRaw<Array<{ id: string; version: number; deleted: boolean }>>`
      SELECT id::text AS id, version, deleted_at IS NOT NULL AS deleted FROM customers
      WHERE organization_id = ${organizationId}::uuid AND id IN (${uuids([targetId, ...sources])})
      ORDER BY id FOR UPDATE`;
    const live = new Map(locked.filter((row) => !row.deleted).map((row) => [row.id, row]));
    const kept = live.get(targetId);
    if (!kept) throw notFound('Customer');
    if (expectedVersion != null && kept.version !== expectedVersion) {
      throw apiError('PRECONDITION_FAILED', `The customer is at version ${kept.version}, not ${expectedVersion}: read it again, merge, and retry.`, { details: { currentVersion: kept.version } });
    }
    // Deleted (or merged) by a write that committed since the check.
    const gone = named.filter((source) => !live.has(source.id)).map((source) => ({ param: source.param, message: NOT_LIVE }));
    if (gone.length > 0) throw invalidInput(gone);
    const children = childrenOfCustomer();
    for (const child of children) {
      await tx.$executeRaw`SELECT 1 FROM ${Prisma.raw(child.table)} WHERE organization_id = ${organizationId}::uuid AND customer_id IN (${uuids(sources)}) FOR UPDATE`;
    }
    // Deleted children move too: restored later, they come back beside the customer kept.
    const move = (child: (typeof children)[number]) =>
      (tx[child.delegate as keyof Tx] as unknown as Movable).updateMany({ where: { customerId: { in: sources }, deletedAt: undefined }, data: { customerId: targetId } });
    // Events written at commit (records with lines) must come from the last changes: their
    // numbers then follow those of the events written as each statement ended, and so do
    // their times and notifications.
    const atCommit = await tablesWithEventsAtCommit(tx);
    for (const child of children.filter((one) => !atCommit.has(one.table))) await move(child);
    await tx.customer.updateMany({ where: { id: { in: sources } }, data: { deletedAt: new Date() } });
    for (const child of children.filter((one) => atCommit.has(one.table))) await move(child);
    return tx.customer.findFirst({ ...query, where: { id: targetId } });
  });
}

const MergeCustomersInput = builder.inputType('MergeCustomersInput', {
  fields: (t) => ({
    sourceIds: t.idList({ required: true, description: `The duplicates to merge into the customer: 1 to ${MAX_SOURCES} live customers of this organization, each once, not the customer itself.` }),
  }),
});

builder.mutationField('mergeCustomers', (t) =>
  t.prismaField({
    type: 'Customer',
    nullable: true,
    description:
      'Merges duplicates into a customer, in one transaction: every record of each source (its jobs, invoices, ... of every resource that refers to a customer; deleted ones too) moves to the customer (each a `<child>.updated` event), then each source is deleted (each a `customer.deleted` event). Answers the customer, unchanged itself.',
    authScopes: { scope: 'customers:write' },
    extensions: restExtension({ path: 'customers', kind: 'move', verb: 'merge' }),
    args: {
      id: t.arg.id({ required: true, description: 'The customer kept (the target).' }),
      // Optional in the schema so that a REST call without a body is answered by the resolver's
      // own 400 naming source_ids, not by a failed variable.
      input: t.arg({ type: MergeCustomersInput, description: 'Required: its `sourceIds`.' }),
      expectedVersion: t.arg.int({ description: 'Merge only if the customer kept is still at this version (otherwise PRECONDITION_FAILED with `currentVersion`).' }),
    },
    resolve: (query, _root, { id, input, expectedVersion }, ctx) => mergeCustomers(ctx, String(id), input?.sourceIds.map(String), expectedVersion, query) as never,
  }),
);

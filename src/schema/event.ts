// The event log as the API reads it: `events` (newest first, or after a given event in commit
// order, to catch up) and `event(id)`. A key reads the events of the resources it may read
// (`customers:read` sees customer.* events), or all of them with `events:read`.
import { declareScopes, type Scope } from '../auth/scopes.js';
import type { Context } from '../context.js';
import { invalidInput } from '../errors.js';
import { formatEvent, type EventRow } from '../events/format.js';
import { EVENT_TYPES } from '../events/types.js';
import { builder } from './builder.js';
import { readCursor, writeCursor } from './cursor.js';
import { named, pageType, pageWindow } from './pagination.js';
import { registeredResources } from './registry.js';
import { restExtension } from './resource.js';
import { model } from './changes.js';
import { isUuid } from './validation.js';

declare module '../auth/scopes.js' {
  interface ScopeNames { 'events:read': true }
}
declareScopes('events:read');

// Read from the registry at call time: it is filled as the schema's modules load.

/** Event resources that are no record resource: an import's `import.completed` and `import.failed`. */
const OTHER_EVENT_RESOURCES = ['import'];

/**
 * The resources whose events a key may read: all with `events:read` (imports' too, so its
 * `seq` has no gaps), else the record resources it may read.
 */
export function readableResources(ctx: Pick<Context, 'auth'>): string[] {
  const all = registeredResources();
  if (ctx.auth.scopes.has('events:read')) return [...all.map((resource) => resource.item), ...OTHER_EVENT_RESOURCES];
  return all.filter((resource) => ctx.auth.scopes.has(resource.read)).map((resource) => resource.item);
}

/** Any one of these reads some events (a refusal names them all). */
export function eventReadScopes(): Scope[] {
  return [...new Set<Scope>(['events:read', ...registeredResources().map((resource) => resource.read)])];
}

/** The fields' scope check: any scope that reads some events. */
export const readsEvents = () => ({ anyScope: eventReadScopes() });

export const Event = builder.prismaObject('Event', {
  description: 'A change to a record, as it committed.',
  fields: (t) => ({
    id: t.exposeID('id'),
    // An Int (REST: a JSON integer): 32 bits hold two billion changes of one organization.
    seq: t.int({
      description: "The organization's change number: 1, 2, 3, ... in commit order, no gaps, none repeated (a change that failed took none). A receiver that sees a gap fetches it with `events(seq:)`.",
      resolve: (event) => Number(event.seq),
    }),
    type: t.exposeString('type', { description: '`<resource>.<created|updated|deleted|restored|transition>`, such as invoice.paid.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    data: t.field({
      type: 'JSON',
      description: '`{ object, previous_attributes? }`: the record as REST shows it after the change, and the fields the change altered, as they were.',
      resolve: (event, _args, _ctx, info) => formatEvent(info.schema, event as EventRow).data,
    }),
    requestId: t.exposeString('requestId', { nullable: true, description: 'The X-Request-Id of the request that made the change.' }),
  }),
});

export const EventPage = pageType('Event', Event);

export const eventPageArgs = builder.args((t) => ({
  page: t.int({ defaultValue: 1, description: 'Page number, from 1.' }),
  limit: t.int({ defaultValue: 20, description: 'Page size, 1 to 100.' }),
  cursor: t.string({ description: "Continues from a page's `nextCursor`." }),
}));

interface EventArgs {
  page?: number | null;
  limit?: number | null;
  cursor?: string | null;
  type?: string | null;
  after?: string | null;
  seq?: number | null;
  objectId?: string | number | null;
}

/**
 * A page of the events a key may read, newest first; after a given event, oldest first (to
 * catch up). `history` narrows it to one record's (its resource and id).
 */
export async function eventPage(ctx: Context, args: EventArgs, history?: { resource: string; recordId: string }) {
  const list = { organizationId: ctx.auth.organizationId, key: ctx.cursorKey, resource: history ? `${history.resource}/${history.recordId}/events` : 'events' };
  if (args.seq != null && args.seq < 1) throw invalidInput([{ param: 'seq', message: 'must be at least 1 (sequences start at 1)' }]);
  const objectId = args.objectId == null ? undefined : String(args.objectId).toLowerCase();
  if (objectId !== undefined && !isUuid(objectId)) throw invalidInput([{ param: 'objectId', message: 'must be a UUID' }]);
  const given = named({ type: args.type ?? undefined, after: args.after ?? undefined, seq: args.seq == null ? undefined : String(args.seq), objectId });
  const cursor = args.cursor == null ? undefined : readCursor(args.cursor, list, given);
  if (cursor && (args.page ?? 1) !== 1) throw invalidInput([{ param: 'page', message: 'cannot be combined with cursor' }]);
  const filters = cursor?.filters ?? given;
  const { page, limit, skip } = pageWindow({ page: cursor?.page ?? args.page, limit: args.limit });
  const oldestFirst = filters.after !== undefined;
  let from: bigint | undefined;
  if (filters.after !== undefined) {
    const after = await ctx.prisma.event.findFirst({ where: { id: String(filters.after) }, select: { seq: true } });
    if (!after) throw invalidInput([{ param: 'after', message: 'does not name an event of this organization (it may be older than the retention)' }]);
    from = after.seq;
  }
  if (filters.type !== undefined && !EVENT_TYPES.has(String(filters.type))) {
    throw invalidInput([{ param: 'type', message: `is not an event type (known: ${[...EVENT_TYPES].join(', ')})` }]);
  }
  const where = {
    resource: history ? history.resource : { in: readableResources(ctx) },
    ...(history ? { recordId: history.recordId } : filters.objectId ? { recordId: String(filters.objectId) } : {}),
    ...(filters.type ? { type: String(filters.type) } : {}),
    ...(filters.seq !== undefined ? { seq: BigInt(String(filters.seq)) } : {}),
  };
  const position = cursor ? BigInt(cursor.position) : from;
  const rows = await ctx.prisma.event.findMany({
    where: {
      ...where,
      ...(position !== undefined ? { seq: { ...(where.seq !== undefined ? { equals: where.seq } : {}), ...(oldestFirst ? { gt: position } : { lt: position }) } } : {}),
    },
    orderBy: { seq: oldestFirst ? 'asc' : 'desc' },
    skip: cursor ? 0 : skip,
    take: limit + 1,
  });
  const total = cursor?.total ?? (await ctx.prisma.event.count({ where }));
  const hasMore = rows.length > limit;
  const data = hasMore ? rows.slice(0, limit) : rows;
  const last = data.at(-1);
  // Catching up, the last cursor is where to continue later; newest first, it ends.
  const at = last ? String(last.seq) : cursor?.position ?? (from !== undefined ? String(from) : undefined);
  const more = oldestFirst ? at !== undefined : hasMore && last !== undefined;
  const nextCursor = more && at !== undefined ? writeCursor(list, { order: 'changes', page: hasMore ? page + 1 : page, position: at, filters, total }) : null;
  return { data, pagination: { page, limit, total, nextCursor, hasMore } };
}

builder.queryFields((t) => ({
  events: t.field({
    type: EventPage,
    nullable: true,
    description: 'Events, newest first; with `after`, the events committed after that one, oldest first (to catch up).',
    authScopes: readsEvents,
    extensions: restExtension({ path: 'events', kind: 'list', scope: 'events:read' }),
    args: {
      ...eventPageArgs,
      type: t.arg.string({ description: 'Only events of this type, such as invoice.paid.' }),
      after: t.arg.string({ description: 'An event id: the events committed after it, oldest first.' }),
      seq: t.arg.int({ description: 'Only the event of this change number (a list of it, or empty once it is older than the retention).' }),
      objectId: t.arg.id({ description: "Only the events of this record (its id): its history." }),
    },
    resolve: (_root, args, ctx) => eventPage(ctx, args),
  }),
  event: t.prismaField({
    type: 'Event',
    nullable: true,
    authScopes: readsEvents,
    extensions: restExtension({ path: 'events', kind: 'item', scope: 'events:read' }),
    args: { id: t.arg.id({ required: true }) },
    resolve: (query, _root, { id }, ctx) => ctx.prisma.event.findFirst({ ...query, where: { id: String(id), resource: { in: readableResources(ctx) } } }),
  }),
}));

// A record's history: `customerEvents(id)`, ..., and GET /v1/{resource}/{id}/events. Read from
// the registry when the schema is built (every resource has registered by then). The record's
// own read scope reads it; a deleted record keeps its history; another organization's is a 404.
builder.queryFields((t) =>
  Object.fromEntries(
    registeredResources().map((resource) => [
      `${resource.item}Events`,
      t.field({
        type: EventPage,
        nullable: true,
        description: `The events of one ${resource.item}, newest first: its history (deleted records included). Null when no ${resource.item} of this organization has the id.`,
        authScopes: { scope: resource.read },
        extensions: restExtension({ path: resource.path, kind: 'related', verb: 'events' }),
        args: { id: t.arg.id({ required: true }), ...eventPageArgs },
        resolve: async (_root, args, ctx) => {
          const id = String(args.id).toLowerCase();
          // `deletedAt` named: the tenant client then keeps deleted records in.
          if (!isUuid(id) || (await model(ctx.prisma, resource.type).count({ where: { id, deletedAt: undefined } })) === 0) return null;
          return eventPage(ctx, args, { resource: resource.item, recordId: id });
        },
      }),
    ]),
  ),
);

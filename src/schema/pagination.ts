// Paged lists, in one place: the `page`/`limit`/`cursor` arguments and their bounds, the
// two orders (newest first; change order for a sync), and the `{ data, pagination }` page
// type every list answers.
import type { ObjectRef } from '@pothos/core';
import { Kind, type GraphQLResolveInfo } from 'graphql';
import { invalidInput, type FieldError } from '../errors.js';
import type { Context } from '../context.js';
import type { Sum } from '../db/plain-reads.js';
import { findMany } from '../db/tenant.js';
import { builder, type Types } from './builder.js';
import { readCursor, writeCursor, type CursorScope, type Filters, type Order } from './cursor.js';
import { keysetSegments, positionOf, prismaOrderBy, readPosition, type SortKey } from './list-query.js';

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

/** Newest first; the id breaks ties between rows created in the same millisecond. */
export const NEWEST_FIRST = [{ createdAt: 'desc' as const }, { id: 'desc' as const }];

export interface Pagination {
  page: number;
  limit: number;
  total: number;
  nextCursor: string | null;
  hasMore: boolean;
}

export const PaginationRef = builder.objectRef<Pagination>('Pagination').implement({
  fields: (t) => ({
    page: t.exposeInt('page', { description: 'The page returned, from 1.' }),
    limit: t.exposeInt('limit', { description: 'The page size asked for.' }),
    total: t.exposeInt('total', { description: 'How many records match, on all pages.' }),
    nextCursor: t.exposeString('nextCursor', {
      nullable: true,
      description: 'Pass as `cursor` for the next page. In change order (a sync) it is never null: on the last page it is where to resume later.',
    }),
    hasMore: t.exposeBoolean('hasMore', { description: 'Whether more records follow this page now.' }),
  }),
});

export interface Page<T> {
  data: T[];
  /** Absent when the selection does not ask for it (see asksForPagination). */
  pagination?: Pagination;
}

/**
 * Whether a list field's selection asks for its `pagination`: a GraphQL client that only
 * wants records (a nested query, say) spares the count behind `total`. Fragments are
 * assumed to ask for it.
 */
export function asksForPagination(info: GraphQLResolveInfo): boolean {
  return info.fieldNodes.some((node) => node.selectionSet?.selections.some((s) => s.kind !== Kind.FIELD || s.name.value === 'pagination') ?? true);
}

type PageArgs = { page?: number | null; limit?: number | null; cursor?: string | null; updatedSince?: Date | null; includeDeleted?: boolean | null };

export const pageArgs = builder.args((t) => ({
  page: t.int({ defaultValue: 1, description: 'Page number, from 1.' }),
  limit: t.int({ defaultValue: DEFAULT_LIMIT, description: `Page size, 1 to ${MAX_LIMIT}.` }),
  cursor: t.string({ description: "Continues from a page's `nextCursor` (its list and filters come with it)." }),
  updatedSince: t.field({ type: 'DateTime', description: 'Only records changed at or after this time; the list is then in change order, oldest change first.' }),
  includeDeleted: t.boolean({ description: 'Include deleted records (as tombstones on REST); the list is then in change order, oldest change first.' }),
}));

export function limitErrors(limit: number | null | undefined, param = 'limit'): FieldError[] {
  const value = limit ?? DEFAULT_LIMIT;
  return Number.isInteger(value) && value >= 1 && value <= MAX_LIMIT
    ? []
    : [{ param, message: `must be an integer from 1 to ${MAX_LIMIT}` }];
}

/** Validates the paging arguments; throws a BAD_REQUEST naming each bad one. */
export function pageWindow(args: Pick<PageArgs, 'page' | 'limit'>) {
  const page = args.page ?? 1;
  const limit = args.limit ?? DEFAULT_LIMIT;
  const errors = [...(Number.isInteger(page) && page >= 1 ? [] : [{ param: 'page', message: 'must be an integer of at least 1' }]), ...limitErrors(limit)];
  if (errors.length > 0) throw invalidInput(errors);
  return { page, limit, skip: (page - 1) * limit, take: limit };
}

interface Listable<T> {
  findMany(args: object): Promise<T[]>;
  count(args: { where: object }): Promise<number>;
  /** The page and a maintained total in one statement, where it can be (db/tenant.ts findManyWithSum). */
  findManyWithSum?(args: object, sum: Sum): Promise<{ rows: T[]; total?: number } | undefined>;
}

/** A maintained total: how to read it, and the sum it is (to be read beside a page). */
export type Total = (() => Promise<number>) & { sum?: Sum };

/** What a list page is drawn from: the resource, its own filters and how they filter. */
export interface ListRequest extends CursorScope {
  /** The list's filters as given (search, status, customerId, ...; absent ones left out). */
  filters: Filters;
  /** The `where` of a set of filters (a cursor's, when the request continues one). */
  where: (filters: Filters) => object;
  /** The maintained count of a set of filters, when they have one. */
  counted?: (filters: Filters) => Total | undefined;
  /** The sort keys of an `orderBy` filter (its values, comma-joined). */
  sort?: (orderBy: string) => SortKey[];
}

interface Keyed {
  id: string;
  createdAt: Date;
  changeSeq: bigint;
}

/** Only the filters a request actually names. */
export function named(values: Record<string, unknown>): Filters {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== null && v !== undefined && v !== '')) as Filters;
}

/**
 * Runs one page and its total. `query` is plugin-prisma's selection for `data`. Two orders:
 * newest first (the default; `page`, or a cursor past the last record shown), and change
 * order, oldest change first, when the list asks for `updatedSince` or `includeDeleted` (a
 * sync: its cursor is the change sequence, see docs/API.md). When the filter is one the
 * maintained counts cover (`counted`), the total is read from them instead of counting rows,
 * which at 100,000 rows costs more than the page itself. Without `paged` (the selection
 * has no `pagination`) the page is its records alone, and nothing is counted.
 */
export async function paginate<T>(model: Listable<T>, list: ListRequest, args: PageArgs, query: object, paged = true): Promise<Page<T>> {
  const given = named({ ...list.filters, updatedSince: args.updatedSince?.toISOString(), includeDeleted: args.includeDeleted || undefined });
  const cursor = args.cursor == null ? undefined : readCursor(args.cursor, list, given);
  if (cursor && (args.page ?? 1) !== 1) throw invalidInput([{ param: 'page', message: 'cannot be combined with cursor' }]);
  const filters = cursor?.filters ?? given;
  const { updatedSince, includeDeleted, ...own } = filters;
  const keys = typeof own.orderBy === 'string' && list.sort ? list.sort(own.orderBy) : undefined;
  if (keys && (updatedSince || includeDeleted)) {
    throw invalidInput([{ param: 'orderBy', message: `cannot be combined with ${updatedSince ? 'updatedSince' : 'includeDeleted'} (a sync is in change order)` }]);
  }
  const order: Order = cursor?.order ?? (updatedSince || includeDeleted ? 'changes' : keys ? 'sorted' : 'newest');
  const { page, limit, skip } = pageWindow({ page: cursor?.page ?? args.page, limit: args.limit });

  const matching = {
    ...list.where(own),
    ...(includeDeleted ? { deletedAt: undefined } : {}),
    ...(updatedSince ? { updatedAt: { gte: new Date(String(updatedSince)) } } : {}),
  };
  const after = !cursor ? {} : order === 'changes' ? { changeSeq: { gt: BigInt(cursor.position) } } : order === 'sorted' ? undefined : olderThan(cursor.position);
  const counted = includeDeleted || updatedSince ? undefined : list.counted?.(own);
  // Rows counted one by one (a search, a sync) are counted once per walk, on its first page:
  // later pages carry that total in their cursor, so a deep page costs what the first did.
  const carried = counted ? undefined : cursor?.total;
  const pageOf = (condition: object, take: number) => ({
    ...withKeys(query, keys),
    // `matching` stays at the top: the tenant client reads `deletedAt` there.
    where: { ...matching, AND: [...((matching as { AND?: object[] }).AND ?? []), condition] },
    orderBy: order === 'changes' ? [{ changeSeq: 'asc' as const }] : order === 'sorted' ? prismaOrderBy(keys!) : NEWEST_FIRST,
    skip: cursor ? 0 : skip,
    take,
  });
  const rowsWhere = (condition: object, take: number) => model.findMany(pageOf(condition, take));
  // The page and its maintained total in one statement where they can be; the total alone
  // when no row came to carry it.
  const together = paged && !carried && counted?.sum && after !== undefined ? await model.findManyWithSum?.(pageOf(after, limit + 1), counted.sum) : undefined;
  const [rows, total] = together
    ? [together.rows, together.total ?? (await counted!())]
    : await Promise.all([
        after === undefined ? sortedPage(rowsWhere, sortedSegments(keys, cursor!.position), limit + 1) : rowsWhere(after, limit + 1),
        paged ? (carried ?? (counted ? counted() : model.count({ where: matching }))) : 0,
      ]);
  const hasMore = rows.length > limit;
  const data = hasMore ? rows.slice(0, limit) : rows;
  if (!paged) return { data };
  const last = data.at(-1) as Keyed | undefined;
  let nextCursor: string | null = null;
  if (order === 'changes') {
    // Where to resume: after the last record shown, or where this page began.
    const position = last ? String(last.changeSeq) : (cursor?.position ?? (skip === 0 ? '0' : undefined));
    if (position !== undefined) nextCursor = writeCursor(list, { order, page: hasMore ? page + 1 : page, position, filters, total: counted ? undefined : total });
  } else if (hasMore && last && order === 'sorted') {
    nextCursor = writeCursor(list, { order, page: page + 1, position: positionOf(keys!, last as unknown as Record<string, unknown>), filters, total: counted ? undefined : total });
  } else if (hasMore && last) {
    nextCursor = writeCursor(list, { order, page: page + 1, position: `${last.createdAt.toISOString()}|${last.id}`, filters, total: counted ? undefined : total });
  }
  return { data, pagination: { page, limit, total, nextCursor, hasMore } };
}

/** The ordering keys every page needs, whatever the client selected. */
function withKeys(query: object, keys: SortKey[] = []): object {
  const { select } = query as { select?: Record<string, unknown> };
  const sorted = Object.fromEntries(keys.map((k) => [k.column, true]));
  return select ? { ...query, select: { ...select, ...sorted, id: true, createdAt: true, changeSeq: true } } : query;
}

/** The segments after a sorted position (the cursor was made for these keys: its MAC says so). */
function sortedSegments(keys: SortKey[] | undefined, position: string): object[] {
  const values = keys && readPosition(keys, position);
  if (!values) throw invalidInput([{ param: 'cursor', message: 'is not a cursor of this list (use a nextCursor exactly as received)' }]);
  return keysetSegments(keys!, values);
}

/** Up to `take` records from the segments, read in order until enough. */
async function sortedPage<T>(rowsWhere: (condition: object, take: number) => Promise<T[]>, segments: object[], take: number): Promise<T[]> {
  const rows: T[] = [];
  for (const segment of segments) {
    if (rows.length >= take) break;
    rows.push(...(await rowsWhere(segment, take - rows.length)));
  }
  return rows;
}

/** Records after (older than) the newest-first position `createdAt|id`. */
function olderThan(position: string): object {
  const [at, id] = position.split('|') as [string, string];
  const createdAt = new Date(at);
  return { OR: [{ createdAt: { lt: createdAt } }, { createdAt, id: { lt: id } }] };
}

/** Resources counted as one number; the others are counted per status (or type). */
const UNSPLIT_COUNTS = new Set(['customers']);

/**
 * The organization's number of `resource` records (of one status or type, if given): its
 * row of the maintained counts, or the sum of the resource's rows (one per status).
 */
export function recordTotal(ctx: Pick<Context, 'prisma'>, resource: string, status?: string | null): Total {
  const where = status || UNSPLIT_COUNTS.has(resource) ? { resource, status: status ?? '' } : { resource };
  const args = { where, select: { count: true } };
  const read = async () => {
    const rows = (await findMany(ctx.prisma, 'RecordCount', args, () => ctx.prisma.recordCount.findMany(args))) as Array<{ count: bigint }>;
    return rows.reduce((sum, row) => sum + Number(row.count), 0);
  };
  return Object.assign(read, { sum: { model: 'RecordCount', where, field: 'count' } });
}

/** The `XPage` type of a resource: `{ data: [X!]!, pagination: Pagination! }`. */
export function pageType<Shape>(name: string, itemType: ObjectRef<PothosSchemaTypes.ExtendDefaultTypes<Types>, Shape>) {
  return builder.objectRef<Page<Shape>>(`${name}Page`).implement({
    description: `One page of ${name} records, newest first.`,
    fields: (t) => ({
      data: t.field({ type: [itemType], resolve: (page) => page.data }),
      // Only resolved when selected, and then paginate() was asked for it.
      pagination: t.field({ type: PaginationRef, resolve: (page) => page.pagination! }),
    }),
  });
}

// Paged lists, in one place: the `page`/`limit` arguments and their bounds, the newest-first
// order, and the `{ data, pagination }` page type every list answers.
import type { ObjectRef } from '@pothos/core';
import { invalidInput, type FieldError } from '../errors.js';
import type { Context } from '../context.js';
import { builder, type Types } from './builder.js';

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

/** Newest first; the id breaks ties between rows created in the same millisecond. */
export const NEWEST_FIRST = [{ createdAt: 'desc' as const }, { id: 'desc' as const }];

export interface Pagination {
  page: number;
  limit: number;
  total: number;
}

export const PaginationRef = builder.objectRef<Pagination>('Pagination').implement({
  fields: (t) => ({
    page: t.exposeInt('page', { description: 'The page returned, from 1.' }),
    limit: t.exposeInt('limit', { description: 'The page size asked for.' }),
    total: t.exposeInt('total', { description: 'How many records match, on all pages.' }),
  }),
});

export interface Page<T> {
  data: T[];
  pagination: Pagination;
}

type PageArgs = { page?: number | null; limit?: number | null };

export const pageArgs = builder.args((t) => ({
  page: t.int({ defaultValue: 1, description: 'Page number, from 1.' }),
  limit: t.int({ defaultValue: DEFAULT_LIMIT, description: `Page size, 1 to ${MAX_LIMIT}.` }),
}));

export function limitErrors(limit: number | null | undefined, param = 'limit'): FieldError[] {
  const value = limit ?? DEFAULT_LIMIT;
  return Number.isInteger(value) && value >= 1 && value <= MAX_LIMIT
    ? []
    : [{ param, message: `must be an integer from 1 to ${MAX_LIMIT}` }];
}

/** Validates the paging arguments; throws a BAD_REQUEST naming each bad one. */
export function pageWindow(args: PageArgs) {
  const page = args.page ?? 1;
  const limit = args.limit ?? DEFAULT_LIMIT;
  const errors = [...(Number.isInteger(page) && page >= 1 ? [] : [{ param: 'page', message: 'must be an integer of at least 1' }]), ...limitErrors(limit)];
  if (errors.length > 0) throw invalidInput(errors);
  return { page, limit, skip: (page - 1) * limit, take: limit };
}

interface Listable<T> {
  findMany(args: object): Promise<T[]>;
  count(args: { where: object }): Promise<number>;
}

/**
 * Runs one page and its total. `query` is plugin-prisma's selection for `data`. When the
 * filter is one the maintained counts cover (`counted`), the total is read from them
 * instead of counting rows, which at 100,000 rows costs more than the page itself.
 */
export async function paginate<T>(
  model: Listable<T>,
  where: object,
  args: PageArgs,
  query: object,
  counted?: () => Promise<number>,
): Promise<Page<T>> {
  const { page, limit, skip, take } = pageWindow(args);
  const [data, total] = await Promise.all([
    model.findMany({ ...query, where, orderBy: NEWEST_FIRST, skip, take }),
    counted ? counted() : model.count({ where }),
  ]);
  return { data, pagination: { page, limit, total } };
}

/** Resources counted as one number; the others are counted per status (or type). */
const UNSPLIT_COUNTS = new Set(['customers']);

/**
 * The organization's number of `resource` records (of one status or type, if given). A
 * single count row is read with findUnique, which Prisma batches: concurrent requests for
 * it share one statement. Totals over all statuses add the rows up.
 */
export function recordTotal(ctx: Pick<Context, 'prisma' | 'auth'>, resource: string, status?: string | null): () => Promise<number> {
  return async () => {
    if (status || UNSPLIT_COUNTS.has(resource)) {
      const key = { organizationId: ctx.auth.organizationId, resource, status: status ?? '' };
      const row = await ctx.prisma.recordCount.findUnique({ where: { organizationId_resource_status: key }, select: { count: true } });
      return Number(row?.count ?? 0);
    }
    const { _sum } = await ctx.prisma.recordCount.aggregate({ where: { resource }, _sum: { count: true } });
    return Number(_sum.count ?? 0);
  };
}

/** The `XPage` type of a resource: `{ data: [X!]!, pagination: Pagination! }`. */
export function pageType<Shape>(name: string, itemType: ObjectRef<PothosSchemaTypes.ExtendDefaultTypes<Types>, Shape>) {
  return builder.objectRef<Page<Shape>>(`${name}Page`).implement({
    description: `One page of ${name} records, newest first.`,
    fields: (t) => ({
      data: t.field({ type: [itemType], resolve: (page) => page.data }),
      pagination: t.field({ type: PaginationRef, resolve: (page) => page.pagination }),
    }),
  });
}

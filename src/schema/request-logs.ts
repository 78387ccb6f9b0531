// The organization's request log as the API reads it: `requestLogs` (GET /v1/request_logs),
// newest first, filtered by status (`400` or a class, `4xx`), method and request id. Rows are
// the writer's (request-logs/writer.ts); they are not business records, so they are read
// with the organization named in SQL rather than through the tenant client.
import { declareScopes } from '../auth/scopes.js';
import type { Context } from '../context.js';
import { invalidInput, type FieldError } from '../errors.js';
import { Prisma } from '../generated/prisma/client.js';
import { flushRequestLogs } from '../request-logs/writer.js';
import { builder } from './builder.js';
import { readCursor, writeCursor, type Filters } from './cursor.js';
import { named, pageType, pageWindow } from './pagination.js';
import { restExtension } from './resource.js';

declare module '../auth/scopes.js' {
  interface ScopeNames { 'logs:read': true }
}
declareScopes('logs:read');

interface RequestLogRow {
  id: string;
  request_id: string;
  method: string;
  path: string;
  status: number;
  duration_ms: number;
  error_code: string | null;
  key_prefix: string;
  created_at: Date;
}

export const RequestLog = builder.objectRef<RequestLogRow>('RequestLog').implement({
  description: 'One API request of the organization, as it was answered: never its body, query values or key.',
  fields: (t) => ({
    requestId: t.string({ description: 'Its X-Request-Id.', resolve: (row) => row.request_id }),
    method: t.exposeString('method'),
    path: t.exposeString('path', { description: 'The path alone, without the query string.' }),
    status: t.exposeInt('status', { description: 'The HTTP status it was answered with.' }),
    durationMs: t.int({ description: 'Milliseconds from its arrival to its response.', resolve: (row) => row.duration_ms }),
    errorCode: t.string({ nullable: true, description: "The error's `code` when it failed (status 400 or more), such as NOT_FOUND.", resolve: (row) => row.error_code }),
    keyPrefix: t.string({ description: "The display prefix of the API key it was made with.", resolve: (row) => row.key_prefix }),
    createdAt: t.field({ type: 'DateTime', resolve: (row) => row.created_at }),
  }),
});

export const RequestLogPage = pageType('RequestLog', RequestLog);

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

interface RequestLogArgs {
  page?: number | null;
  limit?: number | null;
  cursor?: string | null;
  status?: string | null;
  method?: string | null;
  requestId?: string | null;
}

/** The SQL conditions of a set of filters (already checked). */
function conditions(organizationId: string, filters: Filters): Prisma.Sql[] {
  const where = [Prisma.sql`organization_id = ${organizationId}::uuid`];
  const status = filters.status === undefined ? undefined : String(filters.status);
  if (status && /^\dxx$/.test(status)) {
    const low = Number(status[0]) * 100;
    where.push(Prisma.sql`status >= ${low} AND status < ${low + 100}`);
  } else if (status) {
    where.push(Prisma.sql`status = ${Number(status)}`);
  }
  if (filters.method !== undefined) where.push(Prisma.sql`method = ${String(filters.method)}`);
  if (filters.requestId !== undefined) where.push(Prisma.sql`request_id = ${String(filters.requestId)}`);
  return where;
}

/** The filters as given, checked (every fault named at once) and normalized. */
function givenFilters(args: RequestLogArgs): Filters {
  const errors: FieldError[] = [];
  const status = args.status?.trim().toLowerCase() || undefined;
  if (status !== undefined && !/^[1-5](\d\d|xx)$/.test(status)) errors.push({ param: 'status', message: 'must be a status such as 400, or a class such as 4xx' });
  const method = args.method?.trim().toUpperCase() || undefined;
  if (method !== undefined && !METHODS.has(method)) errors.push({ param: 'method', message: `must be one of ${[...METHODS].join(', ')}` });
  const requestId = args.requestId || undefined;
  if (requestId !== undefined && requestId.length > 200) errors.push({ param: 'requestId', message: 'must be at most 200 characters' });
  if (errors.length > 0) throw invalidInput(errors);
  return named({ status, method, requestId });
}

export async function requestLogPage(ctx: Context, args: RequestLogArgs) {
  const list = { organizationId: ctx.auth.organizationId, key: ctx.cursorKey, resource: 'request_logs' };
  const given = givenFilters(args);
  const cursor = args.cursor == null ? undefined : readCursor(args.cursor, list, given);
  if (cursor && cursor.order !== 'newest') throw invalidInput([{ param: 'cursor', message: 'is not a cursor of this list (use a nextCursor exactly as received)' }]);
  if (cursor && (args.page ?? 1) !== 1) throw invalidInput([{ param: 'page', message: 'cannot be combined with cursor' }]);
  const filters = cursor?.filters ?? given;
  const { page, limit, skip } = pageWindow({ page: cursor?.page ?? args.page, limit: args.limit });
  // What this process still holds is written first: a client sees its own earlier requests.
  await flushRequestLogs();
  const where = conditions(ctx.auth.organizationId, filters);
  const [at, id] = cursor ? (cursor.position.split('|') as [string, string]) : [];
  const after = at !== undefined ? [Prisma.sql`(created_at, id) < (${new Date(at)}, ${id}::uuid)`] : [];
  const rows = await ctx.prisma.$queryRaw<RequestLogRow[]>`
    SELECT id, request_id, method, path, status, duration_ms, error_code, key_prefix, created_at FROM request_logs
    WHERE ${Prisma.join([...where, ...after], ' AND ')}
    ORDER BY created_at DESC, id DESC OFFSET ${cursor ? 0 : skip} LIMIT ${limit + 1}`;
  // Counted once per walk, on its first page; later pages carry it in their cursor.
  const total = cursor?.total ?? Number((await ctx.prisma.$queryRaw<{ count: bigint | number }[]>`SELECT count(*) AS count FROM request_logs WHERE ${Prisma.join(where, ' AND ')}`)[0]!.count);
  const hasMore = rows.length > limit;
  const data = hasMore ? rows.slice(0, limit) : rows;
  const last = data.at(-1);
  const nextCursor = hasMore && last ? writeCursor(list, { order: 'newest', page: page + 1, position: `${last.created_at.toISOString()}|${last.id}`, filters, total }) : null;
  return { data, pagination: { page, limit, total, nextCursor, hasMore } };
}

builder.queryFields((t) => ({
  requestLogs: t.field({
    type: RequestLogPage,
    nullable: true,
    description: "The organization's API requests of the last 7 days, newest first.",
    authScopes: { scope: 'logs:read' },
    extensions: restExtension({ path: 'request_logs', kind: 'list' }),
    args: {
      page: t.arg.int({ defaultValue: 1, description: 'Page number, from 1.' }),
      limit: t.arg.int({ defaultValue: 20, description: 'Page size, 1 to 100.' }),
      cursor: t.arg.string({ description: "Continues from a page's `nextCursor`." }),
      status: t.arg.string({ description: 'Only requests answered with this status (`400`) or class (`4xx`).' }),
      method: t.arg.string({ description: 'Only requests of this method, such as POST.' }),
      requestId: t.arg.string({ description: 'Only the request of this X-Request-Id.' }),
    },
    resolve: (_root, args, ctx) => requestLogPage(ctx, args),
  }),
}));

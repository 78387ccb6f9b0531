// List cursors: opaque to clients, they carry where a page ended, its order and the filters
// of the list they belong to, with a check value bound to the organization, the resource and
// those filters. A cursor is refused (400 naming `cursor`) when it was made for another
// organization, list or filter, or is not one of ours at all; tampering can only move it
// within the caller's own list, which reveals nothing.
import { createHash } from 'node:crypto';
import { invalidInput } from '../errors.js';

export type Order = 'newest' | 'changes';
export type Filters = Record<string, string | boolean>;

export interface CursorState {
  order: Order;
  /** The page number the cursor leads to (reported in `pagination.page`). */
  page: number;
  /** Newest first: `createdAt|id` of the last record shown; change order: its change sequence. */
  position: string;
  filters: Filters;
  /** The total counted when the walk began, where counting is not free (see paginate). */
  total?: number;
}

export interface CursorScope {
  organizationId: string;
  resource: string;
}

const POSITION: Record<Order, RegExp> = {
  changes: /^\d{1,19}$/,
  newest: /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z\|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
};

function check(scope: CursorScope, order: Order, filters: Filters): string {
  const text = JSON.stringify([scope.organizationId, scope.resource, order, Object.entries(filters).sort(([a], [b]) => a.localeCompare(b))]);
  return createHash('sha256').update(text).digest('base64url').slice(0, 16);
}

export function writeCursor(scope: CursorScope, state: CursorState): string {
  const body = { o: state.order, p: state.page, k: state.position, f: state.filters, t: state.total, h: check(scope, state.order, state.filters) };
  return Buffer.from(JSON.stringify(body)).toString('base64url');
}

const refused = (message: string) => invalidInput([{ param: 'cursor', message }]);

function isFilters(value: unknown): value is Filters {
  return (
    typeof value === 'object' && value !== null && !Array.isArray(value) &&
    Object.values(value).every((v) => (typeof v === 'string' && v.length <= 300) || typeof v === 'boolean')
  );
}

/**
 * The state a cursor carries. `given`: the filters the request names besides the cursor;
 * each must be the cursor's own (a cursor alone continues its list with its filters).
 */
export function readCursor(raw: string, scope: CursorScope, given: Filters): CursorState {
  let body: { o?: unknown; p?: unknown; k?: unknown; f?: unknown; t?: unknown; h?: unknown };
  try {
    if (raw.length > 2000 || !/^[A-Za-z0-9_-]+$/.test(raw)) throw new Error('not base64url');
    body = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    if (typeof body !== 'object' || body === null) throw new Error('not an object');
  } catch {
    throw refused('is not a cursor of this API (use a nextCursor exactly as received)');
  }
  const { o: order, p: page, k: position, f: filters, t: total, h } = body;
  if (
    (order !== 'newest' && order !== 'changes') ||
    typeof page !== 'number' || !Number.isInteger(page) || page < 1 || page > 1e9 ||
    typeof position !== 'string' || !POSITION[order].test(position) ||
    !isFilters(filters) ||
    (total !== undefined && (typeof total !== 'number' || !Number.isSafeInteger(total) || total < 0))
  ) {
    throw refused('is not a cursor of this API (use a nextCursor exactly as received)');
  }
  if (h !== check(scope, order, filters)) throw refused('belongs to another list, filter or organization');
  for (const [name, value] of Object.entries(given)) {
    if (filters[name] !== value) throw refused(`was made for another filter (${name}); send the cursor alone, or with its own filters`);
  }
  return { order, page, position, filters, total };
}

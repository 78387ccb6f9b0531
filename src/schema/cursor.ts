// List cursors: opaque to clients, they carry where a page ended, its order and the filters
// of the list they belong to, signed with a keyed MAC (HMAC-SHA-256 under a key the
// deployment keeps in its database, the same on every instance) over all of that and the
// organization and list they were made for. A cursor is refused (400 naming `cursor`) when
// any part of it was altered, or it was made for another organization, list or filter.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { invalidInput } from '../errors.js';

export type Order = 'newest' | 'changes' | 'sorted';
export type Filters = Record<string, string | boolean>;

export interface CursorState {
  order: Order;
  /** The page number the cursor leads to (reported in `pagination.page`). */
  page: number;
  /** Newest first: `createdAt|id` of the last record shown; change order: its change sequence; sorted: its sort values and id, as JSON. */
  position: string;
  filters: Filters;
  /** The total counted when the walk began, where counting is not free (see paginate). */
  total?: number;
}

export interface CursorScope {
  organizationId: string;
  resource: string;
  /** The deployment's cursor key (Context.cursorKey). */
  key: Buffer;
}

const POSITION: Record<Order, RegExp> = {
  changes: /^\d{1,19}$/,
  sorted: /^\[.{1,1500}\]$/s,
  newest: /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z\|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
};

/** The largest change sequence PostgreSQL's bigint holds. */
const MAX_SEQUENCE = 9223372036854775807n;

type Body = { o: Order; p: number; k: string; f: Filters; t?: number };

function mac(scope: CursorScope, body: Body): Buffer {
  const text = JSON.stringify([scope.organizationId, scope.resource, body.o, body.p, body.k, Object.entries(body.f).sort(([a], [b]) => a.localeCompare(b)), body.t ?? null]);
  return createHmac('sha256', scope.key).update(text).digest().subarray(0, 16);
}

export function writeCursor(scope: CursorScope, state: CursorState): string {
  const body: Body = { o: state.order, p: state.page, k: state.position, f: state.filters, t: state.total };
  return Buffer.from(JSON.stringify({ ...body, h: mac(scope, body).toString('base64url') })).toString('base64url');
}

type Sent = { o?: unknown; p?: unknown; k?: unknown; f?: unknown; t?: unknown; h?: unknown };

/** A cursor's fields as sent, unchecked; undefined for what is not one. */
function decoded(raw: string): Sent | undefined {
  try {
    if (raw.length > 40000 || !/^[A-Za-z0-9_-]+$/.test(raw)) return undefined;
    const body: unknown = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    return typeof body === 'object' && body !== null ? (body as Sent) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The order a cursor says it walks in, unchecked (undefined for what is not a cursor): enough
 * to decide how to treat a request before it runs, never to answer it (readCursor checks).
 */
export function cursorOrder(raw: string): Order | undefined {
  const order = decoded(raw)?.o;
  return order === 'newest' || order === 'changes' || order === 'sorted' ? order : undefined;
}

const refused = (message: string) => invalidInput([{ param: 'cursor', message }]);

function isFilters(value: unknown): value is Filters {
  return (
    typeof value === 'object' && value !== null && !Array.isArray(value) &&
    Object.values(value).every((v) => (typeof v === 'string' && v.length <= 16000) || typeof v === 'boolean')
  );
}

/**
 * The state a cursor carries. `requested`: the filters the request names besides the cursor;
 * each must be the cursor's own (a cursor alone continues its list with its filters).
 */
export function readCursor(raw: string, scope: CursorScope, requested: Filters): CursorState {
  const body = decoded(raw);
  if (!body) throw refused('is not a cursor of this API (use a nextCursor exactly as received)');
  const { o: order, p: page, k: position, f: filters, t: total, h } = body;
  if (
    (order !== 'newest' && order !== 'changes' && order !== 'sorted') ||
    typeof page !== 'number' || !Number.isInteger(page) || page < 1 || page > 1e9 ||
    typeof position !== 'string' || !POSITION[order].test(position) ||
    !isFilters(filters) ||
    (total !== undefined && (typeof total !== 'number' || !Number.isSafeInteger(total) || total < 0)) ||
    (order === 'changes' && BigInt(position) > MAX_SEQUENCE)
  ) {
    throw refused('is not a cursor of this API (use a nextCursor exactly as received)');
  }
  const expected = mac(scope, { o: order, p: page, k: position, f: filters, t: total });
  const given = typeof h === 'string' ? Buffer.from(h, 'base64url') : Buffer.alloc(0);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw refused('was altered, or belongs to another list, filter or organization (use a nextCursor exactly as received)');
  }
  for (const [name, value] of Object.entries(requested)) {
    if (filters[name] !== value) throw refused(`was made for another filter (${name}); send the cursor alone, or with its own filters`);
  }
  return { order, page, position, filters, total };
}

// Exact REST reads from memory. A list page or a record is answered from memory only while
// nothing in its organization has changed since the answer was computed. Every such request
// first reads the organization's change number (organization_counters.change_seq), which the
// stamp trigger raises in the same transaction as every insert and update of a business
// record (soft deletes and restores are updates; lines change with their invoice). An answer
// kept under the number read now is the one the database would give now. So each instance
// is exact on its own: there is no invalidation message to miss, and a client reads its own
// write, on any instance, as soon as it has committed. A hit costs one primary-key read
// instead of the page and its total.
//
// A walk in change order (a sync: include_deleted, updated_since, or a cursor of one) is not
// kept: the hourly tombstone purge removes deleted records for good without a change number,
// and such a walk shows them (and counts them).
//
// The number is read before the answer is computed. A write that commits in between makes
// the kept answer newer than its number says, never older, and the next request reads a
// higher number and computes again.
import { getDatamodel } from '../generated/pothos-prisma-types.js';
import type { Auth } from '../auth/authenticate.js';
import type { Sql } from '../db/sql.js';
import { Response } from '../http/fetch.js';
import { cursorOrder } from '../schema/cursor.js';
import type { Route } from './routes.js';

/** Models whose every insert and update raises the organization's change number (they have the stamp trigger's column). */
const STAMPED = new Set(
  Object.entries(getDatamodel().datamodel.models)
    .filter(([, model]) => model.fields.some((field) => field.name === 'changeSeq'))
    .map(([name]) => name),
);

/** An answer larger than this is computed each time: kept, it would push out many smaller ones. */
const MAX_ENTRY_BYTES = 1 << 20;

interface Entry {
  changeSeq: string;
  body: string;
  headers: Array<[string, string]>;
  bytes: number;
}

export interface ResponseCache {
  /**
   * The answer to `request` on `route`: from memory when it may be, otherwise `compute`'s
   * (kept for the next request when it is a 200).
   */
  answer(route: Route, request: Request, url: URL, auth: Auth, compute: () => Promise<Response>): Promise<Response>;
  /** Entries and bytes kept (tests). */
  size(): { entries: number; bytes: number };
}

/** Whether a request's answer depends only on the organization's live records, the key and the address. */
function cacheable(route: Route, request: Request, url: URL): boolean {
  // A conditional GET (If-None-Match) is answered by the record's version: computed each time.
  if (request.method !== 'GET' || !(route.kind === 'list' || route.kind === 'item') || !STAMPED.has(route.resource.type) || request.headers.has('if-none-match')) return false;
  const { searchParams } = url;
  if (searchParams.has('include_deleted') || searchParams.has('updated_since')) return false;
  const cursor = searchParams.get('cursor');
  return cursor === null || (cursorOrder(cursor) ?? 'changes') !== 'changes';
}

/** `maxBytes`: the answers' total size kept, the least recently used dropped first. */
export function createResponseCache(sql: Sql, maxBytes: number): ResponseCache {
  // In order of last use, so the least recently used is first.
  const entries = new Map<string, Entry>();
  let bytes = 0;

  function drop(key: string): void {
    const entry = entries.get(key);
    if (!entry) return;
    entries.delete(key);
    bytes -= entry.bytes;
  }

  function keep(key: string, entry: Entry): void {
    // A request that read an older number finishing after one that read a newer one.
    const kept = entries.get(key);
    if (kept && BigInt(kept.changeSeq) > BigInt(entry.changeSeq)) return;
    drop(key);
    if (entry.bytes > MAX_ENTRY_BYTES || entry.bytes > maxBytes) return;
    entries.set(key, entry);
    bytes += entry.bytes;
    for (const oldest of entries.keys()) {
      if (bytes <= maxBytes) break;
      drop(oldest);
    }
  }

  async function changeSeqOf(organizationId: string): Promise<string | undefined> {
    try {
      // Not through Prisma: its query compiler plans a raw statement again on every call.
      const rows = await sql.query<{ change_seq: string }>('SELECT change_seq::text FROM organization_counters WHERE organization_id = $1', [organizationId]);
      // No row yet: nothing of the organization was ever written.
      return rows[0]?.change_seq ?? '0';
    } catch {
      // The database did not answer: the request computes its answer, and meets the fault there.
      return undefined;
    }
  }

  return {
    async answer(route, request, url, auth, compute) {
      if (!cacheable(route, request, url)) return compute();
      const changeSeq = await changeSeqOf(auth.organizationId);
      if (changeSeq === undefined) return compute();
      // The key decides the scopes (and so what an expand may show) and the organization;
      // the address, every parameter.
      const key = `${auth.keyId} ${[...auth.scopes].sort().join(',')} ${url.pathname}${url.search}`;
      const hit = entries.get(key);
      if (hit?.changeSeq === changeSeq) {
        entries.delete(key);
        entries.set(key, hit);
        return new Response(hit.body, { status: 200, headers: hit.headers });
      }
      const response = await compute();
      if (response.status !== 200) return response;
      const body = await response.text();
      const headers = [...response.headers.entries()];
      keep(key, { changeSeq, body, headers, bytes: body.length * 2 + key.length * 2 });
      return new Response(body, { status: 200, headers });
    },
    size: () => ({ entries: entries.size, bytes }),
  };
}

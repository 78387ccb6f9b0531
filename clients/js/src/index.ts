// Official client of the CRM REST API v1. Uses only the fetch API: runs on Node 18+,
// Deno, Bun and browsers.

import { RESOURCES, type Customer, type CustomerInput, type CustomerList, type Estimate, type Invoice, type InvoiceInput, type Job, type Proposal, type ResourceTypes } from './resources.js';

// Each resource's record, input, filters and list spec (Customer, CustomerInput, CustomerFilters,
// CustomerList, ...), generated from the OpenAPI document (npm run clients:generate).
export type * from './resources.js';

export const VERSION = '0.1.0';

export interface FieldError {
  param: string;
  message: string;
}

export interface Pagination {
  page: number;
  limit: number;
  total: number;
  /** Where the next page starts; in change order (a sync), never null: on the last page it is where to resume later. */
  next_cursor?: string | null;
  has_more?: boolean;
}

export interface Page<T> {
  data: T[];
  pagination: Pagination;
}

/** What a sync yields for a record deleted since the cursor. */
export interface Tombstone {
  id: string;
  deleted: true;
  deleted_at: string;
  version: number;
}

/** Any error answer of the API, as RFC 9457 problem details. */
export class CrmError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly errors: FieldError[],
    readonly requestId: string | null,
  ) {
    super(`${status} ${code}: ${detail}`);
    this.name = new.target.name;
  }
}
export class BadRequest extends CrmError {}
export class Unauthorized extends CrmError {}
export class Forbidden extends CrmError {}
export class NotFound extends CrmError {}
export class RateLimited extends CrmError {}
/** 409: refused because of a record's current state (or an Idempotency-Key whose first request never finished). */
export class Conflict extends CrmError {}
/** 412: the record's version is not the one given in If-Match. `current` is the record as it is now (null when the key may not read it). */
export class PreconditionFailed extends CrmError {
  constructor(status: number, code: string, detail: string, errors: FieldError[], requestId: string | null, readonly current: Record<string, unknown> | null = null) {
    super(status, code, detail, errors, requestId);
  }
}
export class ServerError extends CrmError {}

function errorClass(status: number): typeof CrmError {
  if (status === 401) return Unauthorized;
  if (status === 403) return Forbidden;
  if (status === 404) return NotFound;
  if (status === 409) return Conflict;
  if (status === 412) return PreconditionFailed;
  if (status === 429) return RateLimited;
  if (status >= 500) return ServerError;
  return BadRequest;
}

export interface ClientOptions {
  /** Defaults to the CRM_API_KEY environment variable. */
  apiKey?: string | undefined;
  baseUrl?: string | undefined;
  timeoutMs?: number | undefined;
  /** Retries of 429, 503 and network errors. */
  maxRetries?: number | undefined;
  fetch?: typeof fetch | undefined;
}

type Query = Record<string, string | number | undefined>;

/** What `request` sends besides the method and path (absent and undefined alike: not sent). */
type RequestOptions = { query?: Query | undefined; body?: unknown; idempotencyKey?: string | undefined; ifMatch?: string | undefined; contentType?: string | undefined; dryRun?: boolean | undefined };

/** Options of every write. */
export interface CallOptions {
  /** Defaults to a generated one, reused by the client's own retries of the call. */
  idempotencyKey?: string | undefined;
  /**
   * Sent as `Prefer: dry-run`: the server runs the write and answers what it would (the same
   * record, or the same error), and keeps nothing.
   */
  dryRun?: boolean | undefined;
}

/** Options of a write to an existing record. */
export interface WriteOptions extends CallOptions {
  /** The version the record must still have (sent as `If-Match: "<version>"`); otherwise PreconditionFailed. */
  ifMatch?: number | string | undefined;
}

export interface SyncOptions {
  /** Where to resume: the `cursor` of an earlier sync. Absent: from the first change. */
  cursor?: string | null | undefined;
  /** Only changes at or after this time (ignored when resuming from a cursor, which embeds it). */
  updatedSince?: string | Date | undefined;
  /** Page size, 1 to 100. */
  limit?: number | undefined;
}

/** Null clears an optional field; absent fields are left as they are (JSON merge patch). */
export type Patch<T> = { [K in keyof T]?: T[K] | null | undefined };

/** An integration's string values under keys of its choosing (at most 50 keys of 1 to 40 characters `[A-Za-z0-9_-]`). */
export type Metadata = Record<string, string>;
/** On every record: an integration's own id for it (unique among the resource's live records) and its metadata. */
export type IntegrationKeys = { external_id: string | null; metadata: Metadata };
/** What every create and upsert may also set. */
export type IntegrationInput = { external_id?: string | undefined; metadata?: Metadata | undefined };
/** An update: a merge patch whose `metadata` merges key by key (a key with null is removed). */
export type Update<Input> = Patch<Omit<Input, 'metadata'>> & { metadata?: Record<string, string | null> | undefined };

/** A range filter, each bound given narrowing it (`{ gte: 10000, lt: 50000 }`), or one exact value. */
export type Range<T> = T | { gt?: T | undefined; gte?: T | undefined; lt?: T | undefined; lte?: T | undefined };
/** A set filter: one value, or any of several (`['sent', 'paid']`). */
export type AnyOf<T extends string> = T | readonly T[];
/** A point in time: ISO 8601 text or a Date. */
export type Timestamp = string | Date;
/** A calendar date, `YYYY-MM-DD`. */
export type CalendarDate = string;
/** A sort key: a field, ascending, or `-field`, descending. */
export type SortKey<F extends string> = F | `-${F}`;

export type JobStatus = Job['status'];
export type InvoiceStatus = Invoice['status'];
/** An estimate's or a proposal's status. */
export type QuoteStatus = Estimate['status'] | Proposal['status'];

/**
 * What a resource's list answers to: its filters (with those of related lists, one level
 * deep: a customer's `invoices`, an invoice's `customer`), its sortable fields, and the
 * references `expand` answers as records. A list's own filters (`CustomerFilters`): `search`
 * reads each list's own fields (a customer's name and e-mail, an invoice's number, ...);
 * `metadata` (`{ tier: 'gold' }`) matches records with exactly these values under these keys.
 */
export interface ListSpec<W = object, S extends string = string, R = object> {
  where: W;
  sort: S;
  references: R;
}

type FieldOf<T> = Extract<keyof T, string>;

/** The shape of the record answered: only `fields` (and `id`) when given; each expanded reference beside its id. */
export interface ShapeOptions<T, L extends ListSpec, F extends FieldOf<T>, E extends FieldOf<L['references']>> {
  /** Only these fields of each record (and `id`, always). */
  fields?: readonly F[] | undefined;
  /** References to answer as whole records beside their ids (`customer` beside `customer_id`); each needs its resource's read scope. */
  expand?: readonly E[] | undefined;
}

/** The record as `fields` and `expand` shape it. */
export type Shaped<T, L extends ListSpec, F extends FieldOf<T>, E extends FieldOf<L['references']>> = Pick<T, F | Extract<'id', keyof T>> & {
  [K in E]: K extends keyof L['references'] ? L['references'][K] | null : never;
};

/**
 * A list call: paging, `orderBy` (`['due_date', '-total_amount']`), filters in `where`
 * (ranges `{ lt: '2026-12-01' }`, sets `['sent', 'paid']`, a related list's filters
 * `{ customer: { search: 'acme' } }`), and the records' shape. Filters may also sit beside the
 * paging options (`{ status: 'paid', limit: 10 }`).
 */
export type ListOptions<T, L extends ListSpec, F extends FieldOf<T>, E extends FieldOf<L['references']>> = ShapeOptions<T, L, F, E> &
  L['where'] & {
    where?: L['where'] | undefined;
    orderBy?: SortKey<L['sort']> | readonly SortKey<L['sort']>[] | undefined;
    page?: number | undefined;
    /** Page size, 1 to 100. */
    limit?: number | undefined;
    /** A page's `next_cursor`: it carries the list's sort and filters. */
    cursor?: string | undefined;
  };

/** A batch's items, each one write (`update` on resources that have updates). */
export type CreateItem<Input> = { op: 'create'; external_id?: string | undefined; data: Input };
export type UpsertItem<Input> = { op: 'upsert'; external_id: string; data: Input };
/** An update or a delete names its record by `id` or by `external_id`. */
type Target = { id: string; external_id?: never } | { external_id: string; id?: never };
export type UpdateItem<Input> = { op: 'update'; data?: Update<Input> | undefined; if_match?: number | undefined } & Target;
export type DeleteItem = { op: 'delete'; if_match?: number | undefined } & Target;
/** `atomic`: every item or none (the call throws on the first refusal, naming `items[i].field`); `partial`: each item on its own. */
export type BatchMode = 'atomic' | 'partial';
/** One item's outcome, in the order of the items: the record written, or why the item was refused (partial). */
export interface BatchResult<T> {
  index: number;
  /** What its single call would answer: 201 created, 200 updated, 204 deleted, or its error's status. */
  status: number;
  record?: T;
  error?: { code: string; detail: string; errors: FieldError[] };
}

/** Live customers sharing an e-mail or a phone. */
export interface DuplicateGroup {
  key: 'email' | 'phone';
  value: string;
  /** How many live customers share it (the group lists at most 100, oldest first). */
  count: number;
  customers: Customer[];
}

interface Resource<T, Input, L extends ListSpec = ListSpec> {
  list<F extends FieldOf<T> = FieldOf<T>, E extends FieldOf<L['references']> = never>(params?: ListOptions<T, L, F, E>): Promise<Page<Shaped<T, L, F, E>>>;
  get<F extends FieldOf<T> = FieldOf<T>, E extends FieldOf<L['references']> = never>(id: string, options?: ShapeOptions<T, L, F, E>): Promise<Shaped<T, L, F, E>>;
  /** Every record over all pages, fetched page by page. */
  iterate<F extends FieldOf<T> = FieldOf<T>, E extends FieldOf<L['references']> = never>(params?: ListOptions<T, L, F, E>): AsyncGenerator<Shaped<T, L, F, E>>;
  create(input: Input, options?: CallOptions): Promise<T>;
  /**
   * PUT /{resource}/by_external_id/{externalId}: creates the record holding `externalId`, or
   * updates the live one that holds it (a created record is at version 1). Concurrent upserts
   * of one external id make one record.
   */
  upsert(externalId: string, input: Input, options?: CallOptions): Promise<T>;
  /** Up to 100 creates, upserts and deletes in one transaction (see BatchMode). */
  batch(items: ReadonlyArray<CreateItem<Input> | UpsertItem<Input> | DeleteItem>, mode?: BatchMode, options?: CallOptions): Promise<{ results: BatchResult<T>[] }>;
  /** Soft delete: the record reads as 404 until restored. */
  delete(id: string, options?: WriteOptions): Promise<void>;
  restore(id: string, options?: WriteOptions): Promise<T>;
  /** Every change (records and tombstones), oldest first, from `cursor`; see Sync. */
  sync(options?: SyncOptions): Sync<T>;
  /** One record's history: its events, newest first (`limit`, `page`, `cursor`). */
  events(id: string, params?: { limit?: number | undefined; page?: number | undefined; cursor?: string | undefined }): Promise<Page<CrmEvent<T>>>;
}

interface EditableResource<T extends { version: number }, Input, L extends ListSpec = ListSpec> extends Resource<T, Input, L> {
  update(id: string, patch: Update<Input>, options?: WriteOptions): Promise<T>;
  /** Updates `record` only if it is still at `record.version`; otherwise throws PreconditionFailed carrying the current record. */
  updateIfUnchanged(record: { id: string; version: number }, patch: Update<Input>, options?: Omit<WriteOptions, 'ifMatch'>): Promise<T>;
  /** Up to 100 creates, updates, upserts and deletes in one transaction (see BatchMode). */
  batch(items: ReadonlyArray<CreateItem<Input> | UpsertItem<Input> | UpdateItem<Input> | DeleteItem>, mode?: BatchMode, options?: CallOptions): Promise<{ results: BatchResult<T>[] }>;
}

interface Transitions<T, Move extends string> {
  /** POST /{resource}/{id}/{move}: a change of status, such as an invoice's `send`. */
  transition(id: string, move: Move, options?: WriteOptions): Promise<T>;
}

interface MovableResource<T extends { version: number }, Input, Move extends string, L extends ListSpec = ListSpec> extends EditableResource<T, Input, L>, Transitions<T, Move> {}

/** What a generated resource's client offers (RESOURCES): `update` with an update, `transition` with moves, `sync`. */
type ResourceSpec = { path: string; update: boolean; sync: boolean; moves: readonly string[] };

/** The client of a generated resource: its types (ResourceTypes) with what RESOURCES says it offers. */
type ResourceClient<K extends keyof ResourceTypes, S extends ResourceSpec = (typeof RESOURCES)[K]> =
  ResourceTypes[K] extends { record: infer T extends { version: number }; input: infer Input; list: infer L extends ListSpec }
    ? WithSync<
        S['update'] extends true
          ? MovableResource<T, Input, S['moves'][number], L>
          : [S['moves'][number]] extends [never]
            ? Resource<T, Input, L>
            : Resource<T, Input, L> & Transitions<T, S['moves'][number]>,
        S['sync']
      >
    : never;
type WithSync<R, Sync extends boolean> = Sync extends true ? R : Omit<R, 'sync'>;

/** Resources whose client has methods of its own besides the generated ones (customerResource). */
interface Extended {
  customers: Customers;
}

/** A property of CrmClient for each generated resource: `crm.invoices`, `crm.proposals`, ... */
type ResourceClients = { readonly [K in keyof ResourceTypes]: K extends keyof Extended ? Extended[K] : ResourceClient<K> };

interface Customers extends EditableResource<Customer, CustomerInput, CustomerList> {
  /** GET /customers/duplicates: live customers sharing an e-mail or a phone, grouped (e-mail groups first), a page of groups. */
  duplicates(params?: { page?: number | undefined; limit?: number | undefined; cursor?: string | undefined }): Promise<Page<DuplicateGroup>>;
  /**
   * POST /customers/{id}/merge: moves every job, e-mail, invoice, estimate and proposal of the
   * `sourceIds` customers to this one and deletes them, in one transaction; answers this customer.
   */
  merge(id: string, sourceIds: readonly string[], options?: WriteOptions): Promise<Customer>;
}

/**
 * The changes of a resource, in change order: records as they are now, and a Tombstone for
 * each record deleted. Iterating follows `next_cursor` until the last page; `cursor` is where
 * to resume later. It moves only once every item of a page has been consumed, so breaking out
 * of the loop early resumes at the unfinished page (items may be seen twice, never missed).
 * Iterating the same Sync again fetches the changes made since.
 */
export class Sync<T, Item = T | Tombstone> implements AsyncIterable<Item> {
  constructor(
    private readonly fetchPage: (cursor: string | null) => Promise<Page<Item>>,
    public cursor: string | null = null,
  ) {}

  async *[Symbol.asyncIterator](): AsyncGenerator<Item> {
    for (;;) {
      const { data, pagination } = await this.fetchPage(this.cursor);
      yield* data;
      if (pagination.next_cursor) this.cursor = pagination.next_cursor;
      if (!pagination.has_more || !pagination.next_cursor) return;
    }
  }
}

/** Every record: `version` grows by one on each change; `deleted_at` is null while it is live; its integration keys. */
export type Versioned = { version: number; deleted_at: string | null } & IntegrationKeys;
export type LineItem = Invoice['line_items'][number];

/** A change to a record, as it committed: what `events` lists and what a webhook delivers. */
export interface CrmEvent<T = Record<string, unknown>> {
  /** `evt_` and 32 hex digits; a delivery's `webhook-id`. */
  id: string;
  /** `<resource>.<created|updated|deleted|restored|transition>`, such as `invoice.paid`. */
  type: string;
  created_at: string;
  /** The record as REST shows it after the change, and the fields the change altered, as they were. */
  data: { object: T; previous_attributes?: Record<string, unknown> };
  /** The X-Request-Id of the request that made the change. */
  request_id: string | null;
}
/** Catching up: the events after a given one, oldest first; `cursor` is where to resume. */
export type EventSync = Sync<CrmEvent, CrmEvent>;
export type WebhookEndpoint = { id: string; url: string; description: string | null; event_types: string[]; enabled: boolean; disabled_reason: string | null; created_at: string; updated_at: string };
/** An endpoint with its signing secret (`whsec_...`): answered only by `create` and `rotateSecret`. */
export type WebhookEndpointWithSecret = WebhookEndpoint & { secret: string };
/** One attempt to deliver an event to an endpoint. */
export type WebhookAttempt = { id: string; event_id: string; delivery_id: string; status_code: number | null; duration_ms: number; error: string | null; created_at: string };
export type WebhookEndpointInput = { url: string; description?: string | undefined; event_types?: string[] | undefined; enabled?: boolean | undefined };

export interface SinceOptions {
  /** Where to resume: the `cursor` of an earlier catch-up (it embeds the event and the type). */
  cursor?: string | null | undefined;
  /** Only events of this type, such as `invoice.paid`. */
  type?: string | undefined;
  /** Page size, 1 to 100. */
  limit?: number | undefined;
}

export interface Events {
  /** One page, newest first (`type`, `limit`, `page`, `cursor`, `after`). */
  list(params?: Query): Promise<Page<CrmEvent>>;
  get(id: string): Promise<CrmEvent>;
  /** Every event over all pages, newest first. */
  iterate(params?: Query): AsyncGenerator<CrmEvent>;
  /** Queues the event again, now: to one endpoint, or to every enabled endpoint that receives its type. */
  resend(id: string, endpointId?: string | null, options?: CallOptions): Promise<CrmEvent>;
  /**
   * The events committed after `eventId` (or after where `options.cursor` left off), oldest
   * first, page after page; after the loop, `.cursor` is where to resume later.
   */
  since(eventId?: string | null, options?: SinceOptions): EventSync;
}

export interface WebhookEndpoints {
  /** Answers the endpoint with its signing `secret`, this once: keep it. */
  create(input: WebhookEndpointInput, options?: CallOptions): Promise<WebhookEndpointWithSecret>;
  list(params?: Query): Promise<Page<WebhookEndpoint>>;
  get(id: string): Promise<WebhookEndpoint>;
  iterate(params?: Query): AsyncGenerator<WebhookEndpoint>;
  /** The fields given are set (`enabled: true` also clears `disabled_reason`). */
  update(id: string, patch: Patch<WebhookEndpointInput>, options?: CallOptions): Promise<WebhookEndpoint>;
  /** Removes the endpoint, its pending deliveries and its delivery log. */
  delete(id: string, options?: CallOptions): Promise<void>;
  /** A new signing secret, answered this once; for 24 hours deliveries carry a signature by the old one too. */
  rotateSecret(id: string, options?: CallOptions): Promise<WebhookEndpointWithSecret>;
  /** The endpoint's delivery attempts, newest first. */
  deliveries(id: string, params?: Query): Promise<Page<WebhookAttempt>>;
  /** Sends a signed `webhook.ping` now and answers how the endpoint took it. */
  test(id: string): Promise<WebhookTestResult>;
}

export type ImportStatus = 'pending' | 'running' | 'completed' | 'failed';
/** A CSV import and its progress: rows created, updated and refused so far, and the refused rows' faults. */
export interface Import {
  id: string;
  status: ImportStatus;
  resource: 'customers';
  mode: 'create' | 'upsert';
  total: number;
  created: number;
  updated: number;
  failed: number;
  /** `row` counts data rows from 1 (the header is not a row); `param` is the column at fault, null for the row as a whole. */
  errors: Array<{ row: number; param: string | null; message: string }>;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
}

export interface Imports {
  /**
   * POST /imports: a CSV file (a header row of field names, `metadata.<key>` columns) written
   * in the background, each row created (`mode: 'create'`) or upserted by its `external_id`;
   * answers where to follow it with `get`.
   */
  create(csv: string, options: CallOptions & { resource: 'customers'; mode?: 'create' | 'upsert' | undefined }): Promise<{ id: string; status: ImportStatus }>;
  get(id: string): Promise<Import>;
}

/** One API request of the organization, as it was answered (never its body or a secret). */
export type RequestLog = { request_id: string; method: string; path: string; status: number; duration_ms: number; error_code: string | null; key_prefix: string; created_at: string };
export type RequestLogQuery = { status?: string | number | undefined; method?: string | undefined; request_id?: string | undefined; page?: number | undefined; limit?: number | undefined; cursor?: string | undefined };

export interface RequestLogs {
  /** The recent requests, newest first: `status` (`400`, `'4xx'`), `method`, `request_id` (scope `logs:read`). */
  list(params?: RequestLogQuery): Promise<Page<RequestLog>>;
  iterate(params?: RequestLogQuery): AsyncGenerator<RequestLog>;
}

/** What the endpoint answered a test ping: its status (null when it could not be reached), the time it took, why it failed. */
export type WebhookTestResult = { status_code: number | null; duration_ms: number; error: string | null };

export type LineItemInput = InvoiceInput['line_items'][number];

/**
 * A list call's options in REST's words: filters (beside the paging options or in `where`)
 * as `status=sent,paid`, `due_date[lt]=...`, `customer[search]=...`,
 * `invoices[due_date][lt]=...`; `orderBy` as `order_by=due_date,-total_amount`; `fields` and
 * `expand` comma-separated. Dates are sent in ISO 8601.
 */
function listQuery(options: object): Query {
  const { where, orderBy, ...rest } = options as { where?: object; orderBy?: unknown };
  const query: Query = {};
  const text = (value: unknown) => (value instanceof Date ? value.toISOString() : String(value));
  const put = (name: string, value: unknown) => {
    if (value === undefined || value === null) return;
    if (Array.isArray(value)) query[name] = value.map(text).join(',');
    else if (typeof value === 'object' && !(value instanceof Date)) for (const [key, inner] of Object.entries(value)) put(`${name}[${key}]`, inner);
    else query[name] = text(value);
  };
  for (const [name, value] of Object.entries({ ...rest, ...where })) put(name, value);
  put('order_by', orderBy);
  return query;
}

/** `If-Match` of a version: `"7"` (an entity tag given whole, such as `"7"` or `*`, is sent as is). */
function entityTag(version: number | string): string {
  return typeof version === 'string' && (version.startsWith('"') || version.startsWith('W/') || version === '*') ? version : `"${version}"`;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const env: { CRM_API_KEY?: string | undefined; CRM_BASE_URL?: string | undefined } = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {};

// The generated resources' properties (crm.customers, crm.invoices, ...): made in the constructor from RESOURCES.
export interface CrmClient extends ResourceClients {}
export class CrmClient {
  /** The event log: every committed change. */
  readonly events: Events;
  /** Where events are sent, signed (see verifyWebhook). */
  readonly webhookEndpoints: WebhookEndpoints;
  /** CSV files written in the background. */
  readonly imports: Imports;
  /** The organization's recent API requests. */
  readonly requestLogs: RequestLogs;

  private readonly apiKey: string;
  private readonly baseUrl: string;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly fetch: typeof fetch;

  constructor(options: ClientOptions = {}) {
    const apiKey = options.apiKey ?? env.CRM_API_KEY;
    if (!apiKey) throw new Error('An API key is required: pass apiKey or set CRM_API_KEY.');
    this.apiKey = apiKey;
    this.baseUrl = (options.baseUrl ?? env.CRM_BASE_URL ?? 'http://localhost:3000/v1').replace(/\/$/, '');
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.maxRetries = options.maxRetries ?? 3;
    this.fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    // A client for each generated resource, those with methods of their own (Extended) made by hand.
    const extended: Extended = { customers: this.customerResource() };
    Object.assign(this, Object.fromEntries(Object.entries(RESOURCES).map(([name, spec]) => [name, name in extended ? extended[name as keyof Extended] : this.generated(spec)])));
    this.events = this.eventLog();
    this.webhookEndpoints = this.endpoints();
    this.imports = {
      create: (csv, { resource, mode, ...options }) =>
        this.request('POST', '/imports', { ...this.writeOptions(options), query: { resource, mode }, body: csv, contentType: 'text/csv' }),
      get: (id) => this.request('GET', `/imports/${encodeURIComponent(id)}`),
    };
    this.requestLogs = {
      list: (params = {}) => this.request('GET', '/request_logs', { query: params }),
      iterate: (params = {}) => this.iterate('request_logs', params),
    };
  }

  private eventLog(): Events {
    const item = (id: string) => `/events/${encodeURIComponent(id)}`;
    return {
      list: (params = {}) => this.request<Page<CrmEvent>>('GET', '/events', { query: params }),
      get: (id) => this.request<CrmEvent>('GET', item(id)),
      iterate: (params = {}) => this.iterate<CrmEvent>('events', params),
      resend: (id, endpointId, options = {}) => this.request<CrmEvent>('POST', `${item(id)}/resend`, { ...this.writeOptions(options), body: endpointId ? { endpoint_id: endpointId } : {} }),
      since: (eventId, { cursor = null, type, limit = 100 } = {}) => {
        if (!eventId && !cursor) throw new TypeError('events.since needs an event id, or the cursor of an earlier catch-up');
        return new Sync<CrmEvent, CrmEvent>(
          // The cursor embeds the event and the type; with `after`, next_cursor is never null.
          (from) => this.request<Page<CrmEvent>>('GET', '/events', { query: from ? { cursor: from, limit } : { after: eventId!, type, limit } }),
          cursor,
        );
      },
    };
  }

  private endpoints(): WebhookEndpoints {
    const item = (id: string) => `/webhook_endpoints/${encodeURIComponent(id)}`;
    return {
      // A retried create or rotation must answer the secret of the first: both carry an Idempotency-Key.
      create: (input, options = {}) => this.request<WebhookEndpointWithSecret>('POST', '/webhook_endpoints', { ...this.writeOptions(options), body: input }),
      list: (params = {}) => this.request<Page<WebhookEndpoint>>('GET', '/webhook_endpoints', { query: params }),
      get: (id) => this.request<WebhookEndpoint>('GET', item(id)),
      iterate: (params = {}) => this.iterate<WebhookEndpoint>('webhook_endpoints', params),
      update: (id, patch, options = {}) =>
        this.request<WebhookEndpoint>('PATCH', item(id), { ...this.writeOptions(options), body: patch, contentType: 'application/merge-patch+json' }),
      delete: async (id, options = {}) => {
        await this.request<void>('DELETE', item(id), this.writeOptions(options));
      },
      rotateSecret: (id, options = {}) => this.request<WebhookEndpointWithSecret>('POST', `${item(id)}/rotate_secret`, this.writeOptions(options)),
      deliveries: (id, params = {}) => this.request<Page<WebhookAttempt>>('GET', `${item(id)}/deliveries`, { query: params }),
      test: (id) => this.request<WebhookTestResult>('POST', `${item(id)}/test`),
    };
  }

  private resource<T, Input, L extends ListSpec>(path: string): Resource<T, Input, L> {
    const item = (id: string) => `/${path}/${encodeURIComponent(id)}`;
    return {
      list: (params = {}) => this.request('GET', `/${path}`, { query: listQuery(params) }),
      get: (id, options = {}) => this.request('GET', item(id), { query: listQuery({ fields: options.fields, expand: options.expand }) }),
      iterate: (params = {}) => this.iterate(path, listQuery(params)),
      // A generated key makes the client's own retries safe: a retried create never duplicates.
      create: (input, options = {}) => this.request<T>('POST', `/${path}`, { ...this.writeOptions(options), body: input }),
      upsert: (externalId, input, options = {}) => this.request<T>('PUT', `/${path}/by_external_id/${encodeURIComponent(externalId)}`, { ...this.writeOptions(options), body: input }),
      batch: (items, mode = 'atomic', options = {}) => this.request<{ results: BatchResult<T>[] }>('POST', `/${path}/batch`, { ...this.writeOptions(options), body: { items, mode } }),
      delete: async (id, options = {}) => {
        await this.request<void>('DELETE', item(id), this.writeOptions(options));
      },
      restore: (id, options = {}) => this.request<T>('POST', `${item(id)}/restore`, this.writeOptions(options)),
      events: (id, params = {}) => this.request<Page<CrmEvent<T>>>('GET', `${item(id)}/events`, { query: params }),
      sync: ({ cursor = null, updatedSince, limit = 100 } = {}) =>
        new Sync<T>(
          (from) =>
            this.request<Page<T | Tombstone>>('GET', `/${path}`, {
              // A cursor embeds its list's filters.
              query: from
                ? { cursor: from, limit }
                : { include_deleted: 'true', updated_since: updatedSince instanceof Date ? updatedSince.toISOString() : updatedSince, limit },
            }),
          cursor,
        ),
    };
  }

  /** A generated resource's client: the resource's calls, with `update` if it has one, `transition` if it has one or moves, and `sync` if it syncs. */
  private generated({ path, update, sync, moves }: ResourceSpec): object {
    const { sync: changes, ...calls } = this.resource(path);
    const item = (id: string) => `/${path}/${encodeURIComponent(id)}`;
    const patch = (id: string, body: object, options: WriteOptions = {}) =>
      this.request('PATCH', item(id), { ...this.writeOptions(options), body, contentType: 'application/merge-patch+json' });
    const transition = (id: string, move: string, options: WriteOptions = {}) => {
      if (!moves.includes(move)) throw new TypeError(`${path} have no transition ${JSON.stringify(move)}: one of ${moves.join(', ') || 'none'}`);
      return this.request('POST', `${item(id)}/${move}`, this.writeOptions(options));
    };
    return {
      ...calls,
      ...(sync ? { sync: changes } : {}),
      ...(update ? { update: patch, updateIfUnchanged: (record: { id: string; version: number }, body: object, options: WriteOptions = {}) => patch(record.id, body, { ...options, ifMatch: record.version }) } : {}),
      ...(update || moves.length > 0 ? { transition } : {}),
    };
  }

  private customerResource(): Customers {
    return {
      ...(this.generated(RESOURCES.customers) as EditableResource<Customer, CustomerInput, CustomerList>),
      duplicates: (params = {}) => this.request<Page<DuplicateGroup>>('GET', '/customers/duplicates', { query: params }),
      merge: (id, sourceIds, options = {}) =>
        this.request<Customer>('POST', `/customers/${encodeURIComponent(id)}/merge`, { ...this.writeOptions(options), body: { source_ids: sourceIds } }),
    };
  }

  /** Every write carries an Idempotency-Key, so the client's retries never apply it twice. */
  private writeOptions(options: WriteOptions): RequestOptions & { idempotencyKey: string } {
    return { idempotencyKey: options.idempotencyKey ?? crypto.randomUUID(), ifMatch: options.ifMatch === undefined ? undefined : entityTag(options.ifMatch), dryRun: options.dryRun };
  }

  private async *iterate<T>(path: string, params: Query): AsyncGenerator<T> {
    for (let page = 1; ; page++) {
      const result = await this.request<Page<T>>('GET', `/${path}`, { query: { ...params, page, limit: params['limit'] ?? 100 } });
      yield* result.data;
      if (result.data.length === 0 || page * result.pagination.limit >= result.pagination.total) return;
    }
  }

  private async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const url = new URL(this.baseUrl + path);
    for (const [name, value] of Object.entries(options.query ?? {})) if (value !== undefined) url.searchParams.set(name, String(value));
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.apiKey}`,
      accept: 'application/json',
      'user-agent': `crm-client-js/${VERSION}`,
    };
    if (options.body !== undefined) headers['content-type'] = options.contentType ?? 'application/json';
    if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
    if (options.ifMatch) headers['if-match'] = options.ifMatch;
    if (options.dryRun) headers['prefer'] = 'dry-run';
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await this.fetch(url, {
          method,
          headers,
          // A file (an import's CSV) is sent as it is.
          body: options.body === undefined ? null : typeof options.body === 'string' && options.contentType?.startsWith('text/') ? options.body : JSON.stringify(options.body),
          signal: AbortSignal.timeout(this.timeoutMs),
        });
      } catch (error) {
        if (attempt >= this.maxRetries) throw error;
        await sleep(this.backoff(attempt));
        continue;
      }
      // A 409 with Retry-After: a request with the same Idempotency-Key is still running.
      const retryable = response.status === 429 || response.status === 503 || (response.status === 409 && response.headers.has('retry-after'));
      if (retryable && attempt < this.maxRetries) {
        const retryAfter = Number(response.headers.get('retry-after'));
        await response.body?.cancel();
        await sleep(Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : this.backoff(attempt));
        continue;
      }
      const text = await response.text();
      const body = text ? JSON.parse(text) : undefined;
      if (response.ok) return body as T;
      const problem = [response.status, body?.code ?? 'UNKNOWN', body?.detail ?? response.statusText, body?.errors ?? [], body?.request_id ?? response.headers.get('x-request-id')] as const;
      if (response.status === 412) throw new PreconditionFailed(...problem, body?.current ?? null);
      const Problem = errorClass(response.status);
      throw new Problem(...problem);
    }
  }

  /** Exponential backoff with full jitter: up to 0.5 s, 1 s, 2 s, ... */
  private backoff(attempt: number): number {
    return Math.random() * 500 * 2 ** attempt;
  }
}

/** A webhook request that is not a delivery of the CRM signed with this secret, or too old (or too far in the future) to accept. */
export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

/** A request's headers: a fetch `Headers`, or a plain object such as Node's `req.headers` (names in any case). */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** How far the `webhook-timestamp` may be from now, either way: default 300 (5 minutes). */
  toleranceSeconds?: number | undefined;
  /** Now, for tests. */
  now?: Date | number | undefined;
}

function headerOf(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function' && typeof (headers as Headers).has === 'function') return (headers as Headers).get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? value.join(' ') : value;
  }
  return undefined;
}

function base64Bytes(text: string): Uint8Array<ArrayBuffer> | null {
  try {
    const binary = atob(text);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  } catch {
    return null;
  }
}

/**
 * Verifies a webhook delivery per the Standard Webhooks specification and answers its event:
 * `body` is the request body exactly as received (a string or its bytes, never re-serialized
 * JSON), `secret` the endpoint's `whsec_...` (the prefix is optional). Accepts the delivery
 * when one of the `v1,` signatures of `webhook-signature` (two during a rotation) is the
 * HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`, compared in constant time by Web
 * Crypto, and the timestamp is within 5 minutes of now; otherwise throws
 * WebhookVerificationError.
 */
export async function verifyWebhook(body: string | Uint8Array | ArrayBuffer, headers: WebhookHeaders, secret: string, options: VerifyWebhookOptions = {}): Promise<CrmEvent> {
  if (typeof body !== 'string' && !(body instanceof Uint8Array) && !(body instanceof ArrayBuffer)) {
    throw new TypeError('verifyWebhook needs the raw request body (a string or bytes), not parsed JSON');
  }
  const key = base64Bytes(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret);
  if (!key || key.length === 0) throw new TypeError('The webhook secret must be the endpoint\'s whsec_... secret (base64 after whsec_)');
  const id = headerOf(headers, 'webhook-id');
  const timestamp = headerOf(headers, 'webhook-timestamp');
  const signatures = headerOf(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError('Missing webhook-id, webhook-timestamp or webhook-signature header');
  if (!/^\d{1,15}$/.test(timestamp.trim())) throw new WebhookVerificationError('Invalid webhook-timestamp header');
  const now = options.now === undefined ? Date.now() : options.now instanceof Date ? options.now.getTime() : options.now;
  const tolerance = options.toleranceSeconds ?? 300;
  const age = Math.floor(now / 1000) - Number(timestamp.trim());
  if (age > tolerance) throw new WebhookVerificationError('The webhook timestamp is too old');
  if (age < -tolerance) throw new WebhookVerificationError('The webhook timestamp is too far in the future');

  const payload = typeof body === 'string' ? new TextEncoder().encode(body) : new Uint8Array(body);
  const prefix = new TextEncoder().encode(`${id}.${timestamp.trim()}.`);
  const signed = new Uint8Array(prefix.length + payload.length);
  signed.set(prefix);
  signed.set(payload, prefix.length);
  const hmac = await crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  let valid = false;
  for (const entry of signatures.trim().split(/\s+/)) {
    const comma = entry.indexOf(',');
    if (comma < 0 || entry.slice(0, comma) !== 'v1') continue;
    const candidate = base64Bytes(entry.slice(comma + 1));
    // Web Crypto's verify compares the HMACs in constant time.
    if (candidate && candidate.length === 32 && (await crypto.subtle.verify('HMAC', hmac, candidate, signed))) valid = true;
  }
  if (!valid) throw new WebhookVerificationError('No webhook signature matches: wrong secret, or the body was altered');
  try {
    return JSON.parse(new TextDecoder().decode(payload)) as CrmEvent;
  } catch {
    throw new WebhookVerificationError('The webhook body is not JSON');
  }
}

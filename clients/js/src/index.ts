// Official client of the CRM REST API v1. Uses only the fetch API: runs on Node 18+,
// Deno, Bun and browsers.

export const VERSION = '0.1.0';

export interface FieldError {
  param: string;
  message: string;
}

export interface Pagination {
  page: number;
  limit: number;
  total: number;
}

export interface Page<T> {
  data: T[];
  pagination: Pagination;
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
export class ServerError extends CrmError {}

function errorClass(status: number): typeof CrmError {
  if (status === 401) return Unauthorized;
  if (status === 403) return Forbidden;
  if (status === 404) return NotFound;
  if (status === 409) return Conflict;
  if (status === 429) return RateLimited;
  if (status >= 500) return ServerError;
  return BadRequest;
}

export interface ClientOptions {
  /** Defaults to the CRM_API_KEY environment variable. */
  apiKey?: string;
  baseUrl?: string;
  timeoutMs?: number;
  /** Retries of 429, 503 and network errors. */
  maxRetries?: number;
  fetch?: typeof fetch;
}

type Query = Record<string, string | number | undefined>;

interface Resource<T> {
  list(params?: Query): Promise<Page<T>>;
  get(id: string): Promise<T>;
  /** Every record over all pages, fetched page by page. */
  iterate(params?: Query): AsyncGenerator<T>;
}

interface CreatableResource<T, Input> extends Resource<T> {
  create(input: Input, options?: { idempotencyKey?: string }): Promise<T>;
}

export type Customer = { id: string; name: string; email: string | null; phone: string | null; created_at: string; updated_at: string };
export type Job = { id: string; customer_id: string; title: string; description: string | null; status: string; scheduled_at: string | null; completed_at: string | null; created_at: string; updated_at: string };
export type Email = { id: string; customer_id: string; type: string; from: string; to: string; subject: string; body: string; sent_at: string; created_at: string };
export type LineItem = { description: string; quantity: number; unit_amount: number; amount: number };
export type Invoice = { id: string; number: string; customer_id: string; job_id: string | null; status: string; currency: string; line_items: LineItem[]; total_amount: number; issued_at: string | null; due_date: string | null; paid_at: string | null; created_at: string; updated_at: string };
export type Estimate = Omit<Invoice, 'due_date' | 'paid_at'> & { valid_until: string | null };
export type Proposal = { id: string; customer_id: string; title: string; status: string; total_amount: number; currency: string; created_at: string; updated_at: string };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {};

export class CrmClient {
  readonly customers: CreatableResource<Customer, { name: string; email?: string; phone?: string }>;
  readonly jobs: CreatableResource<Job, { customer_id: string; title: string; description?: string; scheduled_at?: string }>;
  readonly emails: Resource<Email>;
  readonly invoices: CreatableResource<Invoice, { customer_id: string; job_id?: string; currency: string; due_date?: string; line_items: Array<{ description: string; quantity: number; unit_amount: number }> }>;
  readonly estimates: Resource<Estimate>;
  readonly proposals: Resource<Proposal>;

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
    this.customers = this.creatable('customers');
    this.jobs = this.creatable('jobs');
    this.emails = this.resource('emails');
    this.invoices = this.creatable('invoices');
    this.estimates = this.resource('estimates');
    this.proposals = this.resource('proposals');
  }

  private resource<T>(path: string): Resource<T> {
    return {
      list: (params = {}) => this.request<Page<T>>('GET', `/${path}`, { query: params }),
      get: (id) => this.request<T>('GET', `/${path}/${encodeURIComponent(id)}`),
      iterate: (params = {}) => this.iterate<T>(path, params),
    };
  }

  private creatable<T, Input>(path: string): CreatableResource<T, Input> {
    return {
      ...this.resource<T>(path),
      // A generated key makes the client's own retries safe: a retried create never duplicates.
      create: (input, options = {}) => this.request<T>('POST', `/${path}`, { body: input, idempotencyKey: options.idempotencyKey ?? crypto.randomUUID() }),
    };
  }

  private async *iterate<T>(path: string, params: Query): AsyncGenerator<T> {
    for (let page = 1; ; page++) {
      const result = await this.request<Page<T>>('GET', `/${path}`, { query: { ...params, page, limit: params.limit ?? 100 } });
      yield* result.data;
      if (result.data.length === 0 || page * result.pagination.limit >= result.pagination.total) return;
    }
  }

  private async request<T>(method: string, path: string, options: { query?: Query; body?: unknown; idempotencyKey?: string } = {}): Promise<T> {
    const url = new URL(this.baseUrl + path);
    for (const [name, value] of Object.entries(options.query ?? {})) if (value !== undefined) url.searchParams.set(name, String(value));
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.apiKey}`,
      accept: 'application/json',
      'user-agent': `crm-client-js/${VERSION}`,
    };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await this.fetch(url, {
          method,
          headers,
          body: options.body === undefined ? undefined : JSON.stringify(options.body),
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
      const Problem = errorClass(response.status);
      throw new Problem(response.status, body?.code ?? 'UNKNOWN', body?.detail ?? response.statusText, body?.errors ?? [], body?.request_id ?? response.headers.get('x-request-id'));
    }
  }

  /** Exponential backoff with full jitter: up to 0.5 s, 1 s, 2 s, ... */
  private backoff(attempt: number): number {
    return Math.random() * 500 * 2 ** attempt;
  }
}

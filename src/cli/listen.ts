// `cli listen --forward-to URL`: follows the organization's events from a running server (any
// server: it speaks only the public API, with the key in CRM_API_KEY) and forwards each to a
// local URL as a webhook endpoint would receive it: the same body, signed with the Standard
// Webhooks headers under a secret made for this session and printed at start.
//
// Order and completeness come from the events API: `GET /v1/events?after=<last forwarded>`
// (commit order, every page followed) is what is forwarded. The GraphQL subscription only
// says when to look: each message it brings, and each time it (re)connects, triggers that
// catch-up, so an event committed while the stream was down is still forwarded, once.
import { parseArgs } from 'node:util';
import { newSecret } from '../webhooks/secrets.js';
import { webhookHeaders } from '../webhooks/signature.js';

export class ListenUsageError extends Error {}

export interface ListenOptions {
  key: string;
  /** The server's base address: http://127.0.0.1:3000. */
  url: string;
  forwardTo: string;
  /** Only these event types (all when absent). */
  types?: ReadonlySet<string>;
  /** Lines for the user: the secret, one per event (stdout); progress and problems (stderr). */
  out: (line: string) => void;
  err: (line: string) => void;
  signal: AbortSignal;
}

interface ApiEvent {
  id: string;
  seq: number;
  type: string;
}

interface EventPage {
  data: ApiEvent[];
  pagination: { next_cursor: string | null; has_more: boolean };
}

const RECONNECT_MS = 1_000;
const FORWARD_TIMEOUT_MS = 10_000;

export function parseListenArgs(args: string[], env: NodeJS.ProcessEnv): Omit<ListenOptions, 'out' | 'err' | 'signal'> {
  const { values } = parseArgs({ args, options: { 'forward-to': { type: 'string' }, url: { type: 'string' }, events: { type: 'string' } } });
  const key = env.CRM_API_KEY?.trim();
  if (!key) throw new ListenUsageError('CRM_API_KEY must hold the API key to listen with');
  const forwardTo = values['forward-to']?.trim();
  if (!forwardTo || !/^https?:$/.test(URL.canParse(forwardTo) ? new URL(forwardTo).protocol : '')) throw new ListenUsageError('--forward-to must be an http(s) URL, such as http://127.0.0.1:4000/webhooks');
  const url = (values.url?.trim() || 'http://127.0.0.1:3000').replace(/\/+$/, '');
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) throw new ListenUsageError('--url must be the server\'s http(s) address, such as https://crm.example.com');
  const types = values.events ? new Set(values.events.split(',').map((t) => t.trim()).filter(Boolean)) : undefined;
  if (types && types.size === 0) throw new ListenUsageError('--events must name at least one event type, such as invoice.paid,customer.created');
  return { key, url, forwardTo, types };
}

/** Runs until the signal aborts (or the key is refused); resolves then. */
export async function listen(options: ListenOptions): Promise<void> {
  const { key, url, forwardTo, types, out, err, signal } = options;
  const secret = newSecret();
  const auth = { authorization: `Bearer ${key}` };

  async function api<T>(path: string): Promise<T> {
    const response = await fetch(`${url}/v1${path}`, { headers: auth, signal });
    const body = (await response.json().catch(() => undefined)) as (T & { detail?: string }) | undefined;
    if (!response.ok) throw new ApiError(response.status, body?.detail ?? `${response.status} ${response.statusText}`);
    return body as T;
  }

  async function forward(event: ApiEvent & Record<string, unknown>): Promise<void> {
    // The body a webhook endpoint receives: the event as the API shows it.
    const body = JSON.stringify(event);
    const headers = { 'content-type': 'application/json', 'user-agent': 'crm-listen/1', ...webhookHeaders([secret], event.id, body) };
    try {
      const response = await fetch(forwardTo, { method: 'POST', headers, body, signal: AbortSignal.any([signal, AbortSignal.timeout(FORWARD_TIMEOUT_MS)]) });
      await response.body?.cancel();
      out(`${event.seq} ${event.type} -> ${response.status}`);
    } catch (error) {
      if (signal.aborted) return;
      out(`${event.seq} ${event.type} -> error: ${causeOf(error)}`);
    }
  }

  // Where forwarding continues from: the newest event when listening began (none: from the first).
  let last: string | undefined = (await api<EventPage>('/events?limit=1')).data[0]?.id;
  let catchingUp: Promise<void> = Promise.resolve();
  let again = false;

  async function catchUp(): Promise<void> {
    const fresh: ApiEvent[] = [];
    if (last) {
      let cursor: string | null = null;
      do {
        const page: EventPage = await api<EventPage>(cursor ? `/events?limit=100&cursor=${encodeURIComponent(cursor)}` : `/events?limit=100&after=${encodeURIComponent(last)}`);
        for (const event of page.data) {
          if (signal.aborted) return;
          if (!types || types.has(event.type)) await forward(event as ApiEvent & Record<string, unknown>);
          last = event.id;
        }
        cursor = page.pagination.has_more ? page.pagination.next_cursor : null;
      } while (cursor);
      return;
    }
    // No event existed when listening began: every event now is new (newest first, reversed).
    let cursor: string | null = null;
    do {
      const page: EventPage = await api<EventPage>(cursor ? `/events?limit=100&cursor=${encodeURIComponent(cursor)}` : '/events?limit=100');
      fresh.push(...page.data);
      cursor = page.pagination.has_more ? page.pagination.next_cursor : null;
    } while (cursor);
    for (const event of fresh.reverse()) {
      if (signal.aborted) return;
      if (!types || types.has(event.type)) await forward(event as ApiEvent & Record<string, unknown>);
      last = event.id;
    }
  }

  /** One catch-up at a time; a wake during one runs another after it. */
  function wake(): Promise<void> {
    if (again) return catchingUp;
    again = true;
    // A catch-up that failed does not stop the next one (it starts again from `last`).
    catchingUp = catchingUp.catch(() => undefined).then(async () => {
      again = false;
      await catchUp();
    });
    return catchingUp;
  }

  out(`Signing secret: ${secret}`);
  err(`Forwarding ${types ? [...types].join(', ') : 'every'} event of ${url} to ${forwardTo}; Ctrl-C stops.`);
  while (!signal.aborted) {
    try {
      const onEvent = () => void wake().catch((error: unknown) => signal.aborted || err(`catching up failed: ${causeOf(error)}`));
      await stream(url, auth, types, signal, onEvent, async () => {
        // Connected: what committed before the stream opened is forwarded now.
        await wake();
        err('Ready: listening for events.');
      });
    } catch (error) {
      if (signal.aborted) break;
      // A refused key or a bad --events list is final; anything else is worth another try.
      if (error instanceof ApiError && (error.status === 400 || error.status === 401 || error.status === 403)) throw error;
      err(`the event stream ended (${causeOf(error)}); reconnecting`);
    }
    if (signal.aborted) break;
    await new Promise<void>((resolve) => {
      const stop = () => (clearTimeout(timer), resolve());
      const timer = setTimeout(() => (signal.removeEventListener('abort', stop), resolve()), RECONNECT_MS);
      signal.addEventListener('abort', stop, { once: true });
    });
  }
  await catchingUp.catch(() => undefined);
}

class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function causeOf(error: unknown): string {
  const e = error as { message?: string; cause?: { code?: string; message?: string } };
  return e.cause?.code ?? e.cause?.message ?? e.message ?? String(error);
}

const SUBSCRIPTION = 'subscription($types: [String!]) { events(types: $types) { id seq type } }';

/**
 * Holds `subscription { events }` open over server-sent events, calling `onEvent` per message;
 * returns when the server ends the stream, throws when it cannot be opened.
 */
async function stream(url: string, auth: Record<string, string>, types: ReadonlySet<string> | undefined, signal: AbortSignal, onEvent: () => void, onOpen: () => Promise<void>): Promise<void> {
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    signal,
    headers: { ...auth, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ query: SUBSCRIPTION, variables: { types: types ? [...types] : null } }),
  });
  if (!response.ok || !response.body) {
    const body = (await response.json().catch(() => undefined)) as { errors?: { message: string }[] } | undefined;
    throw new ApiError(response.status, body?.errors?.[0]?.message ?? `${response.status} ${response.statusText}`);
  }
  await onOpen();
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error('closed by the server');
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const kind = /^event: (.*)$/m.exec(block)?.[1];
      if (kind === 'complete') throw new Error('completed by the server');
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (kind !== 'next' || !data) continue;
      const payload = JSON.parse(data) as { data?: { events?: unknown }; errors?: { message: string; extensions?: { code?: string } }[] };
      const error = payload.errors?.[0];
      if (error) {
        const code = error.extensions?.code;
        const status = code === 'UNAUTHENTICATED' ? 401 : code === 'FORBIDDEN' ? 403 : code === 'BAD_REQUEST' ? 400 : undefined;
        throw status ? new ApiError(status, error.message) : new Error(error.message);
      }
      if (payload.data?.events) onEvent();
    }
  }
}

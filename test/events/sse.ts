// A GraphQL-over-SSE client as an integration writes one: POST /graphql with
// `accept: text/event-stream`, then the `next` and `complete` messages as they arrive.
export interface StreamedEvent {
  id: string;
  type: string;
  data: { object: { id: string; name?: string } };
}

export interface Message {
  event: 'next' | 'complete';
  /** A `next` message's payload: `{ data }` or `{ errors }`. */
  payload?: { data?: { events: StreamedEvent | null } | null; errors?: Array<{ message: string; extensions: Record<string, any> }> };
}

export interface Stream {
  status: number;
  headers: Headers;
  /** The next message; undefined once the response has ended. */
  message(): Promise<Message | undefined>;
  /** The next `count` events (throws on anything else). */
  events(count: number): Promise<StreamedEvent[]>;
  /** Every message to the end of the response. */
  rest(): Promise<Message[]>;
  close(): void;
}

export const SUBSCRIPTION = 'subscription($types: [String!]) { events(types: $types) { id type data } }';

/**
 * Called with the address and init rather than a Request: a Request made here would give the
 * server a signal that only follows this one weakly (undici), and may never abort.
 */
type Fetch = (url: string, init: RequestInit) => Promise<Response>;

/** Opens `subscription { events(types) }` at `base` (a listening server), or through `fetcher` (an app in this process). */
export async function subscribe(base: string, key: string, { types, fetcher = fetch, query = SUBSCRIPTION }: { types?: string[]; fetcher?: Fetch; query?: string } = {}): Promise<Stream> {
  const abort = new AbortController();
  const response = await fetcher(`${base}/graphql`, {
    method: 'POST',
    signal: abort.signal,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ query, variables: { types } }),
  });
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let ended = false;
  async function message(): Promise<Message | undefined> {
    for (;;) {
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1];
        if (event === 'complete') return { event };
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (event === 'next' && data) return { event, payload: JSON.parse(data) };
        // Anything else is a keep-alive comment.
      }
      if (ended) return undefined;
      const { value, done } = await reader.read();
      if (done) ended = true;
      else buffer += value;
    }
  }
  return {
    status: response.status,
    headers: response.headers,
    message,
    async events(count) {
      const events: StreamedEvent[] = [];
      while (events.length < count) {
        const next = await message();
        const event = next?.payload?.data?.events;
        if (!event) throw new Error(`expected an event, got ${JSON.stringify(next)}`);
        events.push(event);
      }
      return events;
    },
    async rest() {
      const messages: Message[] = [];
      for (let next = await message(); next; next = await message()) messages.push(next);
      return messages;
    },
    close: () => abort.abort(),
  };
}

/** The error a stream ended with: its last `next` before `complete`. */
export function endOf(messages: Message[]) {
  expectShape(messages.at(-1)?.event === 'complete', messages);
  const error = messages.at(-2)?.payload?.errors?.[0];
  expectShape(error !== undefined, messages);
  return error!;
}

function expectShape(ok: boolean, messages: Message[]) {
  if (!ok) throw new Error(`expected an error then complete, got ${JSON.stringify(messages).slice(0, 2000)}`);
}

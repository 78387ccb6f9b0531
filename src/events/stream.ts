// One open subscription: the events waiting for its reader, in commit order, bounded. The
// server writes the next one only once the connection took the previous (backpressure), so
// a reader that stops reading leaves its events here; past the bound the stream ends rather
// than grow. A stream that ends for any reason but its reader's leaving says why in a last
// message (the subscription's field resolver raises it as the event's error), then completes.
import type { GraphQLError } from 'graphql';
import type { EventRow } from './format.js';

/** The last message of a stream that was ended: its reason, as a GraphQL error. */
export class StreamEnd {
  constructor(readonly error: GraphQLError) {}
}

/** How much may wait for one reader: this many events, or this many bytes of them. */
export interface Backlog {
  events: number;
  bytes: number;
}

/** Builds a stream's last message; `lastEventId`: the last event its reader receives before it. */
export type EndReason = (lastEventId: string | undefined) => GraphQLError;

type Item = EventRow | StreamEnd;

export class EventStream implements AsyncIterableIterator<Item> {
  private readonly queue: Array<{ row: EventRow; bytes: number }> = [];
  private queuedBytes = 0;
  /** No more events are taken; the queue and then `last` are still read. */
  private ended = false;
  private last: StreamEnd | undefined;
  private waiting: ((result: IteratorResult<Item>) => void) | undefined;
  /** The last event handed to the reader's connection. */
  private handedOut: string | undefined;

  constructor(
    private readonly backlog: Backlog,
    /** Called once, when the stream ends (whatever ended it): it no longer takes events. */
    private readonly onEnd: () => void,
  ) {}

  /** Queues `row`; false when the reader is too far behind to take it. */
  offer(row: EventRow, bytes: number): boolean {
    if (this.ended) return true;
    const waiting = this.waiting;
    if (waiting) {
      // The reader is waiting: straight to it.
      this.waiting = undefined;
      this.handedOut = row.id;
      waiting({ done: false, value: row });
      return true;
    }
    // One event is always taken, however large: the bound is on a backlog, not on a record.
    if (this.queue.length > 0 && (this.queue.length >= this.backlog.events || this.queuedBytes + bytes > this.backlog.bytes)) return false;
    this.queue.push({ row, bytes });
    this.queuedBytes += bytes;
    return true;
  }

  /**
   * Ends the stream with `reason` as its last message (none: it just completes). `drop`:
   * what is queued is never sent (the reader fell behind, or may no longer read it).
   */
  end(reason?: EndReason, { drop = false } = {}): void {
    if (this.ended) return;
    this.ended = true;
    if (drop) {
      this.queue.length = 0;
      this.queuedBytes = 0;
    }
    if (reason) this.last = new StreamEnd(reason(this.queue.at(-1)?.row.id ?? this.handedOut));
    this.onEnd();
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.(this.take()!);
  }

  next(): Promise<IteratorResult<Item>> {
    const ready = this.take();
    if (ready) return Promise.resolve(ready);
    return new Promise((resolve) => (this.waiting = resolve));
  }

  /** The reader left (its connection closed, or the server stopped reading). */
  return(): Promise<IteratorResult<Item>> {
    this.end(undefined, { drop: true });
    this.last = undefined;
    return Promise.resolve({ done: true, value: undefined });
  }

  throw(): Promise<IteratorResult<Item>> {
    return this.return();
  }

  [Symbol.asyncIterator]() {
    return this;
  }

  /** The next result if there is one now: a queued event, the last message, or the end. */
  private take(): IteratorResult<Item> | undefined {
    const queued = this.queue.shift();
    if (queued) {
      this.queuedBytes -= queued.bytes;
      this.handedOut = queued.row.id;
      return { done: false, value: queued.row };
    }
    if (this.last) {
      const last = this.last;
      this.last = undefined;
      return { done: false, value: last };
    }
    return this.ended ? { done: true, value: undefined } : undefined;
  }
}

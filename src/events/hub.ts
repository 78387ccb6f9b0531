// Committed events, as each instance hears of them: one LISTEN on the channel the event
// trigger NOTIFYs when a write queued a webhook delivery (on commit, from whichever instance
// or process made the change; the payload is the organization's id), shared by this
// instance's webhook delivery loop and its open subscriptions (streams.ts: they follow their
// organizations' events by seq, also without a NOTIFY, each event loaded once, then handed to
// the streams that may read it).
import type { Database } from '../db/connection.js';
import type { Subscription } from '../db/notifications.js';
import type { Logger } from '../logger.js';
import { createStreams, STREAM_LIMITS, type EventNotice, type StreamLimits, type Streams } from './streams.js';

export type { EventNotice } from './streams.js';

export const EVENTS_CHANNEL = 'crm_events';

export interface EventHub {
  /** Calls `listener` for every NOTIFY of committed events; answers how to stop. */
  subscribe(listener: (notice: EventNotice) => void): () => void;
  /** The open subscriptions (GraphQL `subscription { events }`); tell the authenticator's key changes to it. */
  streams: Streams;
  /**
   * Ends every open subscription (each is told the server is stopping, then completes) and
   * opens no more: call it as shutdown begins, before waiting for requests in flight.
   */
  endStreams(): void;
  close(): Promise<void>;
}

export function createEventHub(db: Pick<Database, 'listen' | 'background'>, log: Logger, limits: Partial<StreamLimits> = {}): EventHub {
  const listeners = new Set<(notice: EventNotice) => void>();
  let live = false;
  let listening: Subscription | undefined;
  let waiters: Array<() => void> = [];
  const wake = () => {
    for (const waiter of waiters) waiter();
    waiters = [];
  };
  const ready = () => live && listening !== undefined;
  const streams = createStreams({
    db: db.background,
    log,
    limits: { ...STREAM_LIMITS, ...limits },
    listening: {
      live: ready,
      subscription: () => listening,
      ready: (ms) =>
        ready()
          ? Promise.resolve(true)
          : new Promise<boolean>((resolve) => {
              const timer = setTimeout(() => resolve(ready()), ms);
              waiters.push(() => {
                clearTimeout(timer);
                resolve(ready());
              });
            }),
    },
  });
  const subscription = db
    .listen(EVENTS_CHANNEL, {
      notify(payload) {
        // (Before the notify_with_deliveries migration: "<organization id> <event id>".)
        const [organizationId] = payload.split(' ');
        if (!organizationId) return;
        for (const listener of listeners) listener({ organizationId });
        streams.heard({ organizationId });
      },
      lost() {
        live = false;
        log.warn('lost the event notifications; open subscriptions end (their clients catch up), webhooks are polled until they return');
        streams.interrupted();
      },
      listening() {
        live = true;
        wake();
      },
      restored: () => log.info('event notifications are back'),
    })
    .then((opened) => {
      listening = opened;
      wake();
      return opened;
    })
    .catch((error: Error) => {
      log.warn('cannot listen for events; subscriptions are refused (webhooks are polled)', { error: error.message });
      return undefined;
    });
  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    streams,
    endStreams: () => streams.endAll(),
    async close() {
      streams.endAll();
      listeners.clear();
      await (await subscription)?.close();
    },
  };
}

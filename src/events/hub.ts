// Committed events, as each instance hears of them: one LISTEN on the channel the event
// trigger NOTIFYs (on commit, from whichever instance or process made the change), shared
// by this instance's subscribers (GraphQL subscriptions) and its webhook delivery loop.
import type { Database } from '../db/connection.js';
import type { Logger } from '../logger.js';

export const EVENTS_CHANNEL = 'crm_events';

export interface EventNotice {
  organizationId: string;
  eventId: string;
}

export interface EventHub {
  /** Calls `listener` for every committed event; answers how to stop. */
  subscribe(listener: (notice: EventNotice) => void): () => void;
  close(): Promise<void>;
}

export function createEventHub(db: Pick<Database, 'listen'>, log: Logger): EventHub {
  const listeners = new Set<(notice: EventNotice) => void>();
  const subscription = db
    .listen(EVENTS_CHANNEL, {
      notify(payload) {
        const [organizationId, eventId] = payload.split(' ');
        if (!organizationId || !eventId) return;
        for (const listener of listeners) listener({ organizationId, eventId });
      },
      lost: () => log.warn('lost the event notifications; subscriptions miss events until they return (webhooks are polled meanwhile)'),
      restored: () => log.info('event notifications are back'),
    })
    .catch((error: Error) => {
      log.warn('cannot listen for events; subscriptions receive nothing (webhooks are polled)', { error: error.message });
      return undefined;
    });
  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() {
      listeners.clear();
      await (await subscription)?.close();
    },
  };
}

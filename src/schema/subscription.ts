// GraphQL subscriptions, from the event log: `subscription { events(types: [...]) { ... } }`
// streams the caller's organization's events as they commit, through any instance (each
// hears every commit by NOTIFY), limited to what the key may read. Over server-sent events:
// a subscriber that drops reconnects and catches up with `events(after: <last id>)`. The
// streams themselves (limits, fan-out, why one ends) are events/streams.ts's.
import { apiError, invalidInput } from '../errors.js';
import { StreamEnd } from '../events/stream.js';
import { EVENT_TYPES } from '../events/types.js';
import { builder } from './builder.js';
import { Event, eventReadScopes, readableResources, readsEvents } from './event.js';

builder.subscriptionType({});

builder.subscriptionField('events', (t) =>
  t.field({
    type: Event,
    description:
      'Events as they commit, of the resources this key may read; `types` narrows them (invoice.paid, ...). A stream that ends for a reason of the server\'s (key revoked, reader too slow, lost database connection, shutdown) sends that reason as its last error, with `extensions.lastEventId` to catch up from.',
    authScopes: readsEvents,
    args: { types: t.arg.stringList({ description: 'Only these event types; absent: all.' }) },
    subscribe: async (_root, { types }, ctx) => {
      // Refused before the stream opens (the field's scope check would only run per event).
      if (readableResources(ctx).length === 0) {
        throw apiError('FORBIDDEN', `This API key lacks the scope ${eventReadScopes().join(' or ')}, required for Subscription.events.`);
      }
      const unknown = (types ?? []).filter((type) => !EVENT_TYPES.has(type));
      if (unknown.length > 0) throw invalidInput([{ param: 'types', message: `has unknown event types: ${unknown.join(', ')}` }]);
      const { signal } = (ctx as { request?: Request }).request ?? {};
      return ctx.events.streams.open({ auth: ctx.auth, types: types ?? undefined, readable: (scopes) => readableResources({ auth: { ...ctx.auth, scopes } }), signal });
    },
    resolve: (item) => {
      if (item instanceof StreamEnd) throw item.error;
      return item as never;
    },
  }),
);

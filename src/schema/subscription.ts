// GraphQL subscriptions, from the event log: `subscription { events(types: [...]) { ... } }`
// streams the caller's organization's events as they commit, through any instance (each
// hears every commit by NOTIFY), limited to what the key may read. Over server-sent events:
// a subscriber that drops reconnects and catches up with `events(after: <last id>)`.
import { Repeater } from 'graphql-yoga';
import { invalidInput } from '../errors.js';
import type { EventRow } from '../events/format.js';
import { EVENT_TYPES } from '../events/types.js';
import { builder } from './builder.js';
import { Event, readableResources } from './event.js';

builder.subscriptionType({});

builder.subscriptionField('events', (t) =>
  t.field({
    type: Event,
    description: 'Events as they commit, of the resources this key may read; `types` narrows them (invoice.paid, ...).',
    authScopes: (_root, _args, ctx) => readableResources(ctx).length > 0,
    args: { types: t.arg.stringList({ description: 'Only these event types; absent: all.' }) },
    subscribe: (_root, { types }, ctx) => {
      const unknown = (types ?? []).filter((type) => !EVENT_TYPES.has(type));
      if (unknown.length > 0) throw invalidInput([{ param: 'types', message: `has unknown event types: ${unknown.join(', ')}` }]);
      const where = { resource: { in: readableResources(ctx) }, ...(types?.length ? { type: { in: types } } : {}) };
      return new Repeater<EventRow>(async (push, stop) => {
        // One load at a time, so events reach the subscriber in the order they committed.
        let chain = Promise.resolve();
        const unsubscribe = ctx.events.subscribe(({ organizationId, eventId }) => {
          if (organizationId !== ctx.auth.organizationId) return;
          chain = chain
            .then(() => ctx.prisma.event.findFirst({ where: { id: eventId, ...where } }))
            .then((row) => {
              if (row) void push(row as EventRow);
            })
            .catch((error: unknown) => {
              stop(error);
            });
        });
        await stop;
        unsubscribe();
      });
    },
    resolve: (event) => event as never,
  }),
);

import { JobStatus } from '../../generated/prisma/enums.js';
import { ruled, rules } from '../field-rules.js';
import { defineCreate, defineResource } from '../resource.js';
import { recordObject } from '../record-object.js';
import type { Move } from '../transitions.js';
import { patchData } from '../validation.js';

declare module '../../auth/scopes.js' { interface ScopeNames { 'jobs:read': true; 'jobs:write': true } }

export const Job = recordObject('Job', ['title', 'description', 'status', 'scheduledAt', 'completedAt'], { description: { extensions: { cost: 5 } } });

/** The rules of a job's fields: its inputs' descriptions, checks and OpenAPI keywords. */
const FIELDS = { customerId: rules.id(), title: rules.text(200, true), description: rules.text(5000) };

defineResource(Job, {
  path: 'jobs',
  list: {
    sort: ['title', 'status', 'scheduledAt', 'completedAt'],
    search: { columns: ['title', 'description'], description: 'Case-insensitive substring of the title or description.' },
  },
  moves: {
    startJob: { verb: 'start', from: ['scheduled'], to: 'in_progress' },
    completeJob: { verb: 'complete', from: ['in_progress'], to: 'completed', stamps: ['completedAt'] },
    cancelJob: { verb: 'cancel', from: ['scheduled', 'in_progress'], to: 'cancelled' },
  } satisfies Record<string, Move<JobStatus>>,
  update: {
    fields: (t) => ({
      customerId: t.id(ruled(FIELDS.customerId, 'A customer of this organization.')),
      title: t.string(ruled(FIELDS.title, 'Cannot be cleared.')),
      description: t.string(ruled(FIELDS.description, 'null clears it.')),
      scheduledAt: t.field({ type: 'DateTime', description: 'null clears it.' }),
    }),
    check: async (ctx, patch, check) => {
      const data = patchData(patch as { customerId?: string | null; title?: string | null; description?: string | null; scheduledAt?: Date | null }, {
        customerId: (id) => check.id('customerId', id, FIELDS.customerId),
        title: (title) => check.text('title', title, FIELDS.title),
        description: (description) => check.text('description', description, FIELDS.description),
        scheduledAt: (at) => at,
      });
      return data;
    },
  },
});

defineCreate('Job', {
  description: 'Creates a job in status scheduled.',
  fields: (t) => ({
    title: t.string({ required: true, ...ruled(FIELDS.title) }),
    description: t.string(ruled(FIELDS.description)),
    scheduledAt: t.field({ type: 'DateTime' }),
  }),
  example: { title: 'Fix the boiler', description: 'It knocks at night.', scheduledAt: new Date('2026-12-01T09:00:00Z') },
  check: async (ctx, input, check) => {
    const title = check.text('title', input.title, FIELDS.title);
    const description = check.text('description', input.description, FIELDS.description);
    return { title: title!, description, scheduledAt: input.scheduledAt ?? null };
  },
});

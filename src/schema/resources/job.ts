import { JobStatus } from '../../generated/prisma/enums.js';
import { enumField } from '../list-query.js';
import { builder } from '../builder.js';
import { ruled, rules } from '../field-rules.js';
import { JobStatusEnum } from '../enums.js';
import { defineCreate, defineResource } from '../resource.js';
import type { Move } from '../transitions.js';
import { patchData } from '../validation.js';

declare module '../../auth/scopes.js' { interface ScopeNames { 'jobs:read': true; 'jobs:write': true } }

export const Job = builder.prismaObject('Job', {
  fields: (t) => ({
    id: t.exposeID('id'),
    title: t.exposeString('title'),
    description: t.exposeString('description', { nullable: true, extensions: { cost: 5 } }),
    status: t.expose('status', { type: JobStatusEnum }),
    scheduledAt: t.expose('scheduledAt', { type: 'DateTime', nullable: true }),
    completedAt: t.expose('completedAt', { type: 'DateTime', nullable: true }),
  }),
});

/** The rules of a job's fields: its inputs' descriptions, checks and OpenAPI keywords. */
const FIELDS = { customerId: rules.id(), title: rules.text(200, true), description: rules.text(5000) };

defineResource(Job, {
  type: 'Job',
  path: 'jobs',
  read: 'jobs:read',
  write: 'jobs:write',
  description: 'Jobs, newest first.',
  split: { arg: 'status', enum: JobStatusEnum },
  byCustomer: true,
  list: {
    fields: {
      title: { kind: 'text', sort: true },
      status: enumField(JobStatusEnum, 'JobStatus', JobStatus),
      scheduledAt: { kind: 'datetime', nullable: true, sort: true },
      completedAt: { kind: 'datetime', nullable: true, sort: true },
    },
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
  scope: 'jobs:write',
  rest: 'jobs',
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

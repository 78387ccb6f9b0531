import { ruled, rules } from '../field-rules.js';
import { EmailTypeEnum } from '../enums.js';
import { defineCreate, defineResource } from '../resource.js';
import { recordObject } from '../record-object.js';

declare module '../../auth/scopes.js' { interface ScopeNames { 'emails:read': true } }

export const Email = recordObject('Email', ['type', 'from', 'to', 'subject', 'body', 'sentAt'], {
  from: { column: 'fromAddress' },
  to: { column: 'toAddress' },
  // Up to 100,000 characters: the query bounds count it as 100 records (see graphql/query-bounds.ts).
  body: { extensions: { cost: 100 } },
});

defineResource(Email, {
  path: 'emails',
  // The contract has no emails:write scope; recording e-mail is customer-record work.
  write: 'customers:write',
  description: 'Incoming and outgoing e-mails, newest first.',
  list: {
    filter: ['type'],
    sort: ['sentAt'],
    search: { columns: ['subject', 'fromAddress', 'toAddress'], description: 'Case-insensitive substring of the subject, sender or recipient.' },
  },
});

/** The rules of an e-mail's fields: its inputs' descriptions, checks and OpenAPI keywords. */
const FIELDS = { from: rules.email(true), to: rules.email(true), subject: rules.text(998, true), body: rules.text(100_000) };

defineCreate('Email', {
  description: 'Records an incoming or outgoing e-mail. An e-mail is a record of a message: it cannot be edited, only deleted.',
  fields: (t) => ({
    type: t.field({ type: EmailTypeEnum, required: true }),
    from: t.string({ required: true, ...ruled(FIELDS.from) }),
    to: t.string({ required: true, ...ruled(FIELDS.to) }),
    subject: t.string({ required: true, ...ruled(FIELDS.subject) }),
    body: t.string(ruled(FIELDS.body)),
    sentAt: t.field({ type: 'DateTime', description: 'Defaults to now.' }),
  }),
  example: { type: 'incoming', from: 'grace@example.com', to: 'office@example.com', subject: 'The boiler', body: 'It knocks at night.' },
  check: async (ctx, input, check) => {
    if (!input.type) check.fail('type', 'is required');
    const from = check.email('from', input.from, FIELDS.from);
    const to = check.email('to', input.to, FIELDS.to);
    const subject = check.text('subject', input.subject, FIELDS.subject);
    const body = check.text('body', input.body, FIELDS.body);
    return {
      type: input.type!,
      fromAddress: from!,
      toAddress: to!,
      subject: subject!,
      body: body ?? '',
      sentAt: input.sentAt ?? new Date(),
    };
  },
});

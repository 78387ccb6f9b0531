// The schema: one file per type, each registering its fields with the one builder.
import { builder } from './builder.js';
import './service.js';
import './customer.js';
import './job.js';
import './email.js';
import './line-items.js';
import './invoice.js';
import './estimate.js';
import './proposal.js';
import './duplicates.js';
import './bulk.js';
import './imports.js';
import './analytics.js';
import './event.js';
import './webhook.js';
import './request-logs.js';
import './subscription.js';

// Declaration order kept: REST records list their fields as the types declare them, `id`
// first. schema.graphql is printed sorted, so its diffs stay stable (schema/print.ts).
export const schema = builder.toSchema({ sortSchema: false });

// The schema: one file per type, each registering its fields with the one builder. Each
// resource is a file of its own in ./resources, loaded from the folder (in name order), so
// declaring a resource is adding its file: no list of resources to keep here.
import { readdirSync } from 'node:fs';
import { builder } from './builder.js';
import './service.js';
import './duplicates.js';
import './bulk.js';
import './imports.js';
import './analytics.js';
import './event.js';
import './webhook.js';
import './request-logs.js';
import './subscription.js';

// .ts when run from source (tsx, vitest), .js once built (dist/); never a declaration file.
const resources = new URL('./resources/', import.meta.url);
for (const file of readdirSync(resources).filter((name) => /^[^.]+\.(ts|js)$/.test(name)).sort()) {
  await import(new URL(file, resources).href);
}

// Declaration order kept: REST records list their fields as the types declare them, `id`
// first. schema.graphql is printed sorted, so its diffs stay stable (schema/print.ts).
export const schema = builder.toSchema({ sortSchema: false });

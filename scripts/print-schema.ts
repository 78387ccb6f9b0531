// npm run schema:print: writes the GraphQL schema, as built by Pothos, to schema.graphql
// so that every change to the API contract shows up in review.
import { writeFileSync } from 'node:fs';
import { SCHEMA_FILE, printedSchema } from '../src/schema/print.js';

writeFileSync(SCHEMA_FILE, printedSchema());
console.log(`Wrote ${SCHEMA_FILE}`);

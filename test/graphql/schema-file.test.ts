import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { SCHEMA_FILE, printedSchema } from '../../src/schema/print.js';

it('schema.graphql is the printed schema (run `npm run schema:print` after a schema change)', () => {
  expect(readFileSync(SCHEMA_FILE, 'utf8')).toBe(printedSchema());
});

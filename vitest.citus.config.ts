// `npm run test:citus`: the API suites again, on Citus (scripts/test-citus.sh starts a
// coordinator and two workers and sets TEST_CITUS_URL; test/helpers/databases.ts then makes
// each suite's database distributed), and the Citus-only checks in test/citus.
import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export const CITUS_SUITES = [
  'test/citus/**/*.test.ts',
  'test/rest/resources.test.ts',
  'test/rest/changes.test.ts',
  'test/rest/sync.test.ts',
  'test/rest/bulk-writes.test.ts',
  'test/graphql/operations.test.ts',
  'test/events/events.test.ts',
  'test/events/subscriptions.test.ts',
  'test/webhooks/webhooks.test.ts',
  'test/auth/isolation.test.ts',
  'test/resources/operations.test.ts',
  'test/db/resource-triggers.test.ts',
  'test/imports/imports.test.ts',
  'test/imports/resume.test.ts',
  'test/auth/authentication.test.ts',
  'test/auth/key-cache.test.ts',
  'test/cli/cli-postgres.test.ts',
  'test/rest/response-cache.test.ts',
];

export default defineConfig({
  resolve: { alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }] },
  test: {
    include: CITUS_SUITES,
    testTimeout: 120_000,
    hookTimeout: 120_000,
    expect: { poll: { timeout: 10_000 } },
    pool: 'forks',
    // As in vitest.config.ts: V8's baseline tier alone for WebAssembly (Prisma's query compiler here).
    execArgv: ['--liftoff-only'],
    maxWorkers: 2,
    isolate: false,
  },
});

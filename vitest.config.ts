import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // Node resolves `graphql` to its CommonJS build (no "exports" field); Vite would pick the
    // .mjs one, and two copies of graphql cannot share a schema.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['test/**/*.test.ts', 'clients/js/test/**/*.test.ts'],
    // Most tests start the real server as a child process on a real database.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});

import { accessSync, constants, mkdirSync, statfsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';
import SlowestFirst from './test/sequencer.js';

const require = createRequire(import.meta.url);

// Test databases' folders, templates and projects go to memory (tmpfs) where there is room:
// copying and removing PGlite folders (41 MB, 1,165 files each) on disk took the workers
// about a minute of a profiled full run, behind PostgreSQL's writes; a run took 335 s on
// disk, 319 s in memory. A TMPDIR set by the caller wins.
const MEMORY_TMP = '/dev/shm';
function inMemory(): string | undefined {
  try {
    const { bavail, bsize } = statfsSync(MEMORY_TMP);
    if (bavail * bsize < 4 * 2 ** 30) return undefined;
    const dir = `${MEMORY_TMP}/crm-tests`;
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK);
    return dir;
  } catch {
    return undefined;
  }
}
const memory = process.env.TMPDIR ? undefined : inMemory();
if (memory) process.env.TMPDIR = memory;

const TESTS = ['test/**/*.test.ts', 'clients/js/test/**/*.test.ts'];
/** Files that change what modules hold (register a resource, mock a module) get a fresh process. */
const ISOLATED = ['test/**/*.isolated.test.ts'];
/** Run on Citus only, by `npm run test:citus` (vitest.citus.config.ts). */
const CITUS_ONLY = ['test/citus/**'];

export default defineConfig({
  resolve: {
    // Node resolves `graphql` to its CommonJS build (no "exports" field); Vite would pick the
    // .mjs one, and two copies of graphql cannot share a schema.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    // Test databases are copied from templates migrated once (test/helpers/databases.ts).
    globalSetup: ['test/global-setup.ts'],
    // Tests serve the app in process on a real database; a few start server processes.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // expect.poll waits for something to happen (a stream to end, a notice to arrive): on a
    // loaded machine that can take longer than vitest's default second; only a failure waits it out.
    expect: { poll: { timeout: 10_000 } },
    pool: 'forks',
    // V8's baseline tier alone for WebAssembly: its optimizing tier recompiled PGlite's and
    // Prisma's hot functions in the background of every worker, more CPU than it saved (the
    // suite is bound by CPU; on one machine, two runs without it took 346 and 337 s, four with
    // it 290 to 318 s).
    execArgv: ['--liftoff-only'],
    // One more worker than this machine's two cores: most files wait much of their time on
    // PostgreSQL, a child process or a socket (a clean-clone run took 494 s with two workers,
    // 334 s with three, every test passing).
    maxWorkers: 3,
    // The longest files first, also in a clean clone (no durations cached yet): test/sequencer.ts.
    sequence: { sequencer: SlowestFirst },
    projects: [
      // A worker runs file after file with the modules already loaded: loading the app (its
      // schema, Prisma's client, PGlite) again for every file took seconds of CPU per file.
      { extends: true, test: { name: 'shared', include: TESTS, exclude: [...ISOLATED, ...CITUS_ONLY], isolate: false } },
      { extends: true, test: { name: 'isolated', include: ISOLATED, isolate: true } },
    ],
  },
});

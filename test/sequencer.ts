// The order files start in: the longest first, so that the run does not end on one long file
// with the other workers idle. Vitest orders by the durations of the last run it cached
// (in node_modules/.vite), and otherwise by file size, largest first: in a clean clone that
// started the 83-byte test/cli/cli-pglite.test.ts (a minute and a half of CLI processes) near
// the end. Here a file without a cached duration gets the one it took in a full run
// (SLOWEST), or else one guessed from its size.
import { relative } from 'node:path';
import { statSync } from 'node:fs';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Seconds the slowest files took in a full run (2 cores, 3 workers, a loaded machine). */
const SLOWEST: Record<string, number> = {
  'test/server/lifecycle.test.ts': 109,
  'test/cli/cli-pglite.test.ts': 99,
  'test/clients/languages.test.ts': 68,
  'test/cli/listen.test.ts': 61,
  'test/events/subscription-ends.test.ts': 53,
  'test/server/first-run.test.ts': 50,
  'test/server/cluster.test.ts': 48,
  'test/clients/packages.test.ts': 41,
  'test/rate-limit/rate-limit.test.ts': 38,
  'test/integrity/references.test.ts': 36,
  'test/webhooks/webhooks.test.ts': 36,
  'test/cli/cli-postgres.test.ts': 36,
  'test/db/migrations.test.ts': 33,
  'test/resources/operations.test.ts': 31,
  'test/webhooks/order.test.ts': 25,
  'test/reliability/database-hang.test.ts': 25,
  'test/graphql/operations.test.ts': 24,
  'test/webhooks/instances.test.ts': 21,
  'test/reliability/idempotency-outcome.test.ts': 21,
  'test/imports/cli.test.ts': 21,
  'test/imports/resume.test.ts': 20,
  'test/browser/graphiql.test.ts': 18,
  'test/server/production-build.test.ts': 13,
};

/** Milliseconds a file without a duration is guessed to take per byte of its source (the median in that run). */
const MS_PER_BYTE = 0.9;

export default class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const estimates = new Map<TestSpecification, { failed: boolean; ms: number }>();
    for (const spec of files) {
      const path = relative(root, spec.moduleId);
      const cached = this.ctx.cache.getFileTestResults(`${spec.project.name}:${path}`);
      const hint = SLOWEST[path.split('\\').join('/')];
      const ms = cached?.duration ?? (hint === undefined ? statSync(spec.moduleId).size * MS_PER_BYTE : hint * 1000);
      estimates.set(spec, { failed: cached?.failed ?? false, ms });
    }
    return [...files].sort((a, b) => {
      // As vitest's: groups in their order, isolated projects first, failed files first.
      const group = a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder;
      if (group !== 0) return group;
      if (a.project.config.isolate !== b.project.config.isolate) return a.project.config.isolate ? -1 : 1;
      const [ea, eb] = [estimates.get(a)!, estimates.get(b)!];
      if (ea.failed !== eb.failed) return ea.failed ? -1 : 1;
      return eb.ms - ea.ms;
    });
  }
}

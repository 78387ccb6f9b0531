// The order files start in: the longest first, so that the run does not end on one long file
// with the other workers idle. Vitest orders by the durations of the last run it cached
// (in node_modules/.vite), and otherwise by file size, largest first: in a clean clone that
// started the 83-byte test/cli/cli-pglite.test.ts (a minute and a half of CLI processes) near
// the end. Here a file without a cached duration gets the one it took in a full run
// (SLOWEST), or else one guessed from its size.
import { relative } from 'node:path';
import { statSync } from 'node:fs';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Seconds the slowest files took in a full run (2 cores, 3 workers); with them a clean clone starts files in the order a second run does. */
const SLOWEST: Record<string, number> = {
  'test/events/subscription-ends.test.ts': 36,
  'test/server/first-run.test.ts': 26,
  'test/webhooks/webhooks.test.ts': 24,
  'test/clients/languages.test.ts': 20,
  'test/cli/cli-pglite.test.ts': 20,
  'test/reliability/database-hang.test.ts': 18,
  'test/reliability/idempotency-outcome.test.ts': 18,
  'test/server/lifecycle.test.ts': 16,
  'test/rest/sync.test.ts': 15,
  'test/integrity/references.test.ts': 14,
  'test/server/cluster.test.ts': 13,
  'test/resources/operations.test.ts': 13,
  'test/rate-limit/rate-limit.test.ts': 13,
  'test/web/login.test.ts': 13,
  'clients/js/test/client.test.ts': 12,
  'test/rest/openapi.test.ts': 12,
  'test/rate-limit/redis-cluster.test.ts': 12,
  'test/rest/list-matrix.test.ts': 11,
  'test/graphql/operations.test.ts': 11,
  'test/imports/resume.test.ts': 10,
  'test/clients/packages.test.ts': 10,
  'test/browser/graphiql.test.ts': 9,
  'test/db/migrations.test.ts': 9,
  'test/reliability/fuzz.test.ts': 9,
  'test/reliability/database-outage.test.ts': 9,
  'test/server/keep-alive.test.ts': 9,
  'test/webhooks/instances.test.ts': 9,
  'test/cli/listen.test.ts': 8,
  'test/auth/isolation.test.ts': 8,
  'test/reliability/idempotency.test.ts': 8,
  'test/imports/cli.test.ts': 8,
  'test/cli/cli-postgres.test.ts': 8,
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

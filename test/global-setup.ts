// Before any test file runs: the migrated templates that test databases are copied from
// (test/helpers/databases.ts) and the compiled service the process tests start
// (test/helpers/service-build.ts), made once here rather than raced for by the workers; and
// the PGlite folders earlier runs left behind, swept once a day old.
import { ensureTemplate, sweepTestFolders } from './helpers/databases.js';
import { builtService } from './helpers/service-build.js';

export default async function setup(): Promise<void> {
  builtService();
  sweepTestFolders();
  await Promise.all([ensureTemplate('pglite'), ensureTemplate('postgres')]);
}

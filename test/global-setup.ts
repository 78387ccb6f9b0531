// Before any test file runs: the migrated templates that test databases are copied from
// (test/helpers/databases.ts), made once here rather than raced for by the workers.
import { ensureTemplate } from './helpers/databases.js';

export default async function setup(): Promise<void> {
  await Promise.all([ensureTemplate('pglite'), ensureTemplate('postgres')]);
}

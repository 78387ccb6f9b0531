// The service compiled to JavaScript file by file, as `npm run build` lays it out (into
// .test-build/ beside dist/, so its paths to prisma/ and schema.graphql hold), once per
// version of the sources. Tests of the process start it: starting the TypeScript sources
// through tsx took 3.45 CPU-seconds a process on this machine, the compiled service 2.1.
// esbuild strips the types (the sources are isolatedModules, so its output is tsc's) in a
// fraction of a second, where tsc took 8 s and 13 CPU-seconds before any test could start;
// `npm test` type-checks first, and test/server/production-build.test.ts runs the real
// `npm run build`. `npm start` itself (tsx) is started by the tests that are about it.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BUILD = join(ROOT, '.test-build');
const STAMP = join(BUILD, '.sources');

const walk = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? walk(join(dir, entry.name)) : [join(dir, entry.name)]));

function sourcesHash(sources: string[]): string {
  const hash = createHash('sha256').update('esbuild\0');
  for (const file of [...sources, join(ROOT, 'tsconfig.json'), join(ROOT, 'tsconfig.build.json')].sort()) {
    hash.update(relative(ROOT, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

let built: string | undefined;

/** The compiled service's entry point, built first if the sources changed since the last build. */
export function builtService(): string {
  if (built) return built;
  const sources = walk(join(ROOT, 'src'));
  const hash = sourcesHash(sources);
  if (!existsSync(STAMP) || readFileSync(STAMP, 'utf8') !== hash) {
    // Built aside and moved in whole: a build that fails or races another leaves no half.
    const building = mkdtempSync(join(ROOT, '.test-build-'));
    try {
      const entryPoints = sources.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'));
      buildSync({ entryPoints, outbase: join(ROOT, 'src'), outdir: building, format: 'esm', platform: 'node', target: 'node20', logLevel: 'silent' });
      writeFileSync(join(building, '.sources'), hash);
      rmSync(BUILD, { recursive: true, force: true });
      renameSync(building, BUILD);
    } catch (error) {
      rmSync(building, { recursive: true, force: true });
      if (!existsSync(STAMP) || readFileSync(STAMP, 'utf8') !== hash) throw error;
    }
  }
  return (built = join(BUILD, 'main.js'));
}

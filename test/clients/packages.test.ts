// Each client installed the way its ecosystem installs things, into a fresh project outside
// this repository, then its README example run against the real server: a venv and pip
// (no index), a packed npm tarball, a built gem, and Composer with a path repository.
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type Api } from '../helpers/api.js';
import { ANY_DATABASE } from '../helpers/databases.js';
import { runTool } from '../helpers/processes.js';

async function ok(command: string[], cwd: string, env: Record<string, string> = {}): Promise<string> {
  const result = await runTool(command, { cwd, env });
  expect(result.code, `${command.join(' ')}\n${result.output}`).toBe(0);
  return result.output;
}

const readmeExample = (dir: string) => /```\w+\n([\s\S]*?)```/.exec(readFileSync(join(dir, 'README.md'), 'utf8'))![1]!;

describe('client packages', () => {
  let api: Api;
  let env: Record<string, string>;
  const project = () => mkdtempSync(join(tmpdir(), 'crm-client-project-'));
  beforeAll(async () => {
    api = await startApi(ANY_DATABASE, { key: { org: 'Acme' } });
    env = { CRM_API_KEY: api.keys.key!, CRM_BASE_URL: `${api.url}/v1` };
  });
  afterAll(() => api.stop());

  it('Python: pip installs it into a fresh venv with no index, and the README example runs', async () => {
    const dir = project();
    try {
      // The interpreter's pip installs into the venv (--python): a venv of its own pip took
      // 5 CPU-seconds to make, the rest of this test 2.
      await ok(['python3', '-m', 'venv', '--without-pip', join(dir, 'venv')], dir);
      await ok(['python3', '-m', 'pip', '--python', join(dir, 'venv/bin/python'), 'install', '--no-index', '--no-build-isolation', resolve('clients/python')], dir);
      writeFileSync(join(dir, 'example.py'), readmeExample('clients/python'));
      expect(await ok([join(dir, 'venv/bin/python'), 'example.py'], dir, env)).toMatch(/total/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('JavaScript: npm pack builds dist/, a fresh project installs the tarball, and the README example runs', async () => {
    const dir = project();
    try {
      await ok(['npm', 'pack', '--pack-destination', dir], resolve('clients/js'));
      const tarball = readdirSync(dir).find((file) => file.endsWith('.tgz'))!;
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true, type: 'module' }));
      await ok(['npm', 'install', '--offline', '--no-audit', '--no-fund', `./${tarball}`], dir);
      writeFileSync(join(dir, 'example.mjs'), readmeExample('clients/js'));
      expect(await ok([process.execPath, 'example.mjs'], dir, env)).toMatch(/total/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('Ruby: gem build and gem install --local, and the README example runs', async () => {
    const dir = project();
    try {
      await ok(['gem', 'build', 'crm_client.gemspec', '--output', join(dir, 'crm_client.gem')], resolve('clients/ruby'));
      const gems = { GEM_HOME: join(dir, 'gems'), GEM_PATH: join(dir, 'gems') };
      await ok(['gem', 'install', '--local', '--no-document', join(dir, 'crm_client.gem')], dir, gems);
      writeFileSync(join(dir, 'example.rb'), readmeExample('clients/ruby'));
      expect(await ok(['ruby', 'example.rb'], dir, { ...env, ...gems })).toMatch(/total/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('PHP: Composer requires it from a path repository (PSR-4 autoload), and the README example runs', async () => {
    const dir = project();
    try {
      writeFileSync(
        join(dir, 'composer.json'),
        JSON.stringify({ repositories: [{ type: 'path', url: resolve('clients/php'), options: { symlink: false } }, { 'packagist.org': false }], require: { 'crm/client': '*' } }),
      );
      await ok(['composer', 'install', '--no-interaction', '--no-progress'], dir, { COMPOSER_HOME: join(dir, '.composer') });
      writeFileSync(join(dir, 'example.php'), readmeExample('clients/php'));
      expect(await ok(['php', 'example.php'], dir, env)).toMatch(/total/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// The Python, PHP and Ruby clients run their own tests, in their own language's standard
// test tool, against the real server on a fresh embedded database.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { startApi } from '../helpers/api.js';

const LANGUAGES: Array<{ name: string; command: string[] }> = [
  { name: 'Python (unittest)', command: ['python3', '-m', 'unittest', 'discover', '-s', 'clients/python/tests', '-t', 'clients/python', '-v'] },
  { name: 'Ruby (minitest)', command: ['ruby', 'clients/ruby/test/test_client.rb'] },
  { name: 'PHP (plain assertions)', command: ['php', 'clients/php/tests/ClientTest.php'] },
];

function run(command: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(command[0]!, command.slice(1), { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c));
  child.stderr.on('data', (c: Buffer) => (output += c));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, output })));
}

describe.each(LANGUAGES)('$name client', ({ command }) => {
  it('passes its tests against the real server', async () => {
    const api = await startApi('pglite', { full: { org: 'Acme' }, readOnly: { org: 'Acme', scopes: 'customers:read' } }, { RATE_LIMIT_MAX: '1000' });
    const limited = await startApi('pglite', { key: { org: 'Limited' } }, { RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW_SECONDS: '2' });
    try {
      const result = await run(command, {
        CRM_BASE_URL: `${api.url}/v1`,
        CRM_API_KEY: api.keys.full!,
        CRM_READONLY_KEY: api.keys.readOnly!,
        CRM_LIMITED_BASE_URL: `${limited.url}/v1`,
        CRM_LIMITED_KEY: limited.keys.key!,
      });
      expect(result.code, result.output).toBe(0);
    } finally {
      await api.stop();
      await limited.stop();
    }
  });
});

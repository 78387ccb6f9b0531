// The test suite's own hygiene: the folders killed runs and earlier sets of migrations left in
// the temporary folder (in memory on this machine) are removed once a day old.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureTemplate, sweepTestFolders } from '../helpers/databases.js';

describe('test folders', () => {
  it('a day-old copy, test folder or old template is removed; current templates, newer folders and others stay', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sweep-'));
    try {
      const current = (await ensureTemplate('pglite')).split('/').at(-1)!;
      const old = Date.now() / 1000 - 2 * 86_400;
      for (const name of ['crm-test-killed', 'crm-first-run-killed', 'crm-template-0123456789abcdef', current, 'crm-test-running', 'someone-elses', 'crm-backup']) {
        mkdirSync(join(dir, name));
        if (name !== 'crm-test-running') utimesSync(join(dir, name), old, old);
      }
      expect(sweepTestFolders(dir).sort()).toEqual(['crm-first-run-killed', 'crm-template-0123456789abcdef', 'crm-test-killed']);
      expect(readdirSync(dir).sort()).toEqual([current, 'crm-test-running', 'someone-elses', 'crm-backup'].sort());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

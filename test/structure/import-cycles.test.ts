// No module of src/ imports itself back, type-only imports included: a cycle makes load
// order matter (a value read before its module ran) and ties types to the wrong module.
// src/generated is Prisma's output, not ours, and left out.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importCycles, importGraph } from './imports.js';

describe('imports', () => {
  it('src/ has no import cycle, type-only imports included', () => {
    const graph = importGraph('src');
    for (const file of graph.keys()) if (file.startsWith('src/generated/')) graph.delete(file);
    expect(graph.size).toBeGreaterThan(50);
    // Every file's imports were read: the schema imports its modules, the server its parts.
    expect(graph.get('src/schema/index.ts')).toContain('src/schema/event.ts');
    // The schema also loads every file of its resources folder (by name, not a static import).
    const resources = [...graph.keys()].filter((file) => file.startsWith('src/schema/resources/'));
    expect(resources).toContain('src/schema/resources/customer.ts');
    graph.get('src/schema/index.ts')!.push(...resources);
    expect(importCycles(graph).map((cycle) => cycle.join(' -> '))).toEqual([]);
  });

  it('the check finds cycles, long and short', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a', 'd']],
      ['d', []],
      ['e', ['e']],
    ]);
    expect(importCycles(graph)).toEqual(expect.arrayContaining([['a', 'b', 'c', 'a'], ['e', 'e']]));
    expect(importCycles(graph)).toHaveLength(2);
  });

  it('reads type-only imports, re-exports and import() as edges, and not comments or strings', () => {
    const dir = mkdtempSync(join(tmpdir(), 'imports-'));
    try {
      const files: Record<string, string> = {
        'a.ts': [
          "import type { B } from './b.js';",
          "export { c } from './c.js';",
          "type D = import('./d.js').D;",
          "const e = () => import('./e.js');",
          "import {\n  f,\n} from './nested/index.js';",
          "// import './comment.js';",
          "const text = \"import './string.js'\";",
        ].join('\n'),
        'b.ts': '', 'c.ts': '', 'd.ts': '', 'e.ts': '', 'nested/index.ts': '', 'comment.ts': '', 'string.ts': '',
      };
      mkdirSync(join(dir, 'nested'));
      for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
      expect(importGraph('.', dir).get('a.ts')!.sort()).toEqual(['b.ts', 'c.ts', 'd.ts', 'e.ts', 'nested/index.ts']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// The import graph of src/, as the files declare it: every `import`, `import type`,
// `export ... from` and `import(...)` of a relative module, type-only ones included (they are
// the cycles tsc tolerates and a reader does not). Read with TypeScript's own pre-processor,
// so comments and strings are never mistaken for imports.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const ROOT = resolve(import.meta.dirname, '../..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** `./x.js` from `file` -> the .ts file it names (NodeNext spells imports with .js). */
function target(file: string, specifier: string, known: Set<string>): string | undefined {
  const base = resolve(dirname(file), specifier);
  const candidates = [base.replace(/\.js$/, '.ts'), base.replace(/\.js$/, '.tsx'), base, `${base}.ts`, join(base, 'index.ts')];
  return candidates.find((candidate) => known.has(candidate));
}

/** file (relative to `base`, the repository) -> the files under `dir` it imports. */
export function importGraph(dir = 'src', base = ROOT): Map<string, string[]> {
  const files = sourceFiles(resolve(base, dir));
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = importedFiles
      .filter(({ fileName }) => fileName.startsWith('.'))
      .map(({ fileName }) => target(file, fileName, known))
      .filter((found): found is string => found !== undefined);
    graph.set(relative(base, file), [...new Set(targets.map((found) => relative(base, found)))]);
  }
  return graph;
}

/** Every cycle, each once (the strongly connected components of more than one file, or a file importing itself), with one path around it. */
export function importCycles(graph: Map<string, string[]>): string[][] {
  // Tarjan's strongly connected components.
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (node: string) => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node)!, index.get(to)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || (graph.get(node) ?? []).includes(node)) components.push(component);
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return components.map((component) => path(graph, new Set(component)));
}

/** One way around a component, for the message: a -> b -> ... -> a. */
function path(graph: Map<string, string[]>, members: Set<string>): string[] {
  const start = [...members].sort()[0]!;
  const seen = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const to of graph.get(node) ?? []) {
      if (!members.has(to)) continue;
      if (to === start) {
        const way = [start];
        for (let at = node; at !== start; at = seen.get(at)!) way.splice(1, 0, at);
        return [...way, start];
      }
      if (!seen.has(to)) {
        seen.set(to, node);
        queue.push(to);
      }
    }
  }
  return [start, start];
}

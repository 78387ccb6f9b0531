// The tables of docs/API.md that list resources, written from the schema and the REST route
// table (`npm run docs:generate`), so a resource added is documented without a hand edit;
// test/structure/docs.test.ts fails while the file differs from what this would write.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ROUTES } from '../src/rest/router.js';
import { snakeCase } from '../src/rest/names.js';
import { listSpecOf, relationsOf } from '../src/schema/list-query.js';
import { registeredResources } from '../src/schema/registry.js';

export const API_DOCS = fileURLToPath(new URL('../docs/API.md', import.meta.url));

const code = (text: string) => `\`${text}\``;
const codes = (names: string[]) => names.map(code).join(', ');
const segment = (path: string) => path.split('/')[1]!;

/**
 * Routes as the table writes them: methods on one path joined (`PATCH`/`DELETE /jobs/{id}`),
 * then a path's verbs after `{id}` joined (`POST /jobs/{id}/restore\|start`).
 */
function routeCells(routes: typeof ROUTES): string {
  // Cell -> what it joins, in the routes' order: a path's methods, or (`POST /jobs/{id}/`) its verbs.
  const cells = new Map<string, string[]>();
  const add = (cell: string, part: string) => cells.set(cell, [...(cells.get(cell) ?? []), part]);
  for (const { method, path } of routes) {
    const verb = method === 'POST' ? /^(\/[^/]+\/\{id\})\/([a-z_]+)$/.exec(path) : null;
    if (verb) add(`POST ${verb[1]}/`, verb[2]!);
    else add(path, method);
  }
  return [...cells]
    .map(([cell, parts]) => (cell.startsWith('POST ') ? code(`${cell}${parts.join('\\|')}`) : [...parts.slice(0, -1).map(code), code(`${parts.at(-1)} ${cell}`)].join('/')))
    .join(', ');
}

/** Route -> scope: the routes each scope opens, grouped by the path's first segment. */
export function scopeTable(): string {
  const groups = new Map<string, typeof ROUTES>();
  for (const route of ROUTES) {
    const key = `${segment(route.path)} ${route.scope}`;
    groups.set(key, [...(groups.get(key) ?? []), route]);
  }
  const order = [...groups.keys()].sort();
  return ['| Route | Scope |', '|---|---|', ...order.map((key) => `| ${routeCells(groups.get(key)!)} | ${code(groups.get(key)![0]!.scope)} |`)].join('\n');
}

/** Each resource list's sort keys, ranges, sets, exact filters and relation filters (REST names). */
export function listTable(): string {
  const rows = registeredResources().map(({ type, path }) => {
    const fields = Object.entries(listSpecOf(type).fields).filter(([name]) => name !== 'externalId' && name !== 'metadata');
    const names = (keep: (field: (typeof fields)[number][1]) => boolean) => codes(fields.filter(([, field]) => keep(field)).map(([name]) => snakeCase(name)));
    return `| ${code(`/${path}`)} | ${names((f) => !!f.sort)} | ${names((f) => ['int', 'date', 'datetime'].includes(f.kind))} | ${names((f) => f.kind === 'enum')} | ${names((f) => !!f.exact)} | ${codes(Object.keys(relationsOf(type)).map(snakeCase))} |`;
  });
  return ['| List | Sortable (`order_by`) | Ranges | Sets | Exact | Relations |', '|---|---|---|---|---|---|', ...rows.sort()].join('\n');
}

const SECTIONS: Record<string, () => string> = { scopes: scopeTable, lists: listTable };

/** docs/API.md with every generated section written anew from the schema. */
export function generatedApiDocs(current = readFileSync(API_DOCS, 'utf8')): string {
  let text = current;
  for (const [name, table] of Object.entries(SECTIONS)) {
    const begin = `<!-- generated: ${name} (npm run docs:generate) -->`;
    const end = `<!-- end generated: ${name} -->`;
    const from = text.indexOf(begin);
    const to = text.indexOf(end);
    if (from < 0 || to < from) throw new Error(`docs/API.md has no "${begin}" ... "${end}" section`);
    text = `${text.slice(0, from + begin.length)}\n${table()}\n${text.slice(to)}`;
  }
  return text;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(API_DOCS, generatedApiDocs());
  console.log('docs/API.md: generated tables written');
}

// Writes each client's generated file (clients/*) from the service's own OpenAPI document: its
// resources (a path, its moves, whether it takes an update and syncs) and, for TypeScript, their
// types. A resource declared in the schema with defineResource thus reaches every client with no
// hand edit: `npm run clients:generate`. test/clients/generated.test.ts fails when a file is not
// what this writes now.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { openApiDocument } from '../src/rest/openapi.js';
import { ROUTES } from '../src/rest/router.js';

export const COMMAND = 'npm run clients:generate';
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The generated file of each client, relative to the repository. */
export const FILES = {
  js: 'clients/js/src/resources.ts',
  python: 'clients/python/crm_client/_resources.py',
  ruby: 'clients/ruby/lib/crm_client/resources.rb',
  php: 'clients/php/src/Resources.php',
} as const;

/**
 * Collections the clients serve by hand: not a record resource's shape. Events are read-only
 * (and resent); a webhook endpoint has no restore, upsert, batch or sync, and its create answers
 * a secret; an import's body is a CSV file and it has no list; request logs are a list only.
 */
export const HAND_WRITTEN: readonly string[] = ['events', 'imports', 'request_logs', 'webhook_endpoints'];

/**
 * Resources whose clients add methods of their own (their operations beyond the generic
 * resource's: customers' duplicates and merge), and each language's hand-written subclass of
 * its generic resource for them. JavaScript adds them in clients/js/src/index.ts (`Extended`).
 */
export const EXTENDED: Readonly<Record<string, { python: string; ruby: string; php: string }>> = {
  customers: { python: '_Customers', ruby: 'Customers', php: 'Customers' },
};

// ---------------------------------------------------------------------------------------------
// The document, as far as this reads it.

export interface Schema {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  format?: string;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  anyOf?: Schema[];
  description?: string;
}
interface Parameter {
  name: string;
  in: string;
  schema?: Schema;
}
interface Operation {
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses?: Record<string, { content?: Record<string, { schema: Schema }> }>;
}
export interface OpenApi {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
  tags?: Array<{ name: string; description?: string }>;
}

/** The document the service serves at /v1/openapi.json. */
export function currentDocument(): OpenApi {
  return JSON.parse(JSON.stringify(openApiDocument(ROUTES))) as OpenApi;
}

// ---------------------------------------------------------------------------------------------
// The resources in it.

export interface ResourceModel {
  /** `webhook_endpoints`: /v1/{path}; the accessor in Python and Ruby. */
  path: string;
  /** `webhookEndpoints`: the accessor in JavaScript and PHP. */
  accessor: string;
  description: string;
  /** The schema of a record (`Proposal`) and of a create's body (`CreateProposalInput`). */
  record: string;
  create: string;
  /** PATCH /{path}/{id}. */
  update: boolean;
  /** GET /{path}/sync. */
  sync: boolean;
  /** POST /{path}/{id}/{verb} with no body, other than restore: sorted. */
  moves: string[];
  /** Operations beyond the generic resource's, served by the EXTENDED classes; `name` is the method's (snake_case). */
  extras: Array<{ method: string; path: string; name: string }>;
  list: Operation;
}

export interface Model {
  resources: ResourceModel[];
  /** The collections left to hand-written code (HAND_WRITTEN) that the document has. */
  handWritten: string[];
}

export const camelCase = (name: string): string => name.replace(/_(\w)/g, (_, c: string) => c.toUpperCase());
const pascalCase = (name: string): string => camelCase(name).replace(/^\w/, (c) => c.toUpperCase());
const schemaName = (ref: string): string => ref.replace('#/components/schemas/', '');
const jsonBody = (operation: Operation | undefined): Schema | undefined => operation?.requestBody?.content['application/json']?.schema;

/** What every generated resource's client serves, as [method, path, what fails without it]. */
function genericOperations(path: string): Array<[string, string, string]> {
  return [
    ['get', `/${path}`, 'list'],
    ['post', `/${path}`, 'create'],
    ['get', `/${path}/{id}`, 'get'],
    ['delete', `/${path}/{id}`, 'delete'],
    ['post', `/${path}/{id}/restore`, 'restore'],
    ['put', `/${path}/by_external_id/{external_id}`, 'upsert'],
    ['post', `/${path}/batch`, 'batch'],
    ['get', `/${path}/{id}/events`, 'events'],
  ];
}

export function modelOf(document: OpenApi): Model {
  const collections = [...new Set(Object.keys(document.paths).map((path) => path.split('/')[1]!))].sort();
  const resources: ResourceModel[] = [];
  const handWritten: string[] = [];
  for (const path of collections) {
    if (HAND_WRITTEN.includes(path)) {
      handWritten.push(path);
      continue;
    }
    const operations = Object.entries(document.paths)
      .filter(([p]) => p === `/${path}` || p.startsWith(`/${path}/`))
      .flatMap(([p, methods]) => Object.entries(methods).map(([method, operation]) => ({ method, path: p, operation })))
      .sort((a, b) => (a.path === b.path ? a.method.localeCompare(b.method) : a.path < b.path ? -1 : 1));
    const generic = genericOperations(path);
    const missing = generic.filter(([method, p]) => !document.paths[p]?.[method]).map(([, , name]) => name);
    if (missing.length > 0) {
      throw new Error(
        `/${path} has no ${missing.join(', ')}: the clients' generic resource serves list, create, get, delete, restore, upsert, batch and events. ` +
          `Serve it by hand in each client and add it to HAND_WRITTEN in scripts/generate-clients.ts.`,
      );
    }
    const moves: string[] = [];
    const extras: ResourceModel['extras'] = [];
    let update = false;
    let sync = false;
    for (const { method, path: p, operation } of operations) {
      if (generic.some(([m, g]) => m === method && g === p)) continue;
      const segments = p.split('/').slice(2);
      if (method === 'patch' && p === `/${path}/{id}`) update = true;
      else if (method === 'get' && p === `/${path}/sync`) sync = true;
      else if (method === 'post' && segments.length === 2 && segments[0] === '{id}' && !operation.requestBody) moves.push(segments[1]!);
      else extras.push({ method, path: p, name: segments.filter((s) => !s.startsWith('{')).at(-1) ?? method });
    }
    if (extras.length > 0 && !EXTENDED[path]) {
      const named = extras.map((e) => `${e.method.toUpperCase()} ${e.path}`).join(', ');
      throw new Error(`/${path} has ${named}, which the generic resource does not serve: write a subclass of it in each client and name it in EXTENDED in scripts/generate-clients.ts.`);
    }
    const list = document.paths[`/${path}`]!['get']!;
    const items = list.responses?.['200']?.content?.['application/json']?.schema.properties?.['data']?.items?.$ref;
    const create = jsonBody(document.paths[`/${path}`]!['post'])?.$ref;
    if (!items || !create) throw new Error(`/${path}: its list must answer { data: [$ref] } and its create take a $ref body`);
    resources.push({
      path,
      accessor: camelCase(path),
      description: document.tags?.find((tag) => tag.name === path)?.description ?? `The ${path}.`,
      record: schemaName(items),
      create: schemaName(create),
      update,
      sync,
      moves: moves.sort(),
      extras,
      list,
    });
  }
  return { resources, handWritten };
}

// ---------------------------------------------------------------------------------------------
// Writing.

const HEADER = [`Generated by \`${COMMAND}\` (scripts/generate-clients.ts) from the service's`, 'OpenAPI document: do not edit.'];
const oneLine = (text: string): string => text.replace(/\s+/g, ' ').trim();
const jsDoc = (text: string, indent: string): string => `${indent}/** ${oneLine(text).replaceAll('*/', '*\\/')} */\n`;
const single = (text: string): string => `'${text.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
const identifier = (name: string): string => (/^[A-Za-z_$][\w$]*$/.test(name) ? name : single(name));

/** `items` joined by `separator`, as many to a line as fit in `width` after `indent`. */
function fill(items: string[], separator: string, indent: string, width = 100): string[] {
  const lines: string[] = [];
  let line = '';
  for (const item of items) {
    if (line && indent.length + line.length + separator.length + item.length > width) {
      lines.push(line);
      line = item;
    } else line = line ? line + separator + item : item;
  }
  return [...lines, line];
}

/** Named TypeScript types: a generated record's schema by its name, and enums shared by several resources by their property's. */
interface Names {
  schemas: Map<string, string>;
  enums: Map<string, string>;
}

const enumKey = (values: unknown[]): string => JSON.stringify(values);

/** Types of values, as records and inputs hold them. */
function tsType(document: OpenApi, schema: Schema, names: Names, input: boolean): string {
  if (schema.$ref) {
    const name = schemaName(schema.$ref);
    return names.schemas.get(name) ?? tsType(document, document.components.schemas[name]!, names, input);
  }
  if (schema.anyOf) return [...new Set(schema.anyOf.map((s) => tsType(document, s, names, input)))].join(' | ');
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  const nullable = types.includes('null') ? ' | null' : '';
  const [type, ...others] = types.filter((t) => t !== 'null');
  if (types.length === 1 && nullable) return 'null';
  if (others.length > 0) throw new Error(`A schema of several types (${types.join(', ')}) has no TypeScript type here`);
  if (schema.enum) {
    const values = schema.enum.filter((v) => v !== null);
    return (names.enums.get(enumKey(values)) ?? values.map((v) => single(String(v))).join(' | ')) + nullable;
  }
  switch (type) {
    case 'string':
      return `string${nullable}`;
    case 'integer':
    case 'number':
      return `number${nullable}`;
    case 'boolean':
      return `boolean${nullable}`;
    case 'array': {
      const item = schema.items ? tsType(document, schema.items, names, input) : 'unknown';
      return `${/[ |&]/.test(item) && !item.startsWith('{') ? `(${item})` : item}[]${nullable}`;
    }
    case 'object': {
      if (schema.properties) return `${inline(properties(document, schema, names, input, ''))}${nullable}`;
      const values = typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
      if (values && values.type === 'string' && !values.enum) return `Metadata${nullable}`;
      return `Record<string, ${values ? tsType(document, values, names, input) : 'unknown'}>${nullable}`;
    }
    default:
      throw new Error(`A schema of type ${String(type)} has no TypeScript type here`);
  }
}

/** An object's properties, `name: Type;` each: optional ones also take undefined in inputs (exactOptionalPropertyTypes). */
function properties(document: OpenApi, schema: Schema, names: Names, input: boolean, indent: string, skip: ReadonlySet<string> = new Set(), documented = false): string[] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties ?? {})
    .filter(([name]) => !skip.has(name))
    .map(([name, property]) => {
      const type = tsType(document, property, names, input);
      const declared = required.has(name) ? `${identifier(name)}: ${type};` : `${identifier(name)}?: ${type}${input ? ' | undefined' : ''};`;
      return (documented && property.description ? jsDoc(property.description, indent) : '') + indent + declared;
    });
}

const NOT_FILTERS = new Set([
  // The list call's own options (ListOptions): paging, order and shape.
  'page',
  'limit',
  'cursor',
  'order_by',
  'fields',
  'expand',
  // Sync's (SyncOptions): they put the list in change order.
  'updated_since',
  'include_deleted',
]);

const RANGE = new Set(['gt', 'gte', 'lt', 'lte']);
const isRange = (schema: Schema): boolean => !!schema.properties && Object.keys(schema.properties).length > 0 && Object.keys(schema.properties).every((k) => RANGE.has(k));
/** A related list's filters: an object of filters that is not a range (`customer[search]=`). */
const isRelated = (schema: Schema): boolean => !!schema.properties && !isRange(schema);

/** The type of a filter's value, as the client takes it (rendered as REST's query by listQuery). */
function filterType(document: OpenApi, schema: Schema, related: Map<string, string>): string {
  if (schema.$ref) return filterType(document, document.components.schemas[schemaName(schema.$ref)]!, related);
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  const scalar = (s: Schema): string => {
    if (s.enum) return s.enum.map((v) => single(String(v))).join(' | ');
    if (s.type === 'string') return s.format === 'date-time' ? 'Timestamp' : s.format === 'date' ? 'CalendarDate' : 'string';
    if (s.type === 'integer' || s.type === 'number') return 'number';
    if (s.type === 'boolean') return 'boolean';
    throw new Error(`A filter of type ${JSON.stringify(s.type)} has no TypeScript type here`);
  };
  if (type === 'object' && isRange(schema)) {
    const bounds = [...new Set(Object.values(schema.properties!).map(scalar))];
    if (bounds.length !== 1) throw new Error(`A range's bounds differ in type: ${bounds.join(', ')}`);
    return `Range<${bounds[0]}>`;
  }
  if (type === 'object' && schema.properties) {
    const body = filtersBody(document, Object.entries(schema.properties), related);
    return related.get(body) ?? body;
  }
  if (type === 'object') return 'Metadata';
  if (type === 'array') return `AnyOf<${schema.items ? scalar(schema.items) : 'string'}>`;
  return scalar(schema);
}

/** An object type on one line: `{ a: string; b?: number }`. */
const inline = (entries: string[]): string => (entries.length > 0 ? `{ ${entries.join(' ').replace(/;$/, '')} }` : '{}');

/** A list's filters, `name?: Type | undefined;` each. */
function filterEntries(document: OpenApi, filters: Array<[string, Schema]>, related: Map<string, string>): string[] {
  return filters.map(([name, schema]) => `${identifier(name)}?: ${filterType(document, schema, related)} | undefined;`);
}

function filtersBody(document: OpenApi, filters: Array<[string, Schema]>, related: Map<string, string>): string {
  return inline(filterEntries(document, filters, related));
}

const listParameters = (resource: ResourceModel): Parameter[] => (resource.list.parameters ?? []).filter((p) => p.in === 'query' && p.schema);
const ownFilters = (resource: ResourceModel): Array<[string, Schema]> =>
  listParameters(resource)
    .filter((p) => !NOT_FILTERS.has(p.name) && !isRelated(p.schema!))
    .map((p) => [p.name, p.schema!]);

/** The values of a list parameter's array items (`order_by`, `expand`). */
const itemValues = (resource: ResourceModel, name: string): string[] => (listParameters(resource).find((p) => p.name === name)?.schema?.items?.enum ?? []).map(String);

/** Enums that several resources' records or inputs share under one property name (a create's `currency`), named after it. */
function sharedEnums(document: OpenApi, resources: ResourceModel[], taken: ReadonlySet<string>): Array<{ name: string; values: unknown[]; description?: string | undefined }> {
  const byProperty = new Map<string, { keys: Set<string>; resources: Set<string>; values: unknown[]; description?: string | undefined }>();
  const visit = (schema: Schema | undefined, resource: string, property?: string): void => {
    if (!schema || schema.$ref) return;
    if (property && schema.enum) {
      const values = schema.enum.filter((v) => v !== null);
      const entry = byProperty.get(property) ?? { keys: new Set(), resources: new Set(), values, description: schema.description };
      entry.keys.add(enumKey(values));
      entry.resources.add(resource);
      byProperty.set(property, entry);
    }
    for (const [name, inner] of Object.entries(schema.properties ?? {})) visit(inner, resource, name);
    visit(schema.items, resource, property);
    for (const inner of schema.anyOf ?? []) visit(inner, resource, property);
  };
  for (const resource of resources) for (const name of [resource.record, resource.create]) visit(document.components.schemas[name], resource.path);
  return [...byProperty]
    .filter(([property, entry]) => entry.keys.size === 1 && entry.resources.size > 1 && !taken.has(pascalCase(property)))
    .map(([property, entry]) => ({ name: pascalCase(property), values: entry.values, description: entry.description }))
    .sort((a, b) => (a.name < b.name ? -1 : 1));
}

export function javascript(document: OpenApi, model: Model): string {
  const { resources } = model;
  const schemas = new Map(resources.map((r) => [r.record, r.record]));
  const taken = new Set(resources.flatMap((r) => [r.record, `${r.record}Input`, `${r.record}Filters`, `${r.record}List`]));
  const enums = sharedEnums(document, resources, taken);
  const names: Names = { schemas, enums: new Map(enums.map((e) => [enumKey(e.values), e.name])) };
  const own = new Map(resources.map((r) => [filtersBody(document, ownFilters(r), new Map()), `${r.record}Filters`]));
  const out: string[] = [
    ...HEADER.map((line) => `// ${line}`),
    '// Each resource: its record, its create input, its list filters and list spec (ListSpec), and',
    '// what its client offers (RESOURCES), by its accessor on CrmClient.',
    "import type { AnyOf, CalendarDate, ListSpec, Metadata, Range, Timestamp } from './index.js';",
    '',
  ];
  for (const { name, values, description } of enums) {
    if (description) out.push(jsDoc(description, '').trimEnd());
    const lines = fill(values.map((v) => single(String(v))), ' | ', '  | ').map((line) => `  | ${line}`);
    out.push(`export type ${name} =`, ...lines.slice(0, -1), `${lines.at(-1)!};`, '');
  }
  for (const resource of resources) {
    const record = document.components.schemas[resource.record]!;
    const create = document.components.schemas[resource.create]!;
    const expand = itemValues(resource, 'expand');
    const sort = itemValues(resource, 'order_by').filter((key) => !key.startsWith('-'));
    const related = listParameters(resource).filter((p) => !NOT_FILTERS.has(p.name) && isRelated(p.schema!));
    const references = expand.map((name) => `${identifier(name)}: ${tsType(document, record.properties?.[name] ?? {}, names, false).replace(/ \| null$/, '')};`);
    const relatedEntries = filterEntries(document, related.map((p) => [p.name, p.schema!]), own);
    const where =
      relatedEntries.length === 0
        ? `${resource.record}Filters`
        : `${resource.record}Filters & ${inline(relatedEntries)}`.length <= 96
          ? `${resource.record}Filters & ${inline(relatedEntries)}`
          : [`${resource.record}Filters & {`, ...relatedEntries.map((entry) => `    ${entry}`), '  }'].join('\n');
    out.push(
      jsDoc(`A record of /v1/${resource.path}.`, '') + `export type ${resource.record} = {`,
      ...properties(document, record, names, false, '  ', new Set(expand), true),
      '};',
      jsDoc(`The body of POST /v1/${resource.path} and of an upsert (an update takes its fields as a merge patch).`, '') + `export type ${resource.record}Input = {`,
      ...properties(document, create, names, true, '  ', new Set(), true),
      '};',
      jsDoc(`The filters of GET /v1/${resource.path}.`, '') + `export type ${resource.record}Filters = {`,
      ...filterEntries(document, ownFilters(resource), new Map()).map((entry) => `  ${entry}`),
      '};',
      jsDoc(`What GET /v1/${resource.path} filters by (its related lists' filters too), sorts by, and expands.`, '') + `export type ${resource.record}List = ListSpec<`,
      `  ${where},`,
      `  ${sort.length > 0 ? fill(sort.map(single), ' | ', '  ').join(' |\n  ') : 'never'},`,
      `  ${references.length > 0 ? inline(references) : 'object'}`,
      '>;',
      '',
    );
  }
  out.push(jsDoc('Each resource\'s types, by its accessor on CrmClient.', '') + 'export interface ResourceTypes {');
  for (const r of resources) out.push(jsDoc(r.description, '  ') + `  ${identifier(r.accessor)}: { record: ${r.record}; input: ${r.record}Input; list: ${r.record}List };`);
  out.push('}', '');
  out.push(
    jsDoc(`What each resource's client offers beside list, get, iterate, create, upsert, batch, delete, restore and events: update (PATCH), sync, and the moves of its status (transition).`, '') +
      'export const RESOURCES = {',
  );
  for (const r of resources) {
    out.push(`  ${identifier(r.accessor)}: { path: ${single(r.path)}, update: ${r.update}, sync: ${r.sync}, moves: [${r.moves.map(single).join(', ')}] },`);
  }
  out.push('} as const;', '');
  return out.join('\n');
}

export function python(model: Model): string {
  const classes = (r: ResourceModel) => EXTENDED[r.path]?.python ?? '_Resource';
  const used = [...new Set(model.resources.map(classes))].sort();
  const py = (text: string) => JSON.stringify(text);
  const out = [
    ...HEADER.map((line) => `# ${line}`),
    '# The API\'s resources: an attribute of Client each, with what its resource offers.',
    'from typing import TYPE_CHECKING',
    '',
    'if TYPE_CHECKING:',
    `    from . import ${['Client', ...used].join(', ')}`,
    '',
    '',
    'class _Resources:',
  ];
  for (const r of model.resources) out.push(`    ${r.path}: ${py(classes(r))}`, `    """${oneLine(r.description).replaceAll('\\', '\\\\').replaceAll('"""', '\\"\\"\\"')}"""`);
  out.push('', '    def _make_resources(self: "Client") -> None:', `        from . import ${used.join(', ')}`, '');
  for (const r of model.resources) {
    const moves = r.moves.length === 1 ? `(${py(r.moves[0]!)},)` : `(${r.moves.map(py).join(', ')})`;
    out.push(`        self.${r.path} = ${classes(r)}(self, ${py(r.path)}, editable=${r.update ? 'True' : 'False'}, sync=${r.sync ? 'True' : 'False'}, moves=${moves})`);
  }
  return out.join('\n') + '\n';
}

export function ruby(model: Model): string {
  const out = [...HEADER.map((line) => `# ${line}`), "# The API's resources: a reader of Client each, with what its resource offers.", 'module CrmClient', '  module Resources'];
  for (const r of model.resources) out.push(`    # ${oneLine(r.description)}`, `    attr_reader :${r.path}`, '');
  out.push('    private', '', '    def make_resources');
  for (const r of model.resources) {
    const moves = r.moves.length > 0 ? `%w[${r.moves.join(' ')}]` : '[]';
    out.push(`      @${r.path} = ${EXTENDED[r.path]?.ruby ?? 'Resource'}.new(self, ${single(r.path)}, editable: ${r.update}, sync: ${r.sync}, moves: ${moves})`);
  }
  out.push('    end', '  end', 'end');
  return out.join('\n') + '\n';
}

export function php(model: Model): string {
  const out = [
    '<?php',
    ...HEADER.map((line) => `// ${line}`),
    "// The API's resources: a property of Client each, with what its resource offers.",
    'declare(strict_types=1);',
    '',
    'namespace Crm;',
    '',
    'trait Resources',
    '{',
  ];
  const cls = (r: ResourceModel) => EXTENDED[r.path]?.php ?? 'Resource';
  for (const r of model.resources) out.push(jsDoc(r.description, '    ') + `    public readonly ${cls(r)} $${r.accessor};`);
  out.push('', '    private function makeResources(): void', '    {');
  for (const r of model.resources) {
    out.push(`        $this->${r.accessor} = new ${cls(r)}($this, ${single(r.path)}, editable: ${r.update}, sync: ${r.sync}, moves: [${r.moves.map(single).join(', ')}]);`);
  }
  out.push('    }', '}');
  return out.join('\n') + '\n';
}

/** Each generated file's content, by its path relative to the repository. */
export function generateClients(document: OpenApi = currentDocument()): Record<string, string> {
  const model = modelOf(document);
  return { [FILES.js]: javascript(document, model), [FILES.python]: python(model), [FILES.ruby]: ruby(model), [FILES.php]: php(model) };
}

/** The generated files whose content on disk (under `root`) is not what generateClients writes now. */
export function staleFiles(root = ROOT, files = generateClients()): string[] {
  return Object.entries(files)
    .filter(([file, content]) => {
      try {
        return readFileSync(join(root, file), 'utf8') !== content;
      } catch {
        return true;
      }
    })
    .map(([file]) => file);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const files = generateClients();
  const stale = new Set(staleFiles(ROOT, files));
  for (const [file, content] of Object.entries(files)) {
    if (stale.has(file)) {
      mkdirSync(dirname(join(ROOT, file)), { recursive: true });
      writeFileSync(join(ROOT, file), content);
    }
    console.log(`${stale.has(file) ? 'wrote' : 'unchanged'} ${file}`);
  }
}

// The clients' generated files (scripts/generate-clients.ts) are what the generator writes from
// the OpenAPI document now, and every resource it finds there is served by every client: each
// call of the resource, made through a transport that records the requests, sends its request
// (and a move the resource lacks, or an update or sync it lacks, is refused). A resource added
// to the document (`notes`) reaches every client, typed in TypeScript, from the generated files
// alone.
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CrmClient } from '../../clients/js/src/index.js';
import { ROUTES } from '../../src/rest/router.js';
import { registeredResources } from '../../src/schema/registry.js';
import { runTool } from '../helpers/processes.js';
import { typeCheck } from '../helpers/typescript.js';
import { COMMAND, EXTENDED, FILES, HAND_WRITTEN, ROOT, camelCase, currentDocument, generateClients, modelOf, staleFiles, type OpenApi, type ResourceModel } from '../../scripts/generate-clients.js';

/** Every answer of the recording transports: an empty last page (a sync's first page ends it). */
const PAGE = JSON.stringify({ data: [], pagination: { page: 1, limit: 100, total: 0, has_more: false, next_cursor: null } });
const BASE = 'http://probe.invalid/v1';

/** What a probe is told of a resource: where to find it and which moves and extra methods to try. */
type Probe = Array<{ path: string; accessor: string; moves: string[]; extras: string[] }>;
/** A probe's answer, by path: the requests sent (`GET /jobs/x1`) and calls refused (`refused update`) in order, and the extra methods it has. */
type Report = Record<string, { calls: string[]; methods: string[] } | null>;

const probeOf = (resources: ResourceModel[], extraName: (name: string) => string): Probe =>
  resources.map((r) => ({ path: r.path, accessor: r.accessor, moves: r.moves, extras: r.extras.map((e) => extraName(e.name)) }));

/** What a client must do with each resource: every call of the generic resource, its update, sync and moves, and refuse a move it lacks. */
function expectedCalls(r: ResourceModel): string[] {
  const item = `/${r.path}/x1`;
  return [
    `GET /${r.path}`,
    `GET ${item}`,
    `POST /${r.path}`,
    `PUT /${r.path}/by_external_id/e1`,
    `POST /${r.path}/batch`,
    `DELETE ${item}`,
    `POST ${item}/restore`,
    `GET ${item}/events`,
    r.update ? `PATCH ${item}` : 'refused update',
    r.sync ? `GET /${r.path}?include_deleted=true&limit=100` : 'refused sync',
    ...r.moves.map((move) => `POST ${item}/${move}`),
    'refused transition bogus',
  ];
}

/** `GET http://probe.invalid/v1/jobs?limit=100&include_deleted=true` as `GET /jobs?include_deleted=true&limit=100`. */
function normalized(report: Report): Report {
  const call = (line: string) => {
    const [method, url] = line.split(' ', 2) as [string, string];
    if (method === 'refused' || !url.startsWith(BASE)) return line;
    const parsed = new URL(url);
    const query = [...parsed.searchParams].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => `${k}=${v}`).join('&');
    return `${method} ${parsed.pathname.slice('/v1'.length)}${query ? `?${query}` : ''}`;
  };
  return Object.fromEntries(Object.entries(report).map(([path, found]) => [path, found && { calls: found.calls.map(call), methods: found.methods }]));
}

function expectServes(language: string, report: Report, resources: ResourceModel[], extraName: (name: string) => string): void {
  for (const r of resources) {
    expect(report[r.path], `${language}: the client has no ${r.path} (a resource of the OpenAPI document)`).toBeTruthy();
    expect(report[r.path]!.calls, `${language}: ${r.path}`).toEqual(expectedCalls(r));
    expect(report[r.path]!.methods, `${language}: ${r.path}'s hand-written methods`).toEqual(r.extras.map((e) => extraName(e.name)));
  }
}

async function probeJs(Client: typeof CrmClient, probe: Probe): Promise<Report> {
  const calls: string[] = [];
  const crm = new Client({
    apiKey: 'k',
    baseUrl: BASE,
    maxRetries: 0,
    fetch: async (url, init) => {
      calls.push(`${init?.method} ${String(url)}`);
      return new Response(PAGE, { status: 200 });
    },
  });
  type Call = (...args: unknown[]) => unknown;
  const report: Report = {};
  for (const { path, accessor, moves, extras } of probe) {
    const resource = (crm as unknown as Record<string, Record<string, Call> | undefined>)[accessor];
    if (!resource) {
      report[path] = null;
      continue;
    }
    calls.length = 0;
    const attempt = async (name: string, run: () => unknown) => {
      try {
        await run();
      } catch {
        calls.push(`refused ${name}`);
      }
    };
    await attempt('list', () => resource['list']!());
    await attempt('get', () => resource['get']!('x1'));
    await attempt('create', () => resource['create']!({}));
    await attempt('upsert', () => resource['upsert']!('e1', {}));
    await attempt('batch', () => resource['batch']!([]));
    await attempt('delete', () => resource['delete']!('x1'));
    await attempt('restore', () => resource['restore']!('x1'));
    await attempt('events', () => resource['events']!('x1'));
    await attempt('update', () => resource['update']!('x1', {}));
    await attempt('sync', async () => {
      for await (const change of resource['sync']!() as AsyncIterable<unknown>) void change;
    });
    for (const move of [...moves, 'bogus']) await attempt(`transition ${move}`, () => resource['transition']!('x1', move));
    report[path] = { calls: [...calls], methods: extras.filter((name) => typeof resource[name] === 'function') };
  }
  return report;
}

const PYTHON_PROBE = `
import json, sys
sys.path.insert(0, sys.argv[1])
import crm_client

PAGE = ${JSON.stringify(PAGE)}.encode()
calls = []


class Probe(crm_client.Client):
    def _send(self, request):
        calls.append(request.get_method() + " " + request.full_url)
        return 200, {}, PAGE


def attempt(name, run):
    try:
        run()
    except Exception:
        calls.append("refused " + name)


crm = Probe(api_key="k", base_url=${JSON.stringify(BASE)}, max_retries=0)
report = {}
for r in json.loads(sys.argv[2]):
    resource = getattr(crm, r["path"], None)
    if resource is None:
        report[r["path"]] = None
        continue
    del calls[:]
    attempt("list", lambda: resource.list())
    attempt("get", lambda: resource.get("x1"))
    attempt("create", lambda: resource.create({}))
    attempt("upsert", lambda: resource.upsert("e1", {}))
    attempt("batch", lambda: resource.batch([]))
    attempt("delete", lambda: resource.delete("x1"))
    attempt("restore", lambda: resource.restore("x1"))
    attempt("events", lambda: resource.events("x1"))
    attempt("update", lambda: resource.update("x1", {}))
    attempt("sync", lambda: list(resource.sync()))
    for move in r["moves"] + ["bogus"]:
        attempt("transition " + move, lambda: resource.transition("x1", move))
    report[r["path"]] = {"calls": list(calls), "methods": [m for m in r["extras"] if callable(getattr(resource, m, None))]}
print(json.dumps(report))
`;

const RUBY_PROBE = `
$LOAD_PATH.unshift(ARGV[0])
require 'crm_client'
require 'json'

PAGE = ${JSON.stringify(PAGE)}
CALLS = []
Answer = Struct.new(:code, :body) do
  def [](_name) = nil
end

class Probe < CrmClient::Client
  def send_request(uri, request)
    CALLS << "#{request.method} #{uri}"
    Answer.new('200', PAGE)
  end
end

def attempt(name)
  yield
rescue StandardError
  CALLS << "refused #{name}"
end

crm = Probe.new(api_key: 'k', base_url: ${JSON.stringify(BASE)}, max_retries: 0)
report = {}
JSON.parse(ARGV[1]).each do |r|
  unless crm.respond_to?(r['path'])
    report[r['path']] = nil
    next
  end
  resource = crm.public_send(r['path'])
  CALLS.clear
  attempt('list') { resource.list }
  attempt('get') { resource.get('x1') }
  attempt('create') { resource.create({}) }
  attempt('upsert') { resource.upsert('e1', {}) }
  attempt('batch') { resource.batch([]) }
  attempt('delete') { resource.delete('x1') }
  attempt('restore') { resource.restore('x1') }
  attempt('events') { resource.events('x1') }
  attempt('update') { resource.update('x1', {}) }
  attempt('sync') { resource.sync.to_a }
  (r['moves'] + ['bogus']).each { |move| attempt("transition #{move}") { resource.transition('x1', move) } }
  report[r['path']] = { calls: CALLS.dup, methods: r['extras'].select { |m| resource.respond_to?(m) } }
end
puts JSON.generate(report)
`;

const PHP_PROBE = `<?php
declare(strict_types=1);
$src = $argv[1];
spl_autoload_register(function (string $class) use ($src): void {
    $file = $src . '/' . substr($class, strlen('Crm\\\\')) . '.php';
    if (str_starts_with($class, 'Crm\\\\') && is_file($file)) require $file;
});
$calls = [];
$page = <<<'JSON'
${PAGE}
JSON;
$crm = new Crm\\Client('k', '${BASE}', maxRetries: 0);
$crm->transport = function (string $method, string $url) use (&$calls, $page): array {
    $calls[] = "$method $url";
    return [200, [], $page];
};
$attempt = function (string $name, callable $run) use (&$calls): void {
    try {
        $run();
    } catch (Throwable) {
        $calls[] = "refused $name";
    }
};
$report = [];
foreach (json_decode($argv[2], true) as $r) {
    if (!property_exists($crm, $r['accessor'])) {
        $report[$r['path']] = null;
        continue;
    }
    $resource = $crm->{$r['accessor']};
    $calls = [];
    $attempt('list', fn () => $resource->list());
    $attempt('get', fn () => $resource->get('x1'));
    $attempt('create', fn () => $resource->create([]));
    $attempt('upsert', fn () => $resource->upsert('e1', []));
    $attempt('batch', fn () => $resource->batch([]));
    $attempt('delete', fn () => $resource->delete('x1'));
    $attempt('restore', fn () => $resource->restore('x1'));
    $attempt('events', fn () => $resource->events('x1'));
    $attempt('update', fn () => $resource->update('x1', []));
    $attempt('sync', fn () => iterator_to_array($resource->sync()));
    foreach ([...$r['moves'], 'bogus'] as $move) {
        $attempt("transition $move", fn () => $resource->transition('x1', $move));
    }
    $report[$r['path']] = ['calls' => $calls, 'methods' => array_values(array_filter($r['extras'], fn ($m) => method_exists($resource, $m)))];
}
echo json_encode($report, JSON_UNESCAPED_SLASHES), "\\n";
`;

async function run(command: string[]): Promise<string> {
  const result = await runTool(command);
  if (result.code !== 0) throw new Error(`${command.join(' ')} exited ${result.code}:\n${result.output}`);
  return result.stdout;
}

/** Each language's probe over the clients in `clients` (a directory laid out as clients/). */
async function probeAll(dir: string, clients: string, resources: ResourceModel[]): Promise<Record<'Python' | 'Ruby' | 'PHP', Report>> {
  const probes = { python: join(dir, 'probe.py'), ruby: join(dir, 'probe.rb'), php: join(dir, 'probe.php') };
  writeFileSync(probes.python, PYTHON_PROBE);
  writeFileSync(probes.ruby, RUBY_PROBE);
  writeFileSync(probes.php, PHP_PROBE);
  const [python, ruby, php] = await Promise.all([
    run(['python3', probes.python, join(clients, 'python'), JSON.stringify(probeOf(resources, (name) => name))]),
    run(['ruby', probes.ruby, join(clients, 'ruby', 'lib'), JSON.stringify(probeOf(resources, (name) => name))]),
    run(['php', probes.php, join(clients, 'php', 'src'), JSON.stringify(probeOf(resources, camelCase))]),
  ]);
  return { Python: normalized(JSON.parse(python)), Ruby: normalized(JSON.parse(ruby)), PHP: normalized(JSON.parse(php)) };
}

/**
 * The document with one more resource, `notes`, made as the service would describe it: the
 * proposals' operations and schemas under new names, a `body` of its own, and the moves `pin`
 * and `archive` instead of send, accept and decline.
 */
function withNotes(document: OpenApi): OpenApi {
  const renamed = <T>(value: T): T => JSON.parse(JSON.stringify(value).replaceAll('proposals', 'notes').replaceAll('Proposal', 'Note').replaceAll('proposal', 'note')) as T;
  const moves: Record<string, string | null> = { send: 'pin', accept: 'archive', decline: null };
  const paths = { ...document.paths };
  for (const [path, methods] of Object.entries(document.paths)) {
    const [, collection, id, action] = path.split('/');
    if (collection !== 'proposals') continue;
    const verb = id === '{id}' && action !== undefined && action in moves ? moves[action] : action;
    if (verb === null) continue;
    paths[['', 'notes', id, verb].filter((segment) => segment !== undefined).join('/')] = renamed(methods);
  }
  const schemas = { ...document.components.schemas };
  for (const [name, schema] of Object.entries(document.components.schemas)) if (name.includes('Proposal')) schemas[renamed(name)] = renamed(schema);
  const body = { type: 'string', description: 'The note itself.' };
  schemas['Note'] = { ...schemas['Note']!, properties: { ...schemas['Note']!.properties, body }, required: [...schemas['Note']!.required!, 'body'] };
  schemas['CreateNoteInput'] = { ...schemas['CreateNoteInput']!, properties: { ...schemas['CreateNoteInput']!.properties, body }, required: [...schemas['CreateNoteInput']!.required!, 'body'] };
  return { ...document, paths, components: { ...document.components, schemas }, tags: [...(document.tags ?? []), { name: 'notes', description: 'The notes of the API key\'s organization.' }] };
}

describe('the clients generated from the OpenAPI document', () => {
  const document = currentDocument();
  const model = modelOf(document);

  it(`are what \`${COMMAND}\` writes now, one file per client`, () => {
    const files = generateClients(document);
    expect(Object.keys(files).sort()).toEqual(Object.values(FILES).sort());
    expect(staleFiles(ROOT, files), `These generated files differ from what the generator writes now: run \`${COMMAND}\``).toEqual([]);
  });

  it('are the same bytes whatever the order of the document', () => {
    const reversed: OpenApi = {
      ...document,
      paths: Object.fromEntries(Object.entries(document.paths).reverse()),
      components: { ...document.components, schemas: Object.fromEntries(Object.entries(document.components.schemas).reverse()) },
      tags: [...(document.tags ?? [])].reverse(),
    };
    expect(generateClients(reversed)).toEqual(generateClients(document));
  });

  it('hold every resource the schema declares (defineResource), with the moves, update and sync of its routes', () => {
    expect(model.resources.map((r) => r.path)).toEqual(registeredResources().map((r) => r.path).sort());
    for (const r of model.resources) {
      const rows = ROUTES.filter((route) => route.resource.path === r.path);
      const moves = rows.filter((route) => route.kind === 'move' && !route.input).map((route) => route.verb);
      expect({ path: r.path, moves: r.moves, update: r.update, sync: r.sync }).toEqual({
        path: r.path,
        moves: [...moves].sort(),
        update: rows.some((route) => route.kind === 'update'),
        sync: rows.some((route) => route.kind === 'sync'),
      });
    }
    // Everything else is served by hand: the collections named so, and the resources' extra operations.
    expect(model.handWritten).toEqual([...HAND_WRITTEN].sort());
    for (const r of model.resources) if (r.extras.length > 0) expect(EXTENDED[r.path], r.path).toBeDefined();
  });

  it('are served by the JavaScript client: every call of each resource sends its request', async () => {
    const report = normalized(await probeJs(CrmClient, probeOf(model.resources, camelCase)));
    expectServes('JavaScript', report, model.resources, camelCase);
  });

  it('are served by the Python, Ruby and PHP clients: every call of each resource sends its request', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crm-client-probe-'));
    try {
      const reports = await probeAll(dir, join(ROOT, 'clients'), model.resources);
      for (const [language, report] of Object.entries(reports)) expectServes(language, report, model.resources, language === 'PHP' ? camelCase : (name) => name);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('a resource added to the document', () => {
    const withNote = withNotes(document);
    const notes = modelOf(withNote).resources.find((r) => r.path === 'notes')!;
    let dir: string;
    beforeAll(() => {
      // The clients as they are, with their generated files written from the document with notes.
      dir = mkdtempSync(join(tmpdir(), 'crm-client-notes-'));
      cpSync(join(ROOT, 'clients'), join(dir, 'clients'), { recursive: true, filter: (source) => !/\/(node_modules|dist|vendor)$/.test(source) });
      for (const [file, content] of Object.entries(generateClients(withNote))) {
        mkdirSync(dirname(join(dir, file)), { recursive: true });
        writeFileSync(join(dir, file), content);
      }
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('is found with its own moves, an update and a sync', () => {
      expect(notes).toMatchObject({ path: 'notes', accessor: 'notes', record: 'Note', create: 'CreateNoteInput', update: true, sync: true, moves: ['archive', 'pin'], extras: [] });
    });

    it('is served by every client from its generated file alone', async () => {
      const { CrmClient: WithNotes } = (await import(pathToFileURL(join(dir, 'clients/js/src/index.ts')).href)) as { CrmClient: typeof CrmClient };
      expectServes('JavaScript', normalized(await probeJs(WithNotes, probeOf([notes], camelCase))), [notes], camelCase);
      const reports = await probeAll(dir, join(dir, 'clients'), [notes]);
      for (const [language, report] of Object.entries(reports)) expectServes(language, report, [notes], language === 'PHP' ? camelCase : (name) => name);
    });

    it('is typed in TypeScript from its schemas: its record, input, filters, sort keys, references and moves', async () => {
      const user = join(dir, 'clients/js/user.ts');
      writeFileSync(
        user,
        `import { CrmClient, type Note, type NoteInput } from './src/index.js';
const crm = new CrmClient({ apiKey: 'k' });
const input: NoteInput = { customer_id: 'c', title: 'Call back', currency: 'EUR', total_amount: 0, body: 'About the boiler', external_id: undefined };
const note: Note = await crm.notes.create(input);
await crm.notes.transition(note.id, 'pin');
// @ts-expect-error a note has no move send
await crm.notes.transition(note.id, 'send');
// @ts-expect-error a note's body is required
await crm.notes.create({ customer_id: 'c', title: 'Call back', currency: 'EUR', total_amount: 0 });
const page = await crm.notes.list({ where: { status: ['draft'], customer: { search: 'acme' } }, orderBy: '-title', expand: ['customer'], fields: ['body'] });
const first = page.data[0];
if (first) console.log(first.body, first.customer?.name);
// @ts-expect-error title was not asked for
console.log(first?.title);
await crm.notes.update(note.id, { body: null }, { ifMatch: note.version });
for await (const change of crm.notes.sync()) console.log('deleted' in change ? change.deleted_at : change.body);
`,
      );
      writeFileSync(
        join(dir, 'clients/js/tsconfig.user.json'),
        JSON.stringify({
          compilerOptions: {
            strict: true,
            exactOptionalPropertyTypes: true,
            noUncheckedIndexedAccess: true,
            verbatimModuleSyntax: true,
            noEmit: true,
            target: 'es2022',
            module: 'nodenext',
            moduleResolution: 'nodenext',
            lib: ['es2022', 'dom'],
            types: [],
          },
          files: ['user.ts'],
        }),
      );
      const { output } = await typeCheck(join(dir, 'clients/js'), 'tsconfig.user.json');
      expect(output).toBe('');
    });
  });
});

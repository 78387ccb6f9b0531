// The Python, PHP and Ruby clients run their own tests, in their own language's standard
// test tool, against the real server on a fresh embedded database. Two servers for the whole
// file, each language with organizations of its own on them (no language sees another's
// records): one for the README examples and the clients' tests, and one with a tiny rate
// limit (per key: one key per language) for their 429 tests.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rest, startApi, type Api } from '../helpers/api.js';
import { ANY_DATABASE } from '../helpers/databases.js';
import { startInFlightProxy } from '../helpers/in-flight-proxy.js';
import { runTool } from '../helpers/processes.js';

interface Language {
  name: string;
  dir: string;
  command: string[];
  /** What the test tool prints when every test ran and passed (so "no tests" cannot pass). */
  passed?: RegExp;
  /** How to run the README's example, saved as `file` in `dir`. */
  example: { file: string; command: string[]; rewrite?: (code: string) => string };
}

const LANGUAGES: Language[] = [
  {
    name: 'JavaScript',
    dir: 'clients/js',
    command: [],
    example: { file: 'readme-example.ts', command: [process.execPath, '--import', 'tsx', 'readme-example.ts'], rewrite: (code) => code.replace("'@crm/client'", "'./src/index.ts'") },
  },
  {
    name: 'Python (unittest)',
    dir: 'clients/python',
    command: ['python3', '-m', 'unittest', 'discover', '-s', 'clients/python/tests', '-t', 'clients/python', '-v'],
    passed: /Ran 27 tests[\s\S]*\nOK/,
    example: { file: 'readme_example.py', command: ['python3', 'readme_example.py'] },
  },
  { name: 'Ruby (minitest)', dir: 'clients/ruby', command: ['ruby', 'clients/ruby/test/test_client.rb'], passed: /26 runs, \d+ assertions, 0 failures, 0 errors/, example: { file: 'readme_example.rb', command: ['ruby', '-Ilib', 'readme_example.rb'] } },
  { name: 'PHP (plain assertions)', dir: 'clients/php', command: ['php', 'clients/php/tests/ClientTest.php'], passed: /26 passed, 0 failed/, example: {
      file: 'readme_example.php',
      command: ['php', 'readme_example.php'],
      // Composer's autoloader stands for the package's PSR-4 map (composer.json): Crm\\X is src/X.php.
      rewrite: (code) => code.replace("require 'vendor/autoload.php';", "spl_autoload_register(fn ($c) => require __DIR__ . '/src/' . substr($c, 4) . '.php');"),
    },
  },
];

let api: Api;
let limited: Api;
let inFlight: Awaited<ReturnType<typeof startInFlightProxy>>;
beforeAll(async () => {
  // The clients' tests receive real webhook deliveries on the loopback address, over http.
  const keys = Object.fromEntries(
    LANGUAGES.flatMap(({ name }) => [
      [`${name} README`, { org: `${name} README` }],
      [`${name} full`, { org: name }],
      [`${name} readOnly`, { org: name, scopes: 'customers:read' }],
    ]),
  );
  [api, limited] = await Promise.all([
    startApi(ANY_DATABASE, keys, { RATE_LIMIT_MAX: '1000', WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }),
    startApi(ANY_DATABASE, Object.fromEntries(LANGUAGES.map(({ name }) => [name, { org: `${name} limited` }])), { RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW_SECONDS: '2' }),
  ]);
  inFlight = await startInFlightProxy(api.url);
});
afterAll(async () => {
  await inFlight?.close();
  await Promise.all([api?.stop(), limited?.stop()]);
});

describe.each(LANGUAGES)('$name client', ({ name, dir, example }) => {
  it('runs the README example as written', async () => {
    const key = api.keys[`${name} README`]!;
    const readme = readFileSync(join(dir, 'README.md'), 'utf8');
    const code = /```\w+\n([\s\S]*?)```/.exec(readme)![1]!;
    const file = join(dir, example.file);
    writeFileSync(file, example.rewrite ? example.rewrite(code) : code);
    try {
      const result = await runTool(example.command, { env: { CRM_API_KEY: key, CRM_BASE_URL: `${api.url}/v1` }, cwd: dir });
      expect(result.code, result.output).toBe(0);
      expect(result.output).toMatch(/total/);
    } finally {
      rmSync(file, { force: true });
    }
  });

  it('runs the README sync example (its second code block) as written', async () => {
    const key = api.keys[`${name} README`]!;
    const readme = readFileSync(join(dir, 'README.md'), 'utf8');
    const code = [...readme.matchAll(/```\w+\n([\s\S]*?)```/g)][1]![1]!;
    const file = join(dir, example.file);
    writeFileSync(file, example.rewrite ? example.rewrite(code) : code);
    try {
      const created = await rest(api, key).post('/customers', { name: 'Synced' });
      expect(created.status).toBe(201);
      const result = await runTool(example.command, { env: { CRM_API_KEY: key, CRM_BASE_URL: `${api.url}/v1` }, cwd: dir });
      expect(result.code, result.output).toBe(0);
      expect(result.output).toContain(created.body.id);
      expect(result.output).toMatch(/resume from \S+/);
    } finally {
      rmSync(file, { force: true });
    }
  });

  it('runs the README list example (its third code block) as written: overdue invoices, oldest due first, with their customers', async () => {
    const key = api.keys[`${name} README`]!;
    const client = rest(api, key);
    const customer = (await client.post('/customers', { name: `Overdue ${name}` })).body.id;
    const invoice = async (due: string, amount: number, moves: string[]) => {
      const created = await client.post('/invoices', { customer_id: customer, currency: 'EUR', due_date: due, line_items: [{ description: 'x', quantity: 1, unit_amount: amount }] });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      for (const move of moves) expect((await client.post(`/invoices/${created.body.id}/${move}`)).status).toBe(200);
      return created.body.number as string;
    };
    const later = await invoice('2020-03-01', 100, ['send']);
    const earlier = await invoice('2020-01-01', 200, ['send']);
    const draft = await invoice('2020-02-01', 300, []);
    const notDue = await invoice('2999-01-01', 400, ['send']);
    const readme = readFileSync(join(dir, 'README.md'), 'utf8');
    const code = [...readme.matchAll(/```\w+\n([\s\S]*?)```/g)][2]![1]!;
    const file = join(dir, example.file);
    writeFileSync(file, example.rewrite ? example.rewrite(code) : code);
    try {
      const result = await runTool(example.command, { env: { CRM_API_KEY: key, CRM_BASE_URL: `${api.url}/v1` }, cwd: dir });
      expect(result.code, result.output).toBe(0);
      const lines = result.output.trim().split('\n');
      expect(lines).toEqual([`${earlier} 2020-01-01 Overdue ${name}`, `${later} 2020-03-01 Overdue ${name}`, 'total overdue: 2']);
      for (const number of [draft, notDue]) expect(result.output).not.toContain(number);
    } finally {
      rmSync(file, { force: true });
    }
  });

  it('runs the README batch example (its fourth code block) as written: two customers upserted by external id, updated when run again', async () => {
    const key = api.keys[`${name} README`]!;
    const readme = readFileSync(join(dir, 'README.md'), 'utf8');
    const code = [...readme.matchAll(/```\w+\n([\s\S]*?)```/g)][3]![1]!;
    const file = join(dir, example.file);
    writeFileSync(file, example.rewrite ? example.rewrite(code) : code);
    try {
      const runExample = async () => {
        const result = await runTool(example.command, { env: { CRM_API_KEY: key, CRM_BASE_URL: `${api.url}/v1` }, cwd: dir });
        expect(result.code, result.output).toBe(0);
        return result.output.trim().split('\n');
      };
      const first = await runExample();
      expect(first).toEqual([expect.stringMatching(/^created crm-1001 [0-9a-f-]{36}$/), expect.stringMatching(/^created crm-1002 [0-9a-f-]{36}$/)]);
      const ids = first.map((line) => line.split(' ')[2]);
      expect(await runExample()).toEqual([`updated crm-1001 ${ids[0]}`, `updated crm-1002 ${ids[1]}`]);
      const client = rest(api, key);
      for (const [externalId, id] of [['crm-1001', ids[0]], ['crm-1002', ids[1]]]) {
        const found = await client.get(`/customers?external_id=${externalId}`);
        expect(found.body.data.map((c: { id: string }) => c.id), externalId).toEqual([id]);
      }
      expect((await client.get(`/customers/${ids[1]}`)).body).toMatchObject({ name: 'Grace Hopper', metadata: { team: 'navy' } });
    } finally {
      rmSync(file, { force: true });
    }
  });
});

// The JavaScript client's tests are vitest tests of their own (clients/js/test).
describe.each(LANGUAGES.filter((l) => l.command.length > 0))('$name client', ({ name, command, passed }) => {
  it('passes its tests against the real server', async () => {
    const result = await runTool(command, {
      env: {
        CRM_IN_FLIGHT_BASE_URL: `${inFlight.url}/v1`,
        CRM_BASE_URL: `${api.url}/v1`,
        CRM_API_KEY: api.keys[`${name} full`]!,
        CRM_READONLY_KEY: api.keys[`${name} readOnly`]!,
        CRM_LIMITED_BASE_URL: `${limited.url}/v1`,
        CRM_LIMITED_KEY: limited.keys[name]!,
      },
    });
    expect(result.code, result.output).toBe(0);
    expect(result.output).toMatch(passed!);
    // Webhook deliveries to wait for, on a machine that may be busy.
  }, 180_000);
});

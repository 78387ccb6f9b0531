// The README's TypeScript examples and the client's public types compile under the strictest
// compiler options a user may turn on. Each README block is a file of its own in a project
// beside a tsconfig that resolves '@crm/client' to this client's source, as an installed
// package would be; the client's source is checked with them. A program breaking each option
// on purpose shows that the options are on and the check can fail.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { typeCheck, type TypeCheck } from '../../../test/helpers/typescript.js';

const CLIENT = resolve(import.meta.dirname, '..');
const ROOT = resolve(CLIENT, '../..');
const SOURCE = join(CLIENT, 'src', 'index.ts');

/**
 * @tsconfig/strictest's options, and verbatimModuleSyntax. Declaration files go unchecked, as
 * strictest has it (skipLibCheck): the client is checked from its sources here, and checking
 * TypeScript's and @types/node's own declarations tested nothing of ours, for 9 of the
 * file's 14 CPU-seconds.
 */
const STRICTEST = {
  strict: true,
  exactOptionalPropertyTypes: true,
  noUncheckedIndexedAccess: true,
  noImplicitOverride: true,
  noPropertyAccessFromIndexSignature: true,
  useUnknownInCatchVariables: true,
  verbatimModuleSyntax: true,
  isolatedModules: true,
  noImplicitReturns: true,
  noFallthroughCasesInSwitch: true,
  noUnusedLocals: true,
  noUnusedParameters: true,
  allowUnreachableCode: false,
  allowUnusedLabels: false,
  skipLibCheck: true,
  noEmit: true,
  target: 'ES2022',
  module: 'NodeNext',
  moduleResolution: 'NodeNext',
  types: ['node'],
  typeRoots: [join(ROOT, 'node_modules', '@types')],
  paths: { '@crm/client': [SOURCE] },
};

/** A Node project (fetch and Web Crypto typed by @types/node), and one that also has the DOM's. */
const ENVIRONMENTS = [
  { name: 'Node', lib: ['ES2022'] },
  { name: 'Node with the DOM library', lib: ['ES2022', 'DOM'] },
];

const readmeBlocks = (): string[] =>
  [...readFileSync(join(CLIENT, 'README.md'), 'utf8').matchAll(/```(?:ts|typescript)\n([\s\S]*?)```/g)].map((m) => m[1]!);

/** What a user writes with values that may be absent: `undefined` stands for "not given" in every option and input. */
const USER_PROGRAM = `
import { CrmClient, CrmError, PreconditionFailed, verifyWebhook, type Customer, type CustomerInput, type Tombstone } from '@crm/client';

const arg = (i: number): string | undefined => process.argv[i];
const crm = new CrmClient({ apiKey: process.env['CRM_API_KEY'], baseUrl: process.env['CRM_BASE_URL'], timeoutMs: undefined });
const input: CustomerInput = { name: 'Ada', email: arg(2), phone: arg(3), external_id: arg(4) };
const created = await crm.customers.create(input, { idempotencyKey: arg(5), dryRun: arg(6) === 'dry' });
await crm.customers.update(created.id, { email: null, phone: arg(3), metadata: { tier: null } }, { ifMatch: created.version });
await crm.customers.batch([{ op: 'upsert', external_id: 'crm-1', data: input }, { op: 'delete', id: created.id, if_match: undefined }], 'partial');
const page = await crm.invoices.list({
  search: arg(7),
  limit: undefined,
  where: { status: ['sent'], due_date: { lt: arg(8) }, customer: { search: arg(9) } },
  orderBy: '-due_date',
  expand: ['customer'],
  fields: ['number', 'due_date'],
});
const first = page.data[0];
if (first) console.log(first.number, first.due_date, first.customer?.name);
for await (const change of crm.customers.sync({ cursor: arg(10), updatedSince: undefined, limit: undefined })) {
  const seen: Customer | Tombstone = change;
  console.log('deleted' in seen ? seen.deleted_at : seen.name);
}
for await (const event of crm.events.since(arg(11), { cursor: arg(12), type: arg(13) })) console.log(event.type);
await crm.webhookEndpoints.create({ url: 'https://example.com/hook', description: arg(14), enabled: undefined });
try {
  await crm.customers.delete(created.id, { ifMatch: created.version });
} catch (error) {
  if (error instanceof PreconditionFailed) console.log(error.current);
  else if (error instanceof CrmError) console.log(error.status, error.code, error.errors[0]?.param);
  else throw error;
}
const event = await verifyWebhook('{}', { 'webhook-id': arg(15) }, 'whsec_c2VjcmV0', { now: undefined, toleranceSeconds: undefined });
console.log(event.id, event.data.object);
class Gone extends CrmError {
  override readonly code = 'GONE';
}
console.log(new Gone(410, 'GONE', 'Gone', [], null).code);
`;

/** Each line ending in `// TS<code>` must fail with that code, and no other line may fail. */
const WRONG_PROGRAM = `
import { CrmClient, CrmError, Customer, type Pagination } from '@crm/client'; // TS1484
const crm = new CrmClient({ apiKey: process.env.CRM_API_KEY }); // TS4111
const page = await crm.customers.list();
const first: Customer = page.data[0]; // TS2322
const paging: Pagination = { page: 1, limit: 10, total: 0, has_more: undefined }; // TS2375
crm.customers.sync({ cursor: 42 }); // TS2322
await crm.invoices.list({ status: 'late' }); // TS2322
await crm.invoices.transition(first.id, 'refund'); // TS2345
class Gone extends CrmError { readonly code = 'GONE'; } // TS4114
try { await crm.customers.get(first.id); } catch (error) { console.log(error.message); } // TS18046
export const loose = (value) => value; // TS7006
const unused = paging; // TS6133
console.log(Gone);
`;

/** Writes the files beside a tsconfig and package.json (an ES module package), and type-checks them with `tsc -p`. */
function compile(dir: string, lib: string[], files: Record<string, string>): Promise<TypeCheck> {
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  for (const [name, code] of Object.entries(files)) writeFileSync(join(dir, name), code);
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { ...STRICTEST, lib }, files: Object.keys(files) }, null, 2));
  return typeCheck(dir);
}

/** tsc's messages about `file`. */
const linesOf = (compiled: TypeCheck, file: string): string =>
  compiled.messages.filter((message) => message.startsWith(`${file}(`)).join('\n');

describe.each(ENVIRONMENTS)('the JS client under the strictest TypeScript options ($name)', ({ lib }) => {
  const blocks = readmeBlocks();
  const names = blocks.map((_, i) => `readme-${i + 1}.ts`);
  let dir: string;
  let compiled: TypeCheck;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'crm-client-strict-'));
    compiled = await compile(dir, lib, { ...Object.fromEntries(names.map((name, i) => [name, blocks[i]!])), 'user.ts': USER_PROGRAM, 'wrong.ts': WRONG_PROGRAM });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("compiles every TypeScript block of the README, and the client's source, with no diagnostic", () => {
    expect(blocks.length).toBe(readFileSync(join(CLIENT, 'README.md'), 'utf8').match(/```(?:ts|typescript)\n/g)!.length);
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    // '@crm/client' resolved to this client's source: its types are the ones checked.
    expect(compiled.files).toContain(SOURCE);
    // Every other line of tsc's: the README's files, the client's source, the libraries' declarations, the tsconfig itself.
    const others = compiled.messages.filter((message) => !message.startsWith('user.ts(') && !message.startsWith('wrong.ts('));
    expect(others.join('\n')).toBe('');
  });

  it('takes possibly-undefined values wherever an option or input may be absent, as a user writes them', () => {
    expect(linesOf(compiled, 'user.ts')).toBe('');
  });

  it('fails a program that breaks each option, on exactly the lines that break it', () => {
    const expected = WRONG_PROGRAM.split('\n').flatMap((line, i): Array<[number, number]> => {
      const code = /\/\/ TS(\d+)$/.exec(line);
      return code ? [[i + 1, Number(code[1])]] : [];
    });
    expect(expected).toHaveLength(11);
    const wrong = compiled.errors.filter((error) => error.file === 'wrong.ts').map((error): [number, number] => [error.line, error.code]);
    expect(wrong, linesOf(compiled, 'wrong.ts')).toEqual(expected);
  });
});

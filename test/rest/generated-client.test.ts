// What a client generator makes of the OpenAPI document: openapi-typescript's types, used
// by a small typed program that reads the headers a client relies on. The program only
// compiles while the document declares them.
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../src/rest/openapi.js';
import { ROUTES } from '../../src/rest/router.js';

const run = promisify(execFile);

const PROGRAM = `
import type { paths } from './api.js';

type List = paths['/customers']['get'];
type Create = paths['/customers']['post'];

// Every answer: its request id and where the key stands.
const listed: List['responses'][200]['headers'] = { 'X-Request-Id': 'r', 'RateLimit-Limit': 600, 'RateLimit-Remaining': 599, 'RateLimit-Reset': 60 };
// A create: where the record lives, and whether this is a replay of an earlier answer.
const created: Create['responses'][201]['headers'] = { 'X-Request-Id': 'r', 'RateLimit-Limit': 600, 'RateLimit-Remaining': 598, 'RateLimit-Reset': 60, Location: '/v1/customers/1', 'Idempotent-Replayed': 'true' };
// A repeated Idempotency-Key still in flight: when to retry.
const inFlight: Create['responses'][409]['headers'] = { 'X-Request-Id': 'r', 'Retry-After': 1, 'RateLimit-Limit': 600, 'RateLimit-Remaining': 597, 'RateLimit-Reset': 60 };
const limited: List['responses'][429]['headers'] = { 'X-Request-Id': 'r', 'Retry-After': 3, 'RateLimit-Limit': 600, 'RateLimit-Remaining': 0, 'RateLimit-Reset': 3 };
// Optional inputs accept null; required ones do not.
const body: Create['requestBody']['content']['application/json'] = { name: 'Ada', email: null, phone: null };
// @ts-expect-error a required field cannot be null
const nameless: Create['requestBody']['content']['application/json'] = { name: null };
type ItemId = paths['/customers/{id}']['get']['parameters']['path']['id'];
const id: ItemId = '00000000-0000-4000-8000-000000000000';
export { listed, created, inFlight, limited, body, nameless, id };
`;

describe('a client generated from the OpenAPI document', () => {
  it('types the response headers, nullable optional inputs and path ids a client uses', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'generated-client-'));
    const types = astToString(await openapiTS(openApiDocument(ROUTES) as never));
    writeFileSync(join(dir, 'api.ts'), types);
    writeFileSync(join(dir, 'program.ts'), PROGRAM);
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', skipLibCheck: true }, files: ['program.ts'] }),
    );
    const tsc = resolve('node_modules/.bin/tsc');
    const result = await run(tsc, ['-p', dir]).then(
      () => ({ ok: true, output: '' }),
      (error: { stdout?: string }) => ({ ok: false, output: error.stdout ?? '' }),
    );
    expect(result.output).toBe('');
    expect(result.ok).toBe(true);
  });
});

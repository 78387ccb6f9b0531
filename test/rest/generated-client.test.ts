// What a client generator makes of the OpenAPI document: openapi-typescript's types, used
// by a small typed program that reads the headers a client relies on. The program only
// compiles while the document declares them: the same program against the document with
// its response headers taken out must fail on every line that reads one.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../src/rest/openapi.js';
import { ROUTES } from '../../src/rest/router.js';

const run = promisify(execFile);

// Lines ending in `// reads a header` must stop compiling once the header is undeclared
// (openapi-typescript then types it `unknown`).
const PROGRAM = `
import type { paths } from './api.js';

type List = paths['/customers']['get'];
type Item = paths['/customers/{id}']['get'];
type Create = paths['/customers']['post'];

// Every answer to a counted key: its request id and where the key stands.
export function listed(h: List['responses'][200]['headers']) {
  const requestId: string = h['X-Request-Id']; // reads a header
  const limit: number = h['RateLimit-Limit']; // reads a header
  const remaining: number = h['RateLimit-Remaining']; // reads a header
  const reset: number = h['RateLimit-Reset']; // reads a header
  return { requestId, limit, remaining, reset };
}

export function missing(h: Item['responses'][404]['headers']): number {
  return h['RateLimit-Remaining']; // reads a header
}

// A create: where the record lives, and (on a replay only) that it is an earlier answer.
export function created(h: Create['responses'][201]['headers']) {
  const location: string = h['Location']; // reads a header
  const replayed: 'true' | undefined = h['Idempotent-Replayed']; // reads a header
  // @ts-expect-error a first answer carries no Idempotent-Replayed
  const alwaysReplayed: 'true' = h['Idempotent-Replayed'];
  return { location, replayed, alwaysReplayed };
}

// A repeated Idempotency-Key: retry after Retry-After while the first request runs; a 409
// without it is final.
export function conflict(h: Create['responses'][409]['headers']): number | undefined {
  const retryAfter: number | undefined = h['Retry-After']; // reads a header
  // @ts-expect-error a first request that never finished leaves no Retry-After
  const alwaysRetry: number = h['Retry-After'];
  return retryAfter ?? alwaysRetry;
}

export function limited(h: List['responses'][429]['headers']): number {
  return h['Retry-After']; // reads a header
}

export function unavailable(h: List['responses'][503]['headers']): number {
  return h['Retry-After']; // reads a header
}

export function unauthenticated(h: List['responses'][401]['headers']): string {
  return h['WWW-Authenticate']; // reads a header
}

type Patch = paths['/customers/{id}']['patch'];

// A record's version, to send back as If-Match (or If-None-Match).
export function versioned(h: Item['responses'][200]['headers']): string {
  return h['ETag']; // reads a header
}

// A failed If-Match: the current record's version, when the key may read it.
export function stale(h: Patch['responses'][412]['headers']): string | undefined {
  return h['ETag']; // reads a header
}

// A merge patch: any field may be left out, and null clears an optional one.
export const patch: Patch['requestBody']['content']['application/merge-patch+json'] = { email: null };

// Optional inputs accept null; required ones do not.
export const body: Create['requestBody']['content']['application/json'] = { name: 'Ada', email: null, phone: null };
// @ts-expect-error a required field cannot be null
export const nameless: Create['requestBody']['content']['application/json'] = { name: null };
export const id: Item['parameters']['path']['id'] = '00000000-0000-4000-8000-000000000000';
`;

/** Every response header the document declares, anywhere. */
function declaredHeaders(document: any): Set<string> {
  const operations = Object.values<any>(document.paths).flatMap((methods) => Object.values<any>(methods));
  return new Set(operations.flatMap((operation) => Object.values<any>(operation.responses).flatMap((response) => Object.keys(response.headers ?? {}))));
}

/** The document with every response header taken out. */
function withoutHeaders(document: any) {
  const copy = structuredClone(document);
  delete copy.components.headers;
  for (const operations of Object.values<any>(copy.paths)) {
    for (const operation of Object.values<any>(operations)) for (const response of Object.values<any>(operation.responses)) delete response.headers;
  }
  return copy;
}

describe('a client generated from the OpenAPI document', () => {
  it('types the response headers, nullable optional inputs and path ids a client uses', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'generated-client-'));
    mkdirSync(join(dir, 'ablated'));
    const document = openApiDocument(ROUTES);
    writeFileSync(join(dir, 'api.ts'), astToString(await openapiTS(document as never)));
    writeFileSync(join(dir, 'ablated', 'api.ts'), astToString(await openapiTS(withoutHeaders(document))));
    writeFileSync(join(dir, 'program.ts'), PROGRAM);
    writeFileSync(join(dir, 'ablated', 'program.ts'), PROGRAM);
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', skipLibCheck: true },
        files: ['program.ts', 'ablated/program.ts'],
      }),
    );
    const output = await run(resolve('node_modules/.bin/tsc'), ['-p', '.', '--pretty', 'false'], { cwd: dir }).then(
      () => '',
      (error: { stdout?: string }) => error.stdout ?? String(error),
    );
    const errorLines = (file: string) =>
      [...output.matchAll(/^(.+)\((\d+),\d+\): error/gm)].filter((m) => m[1] === file).map((m) => Number(m[2]));
    expect(errorLines('program.ts'), output).toEqual([]);
    const reads = PROGRAM.split('\n').flatMap((line, i) => (line.endsWith('// reads a header') ? [i + 1] : []));
    // The program reads every header the document declares.
    const read = PROGRAM.split('\n').filter((line) => line.endsWith('// reads a header')).map((line) => /h\['([^']+)'\]/.exec(line)![1]);
    expect(new Set(read)).toEqual(declaredHeaders(document));
    expect([...new Set(errorLines('ablated/program.ts'))], output).toEqual(reads);
    expect(output.split('\n').filter((line) => line && !/^(ablated\/)?program\.ts\(/.test(line))).toEqual([]);
  });
});

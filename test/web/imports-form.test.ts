// The account page's import form (POST /settings/imports), over HTTP: what it refuses, and
// with what message on the page; what it starts, and in which organization. The browser test
// (test/browser/account-imports.test.ts) follows an import to its end.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/auth/passwords.js';
import { MAX_IMPORT_BYTES } from '../../src/imports/plan.js';
import { csrfOf, postLogin, serveInProcess, type ServedInstance } from '../helpers/api.js';
import { DB_KINDS, migratedDatabase, type TestDatabase } from '../helpers/databases.js';

const EMAIL = 'owner@acme.example';
const PASSWORD = 'correct horse battery staple';

interface Upload {
  csrf?: string;
  resource?: string;
  mode?: string;
  /** The file's bytes; absent: no file part at all. */
  file?: string | Uint8Array<ArrayBuffer>;
}

describe.each(DB_KINDS)('the account page\'s import form on %s', (kind) => {
  let db: TestDatabase;
  let api: ServedInstance;
  let session: string;
  let csrf: string;

  /** Posts the form as a browser does (multipart), with the session unless told otherwise. */
  function upload(fields: Upload, { path = '/settings/imports', cookie = session } = {}) {
    const form = new FormData();
    if (fields.csrf !== undefined) form.set('csrf', fields.csrf);
    form.set('resource', fields.resource ?? 'customers');
    form.set('mode', fields.mode ?? 'create');
    if (fields.file !== undefined) form.set('file', new Blob([fields.file], { type: 'text/csv' }), 'customers.csv');
    return fetch(`${api.url}${path}`, { method: 'POST', headers: cookie ? { cookie } : {}, body: form, redirect: 'manual' });
  }

  const importCount = async () => (await api.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM imports'))[0]!.n;

  /** The refusal's status and the import section's error, and that nothing was started. */
  async function refused(response: Response): Promise<{ status: number; error: string }> {
    const page = await response.text();
    expect(page).toContain('id="imports"');
    const error = /<div class="error" role="alert" id="import-error">([\s\S]*?)<\/div>/.exec(page)?.[1] ?? '';
    expect(await importCount()).toBe(0);
    return { status: response.status, error: error.replace(/<[^>]+>/g, '') };
  }

  beforeAll(async () => {
    db = await migratedDatabase(kind);
    // The user is made on the server's own connection (an embedded database has only that one).
    api = await serveInProcess(db.env, async (open) => {
      const organization = await open.prisma.organization.create({ data: { name: 'Acme' } });
      await open.prisma.user.create({ data: { organizationId: organization.id, email: EMAIL, passwordHash: await hashPassword(PASSWORD) } });
    });
    session = (await postLogin(api.url, EMAIL, PASSWORD)).session!;
    csrf = csrfOf(await (await fetch(`${api.url}/settings/api-keys`, { headers: { cookie: session } })).text());
  });
  afterAll(async () => {
    await api?.stop();
    await db?.drop();
  });

  it('without a session, it sends the browser to the login page, as the other forms do', async () => {
    const response = await upload({ csrf, file: 'name\nAda\n' }, { cookie: '' });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/login');
    expect(await importCount()).toBe(0);
  });

  it('without this session\'s CSRF token, or not as a multipart form, it is refused', async () => {
    for (const token of [undefined, 'guess', '']) {
      const response = await upload({ csrf: token, file: 'name\nAda\n' });
      expect(response.status).toBe(403);
      expect(await response.text()).toContain('The form was stale or not sent by this site');
    }
    const urlencoded = await fetch(`${api.url}/settings/imports`, {
      method: 'POST',
      headers: { cookie: session, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf, resource: 'customers', mode: 'create', file: 'name\nAda\n' }).toString(),
      redirect: 'manual',
    });
    expect(urlencoded.status).toBe(403);
    expect(await importCount()).toBe(0);
  });

  it('an empty file, a file without rows and no file at all are refused on the page, naming what is wrong', async () => {
    await expect(refused(await upload({ csrf, file: '' }))).resolves.toEqual({ status: 400, error: 'The file is empty: the first line names the columns.' });
    await expect(refused(await upload({ csrf, file: 'name,email\n' }))).resolves.toEqual({ status: 400, error: 'The file has no data rows below its header.' });
    await expect(refused(await upload({ csrf }))).resolves.toEqual({ status: 400, error: 'Choose a CSV file to import.' });
  });

  it('a file over the API\'s cap (50 MiB) is refused on the page with the limit', async () => {
    const response = await upload({ csrf, file: new Uint8Array(MAX_IMPORT_BYTES + 1).fill(97) });
    const { status, error } = await refused(response);
    expect(status).toBe(413);
    expect(error).toBe(`The file is larger than 50 MiB (${MAX_IMPORT_BYTES} bytes), the most one import takes: split it into several files.`);
  });

  it('the API\'s file checks name the column, the CSV fault, the encoding', async () => {
    const cases: Array<[Upload, string]> = [
      [{ file: 'nmae,email\nAda,ada@example.com\n' }, 'Column “nmae” is not a column of this resource (columns: '],
      [{ file: 'email\nada@example.com\n' }, 'Column “name” is a required column.'],
      [{ file: 'name\nAda\n', mode: 'upsert' }, 'Column “external_id” is a required column for mode=upsert (rows are matched by it).'],
      [{ file: 'name\n"Ada\n' }, 'The file is not valid CSV: a quoted field opened at character 6 is never closed.'],
      [{ file: 'name\nA\u0000da\n' }, 'The file must not contain a NUL character.'],
      [{ file: new Uint8Array([0x6e, 0x61, 0x6d, 0x65, 0x0a, 0x41, 0xe9, 0x0a]) }, 'The file is not UTF-8 text: save it as CSV in UTF-8 and send it again.'],
      [{ file: 'name\nAda\n', resource: 'invoices' }, 'Records must be one of customers.'],
      [{ file: 'name\nAda\n', mode: 'replace' }, 'Mode must be create or upsert.'],
    ];
    for (const [fields, message] of cases) {
      const { status, error } = await refused(await upload({ csrf, ...fields }));
      expect(status, message).toBe(400);
      expect(error, message).toContain(message);
    }
  });

  it('a body that is not a well-formed multipart form is a 400 on the page, not a server error', async () => {
    for (const body of ['garbage', `--x\r\ncontent-disposition: form-data; name="csrf"\r\n\r\n${csrf}`]) {
      const response = await fetch(`${api.url}/settings/imports`, {
        method: 'POST',
        headers: { cookie: session, 'content-type': 'multipart/form-data; boundary=x' },
        body,
        redirect: 'manual',
      });
      const { status, error } = await refused(response);
      expect(status).toBe(400);
      expect(error).toContain('The upload could not be read');
    }
  });

  it('a good file starts an import of the page\'s organization; in test mode, of its test twin (made then)', async () => {
    const live = await upload({ csrf, file: 'name,email\nAda,ada@example.com\n' });
    expect(live.status).toBe(303);
    expect(live.headers.get('location')).toBe('/settings/api-keys#imports');
    const test = await upload({ csrf, file: 'name\nGrace\nLinus\n', mode: 'create' }, { path: '/settings/imports?mode=test' });
    expect(test.status).toBe(303);
    expect(test.headers.get('location')).toBe('/settings/api-keys?mode=test#imports');
    const rows = await api.sql.query<{ name: string; mode: string; total: number }>(
      'SELECT o.name, o.mode, i.total FROM imports i JOIN organizations o ON o.id = i.organization_id ORDER BY i.total',
    );
    expect(rows).toEqual([
      { name: 'Acme', mode: 'live', total: 1 },
      { name: expect.stringMatching(/^Acme \(test mode [0-9a-f-]{36}\)$/), mode: 'test', total: 2 },
    ]);
    // Each page lists its own mode's import (whatever its progress by now).
    for (const [path, total] of [['/settings/api-keys', 1], ['/settings/api-keys?mode=test', 2]] as const) {
      const page = await (await fetch(`${api.url}${path}`, { headers: { cookie: session } })).text();
      const listed = [...page.matchAll(/<td class="import-total">(\d+)<\/td>/g)].map((m) => Number(m[1]));
      expect(listed, path).toEqual([total]);
    }
  });
});

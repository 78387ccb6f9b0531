// Hostile input at the account pages: whatever the form bodies, cookies, content types and
// paths, the answer is never a 5xx, and no session or key appears out of nowhere.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/auth/passwords.js';
import { openDatabase } from '../../src/db/connection.js';
import { postLogin, startApi, type Api } from '../helpers/api.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 120);

const hostile = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.constantFrom('%E0%A4%A', '%00', '\u0000', '%', '%%', '"><script>', '../../etc/passwd', 'a'.repeat(5000), '💥', 'csrf=', '&&&', '=='),
);

describe('hostile input at the account pages', () => {
  let api: Api;
  let session: string;
  beforeAll(async () => {
    api = await startApi('postgres', {});
    const db = await openDatabase({ databaseUrl: api.db.env.DATABASE_URL, dataDir: '' });
    const org = await db.prisma.organization.create({ data: { name: 'Acme' } });
    await db.prisma.user.create({ data: { organizationId: org.id, email: 'owner@acme.example', passwordHash: await hashPassword('the right password') } });
    await db.close();
    session = (await postLogin(api.url, 'owner@acme.example', 'the right password')).session!;
  });
  afterAll(() => api.stop());

  it('random form bodies, cookies, content types and paths get a clean answer', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('/login', '/logout', '/settings/api-keys', '/settings/api-keys/00000000-0000-4000-8000-000000000000/revoke', '/settings/api-keys/x/revoke', '/'),
        fc.constantFrom('GET', 'POST'),
        fc.array(fc.tuple(fc.oneof(hostile, fc.constantFrom('csrf', 'email', 'password', 'name', 'scope', 'expires')), hostile), { maxLength: 5 }),
        fc.oneof(hostile, fc.constant(session), fc.constantFrom('crm_session=%E0%A4%A', `${session}; crm_login_csrf=%`)),
        fc.constantFrom('application/x-www-form-urlencoded', 'text/plain', 'multipart/form-data; boundary=x', ''),
        async (path, method, fields, cookie, type) => {
          const body = method === 'POST' ? fields.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&') : undefined;
          const headers: Record<string, string> = {};
          if (type) headers['content-type'] = type;
          const safeCookie = cookie.replace(/[^\x20-\x7e]/g, '');
          if (safeCookie) headers.cookie = safeCookie;
          const response = await fetch(`${api.url}${path}`, { method, headers, body, redirect: 'manual' });
          expect(response.status, `${method} ${path}`).toBeLessThan(500);
          await response.arrayBuffer();
        },
      ),
      { numRuns: RUNS },
    );
    // No forged post created a key, and nothing was logged as an error.
    const page = await fetch(`${api.url}/settings/api-keys`, { headers: { cookie: session } });
    expect(await page.text()).toContain('No keys yet.');
    expect(api.server.output()).not.toContain('"level":"error"');
  });
});

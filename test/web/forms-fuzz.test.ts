// Hostile input at the account pages: whatever the form bodies, cookies, content types and
// paths, the answer is never a 5xx, and no session or key appears out of nowhere.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/auth/passwords.js';
import { openDatabase } from '../../src/db/connection.js';
import { csrfOf, postLogin, startApi, type Api } from '../helpers/api.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 120);

const hostile = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.constantFrom('%E0%A4%A', '%00', '\u0000', '%', '%%', '"><script>', '../../etc/passwd', 'a'.repeat(5000), '💥', 'csrf=', '&&&', '=='),
);

const UUID_A = '00000000-0000-4000-8000-000000000000';
const FORM_PATHS = [
  '/settings/webhooks',
  `/settings/webhooks/${UUID_A}/enable`,
  `/settings/webhooks/${UUID_A}/disable`,
  `/settings/webhooks/${UUID_A}/attempts/${UUID_A}/resend`,
  '/settings/webhooks/x/disable',
  `/settings/webhooks/${UUID_A}/attempts/x/resend`,
  '/settings/webhooks/',
  '/settings/imports',
];

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
        fc.constantFrom('/login', '/logout', '/settings/api-keys', '/settings/api-keys/00000000-0000-4000-8000-000000000000/revoke', '/settings/api-keys/x/revoke', '/', ...FORM_PATHS),
        fc.constantFrom('GET', 'POST'),
        fc.array(fc.tuple(fc.oneof(hostile, fc.constantFrom('csrf', 'email', 'password', 'name', 'scope', 'expires', 'url', 'description', 'event_type')), hostile), { maxLength: 5 }),
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
    const text = await page.text();
    expect(text).toContain('No keys yet.');
    expect(text).toContain('No webhook endpoints yet.');
    expect(api.server.output()).not.toContain('"level":"error"');
  });

  it('webhook forms with the right CSRF token but hostile fields are refused cleanly', async () => {
    const csrf = csrfOf(await (await fetch(`${api.url}/settings/api-keys`, { headers: { cookie: session } })).text());
    // Addresses the service must refuse without asking any outside DNS server.
    const url = fc.oneof(hostile, fc.constantFrom('https://127.0.0.1/hook', 'https://localhost/x', 'http://example.com/x', 'https://user:pw@example.com/', 'https://[::1]/', 'https://10.0.0.1:99999/', 'https://%00/'));
    const eventType = fc.oneof(hostile, fc.constantFrom('all', 'customer.created', 'invoice.exploded'));
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...FORM_PATHS),
        fc.record({ url, description: hostile, event_type: fc.array(eventType, { maxLength: 4 }) }, { requiredKeys: [] }),
        fc.array(fc.tuple(hostile, hostile), { maxLength: 3 }),
        async (path, fields, extra) => {
          const body = new URLSearchParams([['csrf', csrf]]);
          if (fields.url !== undefined) body.append('url', fields.url);
          if (fields.description !== undefined) body.append('description', fields.description);
          for (const type of fields.event_type ?? []) body.append('event_type', type);
          for (const [k, v] of extra) body.append(k, v);
          const response = await fetch(`${api.url}${path}`, {
            method: 'POST',
            headers: { cookie: session, 'content-type': 'application/x-www-form-urlencoded' },
            body: body.toString(),
            redirect: 'manual',
          });
          expect(response.status, `POST ${path} ${body.toString().slice(0, 300)}`).toBeLessThan(500);
          await response.arrayBuffer();
        },
      ),
      { numRuns: RUNS },
    );
    // None of it made an endpoint, and nothing was logged as an error.
    const page = await fetch(`${api.url}/settings/api-keys`, { headers: { cookie: session } });
    expect(await page.text()).toContain('No webhook endpoints yet.');
    expect(api.server.output()).not.toContain('"level":"error"');
  });
});

import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/auth/passwords.js';
import { openDatabase } from '../../src/db/connection.js';
import { csrfOf, makeKeys, postChunked, postLogin, type Api } from '../helpers/api.js';
import { migratedDatabase } from '../helpers/databases.js';
import { startServer, type RunningServer } from '../helpers/processes.js';

/** The server process's resident memory, in MB. */
const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

describe('login', () => {
  // A process of its own: one test reads the server's memory.
  let api: Omit<Api, 'server'> & { server: RunningServer };
  beforeAll(async () => {
    const database = await migratedDatabase('postgres');
    await makeKeys(database, {}); // applies the migrations
    const db = await openDatabase({ databaseUrl: database.env.DATABASE_URL, dataDir: '' });
    const org = await db.prisma.organization.create({ data: { name: 'Acme' } });
    const owner = await db.prisma.user.create({ data: { organizationId: org.id, email: 'owner@acme.example', passwordHash: await hashPassword('the right password') } });
    await db.prisma.user.create({ data: { organizationId: org.id, email: 'target@acme.example', passwordHash: await hashPassword('the right password') } });
    // Never the target of failed logins here: its sign-in is never throttled.
    await db.prisma.user.create({ data: { organizationId: org.id, email: 'tester@acme.example', passwordHash: await hashPassword('the right password') } });
    // An ended session, as an old login leaves behind.
    await db.prisma.session.create({ data: { id: 'ended', userId: owner.id, csrfToken: 'x', expiresAt: new Date(Date.now() - 86_400_000) } });
    await db.close();
    const server = await startServer(database.env);
    api = { url: server.url, db: database, server, keys: {}, stop: async () => { await server.stop(); await database.drop(); } };
  });
  afterAll(() => api.stop());

  const attempt = async (email: string, password: string) => (await postLogin(api.url, email, password)).response;

  it('sets a session cookie that is HttpOnly and SameSite=Strict', async () => {
    const response = await attempt('owner@acme.example', 'the right password');
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/settings/api-keys');
    expect(response.headers.get('set-cookie')).toMatch(/^crm_session=[\w-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200$/);
  });

  it('refuses a login post without the form\'s CSRF token', async () => {
    const response = await fetch(`${api.url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'email=owner%40acme.example&password=the+right+password&csrf=x',
    });
    expect(response.status).toBe(403);
    expect(response.headers.get('set-cookie')).not.toContain('crm_session');
  });

  it('a hostile e-mail (NUL byte) is just a failed login, not a server error', async () => {
    expect((await attempt('owner\u0000@acme.example', 'x')).status).toBe(401);
  });

  it('after 10 failures on an account, even the right password waits', async () => {
    for (let i = 0; i < 10; i++) expect((await attempt('owner@acme.example', `wrong ${i}`)).status).toBe(401);
    const blocked = await attempt('owner@acme.example', 'the right password');
    expect(blocked.status).toBe(429);
    expect(await blocked.text()).toContain('Too many failed attempts');
  });

  it('200 parallel guesses on one account: no more than the limit are ever checked', async () => {
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => attempt('target@acme.example', `guess ${i}`)));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(10);
    expect(statuses.filter((s) => s !== 401 && s !== 429)).toEqual([]);
    // The right password is refused too, until the window ends.
    expect((await attempt('target@acme.example', 'the right password')).status).toBe(429);
  });

  it('a wrong password keeps the e-mail in the form', async () => {
    const response = await attempt('owner@acme.example', 'not it');
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(await response.text()).toContain('value="owner@acme.example"');
  });

  it('a 300 MB login body is refused without being read into memory', async () => {
    const pid = api.server.process.pid!;
    const before = rssOf(pid);
    // Chunked: no Content-Length to refuse on, so the cap must stop the reading.
    const outcome = await postChunked(api.url, '/login', { 'content-type': 'application/x-www-form-urlencoded' }, { chunk: Buffer.alloc(1024 * 1024, 'a'), count: 300 });
    expect([413, 'reset']).toContain(outcome);
    await expect.poll(() => api.server.output()).toMatch(/"path":"\/login","status":413/);
    expect(rssOf(pid) - before).toBeLessThan(100);
    const declared = await fetch(`${api.url}/login`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(300 * 1024 * 1024) }, body: 'a=1' }).catch(() => undefined);
    if (declared) expect(declared.status).toBe(413);
  });

  it('a malformed cookie is no cookie, not a server error', async () => {
    for (const path of ['/login', '/settings/api-keys']) {
      const response = await fetch(`${api.url}${path}`, { headers: { cookie: 'crm_session=%E0%A4%A; crm_login_csrf=%E0%A4%A' }, redirect: 'manual' });
      expect(response.status).toBeLessThan(500);
    }
    const logout = await fetch(`${api.url}/logout`, { method: 'POST', headers: { cookie: 'crm_session=%E0%A4%A', 'content-type': 'application/x-www-form-urlencoded' }, body: 'csrf=x', redirect: 'manual' });
    expect(logout.status).toBeLessThan(500);
  });

  it('a revoke URL with an id that only looks like a UUID is a 404, not a server error', async () => {
    const { session } = await postLogin(api.url, 'owner@acme.example', 'the right password');
    const page = await fetch(`${api.url}/settings/api-keys`, { headers: { cookie: session! } });
    const csrf = csrfOf(await page.text());
    const response = await fetch(`${api.url}/settings/api-keys/zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz/revoke`, {
      method: 'POST',
      headers: { cookie: session!, 'content-type': 'application/x-www-form-urlencoded' },
      body: `csrf=${encodeURIComponent(csrf)}`,
      redirect: 'manual',
    });
    expect(response.status).toBe(404);
  });

  it('the keys page switches to test mode, where it makes svc_test_ keys that see only test data', async () => {
    const { session } = await postLogin(api.url, 'tester@acme.example', 'the right password');
    const page = await (await fetch(`${api.url}/settings/api-keys?mode=test`, { headers: { cookie: session! } })).text();
    expect(page).toContain('<strong>Test mode</strong>');
    const created = await fetch(`${api.url}/settings/api-keys`, {
      method: 'POST',
      headers: { cookie: session!, 'content-type': 'application/x-www-form-urlencoded' },
      body: `csrf=${encodeURIComponent(csrfOf(page))}&mode=test&name=Sandbox&scope=all`,
      redirect: 'manual',
    });
    expect(created.status).toBe(303);
    expect(created.headers.get('location')).toBe('/settings/api-keys?mode=test');
    const newKey = created.headers.getSetCookie().find((c) => c.startsWith('crm_new_key='))!;
    const shown = await (await fetch(`${api.url}${created.headers.get('location')}`, { headers: { cookie: `${session}; ${newKey.split(';')[0]}` } })).text();
    const key = /svc_test_[0-9A-Za-z]{32}/.exec(shown)?.[0];
    expect(key).toBeDefined();
    // The live page does not list it; the test key works and sees its own (empty) mode.
    expect(await (await fetch(`${api.url}/settings/api-keys`, { headers: { cookie: session! } })).text()).not.toContain('Sandbox');
    const customers = await fetch(`${api.url}/v1/customers`, { headers: { authorization: `Bearer ${key}` } });
    expect(customers.status).toBe(200);
    expect((await customers.json()).pagination.total).toBe(0);
  });

  it('account pages, GraphiQL and the API reference cannot be framed', async () => {
    for (const [path, accept] of [['/login', 'text/html'], ['/graphql', 'text/html'], ['/v1/docs', 'text/html']] as const) {
      const response = await fetch(`${api.url}${path}`, { headers: { accept } });
      expect(response.headers.get('x-frame-options'), path).toBe('DENY');
      expect(response.headers.get('content-security-policy'), path).toContain("frame-ancestors 'none'");
    }
  });

  it('ended sessions are purged', async () => {
    const client = new pg.Client({ connectionString: api.db.env.DATABASE_URL });
    await client.connect();
    try {
      await expect.poll(async () => (await client.query(`SELECT count(*)::int AS n FROM sessions WHERE id = 'ended'`)).rows[0].n).toBe(0);
    } finally {
      await client.end();
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/auth/passwords.js';
import { openDatabase } from '../../src/db/connection.js';
import { postLogin, startApi, type Api } from '../helpers/api.js';

describe('login', () => {
  let api: Api;
  beforeAll(async () => {
    api = await startApi('postgres', {});
    const db = await openDatabase({ databaseUrl: api.db.env.DATABASE_URL, dataDir: '' });
    const org = await db.prisma.organization.create({ data: { name: 'Acme' } });
    await db.prisma.user.create({ data: { organizationId: org.id, email: 'owner@acme.example', passwordHash: await hashPassword('the right password') } });
    await db.close();
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
});

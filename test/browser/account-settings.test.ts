import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connection.js';
import { addUser, call, startApi, type Api } from '../helpers/api.js';
import { ARTIFACTS, launchBrowser } from '../helpers/browser.js';

const EMAIL = 'owner@acme.example';
const PASSWORD = 'correct horse battery staple';

/** Fills and sends the login form the page shows. */
async function submitLogin(page: Page, password: string) {
  await page.fill('#email', EMAIL);
  await page.fill('#password', password);
  await page.click('button[type=submit]');
}

describe('account settings in a browser', () => {
  let api: Api;
  let browser: Browser;

  beforeAll(async () => {
    api = await startApi('postgres', { other: { org: 'Other Co' } });
    await addUser(api, 'Acme', EMAIL, PASSWORD);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await api?.stop();
  });

  it('logs in, creates a key, uses it, revokes it in the page, and the next call gets 401', async () => {
    const page = await browser.newPage();
    await page.goto(`${api.url}/settings/api-keys`);
    expect(new URL(page.url()).pathname).toBe('/login');

    await submitLogin(page, 'wrong password!');
    await expect(page.locator('[role=alert]').textContent()).resolves.toContain('Wrong e-mail or password');
    await expect(page.locator('#email').inputValue()).resolves.toBe(EMAIL);

    await submitLogin(page, PASSWORD);
    expect(new URL(page.url()).pathname).toBe('/settings/api-keys');
    await expect(page.locator('h1').textContent()).resolves.toContain('Acme');
    await page.screenshot({ path: join(ARTIFACTS, 'api-keys-empty.png'), fullPage: true });

    await page.fill('#name', 'Browser test key');
    await page.check('input[name=scope][value="customers:read"]');
    await page.check('input[name=scope][value="customers:write"]');
    await page.click('form[action="/settings/api-keys"] button[type=submit]');
    const key = (await page.locator('#new-key').textContent())!.trim();
    expect(key).toMatch(/^svc_live_[0-9A-Za-z]{32}$/);
    // Copy says what it did, even without the Clipboard API (absent on a plain-http address).
    await page.evaluate(() => Object.defineProperty(navigator, 'clipboard', { value: undefined, configurable: true }));
    await page.click('button.copy');
    await expect.poll(() => page.locator('button.copy').textContent()).toMatch(/^(Copied|Selected: press Ctrl\+C)/);
    expect(await page.evaluate(() => window.getSelection()?.toString().trim())).toBe(key);
    // Reloading the page neither shows the secret again nor creates another key.
    await page.reload();
    await expect(page.locator('#new-key').count()).resolves.toBe(0);
    await expect(page.locator('tr', { hasText: 'Browser test key' }).count()).resolves.toBe(1);
    const row = page.locator('tr', { hasText: 'Browser test key' });
    await expect(row.textContent()).resolves.toContain(key.slice(0, 17));
    await expect(row.textContent()).resolves.toContain('active');
    await page.screenshot({ path: join(ARTIFACTS, 'api-keys-created.png'), fullPage: true });

    const created = await call(`${api.url}/v1/customers`, { method: 'POST', key, json: { name: 'Made from the browser key' } });
    expect(created.status).toBe(201);
    expect((await call(`${api.url}/v1/customers`, { key })).body.pagination.total).toBe(1);
    expect((await call(`${api.url}/v1/invoices`, { key })).status).toBe(403);

    await page.goto(`${api.url}/settings/api-keys`);
    await expect(page.locator('#new-key').count()).resolves.toBe(0);
    // The key was used: its last use is recorded.
    await expect(page.locator('tr', { hasText: 'Browser test key' }).locator('td').nth(4).textContent()).resolves.toMatch(/UTC/);
    // Revoking asks first: dismissing keeps the key.
    const questions: string[] = [];
    page.once('dialog', (dialog) => {
      questions.push(dialog.message());
      void dialog.dismiss();
    });
    await page.click('button[aria-label="Revoke Browser test key"]');
    expect(questions).toEqual([expect.stringContaining('Revoke the key “Browser test key”?')]);
    await expect(page.locator('tr', { hasText: 'Browser test key' }).locator('.status-active').textContent()).resolves.toBe('active');
    expect((await call(`${api.url}/v1/customers`, { key })).status).toBe(200);
    page.once('dialog', (dialog) => void dialog.accept());
    await page.click('button[aria-label="Revoke Browser test key"]');
    await expect(page.locator('tr', { hasText: 'Browser test key' }).locator('.status-revoked').textContent()).resolves.toBe('revoked');
    await page.screenshot({ path: join(ARTIFACTS, 'api-keys-revoked.png'), fullPage: true });

    const after = await call(`${api.url}/v1/customers`, { key });
    expect(after.status).toBe(401);

    await page.click('text=Log out');
    expect(new URL(page.url()).pathname).toBe('/login');
    await page.goto(`${api.url}/settings/api-keys`);
    expect(new URL(page.url()).pathname).toBe('/login');
  });

  it('a form post without the page\'s CSRF token is refused', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${api.url}/login`);
    await submitLogin(page, PASSWORD);
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === 'crm_session')!;
    expect(session.httpOnly).toBe(true);
    expect(session.sameSite).toBe('Strict');
    const forged = await fetch(`${api.url}/settings/api-keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `crm_session=${session.value}` },
      body: 'name=forged&scope=all&csrf=guess',
    });
    expect(forged.status).toBe(403);
    await page.reload();
    await expect(page.locator('body').textContent()).resolves.not.toContain('forged');
    await context.close();
  });

  it('a user sees and revokes only their own organization\'s keys', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${api.url}/login`);
    await submitLogin(page, PASSWORD);
    await expect(page.locator('body').textContent()).resolves.not.toContain('other');
    // Revoking another organization's key id through a crafted form changes nothing.
    const db = await openDatabase({ databaseUrl: api.db.env.DATABASE_URL, dataDir: '' });
    const foreign = await db.prisma.apiKey.findFirstOrThrow({ where: { name: 'other' } });
    const csrf = await page.locator('input[name=csrf]').first().inputValue();
    const session = (await context.cookies()).find((c) => c.name === 'crm_session')!;
    const response = await fetch(`${api.url}/settings/api-keys/${foreign.id}/revoke`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `crm_session=${session.value}` },
      body: `csrf=${encodeURIComponent(csrf)}`,
    });
    expect(response.status).toBe(303);
    expect((await db.prisma.apiKey.findUniqueOrThrow({ where: { id: foreign.id } })).revokedAt).toBeNull();
    expect((await call(`${api.url}/v1/customers`, { key: api.keys.other })).status).toBe(200);
    await db.close();
    await context.close();
  });
});

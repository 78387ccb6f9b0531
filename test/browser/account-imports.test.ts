// The imports section of the account page, in Chromium against the real server: upload a CSV
// (one good row, one bad), follow the import to its end by reloading the page, see its counts
// and the bad row's error; a refused file says why; an upload in test mode writes the test
// twin only. The test waits on the page (reloads, bounded), never on the clock.
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, rest, startApi, type Api } from '../helpers/api.js';
import { ARTIFACTS, launchBrowser } from '../helpers/browser.js';

const EMAIL = 'owner@acme.example';
const PASSWORD = 'correct horse battery staple';

async function logIn(context: BrowserContext, url: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${url}/login`);
  await page.fill('#email', EMAIL);
  await page.fill('#password', PASSWORD);
  await page.click('button[type=submit]');
  expect(new URL(page.url()).pathname).toBe('/settings/api-keys');
  return page;
}

/** Chooses the file in the section's form and sends it. */
async function uploadCsv(page: Page, csv: string, name = 'customers.csv') {
  await page.setInputFiles('#import-file', { name, mimeType: 'text/csv', buffer: Buffer.from(csv) });
  await page.click('#import-form button[type=submit]');
}

/** Reloads until the newest import's status is `completed` (it runs in the server's background loop). */
async function reloadUntilCompleted(page: Page) {
  await expect
    .poll(
      async () => {
        await page.reload();
        return page.locator('tr.import').first().locator('.import-status').textContent();
      },
      { timeout: 20_000, interval: 100 },
    )
    .toBe('completed');
}

/** The newest import's counts, as the page shows them. */
async function countsOf(page: Page) {
  const row = page.locator('tr.import').first();
  const count = async (name: string) => Number(await row.locator(`.import-${name}`).textContent());
  return { total: await count('total'), created: await count('created'), updated: await count('updated'), failed: await count('failed') };
}

describe('imports on the account page, in a browser', () => {
  let api: Api;
  let browser: Browser;

  beforeAll(async () => {
    api = await startApi('postgres', { live: { org: 'Acme' }, test: { org: 'Acme', mode: 'test' } });
    await addUser(api, 'Acme', EMAIL, PASSWORD);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await api?.stop();
  });

  it('uploads a CSV, follows the import to its end, and shows its counts and the bad row\'s error', async () => {
    const context = await browser.newContext();
    const page = await logIn(context, api.url);
    await expect(page.locator('#imports h2').textContent()).resolves.toBe('Imports');
    await expect(page.locator('#imports .no-imports').textContent()).resolves.toBe('No imports yet.');

    // A refused file says what is wrong, and starts nothing.
    await uploadCsv(page, 'name,emial\nAda Lovelace,ada@example.com\n');
    await expect(page.locator('#import-error').textContent()).resolves.toContain('Column “emial” is not a column of this resource');
    await expect(page.locator('tr.import').count()).resolves.toBe(0);

    await uploadCsv(page, 'name,email\r\nAda Lovelace,ada@example.com\r\nBad Row,not-an-email\r\n');
    const url = new URL(page.url());
    expect(`${url.pathname}${url.search}${url.hash}`).toBe('/settings/api-keys#imports');
    await expect(page.locator('#import-error').count()).resolves.toBe(0);
    await reloadUntilCompleted(page);
    expect(await countsOf(page)).toEqual({ total: 2, created: 1, updated: 0, failed: 1 });
    // The bad row's error is the one its single create would give (asked as a dry run).
    const single = await rest(api, api.keys.live!).post('/customers', { name: 'Bad Row', email: 'not-an-email' }, { prefer: 'dry-run' });
    expect(single.status).toBe(400);
    const errors = page.locator('tr.import-errors').first().locator('tr.row-error');
    await expect(errors.count()).resolves.toBe(1);
    await expect(errors.locator('.error-row').textContent()).resolves.toBe('2');
    await expect(errors.locator('.error-param').textContent()).resolves.toBe('email');
    await expect(errors.locator('.error-message').textContent()).resolves.toBe(single.body.errors[0].message);
    await page.screenshot({ path: join(ARTIFACTS, 'imports-completed.png'), fullPage: true });

    // The good row is a live customer.
    const found = await rest(api, api.keys.live!).get('/customers?search=lovelace');
    expect(found.body.data.map((c: { name: string; email: string }) => [c.name, c.email])).toEqual([['Ada Lovelace', 'ada@example.com']]);
    await context.close();
  });

  it('an upload in test mode writes the test twin only, and only the test page lists it', async () => {
    const context = await browser.newContext();
    const page = await logIn(context, api.url);
    await page.click('.modes a:text("Test mode")');
    expect(new URL(page.url()).search).toBe('?mode=test');
    await expect(page.locator('#imports .no-imports').count()).resolves.toBe(1);

    await uploadCsv(page, 'name,email\nGrace Hopper,grace@example.com\n', 'test-customers.csv');
    const url = new URL(page.url());
    expect(`${url.pathname}${url.search}${url.hash}`).toBe('/settings/api-keys?mode=test#imports');
    await reloadUntilCompleted(page);
    expect(await countsOf(page)).toEqual({ total: 1, created: 1, updated: 0, failed: 0 });
    await expect(page.locator('tr.import').count()).resolves.toBe(1);
    const testImport = await page.locator('tr.import').first().getAttribute('data-import-id');

    const grace = (key: string) => rest(api, key).get('/customers?search=hopper');
    expect((await grace(api.keys.test!)).body.pagination.total).toBe(1);
    expect((await grace(api.keys.live!)).body.pagination.total).toBe(0);
    // The test import is the test key's; the live key's API does not find it.
    expect((await rest(api, api.keys.test!).get(`/imports/${testImport}`)).body.status).toBe('completed');
    expect((await rest(api, api.keys.live!).get(`/imports/${testImport}`)).status).toBe(404);

    await page.goto(`${api.url}/settings/api-keys`);
    await expect(page.locator(`tr.import[data-import-id="${testImport}"]`).count()).resolves.toBe(0);
    await context.close();
  });
});

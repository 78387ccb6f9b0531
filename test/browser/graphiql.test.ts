import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rest, startApi, type Api } from '../helpers/api.js';
import { ANY_DATABASE } from '../helpers/databases.js';
import { ARTIFACTS, launchBrowser } from '../helpers/browser.js';

describe('GraphiQL for analysts', () => {
  let api: Api;
  let browser: Browser;
  beforeAll(async () => {
    api = await startApi(ANY_DATABASE, { analyst: { org: 'Acme' } });
    await rest(api, api.keys.analyst!).post('/customers', { name: 'Grace Hopper', email: 'grace@navy.example' });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await api?.stop();
  });

  it('runs a query with the key in the headers editor and shows the data', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1600 } });
    const blocked: string[] = [];
    page.on('requestfailed', (request) => blocked.push(request.url()));
    await page.goto(`${api.url}/graphql`);
    await page.waitForSelector('.graphiql-container', { timeout: 30_000 });
    // The page greets the visitor with what to do; nothing internal shows.
    const greeting = (await page.locator('.graphiql-query-editor').textContent())!.replace(/\s+/g, ' ');
    expect(greeting).toContain('put an API key in the Headers tab');
    // The schema loads before any key is given (introspection needs none): docs, and no error.
    await page.getByRole('button', { name: /show documentation explorer/i }).click();
    await expect.poll(async () => page.locator('.graphiql-doc-explorer').textContent(), { timeout: 20_000 }).toMatch(/Query/);
    expect(await page.locator('body').textContent()).not.toMatch(/UNAUTHENTICATED|valid API key is required/);
    await page.getByRole('button', { name: /hide documentation explorer/i }).click();

    // The headers tab comes pre-filled with a placeholder; replace it with the real key.
    await page.getByRole('button', { name: /headers/i }).first().click();
    const headers = page.locator('.graphiql-editor-tool .graphiql-editor').last();
    await headers.click();
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Delete');
    await page.keyboard.type(`{"Authorization": "Bearer ${api.keys.analyst}"`);

    // The docs explorer fills in once the key is there, without a manual re-fetch.
    await page.getByRole('button', { name: /show documentation explorer/i }).click();
    await expect.poll(async () => page.locator('.graphiql-doc-explorer').textContent(), { timeout: 20_000 }).toMatch(/Query/);
    // Into the Query type; again if the explorer was drawn anew under the click (a schema
    // fetched once more goes back to its first page: seen once, on a loaded machine).
    const explorer = page.locator('.graphiql-doc-explorer');
    await expect
      .poll(async () => {
        if (!(await explorer.textContent())?.includes('customers')) await explorer.getByText('Query', { exact: true }).first().click({ timeout: 2_000 }).catch(() => {});
        return explorer.textContent();
      }, { timeout: 20_000 })
      .toContain('customers');

    await page.locator('.graphiql-execute-button').click();
    const result = page.locator('.graphiql-response');
    // The editor renders spaces as non-breaking ones.
    const text = async () => (await result.textContent())?.replace(/\s+/g, ' ');
    await expect.poll(text, { timeout: 20_000 }).toContain('"name": "Grace Hopper"');
    await page.screenshot({ path: join(ARTIFACTS, 'graphiql.png') });
    expect(blocked.filter((url) => !url.startsWith(api.url))).toEqual([]);
  });

  it('runs a subscription and shows events as they commit', async () => {
    // A context of its own: GraphiQL keeps its tabs and headers in the origin's storage. The
    // page opens with the subscription in its editor (GraphiQL reads `query` from its address).
    const page = await (await browser.newContext({ viewport: { width: 1400, height: 1600 } })).newPage();
    await page.goto(`${api.url}/graphql?query=${encodeURIComponent('subscription Live { events { type data } }')}`);
    await page.waitForSelector('.graphiql-container', { timeout: 30_000 });
    await page.getByRole('button', { name: /headers/i }).first().click();
    await page.locator('.graphiql-editor-tool .graphiql-editor').last().click();
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Delete');
    await page.keyboard.type(`{"Authorization": "Bearer ${api.keys.analyst}"`);
    // GraphiQL opens the stream with a GET carrying the document in the query string.
    const opened = page.waitForRequest((request) => new URL(request.url()).pathname === '/graphql' && `${request.url()} ${request.postData() ?? ''}`.includes('subscription'));
    await page.locator('.graphiql-execute-button').click();
    await opened;
    const text = async () => (await page.locator('.graphiql-response').textContent())?.replace(/\s+/g, ' ');
    // A change committed after the stream opened shows up in the response pane.
    await expect
      .poll(async () => {
        await rest(api, api.keys.analyst!).post('/customers', { name: 'Live Subscriber' });
        return text();
      }, { timeout: 30_000 })
      .toContain('"type": "customer.created"');
    expect(await text()).toContain('Live Subscriber');
  });
});

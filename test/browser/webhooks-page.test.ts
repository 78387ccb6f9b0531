// The webhooks section of the account page, in Chromium against the real server: add an
// endpoint (its secret shown once, and it signs the deliveries), see the deliveries the
// service made, resend one, see a failed one, disable and enable the endpoint. A local
// receiver answers the deliveries; the test waits on its requests and on the page, never
// on the clock.
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, call, csrfOf, rest, startApi, type Api } from '../helpers/api.js';
import { ARTIFACTS, launchBrowser } from '../helpers/browser.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

const EMAIL = 'owner@acme.example';
const PASSWORD = 'correct horse battery staple';
// Plain http to 127.0.0.1 is allowed for the test; a failed attempt is retried only after
// an hour, so no retry arrives while the test counts requests.
const LOCAL = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_SCHEDULE: '3600', WEBHOOK_TIMEOUT_MS: '5000' };

async function logIn(context: BrowserContext, url: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${url}/login`);
  await page.fill('#email', EMAIL);
  await page.fill('#password', PASSWORD);
  await page.click('button[type=submit]');
  expect(new URL(page.url()).pathname).toBe('/settings/api-keys');
  return page;
}

/**
 * Reloads until the endpoint's delivery log shows `count` attempts: an attempt is recorded
 * just after the receiver's answer, so the request arriving does not mean the row exists yet.
 */
async function reloadUntilAttempts(page: Page, count: number) {
  await expect
    .poll(
      async () => {
        await page.reload();
        return page.locator('tr.attempt').count();
      },
      { timeout: 20_000, interval: 100 },
    )
    .toBe(count);
}

describe('webhooks on the account page, in a browser', () => {
  let api: Api;
  let browser: Browser;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    api = await startApi('postgres', { acme: { org: 'Acme' }, other: { org: 'Other Co' } }, LOCAL);
    await addUser(api, 'Acme', EMAIL, PASSWORD);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await api?.stop();
    await receiver?.close();
  });

  it('adds an endpoint, shows its secret once, lists deliveries, resends, and disables it', async () => {
    const context = await browser.newContext();
    const page = await logIn(context, api.url);
    await expect(page.locator('#webhooks h2').textContent()).resolves.toBe('Webhooks');
    await expect(page.locator('#webhooks').textContent()).resolves.toContain('No webhook endpoints yet.');

    // Refused input: the API's own rules, every fault at once, the typed values kept.
    await page.fill('#webhook-url', 'ftp://example.com/hook');
    await page.uncheck('input[name=event_type][value=all]');
    await page.click('#add-webhook button[type=submit]');
    const refused = (await page.locator('#webhook-error').textContent())!;
    expect(refused).toContain('URL must be an http:// or https:// URL');
    expect(refused).toContain('Event types choose at least one event type, or all');
    await expect(page.locator('#webhook-url').inputValue()).resolves.toBe('ftp://example.com/hook');
    await expect(page.locator('article.endpoint').count()).resolves.toBe(0);

    await page.fill('#webhook-url', `${receiver.url}/hook`);
    await page.fill('#webhook-description', 'Browser test endpoint');
    await page.check('input[name=event_type][value=all]');
    await page.click('#add-webhook button[type=submit]');
    expect(new URL(page.url()).pathname).toBe('/settings/api-keys');
    const secret = (await page.locator('#new-webhook-secret').textContent())!.trim();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    await expect(page.locator('#new-webhook').textContent()).resolves.toContain(`${receiver.url}/hook`);
    await page.screenshot({ path: join(ARTIFACTS, 'webhooks-created.png'), fullPage: true });
    // Reloading neither shows the secret again nor adds another endpoint.
    await page.reload();
    await expect(page.locator('#new-webhook-secret').count()).resolves.toBe(0);
    await expect(page.content()).resolves.not.toContain(secret);
    const endpoint = page.locator('article.endpoint');
    await expect(endpoint.count()).resolves.toBe(1);
    await expect(endpoint.locator('.endpoint-url').textContent()).resolves.toBe(`${receiver.url}/hook`);
    await expect(endpoint.locator('.endpoint-state').textContent()).resolves.toBe('enabled');
    await expect(endpoint.locator('.endpoint-types').textContent()).resolves.toBe('all');
    await expect(endpoint.textContent()).resolves.toContain('No deliveries yet.');
    const endpointId = (await endpoint.getAttribute('data-endpoint-id'))!;
    // The API sees the endpoint the page made.
    const listed = await rest(api, api.keys.acme!).get(`/webhook_endpoints/${endpointId}`);
    expect(listed.body).toMatchObject({ url: `${receiver.url}/hook`, description: 'Browser test endpoint', event_types: [], enabled: true });

    // A change through the API is delivered, signed with the secret the page showed.
    const customer = await call(`${api.url}/v1/customers`, { method: 'POST', key: api.keys.acme!, json: { name: 'Hooked from the browser test' } });
    expect(customer.status).toBe(201);
    const [first] = await receiver.waitFor(1);
    const headers = Object.fromEntries(['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => [name, String(first!.headers[name])]));
    const event = new Webhook(secret).verify(first!.body, headers) as { id: string; type: string };
    expect(event.type).toBe('customer.created');
    await reloadUntilAttempts(page, 1);
    const row = endpoint.locator('tr.attempt').first();
    await expect(row.locator('.status-code').textContent()).resolves.toBe('204');
    await expect(row.textContent()).resolves.toContain(event.id);
    await expect(row.textContent()).resolves.toContain('customer.created');
    await expect(row.textContent()).resolves.toMatch(/\d+ ms/);

    // Resend: the same event (the same webhook-id) arrives again.
    await row.locator('button.resend').click();
    const [, second] = await receiver.waitFor(2);
    expect(second!.headers['webhook-id']).toBe(event.id);
    await reloadUntilAttempts(page, 2);
    await expect(endpoint.locator('tr.attempt .status-code').allTextContents()).resolves.toEqual(['204', '204']);

    // A failed attempt shows its status code and why.
    receiver.answer(() => ({ status: 500 }));
    await endpoint.locator('tr.attempt').first().locator('button.resend').click();
    await receiver.waitFor(3);
    await reloadUntilAttempts(page, 3);
    const failed = endpoint.locator('tr.attempt').first();
    await expect(failed.locator('.status-code').textContent()).resolves.toBe('500');
    await expect(failed.textContent()).resolves.toContain('the endpoint answered 500');
    receiver.answer(() => ({ status: 204 }));
    await page.screenshot({ path: join(ARTIFACTS, 'webhooks-deliveries.png'), fullPage: true });

    // Disabled: shown so, the API agrees, and a resend waits instead of being sent ...
    await endpoint.locator('button.toggle').click();
    await expect(endpoint.locator('.endpoint-state').textContent()).resolves.toBe('disabled');
    await expect(endpoint.locator('button.toggle').textContent()).resolves.toBe('Enable');
    expect((await rest(api, api.keys.acme!).get(`/webhook_endpoints/${endpointId}`)).body.enabled).toBe(false);
    await page.screenshot({ path: join(ARTIFACTS, 'webhooks-disabled.png'), fullPage: true });
    await endpoint.locator('tr.attempt').nth(1).locator('button.resend').click();
    await expect(endpoint.locator('.endpoint-state').textContent()).resolves.toBe('disabled');
    expect(receiver.received.length).toBe(3);
    // ... until the endpoint is enabled again.
    await endpoint.locator('button.toggle').click();
    await expect(endpoint.locator('.endpoint-state').textContent()).resolves.toBe('enabled');
    const [, , , fourth] = await receiver.waitFor(4);
    expect(fourth!.headers['webhook-id']).toBe(event.id);
    await endpoint.locator('button.toggle').click();
    await expect(endpoint.locator('.endpoint-state').textContent()).resolves.toBe('disabled');
    await context.close();
  });

  it('forged, foreign and malformed posts change nothing and are never a server error', async () => {
    const context = await browser.newContext();
    const page = await logIn(context, api.url);
    const session = (await context.cookies()).find((c) => c.name === 'crm_session')!;
    const cookie = `crm_session=${session.value}`;
    const csrf = csrfOf(await page.content());
    const post = (path: string, body: string) =>
      fetch(`${api.url}${path}`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie }, body });

    // Without the page's CSRF token: refused.
    expect((await post('/settings/webhooks', `csrf=guess&url=${encodeURIComponent(`${receiver.url}/forged`)}&event_type=all`)).status).toBe(403);

    // Another organization's endpoint and attempt: neither disabled nor resent.
    const other = rest(api, api.keys.other!);
    const foreign = (await other.post('/webhook_endpoints', { url: `${receiver.url}/other` })).body as { id: string };
    const before = receiver.received.length;
    await other.post('/customers', { name: 'Other customer' });
    await receiver.waitFor(before + 1);
    await expect.poll(async () => (await other.get(`/webhook_endpoints/${foreign.id}/deliveries`)).body.data, { timeout: 20_000 }).toHaveLength(1);
    const [attempt] = (await other.get(`/webhook_endpoints/${foreign.id}/deliveries`)).body.data as Array<{ id: string }>;
    expect((await post(`/settings/webhooks/${foreign.id}/disable`, `csrf=${encodeURIComponent(csrf)}`)).status).toBe(303);
    expect((await other.get(`/webhook_endpoints/${foreign.id}`)).body.enabled).toBe(true);
    expect((await post(`/settings/webhooks/${foreign.id}/attempts/${attempt!.id}/resend`, `csrf=${encodeURIComponent(csrf)}`)).status).toBe(404);
    expect((await other.get(`/webhook_endpoints/${foreign.id}/deliveries`)).body.data).toHaveLength(1);

    // Ids that are not UUIDs, unknown ids, and junk bodies: clean answers.
    for (const path of ['/settings/webhooks/x/disable', '/settings/webhooks/zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz/enable', '/settings/webhooks/00000000-0000-4000-8000-000000000000/attempts/x/resend']) {
      expect((await post(path, `csrf=${encodeURIComponent(csrf)}`)).status, path).toBe(404);
    }
    expect((await post('/settings/webhooks/00000000-0000-4000-8000-000000000000/attempts/00000000-0000-4000-8000-000000000000/resend', `csrf=${encodeURIComponent(csrf)}`)).status).toBe(404);
    const junk = await post('/settings/webhooks', `csrf=${encodeURIComponent(csrf)}&url=%00&description=${'x'.repeat(600)}&event_type=invoice.exploded`);
    expect(junk.status).toBe(400);
    const text = await junk.text();
    expect(text).toContain('has unknown event types: invoice.exploded');
    expect(text).toContain('Description must be at most 500 characters');
    expect((await post('/settings/webhooks', `csrf=${encodeURIComponent(csrf)}&url=${'a'.repeat(20_000)}`)).status).toBe(413);
    expect(api.server.output()).not.toContain('"level":"error"');
    await context.close();
  });
});

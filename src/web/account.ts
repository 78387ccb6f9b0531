// The account pages: log in, see and manage the organization's API keys and webhook
// endpoints (web/webhooks-page.ts), start and follow CSV imports (web/imports-page.ts), log out.
// Every form post carries a CSRF token (the session's, or a login cookie's double submit).
import { copyButton } from './copy-button.js';
import { organizationFor, type Mode } from '../auth/modes.js';
import { createApiKey } from '../auth/api-keys.js';
import type { KeyChanger } from '../auth/key-changes.js';
import { verifyPassword } from '../auth/passwords.js';
import { allScopes, isScope, type Scope } from '../auth/scopes.js';
import type { WebhookServices } from '../context.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import type { Logger } from '../logger.js';
import { escape, layout } from './html.js';
import { localThrottles, type ThrottleFactory } from './login-throttle.js';
import { cookie, currentUser, endSession, LOGIN_CSRF_COOKIE, readCookies, sameSecret, SESSION_COOKIE, startSession, token, type SessionUser } from './sessions.js';
import { GraphQLError } from 'graphql';
import { Response } from '../http/fetch.js';
import { readBody } from '../http/read-body.js';
import { NEW_WEBHOOK_COOKIE, newWebhookFrom, webhookRoutes, webhooksSection, WEBHOOKS_PAGE, type WebhookExtra } from './webhooks-page.js';
import { importRoute, importsSection, IMPORTS_PATH, type ImportExtra } from './imports-page.js';
// The organization's recent API requests (request-logs/page.ts).
import { requestLogsSection } from '../request-logs/page.js';

// Verifying against a real hash when the e-mail is unknown keeps the timing the same.
const DUMMY_HASH = 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';
const MAX_FORM_BYTES = 16 * 1024;
const NEW_KEY_COOKIE = 'crm_new_key';
const NEW_KEY_PATH = '/settings/api-keys';

function newKeyFrom(value: string | undefined): { key: string; name: string } | undefined {
  try {
    const parsed = value ? (JSON.parse(value) as { key?: unknown; name?: unknown }) : undefined;
    return typeof parsed?.key === 'string' && typeof parsed.name === 'string' ? { key: parsed.key, name: parsed.name } : undefined;
  } catch {
    return undefined;
  }
}

function html(body: string, init: { status?: number; headers?: Record<string, string> } = {}): Response {
  return new Response(body, {
    status: init.status ?? 200,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'x-frame-options': 'DENY',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
      ...init.headers,
    },
  });
}

function redirect(location: string, headers: Record<string, string> = {}): Response {
  return new Response(null, { status: 303, headers: { location, ...headers } });
}

/** The posted form, read under a small cap (a huge body is refused, never held), or the refusal. */
async function readForm(request: Request): Promise<URLSearchParams | Response | null> {
  if (!(request.headers.get('content-type') ?? '').startsWith('application/x-www-form-urlencoded')) return null;
  try {
    return new URLSearchParams(await readBody(request, MAX_FORM_BYTES));
  } catch (error) {
    if (!(error instanceof GraphQLError)) throw error;
    const status = error.extensions.code === 'PAYLOAD_TOO_LARGE' ? 413 : 400;
    return html(layout('Refused', `<p class="error">${escape(error.message)}</p>`), { status });
  }
}

function loginPage(csrf: string, error?: string, email = ''): string {
  return layout(
    'Log in',
    `${error ? `<p class="error" role="alert">${escape(error)}</p>` : ''}
    <form method="post" action="/login">
      <input type="hidden" name="csrf" value="${escape(csrf)}">
      <label for="email">E-mail</label><input id="email" name="email" type="email" autocomplete="username" value="${escape(email)}" required>
      <label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
      <p><button class="primary" type="submit">Log in</button></p>
    </form>`,
  );
}

function keyStatus(key: { revokedAt: Date | null; expiresAt: Date | null }): string {
  if (key.revokedAt) return 'revoked';
  if (key.expiresAt && key.expiresAt.getTime() <= Date.now()) return 'expired';
  return 'active';
}

const when = (date: Date | null) => (date ? `<time datetime="${date.toISOString()}">${date.toISOString().slice(0, 16).replace('T', ' ')} UTC</time>` : '—');

/** `?mode=test`: the page of the account's test mode (its test twin's keys and request log). */
const modeOf = (request: Request): Mode => (new URL(request.url).searchParams.get('mode') === 'test' ? 'test' : 'live');

/** The organization a mode's keys belong to: the user's, or its test twin (none yet: undefined). */
async function modeOrganization(prisma: PrismaClient, user: SessionUser, mode: Mode): Promise<string | undefined> {
  if (mode === 'live') return user.organizationId;
  return (await prisma.organization.findUnique({ where: { liveId: user.organizationId }, select: { id: true } }))?.id;
}

async function keysPage(
  prisma: PrismaClient,
  user: SessionUser,
  extra: { created?: { key: string; name: string }; error?: string; webhooks?: WebhookExtra; imports?: ImportExtra; mode?: Mode } = {},
): Promise<string> {
  const mode = extra.mode ?? 'live';
  const modeOrg = await modeOrganization(prisma, user, mode);
  const [organization, keys, webhooks, imports, requestLogs] = await Promise.all([
    prisma.organization.findUniqueOrThrow({ where: { id: user.organizationId } }),
    modeOrg ? prisma.apiKey.findMany({ where: { organizationId: modeOrg }, orderBy: { createdAt: 'desc' } }) : [],
    // Test-mode endpoints are made with a test key (POST /v1/webhook_endpoints).
    mode === 'live' ? webhooksSection(prisma, user, extra.webhooks) : '<h2>Webhooks</h2><p>Test-mode webhook endpoints are made with a test key: <code>POST /v1/webhook_endpoints</code>.</p>',
    importsSection(prisma, user, modeOrg, mode, extra.imports),
    modeOrg ? requestLogsSection(prisma, modeOrg) : '',
  ]);
  const switcher = `<p class="modes">${mode === 'live' ? '<strong>Live mode</strong> · <a href="/settings/api-keys?mode=test">Test mode</a>' : '<a href="/settings/api-keys">Live mode</a> · <strong>Test mode</strong>: svc_test_ keys, with data, numbers, events and webhooks apart from live ones'}</p>`;
  const created = extra.created
    ? `<section class="notice" aria-live="polite">
        <p><strong>Key “${escape(extra.created.name)}” created.</strong> Copy it now: it is shown only once.</p>
        <p><code class="secret" id="new-key">${escape(extra.created.key)}</code>
        ${copyButton('new-key')}</p>
      </section>`
    : '';
  const rows = keys
    .map((k) => {
      const status = keyStatus(k);
      return `<tr>
        <td>${escape(k.name)}</td><td><code>${escape(k.prefix)}…</code></td>
        <td>${k.scopes.length === allScopes().length ? 'all' : k.scopes.map(escape).join('<br>')}</td>
        <td>${when(k.createdAt)}</td><td>${when(k.lastUsedAt)}</td><td>${when(k.expiresAt)}</td>
        <td class="status-${status}">${status}</td>
        <td>${status === 'revoked' ? '' : `<form method="post" action="/settings/api-keys/${escape(k.id)}/revoke${mode === 'test' ? '?mode=test' : ''}">
          <input type="hidden" name="csrf" value="${escape(user.csrf)}">
          <button class="danger" type="submit" aria-label="Revoke ${escape(k.name)}"
            onclick="return confirm(this.dataset.question)" data-question="Revoke the key “${escape(k.name)}”? Programs using it stop working at once.">Revoke</button></form>`}</td>
      </tr>`;
    })
    .join('');
  return layout(
    `API keys · ${organization.name}${mode === 'test' ? ' · test mode' : ''}`,
    `${switcher}${created}${extra.error ? `<p class="error" role="alert">${escape(extra.error)}</p>` : ''}
    <h2>Keys</h2>
    ${keys.length === 0 ? '<p>No keys yet.</p>' : `<table><thead><tr><th>Name</th><th>Prefix</th><th>Scopes</th><th>Created</th><th>Last used</th><th>Expires</th><th>Status</th><th></th></tr></thead><tbody>${rows}</tbody></table>`}
    <h2>Create a key</h2>
    <form method="post" action="/settings/api-keys">
      <input type="hidden" name="csrf" value="${escape(user.csrf)}">
      <input type="hidden" name="mode" value="${mode}">
      <label for="name">Name</label><input id="name" name="name" type="text" maxlength="100" required placeholder="e.g. Accounting sync">
      <fieldset><legend>Scopes</legend>
        <label><input type="checkbox" name="scope" value="all"> all</label>
        ${allScopes().map((s) => `<label><input type="checkbox" name="scope" value="${s}"> ${s}</label>`).join('')}
      </fieldset>
      <label for="expires">Expires (optional)</label><input id="expires" name="expires" type="date">
      <p><button class="primary" type="submit">Create key</button></p>
    </form>
    ${webhooks}
    ${imports}
    ${requestLogs}`,
    user,
  );
}

/**
 * `revokeKey`: runs the revocation and returns once no instance accepts the key any more
 *   (auth/key-changes.ts), so it stops working on the very next request, wherever it lands.
 * `webhooks`: the endpoints' address policy, the secret box, and the delivery loop to wake.
 * `throttles`: where failed logins are counted (the cluster's primary, when there is one).
 */
export function createAccountPages(prisma: PrismaClient, log: Logger, revokeKey: KeyChanger, webhooks: WebhookServices, throttles: ThrottleFactory = localThrottles) {
  const perAccount = throttles('login per account', { max: 10 });
  const perAddress = throttles('login per address', { max: 50 });

  async function withUser(request: Request, then: (user: SessionUser) => Promise<Response>): Promise<Response> {
    const user = await currentUser(prisma, request);
    return user ? then(user) : redirect('/login');
  }

  const stale = () => html(layout('Refused', '<p class="error">The form was stale or not sent by this site. Go back, reload and try again.</p>'), { status: 403 });

  async function checkedForm(request: Request, user: SessionUser): Promise<URLSearchParams | Response> {
    const form = await readForm(request);
    if (form instanceof Response) return form;
    if (!form || !sameSecret(form.get('csrf') ?? undefined, user.csrf)) return stale();
    return form;
  }

  const webhookPosts = webhookRoutes({
    prisma,
    log,
    webhooks,
    withUser,
    checkedForm,
    page: async (user, extra, status) => html(await keysPage(prisma, user, { webhooks: extra }), { status }),
    redirect,
    cookie,
  });

  const importPost = importRoute({
    prisma,
    log,
    withUser,
    modeOf,
    page: async (user, mode, extra, status) => html(await keysPage(prisma, user, { imports: extra, mode }), { status }),
    stale,
    redirect,
  });

  return async function handle(request: Request, pathname: string, clientAddress: string): Promise<Response | null> {
    const method = request.method;
    if (pathname === '/login' && method === 'GET') {
      const csrf = token();
      return html(loginPage(csrf), { headers: { 'set-cookie': cookie(request, LOGIN_CSRF_COOKIE, csrf, 3600) } });
    }
    if (pathname === '/login' && method === 'POST') {
      const form = await readForm(request);
      if (form instanceof Response) return form;
      const csrf = token();
      const again = (error: string, status: number, email = '') =>
        html(loginPage(csrf, error, email), { status, headers: { 'set-cookie': cookie(request, LOGIN_CSRF_COOKIE, csrf, 3600) } });
      if (!form || !sameSecret(form.get('csrf') ?? undefined, readCookies(request)[LOGIN_CSRF_COOKIE])) {
        return again('The form was stale. Please try again.', 403);
      }
      const email = (form.get('email') ?? '').trim().toLowerCase();
      const account = [`account:${email}`];
      const address = [`address:${clientAddress}`];
      // Counted before the password is checked: parallel guesses cannot outrun the count.
      if (!(await perAddress.attempt(address))) return again('Too many failed attempts. Wait a few minutes and try again.', 429, email);
      if (!(await perAccount.attempt(account))) {
        perAddress.succeeded(address);
        return again('Too many failed attempts. Wait a few minutes and try again.', 429, email);
      }
      // PostgreSQL text cannot hold NUL; such an address cannot belong to anyone.
      const user = email && email.length <= 254 && !email.includes('\u0000') ? await prisma.user.findUnique({ where: { email } }) : null;
      const valid = await verifyPassword(form.get('password') ?? '', user?.passwordHash ?? DUMMY_HASH);
      if (!user || !valid) {
        log.info('login failed', { address: clientAddress });
        return again('Wrong e-mail or password.', 401, email);
      }
      perAccount.succeeded(account);
      perAddress.succeeded(address);
      const session = await startSession(prisma, user.id);
      log.info('login', { user_id: user.id });
      return redirect('/settings/api-keys', { 'set-cookie': cookie(request, SESSION_COOKIE, session.token, session.maxAge) });
    }
    if (pathname === '/logout' && method === 'POST') {
      return withUser(request, async (user) => {
        const form = await checkedForm(request, user);
        if (form instanceof Response) return form;
        await endSession(prisma, user.sessionId);
        return redirect('/login', { 'set-cookie': cookie(request, SESSION_COOKIE, '', 0) });
      });
    }
    if (pathname === '/settings/api-keys' && method === 'GET') {
      return withUser(request, async (user) => {
        // A key or webhook secret just created is shown on this one load, then its cookie is cleared.
        const cookies = readCookies(request);
        const created = newKeyFrom(cookies[NEW_KEY_COOKIE]);
        const webhook = newWebhookFrom(cookies[NEW_WEBHOOK_COOKIE]);
        const response = html(await keysPage(prisma, user, { created, webhooks: { created: webhook }, mode: modeOf(request) }));
        if (cookies[NEW_KEY_COOKIE] !== undefined) response.headers.append('set-cookie', cookie(request, NEW_KEY_COOKIE, '', 0, NEW_KEY_PATH));
        if (cookies[NEW_WEBHOOK_COOKIE] !== undefined) response.headers.append('set-cookie', cookie(request, NEW_WEBHOOK_COOKIE, '', 0, WEBHOOKS_PAGE));
        return response;
      });
    }
    if (pathname === '/settings/api-keys' && method === 'POST') {
      return withUser(request, async (user) => {
        const form = await checkedForm(request, user);
        if (form instanceof Response) return form;
        const name = (form.get('name') ?? '').trim();
        const chosen = form.getAll('scope');
        const scopes: Scope[] = chosen.includes('all') ? allScopes() : chosen.filter(isScope);
        const expires = form.get('expires') ?? '';
        const mode: Mode = form.get('mode') === 'test' ? 'test' : 'live';
        const expiresAt = expires ? new Date(`${expires}T23:59:59.999Z`) : null;
        const error =
          !name || name.length > 100 || name.includes('\u0000')
            ? 'Give the key a name of at most 100 characters.'
            : scopes.length === 0
              ? 'Choose at least one scope.'
              : expiresAt && (Number.isNaN(expiresAt.getTime()) || expiresAt.getTime() <= Date.now())
                ? 'The expiry date must be in the future.'
                : undefined;
        if (error) return html(await keysPage(prisma, user, { error, mode }), { status: 400 });
        const live = await prisma.organization.findUniqueOrThrow({ where: { id: user.organizationId } });
        const organization = await organizationFor(prisma, live, mode);
        const { key, record } = await createApiKey(prisma, { organizationId: organization.id, name, scopes, expiresAt, mode });
        log.info('api key created', { user_id: user.userId, key_id: record.id, key_prefix: record.prefix });
        // Post-redirect-get: reloading the page shows the list, and never creates another key.
        // The new secret rides to that one page load in a short-lived cookie for this path
        // only, never in the database.
        return redirect(mode === 'test' ? `${NEW_KEY_PATH}?mode=test` : NEW_KEY_PATH, { 'set-cookie': cookie(request, NEW_KEY_COOKIE, JSON.stringify({ key, name }), 120, NEW_KEY_PATH) });
      });
    }
    const revoke = /^\/settings\/api-keys\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\/revoke$/.exec(pathname);
    if (revoke && method === 'POST') {
      return withUser(request, async (user) => {
        const form = await checkedForm(request, user);
        if (form instanceof Response) return form;
        // updateMany with the organization (or its test twin): another organization's key id changes nothing.
        const twin = await modeOrganization(prisma, user, 'test');
        const revocable = { id: revoke[1], organizationId: { in: [user.organizationId, ...(twin ? [twin] : [])] }, revokedAt: null };
        // Looked up first: the wait opens a listening connection, which a stale or forged id should not cost.
        if (await prisma.apiKey.count({ where: revocable })) {
          await revokeKey(revoke[1]!, async () => {
            const { count } = await prisma.apiKey.updateMany({ where: revocable, data: { revokedAt: new Date() } });
            if (count > 0) log.info('api key revoked', { user_id: user.userId, key_id: revoke[1] });
            return count > 0;
          });
        }
        return redirect(modeOf(request) === 'test' ? '/settings/api-keys?mode=test' : '/settings/api-keys');
      });
    }
    if (pathname === IMPORTS_PATH && method === 'POST') return importPost(request);
    if (pathname.startsWith('/settings/webhooks')) {
      const answer = await webhookPosts(request, pathname);
      if (answer) return answer;
    }
    if (pathname === '/' && method === 'GET') return redirect('/settings/api-keys');
    return null;
  };
}

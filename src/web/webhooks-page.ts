// The webhooks section of the account page: add an endpoint (its signing secret shown once),
// list the organization's endpoints with their latest delivery attempts, resend an attempt's
// event to its endpoint, and disable or enable an endpoint. The checks are the API's own
// rules (webhooks/endpoints.ts): the URL and event-type checks, the sealed secret, the resend.
// The client here is not tenant-scoped: every query names the session's organization.
import { copyButton } from './copy-button.js';
import type { WebhookServices } from '../context.js';
import type { Response } from '../http/fetch.js';
import { EVENT_TYPES } from '../events/types.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import type { Logger } from '../logger.js';
import { InputCheck, isUuid } from '../schema/validation.js';
import { checkEndpointUrl, checkEventTypes, endpointSecret, queueDeliveries } from '../webhooks/endpoints.js';
import { escape } from './html.js';
import type { SessionUser } from './sessions.js';

/** The page the section lives on: the new secret's cookie is sent to this path only. */
export const WEBHOOKS_PAGE = '/settings/api-keys';
export const NEW_WEBHOOK_COOKIE = 'crm_new_webhook';
const BACK = `${WEBHOOKS_PAGE}#webhooks`;
/** The page lists this many endpoints (newest first), each with this many latest attempts. */
const MAX_ENDPOINTS = 100;
const ATTEMPTS_SHOWN = 10;

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const TOGGLE = new RegExp(`^/settings/webhooks/(${UUID})/(enable|disable)$`);
const RESEND = new RegExp(`^/settings/webhooks/(${UUID})/attempts/(${UUID})/resend$`);

export interface WebhookFormValues {
  url: string;
  description: string;
  types: string[];
}

export interface WebhookExtra {
  /** An endpoint just added, with its secret in the clear: this one page load only. */
  created?: { id: string; secret: string };
  error?: string | string[];
  /** What was typed, shown again when the form was refused. */
  form?: WebhookFormValues;
}

/** The secret that rode the redirect in its cookie, when the cookie is well formed. */
export function newWebhookFrom(value: string | undefined): { id: string; secret: string } | undefined {
  try {
    const parsed = value ? (JSON.parse(value) as { id?: unknown; secret?: unknown }) : undefined;
    return typeof parsed?.id === 'string' && isUuid(parsed.id) && typeof parsed.secret === 'string' ? { id: parsed.id, secret: parsed.secret } : undefined;
  } catch {
    return undefined;
  }
}

const when = (date: Date) => `<time datetime="${date.toISOString()}">${date.toISOString().slice(0, 19).replace('T', ' ')} UTC</time>`;
const LABELS: Record<string, string> = { url: 'URL', description: 'Description', event_types: 'Event types' };
const sortedTypes = () => [...EVENT_TYPES].sort();

function csrfInput(user: SessionUser): string {
  return `<input type="hidden" name="csrf" value="${escape(user.csrf)}">`;
}

function addForm(user: SessionUser, values: WebhookFormValues | undefined): string {
  const chosen = new Set(values?.types ?? ['all']);
  const box = (value: string) => `<label><input type="checkbox" name="event_type" value="${escape(value)}"${chosen.has(value) ? ' checked' : ''}> ${escape(value)}</label>`;
  return `<h3>Add an endpoint</h3>
    <form method="post" action="/settings/webhooks" id="add-webhook">
      ${csrfInput(user)}
      <label for="webhook-url">URL</label><input id="webhook-url" name="url" type="text" inputmode="url" maxlength="2000" required placeholder="https://example.com/webhooks" value="${escape(values?.url ?? '')}">
      <label for="webhook-description">Description (optional)</label><input id="webhook-description" name="description" type="text" maxlength="500" value="${escape(values?.description ?? '')}">
      <fieldset><legend>Event types</legend>
        ${box('all')}
        ${sortedTypes().map(box).join('')}
      </fieldset>
      <p><button class="primary" type="submit">Add endpoint</button></p>
    </form>`;
}

/** The section's HTML: the new secret (once), faults, the endpoints and their attempts, the form. */
export async function webhooksSection(prisma: PrismaClient, user: SessionUser, extra: WebhookExtra = {}): Promise<string> {
  const organizationId = user.organizationId;
  const endpoints = await prisma.webhookEndpoint.findMany({
    where: { organizationId },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: MAX_ENDPOINTS,
    select: { id: true, url: true, description: true, eventTypes: true, enabled: true, disabledReason: true, createdAt: true },
  });
  const attempts = await Promise.all(
    endpoints.map((endpoint) =>
      prisma.webhookAttempt.findMany({ where: { organizationId, endpointId: endpoint.id }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: ATTEMPTS_SHOWN }),
    ),
  );
  const eventIds = [...new Set(attempts.flat().map((a) => a.eventId))];
  const events = eventIds.length ? await prisma.event.findMany({ where: { organizationId, id: { in: eventIds } }, select: { id: true, type: true } }) : [];
  const typeOf = new Map(events.map((e) => [e.id, e.type]));

  const createdEndpoint = extra.created ? endpoints.find((e) => e.id === extra.created!.id) : undefined;
  const created =
    extra.created && createdEndpoint
      ? `<section class="notice" aria-live="polite" id="new-webhook">
        <p><strong>Endpoint <code>${escape(createdEndpoint.url)}</code> added.</strong> Copy its signing secret now: it is shown only once.</p>
        <p><code class="secret" id="new-webhook-secret">${escape(extra.created.secret)}</code>
        ${copyButton('new-webhook-secret')}</p>
      </section>`
      : '';
  const faults = extra.error === undefined ? [] : Array.isArray(extra.error) ? extra.error : [extra.error];
  const error = faults.length
    ? `<div class="error" role="alert" id="webhook-error">${faults.length === 1 ? `<p>${escape(faults[0])}</p>` : `<ul>${faults.map((f) => `<li>${escape(f)}</li>`).join('')}</ul>`}</div>`
    : '';

  const list = endpoints
    .map((endpoint, index) => {
      const rows = attempts[index]!
        .map((attempt) => {
          const ok = attempt.statusCode !== null && attempt.statusCode >= 200 && attempt.statusCode < 300;
          const type = typeOf.get(attempt.eventId);
          return `<tr class="attempt" data-attempt-id="${escape(attempt.id)}">
            <td>${when(attempt.createdAt)}</td>
            <td><code>${escape(attempt.eventId)}</code>${type ? `<br>${escape(type)}` : ' <em>(no longer kept)</em>'}</td>
            <td class="status-code ${ok ? 'status-active' : 'status-revoked'}">${attempt.statusCode ?? '—'}</td>
            <td>${attempt.durationMs} ms</td>
            <td>${attempt.error ? escape(attempt.error) : ''}</td>
            <td>${type ? `<form method="post" action="/settings/webhooks/${escape(endpoint.id)}/attempts/${escape(attempt.id)}/resend">${csrfInput(user)}
              <button type="submit" class="resend" aria-label="Resend ${escape(attempt.eventId)}">Resend</button></form>` : ''}</td>
          </tr>`;
        })
        .join('');
      const state = endpoint.enabled ? 'enabled' : 'disabled';
      return `<article class="endpoint" data-endpoint-id="${escape(endpoint.id)}">
        <h3><code class="endpoint-url">${escape(endpoint.url)}</code></h3>
        ${endpoint.description ? `<p class="endpoint-description">${escape(endpoint.description)}</p>` : ''}
        <p><span class="endpoint-state status-${endpoint.enabled ? 'active' : 'revoked'}">${state}</span>${endpoint.disabledReason ? ` <span class="disabled-reason">(${escape(endpoint.disabledReason)})</span>` : ''}
          · Events: <span class="endpoint-types">${endpoint.eventTypes.length === 0 ? 'all' : endpoint.eventTypes.map(escape).join(', ')}</span>
          · Added ${when(endpoint.createdAt)}</p>
        <form method="post" action="/settings/webhooks/${escape(endpoint.id)}/${endpoint.enabled ? 'disable' : 'enable'}">${csrfInput(user)}
          <button type="submit" class="toggle${endpoint.enabled ? ' danger' : ''}">${endpoint.enabled ? 'Disable' : 'Enable'}</button></form>
        <h4>Recent deliveries</h4>
        ${rows ? `<table><thead><tr><th>Time</th><th>Event</th><th>Status code</th><th>Duration</th><th>Error</th><th></th></tr></thead><tbody>${rows}</tbody></table>` : '<p class="no-attempts">No deliveries yet.</p>'}
      </article>`;
    })
    .join('');

  return `<section id="webhooks">
    <h2>Webhooks</h2>
    ${created}${error}
    ${endpoints.length === 0 ? '<p>No webhook endpoints yet.</p>' : list}
    ${addForm(user, extra.form)}
  </section>`;
}

export interface WebhookRouteDeps {
  prisma: PrismaClient;
  log: Logger;
  webhooks: WebhookServices;
  withUser(request: Request, then: (user: SessionUser) => Promise<Response>): Promise<Response>;
  checkedForm(request: Request, user: SessionUser): Promise<URLSearchParams | Response>;
  /** The whole account page with the section as given, at this status. */
  page(user: SessionUser, extra: WebhookExtra, status: number): Promise<Response>;
  redirect(location: string, headers?: Record<string, string>): Response;
  cookie(request: Request, name: string, value: string, maxAgeSeconds: number, path?: string): string;
}

/** The form's values checked as the API checks an endpoint; answers the data or the faults. */
async function checkForm(form: URLSearchParams, webhooks: WebhookServices): Promise<{ values: WebhookFormValues; data?: { url: string; description: string | null; eventTypes: string[] }; faults: string[] }> {
  const chosen = form.getAll('event_type');
  const values = { url: form.get('url') ?? '', description: form.get('description') ?? '', types: chosen };
  const check = new InputCheck();
  const url = await checkEndpointUrl(check, 'url', values.url, webhooks.policy);
  const description = check.text('description', values.description, { max: 500 });
  // "all" is the API's empty list; nothing chosen is a mistake, not a wish for everything.
  if (chosen.length === 0) check.fail('event_types', 'choose at least one event type, or all');
  const types = chosen.includes('all') ? [] : checkEventTypes(check, 'event_types', chosen);
  const faults = check.errors.map((e) => `${LABELS[e.param] ?? e.param} ${e.message}.`);
  return faults.length ? { values, faults } : { values, faults, data: { url: url!, description, eventTypes: types } };
}

/** The section's form posts; null for any other path. */
export function webhookRoutes(deps: WebhookRouteDeps) {
  const { prisma, log, webhooks } = deps;

  return async function handle(request: Request, pathname: string): Promise<Response | null> {
    if (request.method !== 'POST') return null;
    if (pathname === '/settings/webhooks') {
      return deps.withUser(request, async (user) => {
        const form = await deps.checkedForm(request, user);
        if (!(form instanceof URLSearchParams)) return form;
        const { values, data, faults } = await checkForm(form, webhooks);
        if (!data) return deps.page(user, { error: faults, form: values }, 400);
        const { plain: secret, sealed } = await endpointSecret(webhooks.box);
        const endpoint = await prisma.webhookEndpoint.create({
          data: { organizationId: user.organizationId, url: data.url, description: data.description, eventTypes: data.eventTypes, enabled: true, secret: sealed },
          select: { id: true },
        });
        log.info('webhook endpoint created', { user_id: user.userId, endpoint_id: endpoint.id });
        // Post-redirect-get, as for a new API key: the secret rides to the one next page load
        // in a short-lived cookie for that page's path, never stored in the clear.
        return deps.redirect(BACK, { 'set-cookie': deps.cookie(request, NEW_WEBHOOK_COOKIE, JSON.stringify({ id: endpoint.id, secret }), 120, WEBHOOKS_PAGE) });
      });
    }
    const toggle = TOGGLE.exec(pathname);
    if (toggle) {
      return deps.withUser(request, async (user) => {
        const form = await deps.checkedForm(request, user);
        if (!(form instanceof URLSearchParams)) return form;
        const [, id, action] = toggle as unknown as [string, string, 'enable' | 'disable'];
        // updateMany with the organization: another organization's endpoint id changes nothing.
        const { count } = await prisma.webhookEndpoint.updateMany({
          where: { organizationId: user.organizationId, id },
          data: action === 'enable' ? { enabled: true, disabledReason: null } : { enabled: false },
        });
        if (count > 0) {
          log.info(`webhook endpoint ${action}d`, { user_id: user.userId, endpoint_id: id });
          // Deliveries that waited while it was disabled are due now.
          if (action === 'enable') webhooks.wake();
        }
        return deps.redirect(BACK);
      });
    }
    const resend = RESEND.exec(pathname);
    if (resend) {
      return deps.withUser(request, async (user) => {
        const form = await deps.checkedForm(request, user);
        if (!(form instanceof URLSearchParams)) return form;
        const [, endpointId, attemptId] = resend as unknown as [string, string, string];
        const organizationId = user.organizationId;
        const attempt = await prisma.webhookAttempt.findFirst({ where: { organizationId, endpointId, id: attemptId }, select: { eventId: true } });
        if (!attempt) return deps.page(user, { error: 'No such delivery attempt of this organization’s endpoints.' }, 404);
        const event = await prisma.event.findUnique({ where: { organizationId_id: { organizationId, id: attempt.eventId } }, select: { id: true, seq: true, recordId: true } });
        if (!event) return deps.page(user, { error: 'That event is no longer kept, so it cannot be sent again.' }, 404);
        // As the API's resendEvent does: a new pending delivery of the event to this endpoint.
        await queueDeliveries(prisma, organizationId, [endpointId], event);
        webhooks.wake();
        log.info('webhook event resent', { user_id: user.userId, endpoint_id: endpointId, event_id: event.id });
        return deps.redirect(BACK);
      });
    }
    return null;
  };
}

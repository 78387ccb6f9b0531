// Webhook endpoints: where an organization wants its events sent, and what happened to each
// attempt. The signing secret is answered once, when an endpoint is made (or its secret
// rotated), and kept only encrypted. Resending an event queues it again by hand; testing an
// endpoint sends it a `webhook.ping` now (webhooks/ping.ts).
import { declareScopes } from '../auth/scopes.js';
import type { Context } from '../context.js';
import { apiError, invalidInput } from '../errors.js';
import { checkEndpointUrl, checkEventTypes, endpointSecret, queueDeliveries } from '../webhooks/endpoints.js';
import { ping } from '../webhooks/ping.js';
import { builder, type Types } from './builder.js';
import { Event } from './event.js';
import { named, paginate, pageType } from './pagination.js';
import { restExtension } from './resource.js';
import { InputCheck, isUuid } from './validation.js';

/** A rotated-out secret keeps signing (beside the new one) this long. */
const ROTATION_OVERLAP_MS = 24 * 3_600_000;

interface EndpointRow {
  id: string;
  url: string;
  description: string | null;
  eventTypes: string[];
  enabled: boolean;
  disabledReason: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** An endpoint, with its secret in the clear only just after it was made or rotated. */
type EndpointShape = EndpointRow & { plainSecret?: string };

const endpointFields = (t: PothosSchemaTypes.ObjectFieldBuilder<PothosSchemaTypes.ExtendDefaultTypes<Types>, EndpointShape>) => ({
  id: t.exposeID('id'),
  url: t.exposeString('url'),
  description: t.exposeString('description', { nullable: true }),
  eventTypes: t.exposeStringList('eventTypes', { description: 'The event types it receives; empty: all of them.' }),
  enabled: t.exposeBoolean('enabled'),
  disabledReason: t.exposeString('disabledReason', { nullable: true, description: 'Why it was disabled, when the service disabled it (a 410 answer).' }),
  createdAt: t.expose('createdAt', { type: 'DateTime' }),
  updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
});

const WebhookEndpoint = builder.objectRef<EndpointShape>('WebhookEndpoint').implement({
  description: 'Where events are sent, signed per the Standard Webhooks specification.',
  fields: (t) => endpointFields(t),
});

const WebhookEndpointWithSecret = builder.objectRef<EndpointShape>('WebhookEndpointWithSecret').implement({
  description: 'An endpoint with its signing secret, answered only when it is made or rotated.',
  fields: (t) => ({
    ...endpointFields(t),
    secret: t.string({ description: 'The signing secret (`whsec_...`). Keep it: it is never shown again.', resolve: (row) => row.plainSecret ?? '' }),
  }),
});

interface AttemptRow {
  id: string;
  eventId: string;
  deliveryId: string;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  createdAt: Date;
}

const WebhookAttempt = builder.objectRef<AttemptRow>('WebhookAttempt').implement({
  description: 'One attempt to deliver an event to an endpoint.',
  fields: (t) => ({
    id: t.exposeID('id'),
    eventId: t.exposeString('eventId'),
    deliveryId: t.exposeID('deliveryId'),
    statusCode: t.exposeInt('statusCode', { nullable: true, description: 'The endpoint\'s answer; null when there was none.' }),
    durationMs: t.exposeInt('durationMs'),
    error: t.exposeString('error', { nullable: true, description: 'Why it failed; null when it succeeded.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

interface TestRow {
  statusCode: number | null;
  durationMs: number;
  error: string | null;
}

const WebhookTest = builder.objectRef<TestRow>('WebhookTest').implement({
  description: 'The attempt to deliver a `webhook.ping` to an endpoint, made now (not retried, not in the delivery log).',
  fields: (t) => ({
    statusCode: t.exposeInt('statusCode', { nullable: true, description: "The endpoint's answer; null when there was none (refused address, no connection, timeout)." }),
    durationMs: t.exposeInt('durationMs'),
    error: t.exposeString('error', { nullable: true, description: 'Why it failed (no answer, or one other than 2xx); null when it succeeded.' }),
  }),
});

const EndpointPage = pageType('WebhookEndpoint', WebhookEndpoint);
const AttemptPage = pageType('WebhookAttempt', WebhookAttempt);

const notFound = () => apiError('NOT_FOUND', 'No webhook endpoint with this id in this organization.');

interface EndpointInput {
  url?: string | null;
  description?: string | null;
  eventTypes?: readonly string[] | null;
  enabled?: boolean | null;
}

/** Checks an endpoint's fields (every fault at once); answers the data to write. */
async function checkEndpoint(ctx: Context, input: EndpointInput, creating: boolean): Promise<Record<string, unknown>> {
  const check = new InputCheck(ctx.inputErrors);
  const data: Record<string, unknown> = {};
  if (input.url !== undefined || creating) data.url = await checkEndpointUrl(check, 'url', input.url, ctx.webhooks.policy);
  if (input.description !== undefined) data.description = check.text('description', input.description, { max: 500 });
  if (input.eventTypes !== undefined) data.eventTypes = checkEventTypes(check, 'eventTypes', input.eventTypes ?? []);
  if (input.enabled !== undefined && input.enabled !== null) data.enabled = input.enabled;
  if (input.enabled === null) check.fail('enabled', 'must be true or false');
  check.done();
  return data;
}

const CreateInput = builder.inputType('CreateWebhookEndpointInput', {
  fields: (t) => ({
    url: t.string({ required: true, description: 'https:// (http:// with WEBHOOK_ALLOW_HTTP); not a private or loopback address.' }),
    description: t.string({ description: 'At most 500 characters.' }),
    eventTypes: t.stringList({ description: 'Event types to receive, such as invoice.paid; empty or absent: all.' }),
    enabled: t.boolean({ description: 'Default true.' }),
  }),
});

const UpdateInput = builder.inputType('UpdateWebhookEndpointInput', {
  fields: (t) => ({
    url: t.string(),
    description: t.string({ description: 'null clears it.' }),
    eventTypes: t.stringList({ description: 'Empty: all event types.' }),
    enabled: t.boolean({ description: 'false stops deliveries; true starts them again (and clears the disabled reason).' }),
  }),
});

const ResendInput = builder.inputType('ResendEventInput', {
  fields: (t) => ({ endpointId: t.id({ description: 'Only to this endpoint; absent: every enabled endpoint that receives its type.' }) }),
});

declare module '../auth/scopes.js' {
  interface ScopeNames { 'webhooks:read': true; 'webhooks:write': true }
}
declareScopes('webhooks:read', 'webhooks:write');

const read = { scope: 'webhooks:read' as const };
const write = { scope: 'webhooks:write' as const };
const rest = (kind: Parameters<typeof restExtension>[0]['kind'], verb?: string) => restExtension({ path: 'webhook_endpoints', kind, verb });

async function endpointOf(ctx: Context, id: string) {
  const endpoint = isUuid(id) ? await ctx.prisma.webhookEndpoint.findFirst({ where: { id } }) : null;
  if (!endpoint) throw notFound();
  return endpoint;
}

builder.queryFields((t) => ({
  webhookEndpoints: t.field({
    type: EndpointPage,
    nullable: true,
    description: 'Webhook endpoints, newest first.',
    authScopes: read,
    extensions: rest('list'),
    args: {
      page: t.arg.int({ defaultValue: 1, description: 'Page number, from 1.' }),
      limit: t.arg.int({ defaultValue: 20, description: 'Page size, 1 to 100.' }),
      cursor: t.arg.string({ description: "Continues from a page's `nextCursor`." }),
    },
    resolve: (_root, args, ctx) =>
      paginate(ctx.prisma.webhookEndpoint, { organizationId: ctx.auth.organizationId, key: ctx.cursorKey, resource: 'webhook_endpoints', filters: {}, where: () => ({}) }, args, {}),
  }),
  webhookEndpoint: t.field({
    type: WebhookEndpoint,
    nullable: true,
    authScopes: read,
    extensions: rest('item'),
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, { id }, ctx) => (isUuid(String(id)) ? ctx.prisma.webhookEndpoint.findFirst({ where: { id: String(id) } }) : null),
  }),
  webhookAttempts: t.field({
    type: AttemptPage,
    nullable: true,
    description: "An endpoint's delivery attempts, newest first: when, the answer's status code, how long, what failed.",
    authScopes: read,
    extensions: rest('related', 'deliveries'),
    args: {
      id: t.arg.id({ required: true, description: 'The endpoint.' }),
      page: t.arg.int({ defaultValue: 1, description: 'Page number, from 1.' }),
      limit: t.arg.int({ defaultValue: 20, description: 'Page size, 1 to 100.' }),
      cursor: t.arg.string({ description: "Continues from a page's `nextCursor`." }),
    },
    resolve: async (_root, args, ctx) => {
      const endpoint = await endpointOf(ctx, String(args.id));
      const list = { organizationId: ctx.auth.organizationId, key: ctx.cursorKey, resource: 'webhook_attempts', filters: named({ endpointId: endpoint.id }), where: () => ({ endpointId: endpoint.id }) };
      return paginate(ctx.prisma.webhookAttempt, list, args, {});
    },
  }),
}));

builder.mutationFields((t) => ({
  createWebhookEndpoint: t.field({
    type: WebhookEndpointWithSecret,
    nullable: true,
    description: 'Adds an endpoint and answers its signing secret, this once.',
    authScopes: write,
    extensions: rest('create'),
    args: { input: t.arg({ type: CreateInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      const data = await checkEndpoint(ctx, input, true);
      const secret = await endpointSecret(ctx.webhooks.box);
      const endpoint = await ctx.prisma.webhookEndpoint.create({
        data: { organizationId: ctx.auth.organizationId, url: data.url as string, description: (data.description as string | null) ?? null, eventTypes: (data.eventTypes as string[]) ?? [], enabled: input.enabled ?? true, secret: secret.sealed },
      });
      return { ...endpoint, plainSecret: secret.plain };
    },
  }),
  updateWebhookEndpoint: t.field({
    type: WebhookEndpoint,
    nullable: true,
    description: 'Changes an endpoint: the fields given are set.',
    authScopes: write,
    extensions: rest('update'),
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdateInput, required: true }) },
    resolve: async (_root, { id, input }, ctx) => {
      // The body's faults first, as every update reports them: before whether the record exists.
      const data = await checkEndpoint(ctx, input, false);
      const endpoint = await endpointOf(ctx, String(id));
      if (data.enabled === true) data.disabledReason = null;
      const [updated] = await ctx.prisma.webhookEndpoint.updateManyAndReturn({ where: { id: endpoint.id }, data });
      return updated ?? null;
    },
  }),
  deleteWebhookEndpoint: t.field({
    type: WebhookEndpoint,
    nullable: true,
    description: 'Removes an endpoint, its pending deliveries and its delivery log.',
    authScopes: write,
    extensions: rest('delete'),
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, { id }, ctx) => {
      const endpoint = await endpointOf(ctx, String(id));
      await ctx.prisma.webhookEndpoint.deleteMany({ where: { id: endpoint.id } });
      return endpoint;
    },
  }),
  rotateWebhookEndpointSecret: t.field({
    type: WebhookEndpointWithSecret,
    nullable: true,
    description: 'Gives the endpoint a new signing secret, answered this once; for 24 hours deliveries are signed with the old one too.',
    authScopes: write,
    extensions: rest('move', 'rotate_secret'),
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, { id }, ctx) => {
      const endpoint = await endpointOf(ctx, String(id));
      const secret = await endpointSecret(ctx.webhooks.box);
      const [updated] = await ctx.prisma.webhookEndpoint.updateManyAndReturn({
        where: { id: endpoint.id },
        data: { secret: secret.sealed, previousSecret: endpoint.secret, previousSecretExpiresAt: new Date(Date.now() + ROTATION_OVERLAP_MS) },
      });
      return { ...updated!, plainSecret: secret.plain };
    },
  }),
  testWebhookEndpoint: t.field({
    type: WebhookTest,
    nullable: true,
    description: 'Sends the endpoint a signed `webhook.ping` now, enabled or not, and answers the attempt.',
    authScopes: write,
    extensions: rest('move', 'test'),
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, { id }, ctx) => {
      // A request with faults (a body sent to it) is refused as it is, sending nothing.
      if (ctx.inputErrors?.length) throw invalidInput(ctx.inputErrors);
      // A test delivery is itself the trial: a dry run of it would have to send it.
      if (ctx.dryRun) throw invalidInput([{ param: 'prefer', message: 'a test delivery cannot be a dry run: it is sent, or nothing is' }]);
      const endpoint = await endpointOf(ctx, String(id));
      const outcome = await ping(endpoint, ctx.requestId, ctx.webhooks);
      const ok = outcome.statusCode !== undefined && outcome.statusCode >= 200 && outcome.statusCode < 300;
      // The same words as the delivery log's attempts.
      return { statusCode: outcome.statusCode ?? null, durationMs: outcome.durationMs, error: outcome.error ?? (ok ? null : `the endpoint answered ${outcome.statusCode}`) };
    },
  }),
  resendEvent: t.field({
    type: Event,
    nullable: true,
    description: 'Queues an event again, now: to one endpoint, or to every enabled endpoint that receives its type.',
    authScopes: write,
    extensions: restExtension({ path: 'events', kind: 'move', verb: 'resend' }),
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: ResendInput }) },
    resolve: async (_root, { id, input }, ctx) => {
      const event = await ctx.prisma.event.findFirst({ where: { id: String(id) } });
      if (!event) throw apiError('NOT_FOUND', 'No event with this id in this organization.');
      const endpointId = input?.endpointId === undefined || input.endpointId === null ? undefined : String(input.endpointId);
      if (endpointId !== undefined) await endpointOf(ctx, endpointId).catch(() => Promise.reject(invalidInput([{ param: 'endpointId', message: 'does not name a webhook endpoint of this organization' }])));
      const endpoints = await ctx.prisma.webhookEndpoint.findMany({
        where: endpointId ? { id: endpointId } : { enabled: true, OR: [{ eventTypes: { isEmpty: true } }, { eventTypes: { has: event.type } }] },
        select: { id: true },
      });
      await queueDeliveries(ctx.prisma, ctx.auth.organizationId, endpoints.map((endpoint) => endpoint.id), event);
      ctx.webhooks.wake();
      return event;
    },
  }),
}));

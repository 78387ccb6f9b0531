import type { Auth } from './auth/authenticate.js';
import type { Admission } from './auth/admission.js';
import type { TenantClient } from './db/tenant.js';
import type { Logger } from './logger.js';
import type { FieldError } from './errors.js';
import type { EventHub } from './events/hub.js';
import type { AddressPolicy } from './webhooks/address.js';
import type { SecretBox } from './webhooks/secrets.js';

/** What webhook endpoints need: where they may point, and how their secrets are kept. */
export interface WebhookServices {
  policy: AddressPolicy;
  box(): Promise<SecretBox>;
  /** Wakes this instance's delivery loop (a resend is due now). */
  wake(): void;
}

/** What every GraphQL resolver (and so every REST route) receives. */
export interface Context {
  requestId: string;
  auth: Auth;
  admission: Admission;
  /** Bound to `auth.organizationId` (see db/tenant.ts). */
  prisma: TenantClient;
  log: Logger;
  /** Faults a REST body had before the operation ran (see InputCheck); none on /graphql. */
  inputErrors?: FieldError[];
  webhooks: WebhookServices;
  /** Committed events as this instance hears of them (subscriptions). */
  events: EventHub;
  /** The deployment's key for signing list cursors (see schema/cursor.ts). */
  cursorKey: Buffer;
}

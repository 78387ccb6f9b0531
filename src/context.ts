import type { Auth } from './auth/authenticate.js';
import type { TenantClient } from './db/tenant.js';
import type { Logger } from './logger.js';
import type { RateState } from './rate-limit/allowance.js';
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
  /** How long an attempt may take (WEBHOOK_TIMEOUT_MS; its default when absent). */
  timeoutMs?: number;
}

/** An admitted request: its key, and where the key's allowance stands (auth/admission.ts admits). */
export interface Admission {
  auth: Auth;
  /** The key's latest standing; updated when an operation is charged extra units. */
  rate: RateState;
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
  /** `Prefer: dry-run`: the operation runs in a transaction that is rolled back (graphql/dry-run.ts). */
  dryRun: boolean;
  /**
   * The request carries an Idempotency-Key: after a failure, what it committed is read back
   * from the event log (http/idempotency-outcome.ts), so its writes keep to transactions
   * whose COMMIT goes out after their changes ran. A write sent in one message
   * (db/insert-rows.ts insertCommitted) may still be on its way, unseen, when that is read.
   */
  idempotent: boolean;
}

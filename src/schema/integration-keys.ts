// Integration keys, on every resource: `externalId` (an integration's own id for the record,
// unique among the organization's live records of that resource) and `metadata` (up to 50
// short string values under keys of the integration's choosing, as Stripe has it). Their
// fields, input fields, rules, the per-key merge of an update and the 409 naming the holder
// of an external id are here, once; resources take them through defineResource and their
// create resolvers.
import pg from 'pg';
import type { Context } from '../context.js';
import type { Tx } from '../db/tenant.js';
import { apiError, invalidInput } from '../errors.js';
import { Prisma } from '../generated/prisma/client.js';
import { builder, type Types } from './builder.js';
import { ruled, rules } from './field-rules.js';
import { delegateName, model, type ResourceType } from './changes.js';
import { tableOf } from './registry.js';
import type { InputCheck } from './validation.js';

type SchemaTypes = PothosSchemaTypes.ExtendDefaultTypes<Types>;

export const MAX_EXTERNAL_ID = 255;
/** An external id, when given: not blank, at most MAX_EXTERNAL_ID characters. */
const EXTERNAL_ID = rules.text(MAX_EXTERNAL_ID, true);
export const MAX_METADATA_KEYS = 50;
export const MAX_METADATA_KEY = 40;
export const MAX_METADATA_VALUE = 500;
const METADATA_KEY = /^[A-Za-z0-9_-]+$/;

export type Metadata = Record<string, string>;

/** The record fields, added to a resource's object type. */
export function integrationFields(type: ResourceType): void {
  builder.prismaObjectFields(type, (t) => ({
    externalId: t.exposeString('externalId', {
      nullable: true,
      description: `An integration's own id for the record (1 to ${MAX_EXTERNAL_ID} characters), unique among this organization's live ${delegateName(type)} records.`,
    }),
    metadata: t.field({
      type: 'JSON',
      description: `Up to ${MAX_METADATA_KEYS} string values (at most ${MAX_METADATA_VALUE} characters) under keys of 1 to ${MAX_METADATA_KEY} characters [A-Za-z0-9_-].`,
      resolve: (record) => (record as { metadata: unknown }).metadata ?? {},
    }),
  }));
}

/** The input fields of a create or an update. */
export const integrationInputs = (t: PothosSchemaTypes.InputFieldBuilder<SchemaTypes, 'InputObject'>, update = false) => ({
  externalId: t.string(ruled(EXTERNAL_ID, `Unique among this organization's live records of the resource${update ? '; null clears it' : ''}.`)),
  metadata: t.field({
    type: 'JSON',
    description: update
      ? 'Merged key by key: a key given with a string sets it, with null removes it; keys not given stay.'
      : `An object of up to ${MAX_METADATA_KEYS} string values.`,
  }),
});

/** A given external id, checked (null clears it on an update). */
export function checkExternalId(check: InputCheck, value: unknown): string | null | undefined {
  if (value === undefined || value === null) return value;
  return check.text('externalId', value as string, EXTERNAL_ID) ?? undefined;
}

/**
 * Given metadata, checked: an object of string values (null values only in an update,
 * where they remove a key). Answers it as given, or undefined after a fault.
 */
export function checkMetadata(check: InputCheck, value: unknown, update = false): Record<string, string | null> | undefined {
  // null is no metadata on a create (as for any optional field), and no change on an update.
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    check.fail('metadata', 'must be an object of string values');
    return undefined;
  }
  const entries = Object.entries(value);
  let fine = true;
  if (entries.length > MAX_METADATA_KEYS) {
    check.fail('metadata', `must have at most ${MAX_METADATA_KEYS} keys`);
    fine = false;
  }
  for (const [key, item] of entries) {
    // `__proto__` would set an object's prototype rather than a key, wherever metadata is copied.
    if (key.length < 1 || key.length > MAX_METADATA_KEY || !METADATA_KEY.test(key) || key === '__proto__') {
      check.fail(`metadata.${key}`, key === '__proto__' ? 'is a reserved name' : `keys are 1 to ${MAX_METADATA_KEY} characters of A-Z, a-z, 0-9, _ and -`);
      fine = false;
    } else if (item === null && update) {
      continue;
    } else if (typeof item !== 'string' || item.length > MAX_METADATA_VALUE || item.includes('\u0000')) {
      check.fail(`metadata.${key}`, `must be a string of at most ${MAX_METADATA_VALUE} characters${update ? ', or null to remove the key' : ''}`);
      fine = false;
    }
  }
  return fine ? (value as Record<string, string | null>) : undefined;
}

/** A create's integration keys from its input: the data to write (checked into `check`). */
export function createKeys(check: InputCheck, input: { externalId?: string | null; metadata?: unknown }) {
  const externalId = checkExternalId(check, input.externalId);
  const metadata = checkMetadata(check, input.metadata);
  return { ...(externalId ? { externalId } : {}), ...(metadata ? { metadata: metadata as Metadata } : {}) };
}

/**
 * An update's metadata patch, merged key by key into the record's metadata inside the
 * change's transaction: the row is locked first, so concurrent patches of other keys all hold.
 */
export function mergeMetadata(organizationId: string, type: ResourceType, patch: Record<string, string | null>, data: { metadata?: unknown }) {
  return async (tx: Tx, id: string) => {
    const rows = await tx.$queryRaw<Array<{ metadata: Metadata }>>`SELECT metadata FROM ${tableOf(type)}
      WHERE organization_id = ${organizationId}::uuid AND id = ${id}::uuid FOR UPDATE`;
    // No such record: the change itself answers why.
    if (rows.length === 0) return;
    const merged: Metadata = { ...rows[0]!.metadata };
    for (const [key, value] of Object.entries(patch)) {
      if (value === null) delete merged[key];
      else merged[key] = value;
    }
    if (Object.keys(merged).length > MAX_METADATA_KEYS) throw invalidInput([{ param: 'metadata', message: `would have more than ${MAX_METADATA_KEYS} keys` }]);
    data.metadata = merged;
  };
}

/** Whether an error is the live-external-id uniqueness of a resource's table. */
function isExternalIdClash(error: unknown): boolean {
  // A create that sends its own statements (db/insert-rows.ts insertCommitted) fails with pg's
  // error; from a Citus worker it names the constraint in its message only.
  if (error instanceof pg.DatabaseError) return error.code === '23505' && (error.constraint ?? error.message).includes('external_id');
  if (!(error instanceof Prisma.PrismaClientKnownRequestError)) return false;
  const meta = JSON.stringify(error.meta ?? {});
  // P2002 from Prisma's own INSERT; P2010, a unique violation, from a raw one (db/insert-rows.ts).
  const unique = error.code === 'P2002' || (error.code === 'P2010' && meta.includes('"UniqueConstraintViolation"'));
  return unique && meta.includes('external_id');
}

/** Runs a write; an external id another live record holds is a 409 naming that record. */
export async function holdingExternalId<T>(ctx: Pick<Context, 'prisma'>, type: ResourceType, externalId: unknown, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (!isExternalIdClash(error)) throw error;
    const holder = typeof externalId === 'string' ? ((await model(ctx.prisma, type).findFirst({ where: { externalId }, select: { id: true } })) as { id: string } | null) : null;
    throw apiError('CONFLICT', `The external_id ${JSON.stringify(externalId)} belongs to ${delegateName(type)} ${holder?.id ?? '(just deleted)'}.`, {
      errors: [{ param: 'externalId', message: `is already the external id of ${delegateName(type)} ${holder?.id ?? ''}`.trim() }],
      details: holder ? { holderId: holder.id } : {},
    });
  }
}

/** A deleted record comes back only if no live record took its external id meanwhile: 409 naming the holder. */
export async function refuseIfExternalIdHeld(tx: Tx, organizationId: string, type: ResourceType, id: string): Promise<void> {
  const table = tableOf(type);
  const rows = await tx.$queryRaw<Array<{ holder: string; externalId: string }>>`SELECT live.id::text AS holder, live.external_id AS "externalId"
    FROM ${table} deleted JOIN ${table} live
      ON live.organization_id = deleted.organization_id AND live.external_id = deleted.external_id AND live.deleted_at IS NULL
    WHERE deleted.organization_id = ${organizationId}::uuid AND deleted.id = ${id}::uuid`;
  const held = rows[0];
  if (!held) return;
  throw apiError('CONFLICT', `Cannot restore ${delegateName(type)} ${id}: its external_id ${JSON.stringify(held.externalId)} now belongs to ${delegateName(type)} ${held.holder}.`, {
    errors: [{ param: 'externalId', message: `is now the external id of ${delegateName(type)} ${held.holder}` }],
    details: { holderId: held.holder },
  });
}

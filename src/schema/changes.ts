// Changes to one record, in one place: every update, transition, delete and restore is one
// conditional UPDATE naming the state the record must be in (live or deleted, its status,
// the version the client last saw). The database's row lock makes it atomic: of two
// concurrent changes from the same version, one wins and the other is refused. A refusal
// names its reason: 404 (no such record), CONFLICT with the current status, or CONFLICT
// with the current version (REST answers that one as 412 Precondition Failed).
import type { Context } from '../context.js';
import { SOFT_DELETED_MODELS, type TenantClient, type Tx } from '../db/tenant.js';
import { namingRequest, setRequestIdSql } from '../db/request-naming.js';
import { apiError } from '../errors.js';
import { Prisma } from '../generated/prisma/client.js';
import { getDatamodel } from '../generated/pothos-prisma-types.js';
import { holdReferences, lockReferences, referenceFieldNames, type References } from './references.js';
import type { ResourceType } from './resource-type.js';
import { isUuid } from './validation.js';

export type { Tx } from '../db/tenant.js';
export type { ResourceType } from './resource-type.js';
/** Its Prisma delegate (and item name): `Customer` -> `customer`. */
type Delegate = Uncapitalize<ResourceType>;

export const delegateName = <Type extends ResourceType>(type: Type) => `${type.charAt(0).toLowerCase()}${type.slice(1)}` as Uncapitalize<Type>;

interface Changeable {
  create(args: object): Promise<unknown>;
  update(args: object): Promise<unknown>;
  findFirst(args: object): Promise<Record<string, unknown> | null>;
  count(args: object): Promise<number>;
}

/** The tenant client, or a transaction of it. */
export type Db = Pick<TenantClient, Delegate>;

/** Transactions (the client a batch's writes share) already named for a request, by nameRequest. */
const named = new WeakMap<object, string>();

/**
 * Names the request in the transaction `tx`: the events its changes write (triggers, as each
 * statement ends or at commit) record it as `request_id`. A batch names its transaction once, before its first
 * savepoint (a rolled-back savepoint would take a SET LOCAL made in it along), and its
 * writes then skip the statement.
 */
export async function nameRequest(tx: Pick<Tx, '$executeRawUnsafe'>, requestId: string): Promise<void> {
  await setRequestId(tx, requestId);
  named.set(tx, requestId);
}

const setRequestId = (tx: Pick<Tx, '$executeRawUnsafe'>, requestId: string) => tx.$executeRawUnsafe(setRequestIdSql(requestId));

/**
 * Runs a write in a transaction that names its request (with its BEGIN on PostgreSQL under
 * Node 24, see db/request-naming.ts; unless its batch did). The records the written one refers to
 * (`references`: its customerId, jobId) are held first, so none is deleted under it.
 */
export function writing<T>(ctx: Pick<Context, 'prisma' | 'requestId' | 'auth'>, write: (tx: Tx) => Promise<T>, references: References = {}): Promise<T> {
  return namingRequest(ctx.requestId, (namedOnBegin) => ctx.prisma.$transaction(async (tx) => {
    if (!namedOnBegin() && named.get(tx) !== ctx.requestId) await setRequestId(tx, ctx.requestId);
    await holdReferences(tx, ctx.auth.organizationId, references);
    return write(tx);
  }));
}

/** A resource's delegate, as code working on any resource uses it (the tenant client, or a transaction of it). */
export const model = (db: Db, type: ResourceType) => db[delegateName(type)] as unknown as Changeable;

export interface Change {
  /** What the change is, for messages: `update`, `delete`, `send`, ... */
  action: string;
  data: object;
  /** The version the client names (If-Match, expectedVersion); any version when absent. */
  expectedVersion?: number | null;
  /** Statuses the record must be in. */
  from?: readonly string[];
  /** Restore changes deleted records; everything else, live ones. */
  deleted?: boolean;
  /** Runs in the write's transaction before the write; throws to refuse it. */
  before?: (tx: Tx, id: string) => Promise<void>;
  /** Runs after the write in its transaction; throws to undo it. */
  verify?: (db: Db, id: string) => Promise<void>;
}

const fieldsOf = (type: string) => getDatamodel().datamodel.models[type]!.fields;
const hasStatus = (type: ResourceType) => fieldsOf(type).some((f) => f.name === 'status');

export const notFound = (type: ResourceType) => apiError('NOT_FOUND', `No ${delegateName(type)} with this id in this organization.`);

/**
 * Applies `change` to record `id` and answers it as `query` selects it, or throws the
 * reason it cannot be applied.
 */
export async function changeRecord(ctx: Pick<Context, 'prisma' | 'auth' | 'requestId'>, type: ResourceType, id: string, change: Change, query: object = {}): Promise<unknown> {
  if (!isUuid(id)) throw notFound(type);
  const where = {
    organizationId_id: { organizationId: ctx.auth.organizationId, id },
    deletedAt: change.deleted ? { not: null } : null,
    ...(change.expectedVersion != null ? { version: change.expectedVersion } : {}),
    ...(change.from ? { status: { in: [...change.from] } } : {}),
  };
  const write = async (tx: Tx) => {
    await change.before?.(tx, id);
    const record = await model(tx, type).update({ ...query, where, data: change.data });
    await change.verify?.(tx, id);
    return record;
  };
  // A record that changes between a refused write and the look at why it was refused may
  // have become changeable: try again, a few times.
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      // The references the change sets (an update's customerId, jobId) are held like a create's.
      return await writing(ctx, write, change.data as References);
    } catch (error) {
      if (!(error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2025')) throw error;
    }
    await refuse(ctx.prisma, type, id, change);
  }
  throw apiError('CONFLICT', `The ${delegateName(type)} kept changing while this request ran; retry.`);
}

/** Throws the reason `change` did not apply to record `id`, if there still is one. */
async function refuse(db: Db, type: ResourceType, id: string, change: Change): Promise<void> {
  const item = delegateName(type);
  const current = await model(db, type).findFirst({
    where: { id, deletedAt: undefined },
    select: { version: true, deletedAt: true, ...(hasStatus(type) ? { status: true } : {}) },
  });
  if (!current || (current.deletedAt !== null && !change.deleted)) throw notFound(type);
  if (change.deleted && current.deletedAt === null) {
    throw apiError('CONFLICT', `Cannot restore ${item} ${id}: it is not deleted.`, { errors: [{ param: 'id', message: 'is not deleted' }] });
  }
  if (change.expectedVersion != null && current.version !== change.expectedVersion) {
    throw apiError('PRECONDITION_FAILED', `The ${item} is at version ${String(current.version)}, not ${change.expectedVersion}: read it again, merge, and retry.`, {
      details: { currentVersion: current.version },
    });
  }
  if (change.from && !change.from.includes(current.status as string)) {
    const status = String(current.status);
    throw apiError('CONFLICT', `Cannot ${change.action} ${item} ${id}: its status is ${status} (allowed from ${change.from.join(' or ')}).`, {
      errors: [{ param: 'status', message: `is ${status}` }],
      details: { status },
    });
  }
}

type Field = ReturnType<typeof fieldsOf>[number];
const isSoftDeleted = (field: Field) => field.kind === 'object' && SOFT_DELETED_MODELS.has(field.type);

/** A record that live records refer to cannot be deleted: no record ever points at a deleted one. */
export async function refuseIfReferenced(db: Db, type: ResourceType, id: string): Promise<void> {
  const relations = fieldsOf(type).filter((field) => isSoftDeleted(field) && field.isList).map((field) => field.name);
  if (relations.length === 0) return;
  const record = await model(db, type).findFirst({
    where: { id, deletedAt: undefined },
    select: { _count: { select: Object.fromEntries(relations.map((name) => [name, { where: { deletedAt: null } }])) } },
  });
  const counts = Object.entries((record?._count ?? {}) as Record<string, number>).filter(([, count]) => count > 0);
  if (counts.length === 0) return;
  const held = counts.map(([name, count]) => `${count} ${count === 1 ? name.replace(/s$/, '') : name}`).join(', ');
  throw apiError('CONFLICT', `Cannot delete ${delegateName(type)} ${id}: it still has ${held}. Delete those first.`, {
    errors: counts.map(([name, count]) => ({ param: name, message: `${count} live record${count === 1 ? '' : 's'} refer to it` })),
  });
}

/**
 * A record comes back only beside the records it refers to: they are held (FOR SHARE) until
 * the restore commits, so a concurrent delete of one of them waits and then sees it (409).
 * Runs before the restore's write (see references.ts for why before).
 */
export async function refuseIfParentDeleted(tx: Tx, organizationId: string, type: ResourceType, id: string): Promise<void> {
  const fields = referenceFieldNames().filter((field) => fieldsOf(type).some((f) => f.name === field));
  if (fields.length === 0) return;
  const record = await model(tx, type).findFirst({ where: { id, deletedAt: undefined }, select: Object.fromEntries(fields.map((field) => [field, true])) });
  // No such record: the restore itself answers why.
  if (!record) return;
  const deleted = (await lockReferences(tx, organizationId, record)).map((field) => field.replace(/Id$/, ''));
  if (deleted.length === 0) return;
  throw apiError('CONFLICT', `Cannot restore ${delegateName(type)} ${id}: its ${deleted.join(' and ')} ${deleted.length === 1 ? 'is' : 'are'} deleted. Restore ${deleted.length === 1 ? 'it' : 'them'} first.`, {
    errors: deleted.map((name) => ({ param: `${name}Id`, message: 'names a deleted record' })),
  });
}

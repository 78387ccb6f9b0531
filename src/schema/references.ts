// References between records (customer_id, job_id) must name a live record of the caller's
// own organization; the tenant client makes a foreign id indistinguishable from a missing one.
//
// Checked where the write takes them: `holdReferences` inside the write's transaction, which
// is what makes the rule hold under concurrency. A request with other faults already never
// gets there: its references are looked up beside them (`requireReferences`), so that one
// answer names every fault. It takes the referenced rows FOR SHARE: a delete's UPDATE of the
// same row waits for the write to commit (and then finds its new child, 409), or the write
// waits for the delete (and then finds the row deleted, 400). Exactly one of them wins.
// Every write takes these locks before its first change, so none waits for a row while
// holding the organization's change-sequence lock (which would deadlock with a delete).
import { SOFT_DELETED_MODELS, type Tx } from '../db/tenant.js';
import { invalidInput } from '../errors.js';
import { purgeOrder } from '../db/tombstones.js';
import { Prisma } from '../generated/prisma/client.js';
import { getDatamodel } from '../generated/pothos-prisma-types.js';
import type { ResourceType } from './resource-type.js';
import { resourceOf, tableOf } from './registry.js';
import { isUuid, type InputCheck } from './validation.js';

const NOT_FOUND = 'does not name a record of this organization';

/**
 * For a write that has faults already (it will not run): the references its data names are
 * looked up too (as the write would hold them), so that the answer names them beside the
 * other faults. A write without faults checks them where it holds them (holdReferences).
 */
export async function requireReferences(check: InputCheck, db: Pick<Tx, '$queryRawUnsafe'>, organizationId: string, data: References): Promise<void> {
  if (check.errors.length === 0) return;
  // A reference already at fault (not a UUID) is not named twice.
  const asked = Object.fromEntries(referenceFieldNames().filter((field) => !check.errors.some((e) => e.param === field)).map((field) => [field, data[field]]));
  for (const field of await lockReferences(db, organizationId, asked)) check.fail(field, NOT_FOUND);
}

export interface Reference {
  /** The relation (`customer`) and the field holding its id (`customerId`). */
  name: string;
  key: string;
  type: ResourceType;
  required: boolean;
}

/**
 * The records a resource refers to: its to-one relations to other resources in the Prisma
 * schema, each by `(organizationId, <key>)` (a reference never leaves the organization).
 */
export function referencesOf(type: string): Reference[] {
  const fields = getDatamodel().datamodel.models[type]!.fields;
  return fields
    .filter((field) => field.kind === 'object' && !field.isList && SOFT_DELETED_MODELS.has(field.type))
    .map((field) => {
      const [key, ...more] = (field.relationFromFields ?? []).filter((name) => name !== 'organizationId');
      if (!key || more.length > 0) throw new Error(`${type}.${field.name}: a reference is (organizationId, one id field) (prisma/schema.prisma)`);
      return { name: field.name, key, type: field.type as ResourceType, required: fields.find((other) => other.name === key)!.isRequired };
    });
}

let derived: Array<{ field: string; table: Prisma.Sql }> | undefined;

/**
 * Every reference field of every resource and the table it names, in the order their rows
 * are locked: parents first (a job's customer before the job), the purge order reversed.
 * Read at the first write (the registry names the tables), then kept.
 */
function referenceFields(): Array<{ field: string; table: Prisma.Sql }> {
  if (derived) return derived;
  const target = new Map<string, ResourceType>();
  for (const model of SOFT_DELETED_MODELS) {
    for (const reference of referencesOf(model)) {
      if ((target.get(reference.key) ?? reference.type) !== reference.type) throw new Error(`${reference.key} names ${target.get(reference.key)} in one model and ${reference.type} in ${model}`);
      target.set(reference.key, reference.type);
    }
  }
  const parentsFirst = purgeOrder().reverse();
  const rank = (type: ResourceType) => parentsFirst.indexOf(resourceOf(type).item);
  derived = [...target].sort(([, a], [, b]) => rank(a) - rank(b)).map(([field, type]) => ({ field, table: tableOf(type) }));
  return derived;
}

/** The reference fields, parents first. */
export const referenceFieldNames = () => referenceFields().map(({ field }) => field);

/** What a record refers to: the reference fields among a create's or an update's data (null: none). */
export type References = Partial<Record<string, unknown>>;

/** The hold of one referenced record: a row where it is live, locked FOR SHARE; the organization and the id as SQL (parameters or literals). */
const holdStatement = (table: Prisma.Sql, organizationId: string, id: string) =>
  `SELECT 1 FROM ${table.sql} WHERE organization_id = ${organizationId}::uuid AND id = ${id}::uuid AND deleted_at IS NULL FOR SHARE`;

/**
 * Locks the live records `references` names FOR SHARE until the transaction ends, and
 * answers the fields whose record is missing or deleted.
 */
export async function lockReferences(tx: Pick<Tx, '$queryRawUnsafe'>, organizationId: string, references: References): Promise<string[]> {
  const missing: string[] = [];
  for (const { field, table } of referenceFields()) {
    const id = references[field];
    if (typeof id !== 'string') continue;
    if (!isUuid(id)) {
      missing.push(field);
      continue;
    }
    const rows = await tx.$queryRawUnsafe<unknown[]>(holdStatement(table, '$1', '$2'), organizationId, id);
    if (rows.length === 0) missing.push(field);
  }
  return missing;
}

/** `lockReferences` for a create or an update: a reference to no live record is a 400 naming it. */
export async function holdReferences(tx: Pick<Tx, '$queryRawUnsafe'>, organizationId: string, references: References): Promise<void> {
  const missing = await lockReferences(tx, organizationId, references);
  if (missing.length > 0) throw invalidInput(missing.map((param) => ({ param, message: NOT_FOUND })));
}

/**
 * `holdReferences`'s statements, values written in, for a create that sends its statements
 * itself (db/insert-rows.ts insertCommitted): each answers a row where it holds its record.
 * Undefined for an id that is not a UUID (the transaction names that fault).
 */
export function referenceHolds(organizationId: string, references: References): string[] | undefined {
  const holds: string[] = [];
  for (const { field, table } of referenceFields()) {
    const id = references[field];
    if (id === null || id === undefined) continue;
    if (typeof id !== 'string' || !isUuid(id) || !isUuid(organizationId)) return undefined;
    // Both are UUIDs, checked: nothing to escape.
    holds.push(holdStatement(table, `'${organizationId}'`, `'${id}'`));
  }
  return holds;
}

/**
 * `holdReferences` for many writes at once (a batch's creates): each referenced record locked
 * once, in id order, whatever order the writes name them in.
 */
export async function holdAllReferences(tx: Pick<Tx, '$queryRaw'>, organizationId: string, all: References[]): Promise<void> {
  for (const { field, table } of referenceFields()) {
    const ids = [...new Set(all.map((references) => references[field]).filter((id): id is string => typeof id === 'string').map((id) => id.toLowerCase()))].sort();
    if (ids.length === 0) continue;
    if (!ids.every(isUuid)) throw invalidInput([{ param: field, message: NOT_FOUND }]);
    const rows = await tx.$queryRaw<unknown[]>`SELECT 1 FROM ${table}
      WHERE organization_id = ${organizationId}::uuid AND id = ANY(${ids}::uuid[]) AND deleted_at IS NULL ORDER BY id FOR SHARE`;
    if (rows.length !== ids.length) throw invalidInput([{ param: field, message: NOT_FOUND }]);
  }
}

/** The `customerId` list filter; another organization's customer simply matches nothing. */
export function customerFilter(customerId: string | number | null | undefined) {
  if (customerId === null || customerId === undefined) return {};
  if (!isUuid(String(customerId))) throw invalidInput([{ param: 'customerId', message: 'must be a UUID' }]);
  return { customerId: String(customerId).toLowerCase() };
}

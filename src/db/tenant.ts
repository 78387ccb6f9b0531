// Tenant scoping, in one place: the client every resolver gets is bound to the caller's
// organization. Every read is filtered by it and every write is stamped with it, so no
// resolver can forget it and no request can reach another organization's rows. Models
// outside the business data (keys, users, sessions) are not reachable through it at all.
import type { PrismaClient } from '../generated/prisma/client.js';
import { getDatamodel } from '../generated/pothos-prisma-types.js';
import { isDataException, plainFindMany, tablesOf, TOTAL_COLUMN, type Read, type Row, type Sum } from './plain-reads.js';
import type { Sql } from './sql.js';

/**
 * The tenant-shaped models, read from the Prisma schema: those whose primary key begins
 * with the organization (`@@id([organizationId, ...])`, or the organization alone: its
 * counters). Keys, users and sessions carry an organization too but are keyed on their
 * own, and stay out of reach.
 */
export const BUSINESS_MODELS = new Set(
  Object.entries(getDatamodel().datamodel.models)
    .filter(([, model]) => model.primaryKey?.fields[0] === 'organizationId' || model.fields.some((field) => field.isId && field.name === 'organizationId'))
    .map(([name]) => name),
);

/**
 * Models whose records are deleted softly (`deletedAt`): every read and change through the
 * tenant client leaves their deleted records out unless it names `deletedAt` itself (sync
 * with tombstones, restore), so a deleted record disappears everywhere at once.
 */
export const SOFT_DELETED_MODELS = new Set(
  Object.entries(getDatamodel().datamodel.models)
    .filter(([, model]) => model.fields.some((field) => field.name === 'deletedAt'))
    .map(([name]) => name),
);

/** The client resolvers get: only business models (and the organization row, to read). */
export type TenantClient = Omit<PrismaClient, 'apiKey' | 'user' | 'session'>;

/** A transaction of the tenant client. */
export type Tx = Parameters<Extract<Parameters<TenantClient['$transaction']>[0], (...args: never[]) => unknown>>[0];

type Args = Record<string, unknown> & { where?: object; data?: unknown; create?: object };

function stamp(data: unknown, organizationId: string): unknown {
  return Array.isArray(data) ? data.map((row) => ({ ...row, organizationId })) : { ...(data as object), organizationId };
}

export function scopeArgs(model: string, operation: string, args: Args, organizationId: string): Args {
  // The organization row itself: only the caller's own, to read.
  if (model === 'Organization') {
    if (operation !== 'findUnique') throw new Error(`Organization.${operation} is not allowed for a tenant`);
    return { ...args, where: { ...args.where, id: organizationId } };
  }
  if (!BUSINESS_MODELS.has(model)) throw new Error(`${model} is not reachable from a tenant-scoped client`);
  const live = SOFT_DELETED_MODELS.has(model) && !(args.where && 'deletedAt' in args.where) ? { deletedAt: null } : {};
  const where = { ...live, ...args.where, organizationId };
  switch (operation) {
    case 'create':
      return { ...args, data: stamp(args.data, organizationId) };
    case 'createMany':
    case 'createManyAndReturn':
      return { ...args, data: stamp(args.data, organizationId) };
    case 'upsert':
      return { ...args, where, create: stamp(args.create, organizationId) as object };
    case 'delete':
    case 'deleteMany':
      return { ...args, where: { ...args.where, organizationId } };
    default:
      // find*, count, aggregate, groupBy, update*: filter by the organization (and live records).
      return { ...args, where };
  }
}

export function tenantClient(prisma: PrismaClient, organizationId: string): TenantClient {
  const scoped = prisma.$extends({
    name: 'tenant',
    query: {
      $allModels: {
        $allOperations({ model, operation, args, query }) {
          return query(scopeArgs(model, operation, args as Args, organizationId));
        },
      },
    },
  });
  // A query-only extension leaves the client's API unchanged.
  return scoped as unknown as TenantClient;
}

export type Session = NonNullable<Sql['session']>;

/**
 * The sessions (a connection of its own: db/insert-rows.ts insertCommitted) an
 * organization's own client may open. Only its own: a transaction's client (a dry run, a
 * batch: db/nested-transactions.ts) is another object, so its writes stay in its transaction.
 */
const sessions = new WeakMap<TenantClient, Session>();

/** The sessions of an organization's own client, on PostgreSQL; none for a transaction's client. */
export const sessionOf = (client: TenantClient): Session | undefined => sessions.get(client);

/** The plain reads (db/plain-reads.ts) of an organization's own client; none for a transaction's, which must read in its transaction. */
const readers = new WeakMap<TenantClient, (model: string, args: Record<string, unknown>, sum?: Sum) => Promise<Row[]> | undefined>();

/**
 * A findMany of `model` through `client`: as one plain statement where its arguments allow
 * and the client reads outside a transaction, by `prisma` otherwise (and for values
 * PostgreSQL refuses, so that they are answered as Prisma answers them).
 */
export async function findMany(client: TenantClient, model: string, args: Record<string, unknown>, prisma: () => Promise<unknown[]>): Promise<unknown[]> {
  return (await plainRows(client, model, args)) ?? prisma();
}

/**
 * A findMany and a sum (a list's page and its total) in one plain statement, where both are
 * plain and the client reads outside a transaction; undefined otherwise. The total is
 * undefined when no row came to carry it (an empty page).
 */
export async function findManyWithSum(client: TenantClient, model: string, args: Record<string, unknown>, sum: Sum): Promise<{ rows: unknown[]; total?: number } | undefined> {
  const rows = await plainRows(client, model, args, sum);
  if (!rows) return undefined;
  const total = rows.length > 0 ? Number(rows[0]![TOTAL_COLUMN]) : undefined;
  return { rows: rows.map(({ [TOTAL_COLUMN]: _, ...row }) => row), total };
}

/** The rows of a plain read; undefined where Prisma must answer (not plain, a transaction's client, a value PostgreSQL refuses). */
async function plainRows(client: TenantClient, model: string, args: Record<string, unknown>, sum?: Sum): Promise<Row[] | undefined> {
  const plain = readers.get(client)?.(model, args, sum);
  if (!plain) return undefined;
  try {
    return await plain;
  } catch (error) {
    if (isDataException(error)) return undefined;
    throw error;
  }
}

/**
 * One scoped client per organization, reused across requests (bounded); `session`: db.sql's,
 * where it has one; `read`: plain reads on the client's own pool (PostgreSQL).
 */
export function tenantClients(prisma: PrismaClient, { max = 1000, session, read }: { max?: number; session?: Session; read?: Read } = {}): (organizationId: string) => TenantClient {
  const cache = new Map<string, TenantClient>();
  const tables = read && tablesOf((prisma as unknown as { _runtimeDataModel: Parameters<typeof tablesOf>[0] })._runtimeDataModel, getDatamodel());
  return (organizationId) => {
    let client = cache.get(organizationId);
    if (!client) {
      if (cache.size >= max) cache.delete(cache.keys().next().value!);
      client = tenantClient(prisma, organizationId);
      if (session) sessions.set(client, session);
      if (read && tables) {
        readers.set(client, (model, args, sum) => {
          const scopedSum = sum && { ...sum, where: scopeArgs(sum.model, 'findMany', { where: sum.where }, organizationId).where! };
          const statement = plainFindMany(tables, model, scopeArgs(model, 'findMany', args, organizationId), scopedSum);
          if (!statement) return undefined;
          const rows = read(statement.text, statement.values);
          return statement.finish ? rows.then(statement.finish) : rows;
        });
      }
      cache.set(organizationId, client);
    }
    return client;
  };
}

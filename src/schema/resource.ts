// One declaration per resource: its paged list (filters, counted totals), its item, its
// transitions and its REST path, in one call. The REST route table reads the `rest`
// extension this puts on the fields (see rest/routes.ts), and each route's scope from the
// field's own authScopes, so REST serves exactly what the schema declares.
import type { EnumRef, ObjectRef } from '@pothos/core';
import { queryFromInfo } from '@pothos/plugin-prisma';
import type { Scope } from '../auth/scopes.js';
import type { Context } from '../context.js';
import { builder, type Types } from './builder.js';
import { pageArgs, pageType, paginate, recordTotal } from './pagination.js';
import { customerFilter } from './references.js';
import { applyMove, type Move, type Movable } from './transitions.js';
import { isUuid } from './validation.js';

/** The Prisma models a resource can be (each one GraphQL object type). */
export type ResourceType = 'Customer' | 'Job' | 'Email' | 'Invoice' | 'Estimate' | 'Proposal';
type Delegate = 'customer' | 'job' | 'email' | 'invoice' | 'estimate' | 'proposal';

/** What the REST route table reads from a field (`extensions.rest`). */
export interface RestExtension {
  /** URL segment: /v1/{path}. */
  path: string;
  kind: 'list' | 'item' | 'create';
  /** Object-valued fields that are part of the record (not links to other records). */
  embedded?: string[];
}

export function restExtension(rest: RestExtension) {
  return { rest };
}

interface ResourceSpec<Status extends string> {
  type: ResourceType;
  /** REST path and the name its totals are counted under (record_counts.resource). */
  path: string;
  read: Scope;
  /** The scope of its transitions. */
  write?: Scope;
  /** Description of the list field. */
  description: string;
  /** An enumerated filter that also splits the maintained counts (`status`, or `type`). */
  split?: { arg: 'status' | 'type'; enum: EnumRef<SchemaTypes, Status, Status> };
  /** Whether the list filters by `customerId`. */
  byCustomer?: boolean;
  /** A free-text `search` filter (whose totals are counted, not maintained). */
  search?: { description: string; where: (term: string | null | undefined) => object };
  embedded?: string[];
  /** Transitions: mutation name -> move. */
  moves?: Record<string, Move<Status>>;
}

type SchemaTypes = PothosSchemaTypes.ExtendDefaultTypes<Types>;

const lower = (type: ResourceType) => type.toLowerCase() as Delegate;

interface Listable {
  findMany(args: object): Promise<unknown[]>;
  count(args: { where: object }): Promise<number>;
  findFirst(args: object): Promise<unknown>;
  findFirstOrThrow(args: object): Promise<unknown>;
}

const delegate = (ctx: Context, type: ResourceType) => ctx.prisma[lower(type)] as unknown as Listable;

/** Declares a resource's list, item, transitions and REST rows; `record` is its prismaObject. */
export function defineResource<Shape, Status extends string>(record: ObjectRef<SchemaTypes, Shape>, spec: ResourceSpec<Status>): void {
  const item = lower(spec.type);
  const Page = pageType(spec.type, record);
  builder.queryFields((t) => ({
    [spec.path]: t.field({
      type: Page,
      description: spec.description,
      authScopes: { scope: spec.read },
      nullable: true,
      extensions: restExtension({ path: spec.path, kind: 'list', embedded: spec.embedded }),
      args: {
        ...pageArgs,
        ...(spec.search ? { search: t.arg.string({ description: spec.search.description }) } : {}),
        ...(spec.split ? { [spec.split.arg]: t.arg({ type: spec.split.enum }) } : {}),
        ...(spec.byCustomer ? { customerId: t.arg.id() } : {}),
      },
      resolve: (_root, args, ctx, info) => {
        const filters = args as { search?: string | null; customerId?: string | null; status?: Status | null; type?: Status | null };
        const split = spec.split ? filters[spec.split.arg] : undefined;
        const where = {
          ...(spec.search ? spec.search.where(filters.search) : {}),
          ...(spec.byCustomer ? customerFilter(filters.customerId) : {}),
          ...(spec.split && split ? { [spec.split.arg]: split } : {}),
        };
        // The maintained counts cover the whole organization, or one value of the split.
        const counted = !filters.customerId && !filters.search?.trim() ? recordTotal(ctx, spec.path, split) : undefined;
        return paginate(delegate(ctx, spec.type), where, args, queryFromInfo({ context: ctx, info, path: ['data'] }), counted) as never;
      },
    }),
    [item]: t.prismaField({
      type: spec.type,
      nullable: true,
      authScopes: { scope: spec.read },
      extensions: restExtension({ path: spec.path, kind: 'item', embedded: spec.embedded }),
      args: { id: t.arg.id({ required: true }) },
      resolve: (query, _root, { id }, ctx) => (isUuid(String(id)) ? (delegate(ctx, spec.type).findFirst({ ...query, where: { id: String(id) } }) as never) : null),
    }),
  }));

  for (const [name, move] of Object.entries(spec.moves ?? {})) {
    builder.mutationField(name, (t) =>
      t.prismaField({
        type: spec.type,
        description: `Moves ${/^[aeiou]/i.test(item) ? 'an' : 'a'} ${item} from ${move.from.join(' or ')} to ${move.to}.`,
        authScopes: { scope: spec.write! },
        nullable: true,
        args: { id: t.arg.id({ required: true }) },
        resolve: async (query, _root, { id }, ctx) => {
          const model = delegate(ctx, spec.type);
          await applyMove(model as unknown as Movable<Status>, item, String(id), move);
          return model.findFirstOrThrow({ ...query, where: { id: String(id) } }) as never;
        },
      }),
    );
  }
}

/** The REST row of a create mutation: `POST /v1/{path}`. */
export const restCreate = (path: string) => restExtension({ path, kind: 'create' });

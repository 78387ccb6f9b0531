// One declaration per resource: its paged list (filters, counted totals, sync), its item,
// its update, delete and restore, its transitions and its REST rows, in one call. The REST
// route table reads the `rest` extension this puts on the fields (see rest/routes.ts), and
// each route's scope from the field's own authScopes, so REST serves exactly what the
// schema declares.
import type { EnumRef, InputFieldMap, InputObjectRef, InputShapeFromFields, ObjectRef } from '@pothos/core';
import { queryFromInfo } from '@pothos/plugin-prisma';
import { declareScopes, type Scope } from '../auth/scopes.js';
import type { Context } from '../context.js';
import { EVENT_TYPES, transitionKind } from '../events/types.js';
import { insertCommitted, insertRows } from '../db/insert-rows.js';
import type { Sum } from '../db/plain-reads.js';
import { findMany, findManyWithSum, sessionOf } from '../db/tenant.js';
import { getDatamodel } from '../generated/pothos-prisma-types.js';
import { builder, type Types } from './builder.js';
import { ruled, rules } from './field-rules.js';
import { changeRecord, delegateName, model, refuseIfParentDeleted, refuseIfReferenced, writing, type ResourceType, type Tx } from './changes.js';
import type { Filters } from './cursor.js';
import { checkExternalId, checkMetadata, createKeys, holdingExternalId, integrationFields, integrationInputs, mergeMetadata, refuseIfExternalIdHeld } from './integration-keys.js';
import { addChildRelation, canonical, declareList, isEmptyWhere, listOf, prismaWhere, readScopeOf, sortKeys, type ListDeclaration, type ListSpec, type Where } from './list-query.js';
import { asksForPagination, named, pageArgs, pageType, paginate, recordTotal } from './pagination.js';
import { relationArgs, relationQuery } from './relations.js';
import { customerFilter, holdAllReferences, referenceHolds, referencesOf, requireReferences, type Reference, type References } from './references.js';
import { registerExample, registerResource, resourceOf } from './registry.js';
import { registerCreateMany, registerWrite, writeAccepted, type Write } from './writers.js';
import type { Move } from './transitions.js';
import { InputCheck, isUuid } from './validation.js';

export type { ResourceType } from './changes.js';

/** What the REST route table reads from a field (`extensions.rest`). */
export interface RestExtension {
  /** URL segment: /v1/{path}. */
  path: string;
  /** `view`: a computed page over the resource, GET /v1/{path}/{verb} (customers/duplicates). */
  kind: 'list' | 'item' | 'create' | 'update' | 'delete' | 'restore' | 'move' | 'related' | 'view' | 'upsert' | 'batch';
  /** Object-valued fields that are part of the record (not links to other records). */
  embedded?: string[];
  /** A move's URL segment: POST /v1/{path}/{id}/{verb} (a related list's: GET; a view's: GET /v1/{path}/{verb}). */
  verb?: string;
  /** An update's: the verbs that change the record's status instead. */
  moves?: string[];
  /** The route's scope, where the field's own authScopes decide per record (events). */
  scope?: Scope;
}

export function restExtension(rest: RestExtension) {
  return { rest };
}

type SchemaTypes = PothosSchemaTypes.ExtendDefaultTypes<Types>;

/** What a create's or an update's own fields are declared with. */
export type InputFields = PothosSchemaTypes.InputFieldBuilder<SchemaTypes, 'InputObject'>;

interface UpdateSpec<Status extends string> {
  /**
   * The fields of `Update<Type>Input`, every one optional (null clears an optional one); the
   * integration keys (`externalId`, `metadata`) are added to them, as to every resource's.
   */
  fields: (t: InputFields) => InputFieldMap;
  /**
   * Checks a patch on `check` and answers the data to write. `check` already holds the
   * faults found before (a REST body's unknown fields, the integration keys'); the update
   * reports them all at once, before it writes.
   */
  check: (ctx: Context, patch: Record<string, unknown>, check: InputCheck) => Promise<object>;
  /** Statuses in which the record may be edited (any when absent). */
  editable?: readonly Status[];
}

/** A path whose scopes the resource's file declared (`'notes:read'` in ScopeNames): `notes`. */
type DeclaredPath<S = Scope> = S extends `${infer Path}:read` ? Path : never;

interface ResourceDeclaration<Status extends string> {
  /** REST path and the name its totals are counted under (record_counts.resource). */
  path: DeclaredPath;
  /** `<path>:read` unless given. */
  read?: Scope;
  /** The scope of its changes (update, delete, restore and transitions): `<path>:write` unless given. */
  write?: Scope;
  /** Description of the list field: "<Path>, newest first." unless given. */
  description?: string;
  /** What the list sorts and filters by (its `where` and `orderBy`; `search` too). */
  list: ListDeclaration;
  /**
   * The list's enumerated field its totals are split by (the count trigger's column), where
   * it has more than one; false for none. Its one enumerated field unless given.
   */
  split?: string | false;
  embedded?: string[];
  /** Transitions: mutation name -> move. */
  moves?: Record<string, Move<Status>>;
  update?: UpdateSpec<Status>;
  /** Statuses in which the record may be deleted (any when absent). */
  deletable?: readonly Status[];
}

/** A declaration with what it leaves out read from the schema. */
interface ResourceSpec<Status extends string> extends Omit<ResourceDeclaration<Status>, 'list' | 'split'> {
  /** Its prismaObject's name, which is its Prisma model's. */
  type: ResourceType;
  read: Scope;
  write: Scope;
  description: string;
  list: ListSpec;
  /**
   * The list's enumerated field (`status`, or an e-mail's `type`): also a list argument of
   * its own, and what the maintained counts are split by (the count trigger's argument).
   */
  split?: { arg: string; enum: EnumRef<SchemaTypes, Status, Status> };
  /** Whether the list filters by `customerId`: a resource with a `customerId` reference to a customer. */
  byCustomer: boolean;
}

function resolve<Status extends string>(type: ResourceType, declared: ResourceDeclaration<Status>): ResourceSpec<Status> {
  const list = listOf(type, declared.list);
  const enums = Object.keys(list.fields).filter((name) => list.fields[name]!.kind === 'enum');
  if (declared.split === undefined && enums.length > 1) throw new Error(`${type}: its list has the enumerated fields ${enums.join(' and ')}; say which one splits its totals (split)`);
  const arg = declared.split === undefined ? enums[0] : declared.split || undefined;
  if (arg !== undefined && !enums.includes(arg)) throw new Error(`${type}: its totals are split by ${arg}, which is no enumerated field of its list`);
  if (arg !== undefined && list.fields[arg]!.nullable) throw new Error(`${type}: its totals cannot be split by ${arg}, which may be null`);
  const { split: _, ...rest } = declared;
  const named = declared.path.replace(/_/g, ' ');
  return {
    ...rest,
    type,
    read: declared.read ?? `${declared.path}:read`,
    write: declared.write ?? (`${declared.path}:write` as Scope),
    description: declared.description ?? `${named.charAt(0).toUpperCase()}${named.slice(1)}, newest first.`,
    list,
    split: arg === undefined ? undefined : { arg, enum: list.fields[arg]!.enum!.ref as EnumRef<SchemaTypes, Status, Status> },
    // The list's `customerId` argument (customerFilter) filters by that field.
    byCustomer: referencesOf(type).some((reference) => reference.type === 'Customer' && reference.key === 'customerId'),
  };
}

interface Listable {
  findMany(args: object): Promise<unknown[]>;
  count(args: { where: object }): Promise<number>;
  findFirst(args: object): Promise<unknown>;
}

const delegate = (ctx: Context, type: ResourceType) => ctx.prisma[delegateName(type)] as unknown as Listable;

/** A resource's rows for a list page or an item: one plain statement where the arguments allow (db/tenant.ts findMany). */
function rows(ctx: Context, type: ResourceType) {
  const model = delegate(ctx, type);
  return {
    findMany: (args: object) => findMany(ctx.prisma, type, args as Record<string, unknown>, () => model.findMany(args)),
    findManyWithSum: (args: object, sum: Sum) => findManyWithSum(ctx.prisma, type, args as Record<string, unknown>, sum),
    count: (args: { where: object }) => model.count(args),
    findOne: async (args: Record<string, unknown>) => (await findMany(ctx.prisma, type, { ...args, take: 1 }, async () => [await model.findFirst(args)]))[0] ?? null,
  };
}

const an = (word: string) => (/^[aeiou]/i.test(word) ? `an ${word}` : `a ${word}`);

/** The fields every resource's record has, after its own: its times, version and deletion stamp. */
function recordFields(type: ResourceType): void {
  builder.prismaObjectFields(type, (t) => ({
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    version: t.exposeInt('version', { description: 'Grows by one on every change; the ETag and If-Match value.' }),
    deletedAt: t.expose('deletedAt', { type: 'DateTime', nullable: true, description: 'When the record was deleted; null while it exists.' }),
  }));
}

/**
 * What a resource's references give it: the id field and the record (which needs the other
 * resource's read scope) on its object, and their filters on its list; so a job's file does
 * not declare `customerId`, `customer` or their filters.
 */
function referenceFields(type: ResourceType, list: ListSpec): ListSpec {
  const references = referencesOf(type);
  // A thunk: it runs when the schema is built, once every resource (and its scope) is declared.
  builder.prismaObjectFields(type, (t) =>
    Object.fromEntries(
      references.flatMap((reference) => [
        [reference.key, (t.exposeID as (name: string, options: object) => never)(reference.key, { nullable: !reference.required })],
        [reference.name, (t.relation as (name: string, options: object) => never)(reference.name, { authScopes: { scope: readScopeOf(reference.type) }, nullable: true })],
      ]),
    ),
  );
  return {
    ...list,
    fields: { ...list.fields, ...Object.fromEntries(references.map((reference) => [reference.key, { kind: 'id', exact: true } as const])) },
    relations: { ...list.relations, ...Object.fromEntries(references.map((reference) => [reference.name, { type: reference.type, many: false }])) },
  };
}

/** A create's input fields of its references: `customerId` (required where the relation is). */
function referenceInputs(t: InputFields, references: Reference[]) {
  return Object.fromEntries(
    references.map((reference) => {
      const which = an(reference.name);
      return [reference.key, t.id({ required: reference.required, ...ruled(rules.id(reference.required), `${which.charAt(0).toUpperCase()}${which.slice(1)} of this organization.`) })];
    }),
  );
}

/**
 * Lists a resource on the records it belongs to, from the other side of its to-one
 * relations in the Prisma schema: a job's `customer` gives `Customer.jobs` (needing
 * jobs:read) and the customer list's `jobs` filter, so a parent's file names no child.
 */
function listOnParents<Status extends string>(spec: ResourceSpec<Status>, list: ListSpec): void {
  const models = getDatamodel().datamodel.models;
  for (const [name, relation] of Object.entries(list.relations ?? {})) {
    if (relation.many) continue;
    const own = models[spec.type]!.fields.find((field) => field.name === name)!;
    const inverse = models[relation.type]!.fields.find((field) => field.relationName === own.relationName && field.isList);
    if (!inverse) throw new Error(`${relation.type} has no list of ${spec.type} records for ${spec.type}.${name} (prisma/schema.prisma)`);
    builder.prismaObjectField(relation.type, inverse.name, (t) =>
      (t.relation as (name: string, options: object) => never)(inverse.name, { authScopes: { scope: spec.read }, nullable: true, args: relationArgs, query: relationQuery }),
    );
    addChildRelation(relation.type, inverse.name, { type: spec.type, many: true });
  }
}

/**
 * Declares a resource's list, item, changes, transitions and REST rows; `record` is its
 * prismaObject, holding `id` and its own fields (the common ones are added here).
 */
export function defineResource<Shape, Status extends string>(record: ObjectRef<SchemaTypes, Shape>, declared: ResourceDeclaration<Status>): void {
  const spec = resolve(record.name as ResourceType, declared);
  const item = delegateName(spec.type);
  registerResource({ type: spec.type, path: spec.path, item, read: spec.read, write: spec.write, moves: Object.values(spec.moves ?? {}) });
  declareScopes(spec.read, spec.write);
  const Page = pageType(spec.type, record);
  const list = referenceFields(spec.type, spec.list);
  const asked = declareList(spec.type, list);
  recordFields(spec.type);
  integrationFields(spec.type);
  listOnParents(spec, list);
  for (const kind of ['created', 'deleted', 'restored', ...(spec.update ? ['updated'] : []), ...Object.values(spec.moves ?? {}).map((move) => transitionKind(move.to))]) {
    EVENT_TYPES.add(`${item}.${kind}`);
  }
  const rest = (kind: RestExtension['kind'], more: Partial<RestExtension> = {}) => restExtension({ path: spec.path, kind, embedded: spec.embedded, ...more });
  builder.queryFields((t) => ({
    [spec.path]: t.field({
      type: Page,
      description: spec.description,
      authScopes: { scope: spec.read },
      nullable: true,
      extensions: rest('list'),
      args: {
        ...pageArgs,
        where: t.arg({ type: asked.where, description: 'Filters: ranges, sets, exact values, search and relations (see `' + spec.type + 'Where`).' }),
        orderBy: t.arg({ type: [asked.orderBy], description: 'Sort keys, the first deciding first; newest first when absent.' }),
        search: t.arg.string({ description: spec.list.search.description }),
        ...(spec.split ? { [spec.split.arg]: t.arg({ type: spec.split.enum, description: `Only this ${spec.split.arg} (\`where.${spec.split.arg}\` takes a set).` }) } : {}),
        ...(spec.byCustomer ? { customerId: t.arg.id({ description: 'Only records of this customer.' }) } : {}),
      },
      resolve: (_root, args, ctx, info) => {
        const given = args as { search?: string | null; customerId?: string | number | null; status?: Status | null; type?: Status | null; where?: Where | null; orderBy?: string[] | null };
        const filters = named({
          search: given.search?.trim(),
          customerId: given.customerId === null || given.customerId === undefined ? undefined : String(given.customerId).toLowerCase(),
          ...(spec.split ? { [spec.split.arg]: (given as Record<string, unknown>)[spec.split.arg] } : {}),
          where: isEmptyWhere(given.where) ? undefined : JSON.stringify(canonical(given.where)),
          orderBy: given.orderBy?.length ? given.orderBy.join(',') : undefined,
        });
        const where = (f: Filters) => {
          const and = [
            ...prismaWhere(ctx, spec.type, { search: f.search }, ''),
            ...(spec.byCustomer && f.customerId ? [customerFilter(f.customerId as string)] : []),
            ...(spec.split && f[spec.split.arg] ? [{ [spec.split.arg]: f[spec.split.arg] }] : []),
            ...(typeof f.where === 'string' ? prismaWhere(ctx, spec.type, JSON.parse(f.where) as Where) : []),
          ];
          return and.length > 0 ? { AND: and } : {};
        };
        const list = { organizationId: ctx.auth.organizationId, key: ctx.cursorKey, resource: spec.path, filters, where, counted: (f: Filters) => maintainedTotal(ctx, spec, f), sort: (orderBy: string) => sortKeys(spec.type, orderBy.split(',')) };
        return paginate(rows(ctx, spec.type), list, args, queryFromInfo({ context: ctx, info, path: ['data'] }), asksForPagination(info)) as never;
      },
    }),
    [item]: t.prismaField({
      type: spec.type,
      nullable: true,
      authScopes: { scope: spec.read },
      extensions: rest('item'),
      args: { id: t.arg.id({ required: true }) },
      resolve: (query, _root, { id }, ctx) => (isUuid(String(id)) ? (rows(ctx, spec.type).findOne({ ...query, where: { id: String(id) } }) as never) : null),
    }),
  }));

  /** A mutation that changes one record: `(id, expectedVersion, ...more)` -> the record. */
  function changeField(name: string, options: { description: string; rest: ReturnType<typeof rest>; input?: InputObjectRef<SchemaTypes, object> }, run: (args: { id: string; expectedVersion?: number | null; input?: Record<string, unknown> }, ctx: Context, query: object) => Promise<unknown>) {
    registerWrite(name, run as Write);
    builder.mutationField(name, (t) =>
      t.prismaField({
        type: spec.type,
        description: options.description,
        authScopes: { scope: spec.write },
        nullable: true,
        extensions: options.rest,
        args: {
          id: t.arg.id({ required: true }),
          ...(options.input ? { input: t.arg({ type: options.input, required: true }) } : {}),
          expectedVersion: t.arg.int({ description: 'Change only if the record is still at this version (otherwise PRECONDITION_FAILED with `currentVersion`).' }),
        },
        resolve: (query, _root, args, ctx) => run({ ...(args as object), id: String(args.id) } as never, ctx, query) as never,
      }),
    );
  }

  for (const [name, move] of Object.entries(spec.moves ?? {})) {
    changeField(name, { description: `Moves ${an(item)} from ${move.from.join(' or ')} to ${move.to}.`, rest: rest('move', { verb: move.verb }) }, ({ id, expectedVersion }, ctx, query) => {
      const now = new Date();
      const data = Object.fromEntries([['status', move.to], ...(move.stamps ?? []).map((column) => [column, now])]);
      return changeRecord(ctx, spec.type, id, { action: move.verb, from: move.from, data, expectedVersion }, query);
    });
  }

  const update = spec.update;
  if (update) {
    const verbs = Object.values(spec.moves ?? {}).map((move) => move.verb);
    changeField(
      `update${spec.type}`,
      { description: `Changes ${an(item)}'s fields: those given are set, null clears an optional one.${update.editable ? ` Only while ${update.editable.join(' or ')}.` : ''}`, rest: rest('update', { moves: verbs }), input: builder.inputType(`Update${spec.type}Input`, { fields: (t) => ({ ...integrationInputs(t, true), ...update.fields(t) }) }) },
      async ({ id, expectedVersion, input }, ctx, query) => {
        // Integration keys are every resource's: checked here, the rest by the resource.
        const { externalId, metadata, ...fields } = input ?? {};
        const check = new InputCheck(ctx.inputErrors);
        const external = checkExternalId(check, externalId);
        const patch = checkMetadata(check, metadata, true);
        const data: Record<string, unknown> = { ...(await update.check(ctx, fields, check)) };
        await requireReferences(check, ctx.prisma, ctx.auth.organizationId, data);
        check.done();
        if (external !== undefined) data.externalId = external;
        const before = patch ? mergeMetadata(ctx.auth.organizationId, spec.type, patch, data) : undefined;
        // Integration keys are no part of what a status freezes (a sent invoice can be tagged).
        const from = Object.keys(fields).length > 0 ? update.editable : undefined;
        return holdingExternalId(ctx, spec.type, external, () => changeRecord(ctx, spec.type, id, { action: 'update', from, data, expectedVersion, before }, query));
      },
    );
  }

  changeField(
    `delete${spec.type}`,
    { description: `Deletes ${an(item)} (softly: it can be restored).${spec.deletable ? ` Only while ${spec.deletable.join(' or ')}.` : ''} Records that live records refer to cannot be deleted.`, rest: rest('delete') },
    // The delete's UPDATE locks the row before the check for live children: a write holding
    // the row as a reference (references.ts) commits first and is counted, or waits and fails.
    ({ id, expectedVersion }, ctx, query) =>
      changeRecord(ctx, spec.type, id, { action: 'delete', from: spec.deletable, data: { deletedAt: new Date() }, expectedVersion, verify: (db) => refuseIfReferenced(db, spec.type, id) }, query),
  );
  changeField(
    `restore${spec.type}`,
    { description: `Restores a deleted ${item}, beside the records it refers to.`, rest: rest('restore') },
    ({ id, expectedVersion }, ctx, query) => {
      const before = async (tx: Tx) => {
        await refuseIfParentDeleted(tx, ctx.auth.organizationId, spec.type, id);
        await refuseIfExternalIdHeld(tx, ctx.auth.organizationId, spec.type, id);
      };
      // A create that takes the external id between that check and the restore: still a 409.
      return holdingExternalId(ctx, spec.type, undefined, () => changeRecord(ctx, spec.type, id, { action: 'restore', deleted: true, data: { deletedAt: null }, expectedVersion, before }, query));
    },
  );
}

/**
 * The maintained count behind a list's filters, when there is one: the whole organization,
 * or one value of the split (`status=sent`, or `where: { status: { in: [sent] } }`).
 * Other filters are counted row by row.
 */
function maintainedTotal<Status extends string>(ctx: Context, spec: ResourceSpec<Status>, f: Filters) {
  if (f.customerId || f.search) return undefined;
  const where = typeof f.where === 'string' ? (JSON.parse(f.where) as Where) : {};
  const split = spec.split ? (f[spec.split.arg] as string | undefined) : undefined;
  const names = Object.keys(where);
  if (names.length === 0) return recordTotal(ctx, spec.path, split);
  if (!spec.split || names.length !== 1 || names[0] !== spec.split.arg) return undefined;
  const values = (where[spec.split.arg] as { in?: string[] }).in;
  return values?.length === 1 && (!split || split === values[0]) ? recordTotal(ctx, spec.path, values[0]) : undefined;
}

/** A create of a declared resource: needing its write scope, and `POST /v1/{path}` on REST. */
interface CreateSpec<Fields extends InputFieldMap, Data extends object, Input = InputShapeFromFields<Fields>> {
  description?: string;
  /** The fields of `Create<Type>Input`; the integration keys are added to them, as to every resource's. */
  fields: (t: InputFields) => Fields;
  /** A valid input, its references (customerId, jobId) left out (see RegisteredResource). */
  example: Partial<Input>;
  /**
   * Checks the input on `check` and answers the record's data. `check` already holds the
   * faults found before (a REST body's unknown fields); the create reports them all, with
   * the integration keys', at once, before it writes.
   */
  check: (ctx: Context, input: Input, check: InputCheck) => Promise<Data>;
  /**
   * Writes the record in the create's transaction (the references its data names, such as
   * customerId, held until it commits), answering it as `query` selects it. Left out, the
   * record's own row is all it writes; a batch's creates of it are then one INSERT.
   */
  create?: (tx: Tx, data: Data & { organizationId: string }, query: object) => Promise<unknown>;
}

/** `create<Type>(input)`, and its write for upserts and batches. */
export function defineCreate<Fields extends InputFieldMap, Data extends object>(type: ResourceType, spec: CreateSpec<Fields, Data>): void {
  type Input = InputShapeFromFields<Fields>;
  const { write, path } = resourceOf(type);
  const references = referencesOf(type);
  const input = builder.inputType(`Create${type}Input`, { fields: (t) => ({ ...integrationInputs(t), ...referenceInputs(t, references), ...spec.fields(t) }) });
  /** The record's data, or every fault of the input at once. */
  const checked = async (ctx: Context, input: Input) => {
    const check = new InputCheck(ctx.inputErrors);
    const given = input as Record<string, string | null | undefined>;
    const referred = Object.fromEntries(references.map((reference) => [reference.key, check.id(reference.key, given[reference.key], { required: reference.required })]));
    const data = await spec.check(ctx, input, check);
    const keys = createKeys(check, input as { externalId?: string | null; metadata?: unknown });
    await requireReferences(check, ctx.prisma, ctx.auth.organizationId, referred);
    check.done();
    return { ...keys, ...referred, ...data, organizationId: ctx.auth.organizationId };
  };
  // A plain create is the batch's INSERT of one row; where the selection reaches past the
  // record (GraphQL asking for its customer), Prisma writes it, with what the selection needs.
  const plain = async (tx: Tx, data: object, query: object) =>
    Object.keys(query).length > 0 ? model(tx, type).create({ ...query, data }) : (await insertRows(tx, type, path, [data as Record<string, unknown>]))[0];
  const create = spec.create ?? plain;
  const run = async (ctx: Context, input: Input, query: object) => {
    const data = await checked(ctx, input);
    const inTransaction = () => writing(ctx, (tx) => create(tx, data, query), data as References);
    // A plain create on the organization's own client (not in a dry run's or a batch's
    // transaction) sends its INSERT and COMMIT together on PostgreSQL; not for a request
    // whose outcome may be read back (ctx.idempotent).
    const session = spec.create || Object.keys(query).length > 0 || ctx.idempotent ? undefined : sessionOf(ctx.prisma);
    const holds = session && referenceHolds(ctx.auth.organizationId, data as References);
    return holdingExternalId(ctx, type, data.externalId, async () => {
      if (!session || !holds) return inTransaction();
      // Not written: a record it refers to is missing or deleted, which the transaction names.
      return (await insertCommitted(ctx.prisma, session, ctx.requestId, type, path, data as Record<string, unknown>, holds)) ?? inTransaction();
    });
  };
  registerWrite(`create${type}`, ({ input }, ctx, query) => run(ctx, input as Input, query));
  if (!spec.create) {
    registerCreateMany(type, (ctx, inputs, { partial = false } = {}) =>
      writeAccepted(inputs, partial, (input) => checked(ctx, input as Input), async (rows) => {
        const records = await writing(ctx, async (tx) => {
          await holdAllReferences(tx, ctx.auth.organizationId, rows as References[]);
          return insertRows(tx, type, path, rows);
        });
        return records.map((record) => ({ record }));
      }),
    );
  }
  registerExample(type, spec.example as Record<string, unknown>);
  builder.mutationField(`create${type}`, (t) =>
    t.prismaField({
      type,
      description: spec.description,
      authScopes: { scope: write },
      nullable: true,
      extensions: restExtension({ path, kind: 'create' }),
      args: { input: t.arg({ type: input, required: true }) },
      resolve: (query, _root, args, ctx) => run(ctx, (args as unknown as { input: Input }).input, query) as never,
    }),
  );
}

// Writes many at once, on every resource with a create: `upsert<Type>(externalId, input)`
// (create, or update the live record holding the external id) and `batch<Type>s(items,
// mode)` (up to 100 creates, updates, upserts and deletes in one transaction). Each item runs
// the resource's own write (schema/writers.ts), so it checks, numbers, versions and records
// its event exactly as its single call would; the batch's transaction takes the
// organization's change sequence once for all of them.
import { coerceInputValue, GraphQLError, isInputObjectType, type GraphQLInputObjectType, type GraphQLSchema } from 'graphql';
import type { Context } from '../context.js';
import { nestedClient } from '../db/nested-transactions.js';
import { apiError, codeOf, invalidInput, isRefusal, statusOf, type FieldError } from '../errors.js';
import { builder } from './builder.js';
import { delegateName, model, nameRequest, type ResourceType } from './changes.js';
import { checkExternalId, MAX_EXTERNAL_ID } from './integration-keys.js';
import { registeredResources } from './registry.js';
import { restExtension } from './resource.js';
import { InputCheck } from './validation.js';
import { createManyOf, writeAccepted, writeOf } from './writers.js';

export const MAX_BATCH = 100;

const BatchOp = builder.enumType('BatchOp', {
  description: 'What a batch item does: create a record, update one (by id or external id), upsert one by external id, or delete one.',
  values: ['create', 'update', 'upsert', 'delete'] as const,
});

const BatchMode = builder.enumType('BatchMode', {
  description: '`atomic`: all items or none (the default); `partial`: each item on its own, with its own result.',
  values: ['atomic', 'partial'] as const,
});

type Op = 'create' | 'update' | 'upsert' | 'delete';

interface BatchItem {
  op: Op;
  id?: string | number | null;
  externalId?: string | null;
  data?: unknown;
  ifMatch?: number | null;
}

const BatchItemInput = builder.inputType('BatchItem', {
  description: 'One write of a batch.',
  fields: (t) => ({
    op: t.field({ type: BatchOp, required: true }),
    id: t.id({ description: 'The record (update, delete): or name it by externalId.' }),
    externalId: t.string({ description: 'update, delete: the record holding it; upsert: the record to create or update; create: the new record\'s.' }),
    data: t.field({ type: 'JSON', description: 'create, upsert: the create input; update: the update input (metadata merges per key).' }),
    ifMatch: t.int({ description: 'update, delete: change only if the record is still at this version.' }),
  }),
});

const BatchError = builder.objectRef<{ code: string; message: string; errors: FieldError[] }>('BatchItemError').implement({
  fields: (t) => ({
    code: t.exposeString('code', { description: 'The error code its single call would answer (BAD_REQUEST, CONFLICT, NOT_FOUND, ...).' }),
    message: t.exposeString('message'),
    errors: t.field({ type: [builder.objectRef<FieldError>('BatchFieldError').implement({ fields: (f) => ({ param: f.exposeString('param'), message: f.exposeString('message') }) })], resolve: (e) => e.errors }),
  }),
});

interface ItemResult {
  index: number;
  status: number;
  record?: unknown;
  error?: { code: string; message: string; errors: FieldError[] };
}

/** A write's error as an item's result. */
function itemError(error: unknown): ItemResult['error'] & { status: number } {
  if (!isRefusal(error)) throw error;
  const code = codeOf(error);
  return { code, status: statusOf(code), message: error.message, errors: (error.extensions?.errors as FieldError[] | undefined) ?? [] };
}

/**
 * A JSON input as the input type takes it (dates parsed, enums checked): each fault named by
 * its path, into `check`; the coerced value when there was none.
 */
function coerced(schema: GraphQLSchema, typeName: string, data: unknown, check: InputCheck): Record<string, unknown> | undefined {
  const type = schema.getType(typeName) as GraphQLInputObjectType;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    check.fail('data', 'must be an object');
    return undefined;
  }
  let ok = true;
  const value = coerceInputValue(data, type, (path, _invalid, error) => {
    ok = false;
    const missing = /^Field "(\w+)" of required type "[^"]+" was not provided\.$/.exec(error.message);
    check.fail([...path, ...(missing ? [missing[1]!] : [])].join('.') || 'data', missing ? 'is required' : error.message.replace(/^Expected value of type "[^"]+", found [^;]+; /, '').replace(/^Field "(\w+)" is not defined by type "[^"]+"\.?.*$/, 'is not a known field'));
  });
  return ok ? (value as Record<string, unknown>) : undefined;
}


/** The live record holding an external id, or a 404 naming it. */
async function holderOf(ctx: Context, type: ResourceType, externalId: string): Promise<string> {
  const record = await model(ctx.prisma, type).findFirst({ where: { externalId }, select: { id: true } });
  if (!record) throw apiError('NOT_FOUND', `No ${delegateName(type)} with external_id ${JSON.stringify(externalId)} in this organization.`, { errors: [{ param: 'externalId', message: 'names no live record' }] });
  return String(record.id);
}

/**
 * Creates the record, or updates the live one holding `externalId` with the same input (the
 * fields an update takes; what only a create sets, such as an invoice's customer, stays).
 * Concurrent upserts of one external id make one record: the unique index refuses all
 * creates but one, and the others update it.
 */
export async function upsert(ctx: Context, schema: GraphQLSchema, type: ResourceType, externalId: string, input: Record<string, unknown>, query: object): Promise<{ created: boolean; record: unknown }> {
  const check = new InputCheck(ctx.inputErrors);
  checkExternalId(check, externalId);
  if (externalId === '') check.fail('externalId', 'is required');
  check.done();
  const create = writeOf(`create${type}`)!;
  const update = writeOf(`update${type}`);
  for (let attempt = 0; attempt < 3; attempt++) {
    const holder = await model(ctx.prisma, type).findFirst({ where: { externalId }, select: { id: true } });
    if (!holder) {
      try {
        return { created: true, record: await create({ input: { ...input, externalId } }, ctx, query) };
      } catch (error) {
        // Another request created it first: update that one.
        if (!(error instanceof GraphQLError && codeOf(error) === 'CONFLICT' && error.extensions?.holderId)) throw error;
        continue;
      }
    }
    const id = String(holder.id);
    // A resource whose records never change (e-mails) cannot take the body onto the holder.
    if (!update) {
      throw apiError('CONFLICT', `The ${delegateName(type)} ${id} holds external_id ${JSON.stringify(externalId)}, and ${delegateName(type)} records cannot be changed.`, {
        errors: [{ param: 'externalId', message: `is already the external id of ${delegateName(type)} ${id}` }],
        details: { holderId: id },
      });
    }
    const updatable = Object.keys((schema.getType(`Update${type}Input`) as GraphQLInputObjectType).getFields());
    const patch = Object.fromEntries(Object.entries(input).filter(([name]) => updatable.includes(name) && name !== 'externalId'));
    try {
      return { created: false, record: await update({ id, input: patch }, ctx, query) };
    } catch (error) {
      // Deleted meanwhile: create it after all.
      if (!(error instanceof GraphQLError && codeOf(error) === 'NOT_FOUND')) throw error;
    }
  }
  throw apiError('CONFLICT', `The ${delegateName(type)} with external_id ${JSON.stringify(externalId)} kept changing while this request ran; retry.`);
}

/** A batch's faults found before it ran (REST's item bodies), by item: `items[3].email` -> item 3, `email`. */
function faultsByItem(errors: FieldError[] = []): Map<number, FieldError[]> {
  const byItem = new Map<number, FieldError[]>();
  for (const error of errors) {
    const at = /^items\[(\d+)\]\.?(.*)$/.exec(error.param);
    if (!at) continue;
    const index = Number(at[1]);
    byItem.set(index, [...(byItem.get(index) ?? []), { param: at[2] || 'data', message: error.message }]);
  }
  return byItem;
}

/** A create item's input, external id included; a fault throws (the batch then names it, item by item). */
function createInput(schema: GraphQLSchema, type: ResourceType, item: BatchItem, check = new InputCheck()): Record<string, unknown> {
  const input = coerced(schema, `Create${type}Input`, item.data ?? {}, check);
  check.done();
  return { ...input, ...(item.externalId ? { externalId: item.externalId } : {}) };
}

async function runItem(ctx: Context, schema: GraphQLSchema, type: ResourceType, item: BatchItem): Promise<ItemResult> {
  const check = new InputCheck(ctx.inputErrors);
  const externalId = item.externalId ?? undefined;
  const id = item.id === null || item.id === undefined ? undefined : String(item.id);
  const write = (op: string) => {
    const found = writeOf(`${op}${type}`);
    if (!found) throw invalidInput([{ param: 'op', message: `${delegateName(type)} records cannot be ${op === 'update' ? 'updated' : 'deleted'}` }]);
    return found;
  };
  if (item.op === 'create') return { index: 0, status: 201, record: await write('create')({ input: createInput(schema, type, item, check) }, ctx, {}) };
  if (item.op === 'upsert') {
    if (!externalId) check.fail('externalId', 'is required for an upsert');
    const input = coerced(schema, `Create${type}Input`, item.data ?? {}, check);
    check.done();
    const result = await upsert(ctx, schema, type, externalId!, input!, {});
    return { index: 0, status: result.created ? 201 : 200, record: result.record };
  }
  const change = write(item.op);
  if (!id && !externalId) check.fail('id', `is required (or external_id) for ${item.op === 'update' ? 'an update' : 'a delete'}`);
  const input = item.op === 'update' ? coerced(schema, `Update${type}Input`, item.data ?? {}, check) : undefined;
  check.done();
  const target = id ?? (await holderOf(ctx, type, externalId!));
  const record = await change({ id: target, expectedVersion: item.ifMatch, input }, ctx, {});
  return item.op === 'delete' ? { index: 0, status: 204 } : { index: 0, status: 200, record };
}

/**
 * Runs the items in one transaction, each in a savepoint of its own. Atomic: any failure
 * undoes every item (a 4xx naming `items[i].<field>`); partial: a failed item is undone
 * alone and answered with its error. `limit`: the most items a call may send (an import's
 * chunk may be larger, imports/worker.ts).
 */
export async function runBatch(ctx: Context, schema: GraphQLSchema, type: ResourceType, items: readonly BatchItem[], mode: 'atomic' | 'partial', limit = MAX_BATCH): Promise<{ results: ItemResult[] }> {
  // A malformed REST body comes as no items and its faults (rest/handler.ts).
  if (items.length === 0 && ctx.inputErrors?.length) throw invalidInput(ctx.inputErrors);
  if (items.length === 0 || items.length > limit) throw invalidInput([{ param: 'items', message: `must hold 1 to ${limit} items` }]);
  const prior = faultsByItem(ctx.inputErrors);
  // A batch first runs its items plainly, in one transaction: when all succeed, as they mostly
  // do, no savepoint was spent, and the answer is the same in either mode. A partial batch of
  // creates (an import's chunk) answers there each item whose input is refused, and writes the
  // others together: with one bad e-mail in 500 rows it otherwise ran as 500 savepoints, ten
  // times slower. At any other fault it is rolled back and run again item by item in
  // savepoints: an atomic batch then names every fault at once, a partial one answers each item.
  const together = await runTogether(ctx, schema, type, items, mode, prior);
  return together ?? runItemByItem(ctx, schema, type, items, mode, prior);
}

/** The items run plainly in one transaction, or undefined when one of them failed (nothing was written). */
async function runTogether(ctx: Context, schema: GraphQLSchema, type: ResourceType, items: readonly BatchItem[], mode: 'atomic' | 'partial', prior: Map<number, FieldError[]>): Promise<{ results: ItemResult[] } | undefined> {
  const many = items.every((item) => item.op === 'create') ? createManyOf(type) : undefined;
  const partial = mode === 'partial' && many !== undefined;
  if (prior.size > 0 && !partial) return undefined;
  const inTransaction = <T>(run: (inner: Context) => Promise<T>) =>
    ctx.prisma.$transaction(async (tx) => {
      const inner = { ...ctx, prisma: nestedClient(tx, { savepoints: false }), inputErrors: [] };
      await nameRequest(inner.prisma, ctx.requestId);
      return run(inner);
    }, { timeout: 60_000 });
  try {
    if (many) {
      // Each input coerced before the transaction (with the faults found before it ran): a
      // refused one costs it no round trip, and none is begun when every one is refused.
      const outcomes = await writeAccepted(
        items,
        partial,
        (item, index) => createInput(schema, type, item, new InputCheck(prior.get(index))),
        (inputs) => inTransaction((inner) => many(inner, inputs, { partial })),
      );
      return { results: outcomes.map((outcome, index) => ('record' in outcome ? { index, status: 201, record: outcome.record } : refusedItem(index, outcome.refused))) };
    }
    return await inTransaction(async (inner) => {
      const results: ItemResult[] = [];
      for (const [index, item] of items.entries()) results.push({ ...(await runItem(inner, schema, type, item)), index });
      return { results };
    });
  } catch {
    // Named by the caller, item by item (a fault of the database's, such as an unavailable one, recurs there).
    return undefined;
  }
}

/** An item's failure as its result (a failure of the service's is thrown on). */
function refusedItem(index: number, error: unknown): ItemResult {
  const { status, ...described } = itemError(error);
  return { index, status, error: described };
}

/**
 * Runs the items in one transaction, each in a savepoint of its own. Atomic: any failure
 * undoes every item (a 4xx naming `items[i].<field>`); partial: a failed item is undone
 * alone and answered with its error.
 */
async function runItemByItem(ctx: Context, schema: GraphQLSchema, type: ResourceType, items: readonly BatchItem[], mode: 'atomic' | 'partial', prior: Map<number, FieldError[]>): Promise<{ results: ItemResult[] }> {
  const results: ItemResult[] = [];
  const failure = Symbol('atomic batch failed');
  try {
    await ctx.prisma.$transaction(async (tx) => {
      const inner = { ...ctx, prisma: nestedClient(tx) };
      await nameRequest(inner.prisma, ctx.requestId);
      for (const [index, item] of items.entries()) {
        try {
          // Each item's write is a savepoint of its own (nestedClient): a fault undoes it alone.
          const result = await runItem({ ...inner, inputErrors: prior.get(index) ?? [] }, schema, type, item);
          results.push({ ...result, index });
        } catch (error) {
          results.push(refusedItem(index, error));
        }
      }
      if (mode === 'atomic' && results.some((result) => result.error)) throw failure;
    }, { timeout: 60_000 });
  } catch (error) {
    if (error !== failure) throw error;
    const failed = results.filter((result) => result.error);
    const first = failed[0]!.error!;
    throw apiError(first.code as never, `${failed.length} of ${items.length} items failed; nothing was written (items ${failed.map((r) => r.index).join(', ')}). First: ${first.message}`, {
      errors: failed.flatMap((result) => (result.error!.errors.length > 0 ? result.error!.errors.map((e) => ({ param: `items[${result.index}].${e.param}`, message: e.message })) : [{ param: `items[${result.index}]`, message: result.error!.message }])),
    });
  }
  return { results };
}

// Read from the registry when the schema is built (every resource has registered by then).
builder.mutationFields((t) =>
  Object.fromEntries(
    registeredResources()
      .filter((resource) => writeOf(`create${resource.type}`))
      .flatMap((resource) => {
        const { type, path, write } = resource;
        const Result = builder.objectRef<ItemResult>(`${type}BatchItemResult`).implement({
          fields: (r) => ({
            index: r.exposeInt('index', { description: "The item's position in `items`, from 0." }),
            status: r.exposeInt('status', { description: 'The HTTP status its single call would answer: 201 created, 200 updated, 204 deleted, or the error\'s.' }),
            record: r.field({ type: type as never, nullable: true, resolve: (result) => result.record as never }),
            error: r.field({ type: BatchError, nullable: true, resolve: (result) => result.error ?? null }),
          }),
        });
        const Results = builder.objectRef<{ results: ItemResult[] }>(`${type}BatchResult`).implement({
          fields: (r) => ({ results: r.field({ type: [Result], resolve: (batch) => batch.results }) }),
        });
        return [
          [
            `upsert${type}`,
            t.prismaField({
              type,
              nullable: true,
              description: `Creates ${delegateName(type)} holding \`externalId\` (1 to ${MAX_EXTERNAL_ID} characters), or updates the live one that holds it with the same input (what only a create sets stays). Concurrent upserts of one external id make one record. A created record is at version 1.`,
              authScopes: { scope: write },
              extensions: restExtension({ path, kind: 'upsert' }),
              args: {
                externalId: t.arg.string({ required: true }),
                input: t.arg({ type: `Create${type}Input` as never, required: true }),
              },
              resolve: async (query, _root, args, ctx, info) => (await upsert(ctx, info.schema, type, String(args.externalId), args.input as Record<string, unknown>, query)).record as never,
            }),
          ],
          [
            `batch${type}s`,
            t.field({
              type: Results,
              nullable: true,
              description: `Up to ${MAX_BATCH} writes of ${path} in one transaction: atomic (all or none) by default, or partial (each on its own).`,
              authScopes: { scope: write },
              extensions: restExtension({ path, kind: 'batch' }),
              args: {
                items: t.arg({ type: [BatchItemInput], required: true }),
                mode: t.arg({ type: BatchMode, defaultValue: 'atomic' }),
              },
              resolve: (_root, args, ctx, info) => runBatch(ctx, info.schema, type, args.items as BatchItem[], (args.mode ?? 'atomic') as 'atomic' | 'partial'),
            }),
          ],
        ];
      }),
  ),
);

export const isBatchInput = (type: unknown): type is GraphQLInputObjectType => isInputObjectType(type) && type.name === 'BatchItem';

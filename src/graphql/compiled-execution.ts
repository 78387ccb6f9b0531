// Compiled execution (graphql-jit) for the operations that run over and over: every REST
// route's document and the GraphQL documents clients repeat. A compiled operation skips
// most of the executor's per-field work (argument objects, resolve infos, promise checks),
// which dominated the time of a page of records. A document is compiled once it has run
// HOT_AFTER times: a one-off query would pay more for compiling than it saves.
//
// Not compiled: a document larger than MAX_COMPILED_FIELDS once its fragments are written
// out (compiling it could block the process for seconds), and one that selects a relation beneath a relation (customers' invoices'
// lines). plugin-prisma finds what its parent query already loaded by the identity of the
// resolve info's path links, which graphql-js shares between a field and its children and
// graphql-jit builds afresh for every call: compiled, the inner relation was loaded again by
// a second statement (and the nested page cost 2.3x the CPU of the standard executor).
import { useGraphQlJit } from '@envelop/graphql-jit';
import {
  execute,
  getNamedType,
  isCompositeType,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  Kind,
  typeFromAST,
  type DocumentNode,
  type GraphQLCompositeType,
  type GraphQLNamedType,
  type GraphQLSchema,
  type NamedTypeNode,
  type SelectionSetNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from '../logger.js';
import { fragmentsOf } from './query-bounds.js';

const HOT_AFTER = 3;
const NEVER = -1;
/**
 * graphql-jit writes code for every field as the document reads once its fragments are
 * expanded, so its cost follows that expanded size, which fragments spreading each other
 * can double per level (1.5 KB: 2^40 fields) while the executor and the query bounds,
 * which visit each fragment once, stay linear. Above this many, a document runs uncompiled.
 */
export const MAX_COMPILED_FIELDS = 1000;

/** How many fields the document's operations hold with every fragment spread written out (capped just above the bound). */
export function expandedFieldCount(document: DocumentNode): number {
  const fragments = fragmentsOf(document);
  const sizes = new Map<string, number>();
  const cap = (n: number) => Math.min(n, MAX_COMPILED_FIELDS + 1);
  const count = (set: SelectionSetNode): number =>
    cap(
      set.selections.reduce((sum, selection) => {
        if (selection.kind === Kind.FIELD) return sum + 1 + (selection.selectionSet ? count(selection.selectionSet) : 0);
        if (selection.kind === Kind.INLINE_FRAGMENT) return sum + count(selection.selectionSet);
        return sum + spread(selection.name.value);
      }, 0),
    );
  const spread = (name: string): number => {
    const known = sizes.get(name);
    if (known !== undefined) return known;
    const fragment = fragments[name];
    sizes.set(name, 0); // a cycle (invalid anyway) counts nothing
    const size = fragment ? count(fragment.selectionSet) : 0;
    sizes.set(name, size);
    return size;
  };
  return cap(document.definitions.reduce((sum, d) => sum + (d.kind === Kind.OPERATION_DEFINITION ? count(d.selectionSet) : 0), 0));
}

/** Whether the document selects a Prisma relation field beneath another (fragments included). */
export function selectsNestedRelations(schema: GraphQLSchema, document: DocumentNode): boolean {
  const fragments = fragmentsOf(document);
  const seen = new Set<string>();
  const walk = (set: SelectionSetNode, parent: GraphQLCompositeType, underRelation: boolean): boolean =>
    set.selections.some((selection) => {
      if (selection.kind === Kind.FIELD) {
        const field = isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[selection.name.value] : undefined;
        if (!field || !selection.selectionSet) return false;
        const relation = Boolean(field.extensions.pothosPrismaRelationField);
        if (relation && underRelation) return true;
        const type = getNamedType(field.type);
        return isCompositeType(type) && walk(selection.selectionSet, type, underRelation || relation);
      }
      const fragment = selection.kind === Kind.FRAGMENT_SPREAD ? fragments[selection.name.value] : undefined;
      const condition = selection.kind === Kind.INLINE_FRAGMENT ? selection.typeCondition : fragment?.typeCondition;
      const type = condition ? schema.getType(condition.name.value) : parent;
      if (!isCompositeType(type)) return false;
      if (selection.kind === Kind.INLINE_FRAGMENT) return walk(selection.selectionSet, type, underRelation);
      // Each named fragment once per place kind (a valid document has no fragment cycles).
      const key = `${selection.name.value}:${underRelation}`;
      if (!fragment || seen.has(key)) return false;
      seen.add(key);
      return walk(fragment.selectionSet, type, underRelation);
    });
  return document.definitions.some((d) => {
    if (d.kind !== Kind.OPERATION_DEFINITION) return false;
    const root = d.operation === 'mutation' ? schema.getMutationType() : d.operation === 'query' ? schema.getQueryType() : schema.getSubscriptionType();
    return root ? walk(d.selectionSet, root, false) : false;
  });
}

/** Whether an input type reaches itself through its fields. */
function isRecursiveInput(type: GraphQLNamedType, path: Set<string> = new Set()): boolean {
  if (!isInputObjectType(type)) return false;
  if (path.has(type.name)) return true;
  path.add(type.name);
  const recursive = Object.values(type.getFields()).some((field) => isRecursiveInput(getNamedType(field.type), path));
  path.delete(type.name);
  return recursive;
}

/**
 * Whether a variable of the document has a recursive input type: graphql-jit writes out
 * the coercion of a variable's whole type, and never ends on one that contains itself.
 * The schema declares none (relation filters take `<Type>RelatedWhere`); this keeps one
 * added later from hanging the process.
 */
export function declaresRecursiveInput(schema: GraphQLSchema, document: DocumentNode): boolean {
  return document.definitions.some(
    (d) => d.kind === Kind.OPERATION_DEFINITION && (d.variableDefinitions ?? []).some((v) => {
      const type = typeFromAST(schema, v.type as NamedTypeNode);
      return !!type && isRecursiveInput(getNamedType(type));
    }),
  );
}

export function useCompiledExecution(log: Logger): Plugin {
  // Runs so far, keyed by the parsed document, which yoga's parser cache (and the REST route
  // table) reuse; NEVER for a document decided, at first sight, to stay uncompiled.
  const runs = new WeakMap<DocumentNode, number>();
  return useGraphQlJit(
    {},
    {
      // Variables that do not coerce never get here: the query bounds refuse them first, with
      // graphql-js's own errors (graphql-jit would report them in a shape of its own).
      enableIf: ({ document, schema }) => {
        let count = runs.get(document);
        if (count === undefined) {
          // Subscriptions stream from the standard executor.
          const subscription = document.definitions.some((d) => d.kind === Kind.OPERATION_DEFINITION && d.operation === 'subscription');
          count = subscription || expandedFieldCount(document) > MAX_COMPILED_FIELDS || selectsNestedRelations(schema, document) || declaresRecursiveInput(schema, document) ? NEVER : 0;
          runs.set(document, count);
        }
        if (count === NEVER) return false;
        // Counted until the document is hot: no write per request after that.
        if (count <= HOT_AFTER) runs.set(document, ++count);
        return count > HOT_AFTER;
      },
      // The plugin then keeps the standard executor for this document.
      onError: (result) => log.warn('graphql-jit could not compile an operation', { errors: result.errors?.map((e) => e.message) }),
    },
  ) as Plugin;
}

/**
 * graphql-js's own executor for documents not (yet) compiled. yoga's default executor
 * (@graphql-tools/executor) builds each object in the order its fields resolve, so a
 * response's key order changed with timing; graphql-js keeps the selection order, as the
 * spec asks and as compiled documents do.
 */
export function useStandardExecution(): Plugin {
  return {
    onExecute({ setExecuteFn }) {
      setExecuteFn(execute);
    },
  };
}

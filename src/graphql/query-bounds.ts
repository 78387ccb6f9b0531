// Bounds on what one GraphQL request may ask for, checked before execution: nesting depth,
// the number of root fields and aliases, and a cost that multiplies list sizes (`limit`)
// through nesting, and long text fields by their weight, so one request cannot do the work
// (or build the response) of thousands. The check is linear in
// the document: each named fragment is measured once per place kind it is spread in.
import {
  getNamedType,
  getNullableType,
  getOperationAST,
  getVariableValues,
  isListType,
  isAbstractType,
  isInterfaceType,
  isObjectType,
  Kind,
  Lexer,
  parse,
  Source,
  TokenKind,
  valueFromAST,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLError,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { apiError } from '../errors.js';

export const QUERY_BOUNDS = { maxDepth: 8, maxRootFields: 10, maxAliases: 30, maxCost: 25_000, maxTokens: 10_000, maxNesting: 100 };

const OPENING = new Set<string>([TokenKind.BRACE_L, TokenKind.BRACKET_L, TokenKind.PAREN_L]);
const CLOSING = new Set<string>([TokenKind.BRACE_R, TokenKind.BRACKET_R, TokenKind.PAREN_R]);

/**
 * How deep `{`, `[` and `(` nest, read by the lexer (no recursion), over at most maxTokens
 * tokens. A document the lexer refuses counts 0: the parser reports its syntax error.
 */
export function nestingDepth(text: string): number {
  const lexer = new Lexer(new Source(text));
  let depth = 0;
  let deepest = 0;
  try {
    for (let n = 0, token = lexer.advance(); token.kind !== TokenKind.EOF && n < QUERY_BOUNDS.maxTokens; n++, token = lexer.advance()) {
      if (OPENING.has(token.kind)) deepest = Math.max(deepest, ++depth);
      else if (CLOSING.has(token.kind)) depth--;
    }
  } catch {
    return 0;
  }
  return deepest;
}
/** The size counted for a list without a `limit` (line items, summaries): its maximum. */
export const UNBOUNDED_LIST_SIZE = 100;

/** A selection set's measure, relative to where it stands and at a multiplier of 1. */
interface Measure {
  depth: number;
  aliases: number;
  cost: number;
}

class Measurer {
  private readonly memo = new Map<string, Measure>();
  private readonly inProgress = new Set<string>();

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly fragments: Record<string, FragmentDefinitionNode>,
    private readonly variables: Record<string, unknown>,
  ) {}

  measure(selectionSet: SelectionSetNode, parent: GraphQLCompositeType, pendingLimit: number | undefined): Measure {
    const total: Measure = { depth: 1, aliases: 0, cost: 0 };
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        if (selection.alias) total.aliases++;
        const field = isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[selection.name.value] : undefined;
        // A long text field counts as the records its size is worth (`extensions.cost`).
        total.cost += Number(field?.extensions.cost ?? 0);
        if (!field || !selection.selectionSet) continue;
        // A `limit` argument sizes the list at or directly under its field (a page's `data`).
        const limitArg = field.args.find((a) => a.name === 'limit');
        const node = selection.arguments?.find((a) => a.name.value === 'limit');
        const raw = limitArg ? ((node ? valueFromAST(node.value, limitArg.type, this.variables) : undefined) ?? limitArg.defaultValue) : undefined;
        const limit = typeof raw === 'number' && raw > 0 ? raw : undefined;
        const named = getNamedType(field.type);
        if (!isObjectType(named) && !isAbstractType(named)) continue;
        const list = isListType(getNullableType(field.type));
        const child = this.measure(selection.selectionSet, named as GraphQLCompositeType, list ? undefined : limit);
        const size = list ? (limit ?? pendingLimit ?? UNBOUNDED_LIST_SIZE) : 1;
        total.cost += list ? size + size * child.cost : child.cost;
        total.aliases += child.aliases;
        total.depth = Math.max(total.depth, child.depth + 1);
      } else {
        const name = selection.kind === Kind.FRAGMENT_SPREAD ? selection.name.value : undefined;
        const fragment = name ? this.fragments[name] : undefined;
        const set = selection.kind === Kind.INLINE_FRAGMENT ? selection.selectionSet : fragment?.selectionSet;
        if (!set) continue;
        const typeName = selection.kind === Kind.INLINE_FRAGMENT ? selection.typeCondition?.name.value : fragment?.typeCondition.name.value;
        const type = ((typeName ? this.schema.getType(typeName) : parent) as GraphQLCompositeType | undefined) ?? parent;
        const part = name ? this.spread(name, set, type, pendingLimit) : this.measure(set, type, pendingLimit);
        total.cost += part.cost;
        total.aliases += part.aliases;
        total.depth = Math.max(total.depth, part.depth);
      }
    }
    return total;
  }

  /** A named fragment, measured once per (fragment, type, pending limit). */
  private spread(name: string, set: SelectionSetNode, type: GraphQLCompositeType, pendingLimit: number | undefined): Measure {
    const key = `${name}\u0000${type.name}\u0000${pendingLimit ?? ''}`;
    const known = this.memo.get(key);
    if (known) return known;
    // A fragment cycle is a validation error anyway; never loop on it.
    if (this.inProgress.has(key)) return { depth: 0, aliases: 0, cost: 0 };
    this.inProgress.add(key);
    const measured = this.measure(set, type, pendingLimit);
    this.inProgress.delete(key);
    this.memo.set(key, measured);
    return measured;
  }
}

export function fragmentsOf(document: DocumentNode): Record<string, FragmentDefinitionNode> {
  const fragments: Record<string, FragmentDefinitionNode> = {};
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments[d.name.value] = d;
  return fragments;
}

/**
 * The response keys execution will run at the operation's root, through inline fragments
 * and fragment spreads (fields with one key run once).
 */
export function rootFieldKeys(document: DocumentNode, operation: OperationDefinitionNode): Set<string> {
  // Asked for by the bounds and by the rate charge, of documents the caches reuse: once each.
  const known = rootKeysOf.get(operation);
  if (known) return known;
  const fragments = fragmentsOf(document);
  const keys = new Set<string>();
  const seen = new Set<string>();
  const collect = (set: SelectionSetNode) => {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) keys.add(selection.alias?.value ?? selection.name.value);
      else if (selection.kind === Kind.INLINE_FRAGMENT) collect(selection.selectionSet);
      else if (!seen.has(selection.name.value) && fragments[selection.name.value]) {
        seen.add(selection.name.value);
        collect(fragments[selection.name.value]!.selectionSet);
      }
    }
  };
  collect(operation.selectionSet);
  rootKeysOf.set(operation, keys);
  return keys;
}

const rootKeysOf = new WeakMap<OperationDefinitionNode, Set<string>>();

/**
 * Why the operation may not run: graphql-js's own errors for variables that do not coerce
 * (refused here, so neither executor ever sees them and both answer alike), or a bound it
 * passes. Null when it may run.
 */
export function checkQueryBounds(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  rawVariables: Record<string, unknown>,
): readonly GraphQLError[] | string | null {
  const operation = getOperationAST(document, operationName);
  if (!operation) return null;
  const root = operation.operation === 'mutation' ? schema.getMutationType() : schema.getQueryType();
  if (!root) return null;
  const rootFields = rootFieldKeys(document, operation).size;
  if (rootFields > QUERY_BOUNDS.maxRootFields) return `The operation has ${rootFields} root fields; at most ${QUERY_BOUNDS.maxRootFields} are allowed.`;
  // Sizes from the variables as execution will see them, operation defaults included.
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], rawVariables);
  if (coerced.errors) return coerced.errors;
  const total = new Measurer(schema, fragmentsOf(document), coerced.coerced).measure(operation.selectionSet, root, undefined);
  if (total.depth > QUERY_BOUNDS.maxDepth) return `The operation nests ${total.depth} levels deep; at most ${QUERY_BOUNDS.maxDepth} are allowed.`;
  if (total.aliases > QUERY_BOUNDS.maxAliases) return `The operation uses ${total.aliases} aliases; at most ${QUERY_BOUNDS.maxAliases} are allowed.`;
  if (total.cost > QUERY_BOUNDS.maxCost) {
    return `The operation could load about ${total.cost} records; at most ${QUERY_BOUNDS.maxCost} are allowed. Ask for smaller pages (limit) or fewer nested lists.`;
  }
  return null;
}

export function useQueryBounds(): Plugin {
  return {
    // A huge document (a megabyte of list literal) is refused while it is parsed, not after.
    onParse({ setParseFn }) {
      setParseFn((source, options) => {
        // The parser recurses once per level: a 4 KB list literal 2,000 deep overflowed its stack.
        const depth = nestingDepth(typeof source === 'string' ? source : source.body);
        if (depth > QUERY_BOUNDS.maxNesting) throw apiError('BAD_REQUEST', `The document nests brackets ${depth} levels deep; at most ${QUERY_BOUNDS.maxNesting} are allowed.`);
        return parse(source, { ...options, maxTokens: QUERY_BOUNDS.maxTokens });
      });
    },
    onExecute({ args, setResultAndStopExecution }) {
      const refusal = checkQueryBounds(args.schema, args.document, args.operationName, (args.variableValues ?? {}) as Record<string, unknown>);
      if (typeof refusal === 'string') setResultAndStopExecution({ errors: [apiError('BAD_REQUEST', refusal)] });
      else if (refusal) setResultAndStopExecution({ errors: refusal });
    },
  };
}

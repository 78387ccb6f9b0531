// Bounds on what one GraphQL request may ask for, checked before execution: nesting depth,
// the number of root fields and aliases, and a cost that multiplies list sizes (`limit`)
// through nesting, so one request cannot do the work of thousands.
import {
  getNamedType,
  getNullableType,
  isListType,
  isAbstractType,
  isInterfaceType,
  isObjectType,
  Kind,
  valueFromAST,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { apiError } from '../errors.js';

export const QUERY_BOUNDS = { maxDepth: 8, maxRootFields: 10, maxAliases: 30, maxCost: 25_000 };

interface Measure {
  depth: number;
  aliases: number;
  cost: number;
}

function measure(
  schema: GraphQLSchema,
  selectionSet: SelectionSetNode,
  parent: GraphQLCompositeType,
  fragments: Record<string, FragmentDefinitionNode>,
  variables: Record<string, unknown>,
  multiplier: number,
  pendingLimit: number | undefined,
  depth: number,
  visited: Set<string>,
  total: Measure,
): void {
  total.depth = Math.max(total.depth, depth);
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      if (selection.alias) total.aliases++;
      const field = isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[selection.name.value] : undefined;
      if (!field || !selection.selectionSet) continue;
      // A `limit` argument sizes the list at or directly under its field (a page's `data`).
      const limitArg = field.args.find((a) => a.name === 'limit');
      const node = selection.arguments?.find((a) => a.name.value === 'limit');
      const raw = limitArg ? (node ? valueFromAST(node.value, limitArg.type, variables) : limitArg.defaultValue) : undefined;
      const limit = typeof raw === 'number' && raw > 0 ? raw : undefined;
      let childMultiplier = multiplier;
      let childLimit = limit;
      if (isListType(getNullableType(field.type))) {
        const size = limit ?? pendingLimit ?? 1;
        total.cost += multiplier * size;
        childMultiplier = multiplier * size;
        childLimit = undefined;
      }
      const named = getNamedType(field.type);
      if (isObjectType(named) || isAbstractType(named)) {
        measure(schema, selection.selectionSet, named as GraphQLCompositeType, fragments, variables, childMultiplier, childLimit, depth + 1, visited, total);
      }
    } else {
      const set = selection.kind === Kind.INLINE_FRAGMENT ? selection.selectionSet : fragments[selection.name.value]?.selectionSet;
      if (!set) continue;
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        // A fragment cycle is a validation error anyway; never loop on it.
        if (visited.has(selection.name.value)) continue;
        visited = new Set(visited).add(selection.name.value);
      }
      const typeName = selection.kind === Kind.INLINE_FRAGMENT ? selection.typeCondition?.name.value : fragments[selection.name.value]?.typeCondition.name.value;
      const type = (typeName ? schema.getType(typeName) : parent) as GraphQLCompositeType | undefined;
      measure(schema, set, type ?? parent, fragments, variables, multiplier, pendingLimit, depth, visited, total);
    }
  }
}

export function checkQueryBounds(schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined, variables: Record<string, unknown>): string | null {
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const operation = operations.find((o) => !operationName || o.name?.value === operationName) ?? operations[0];
  if (!operation) return null;
  const fragments = Object.fromEntries(
    document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((f) => [f.name.value, f]),
  );
  const root = operation.operation === 'mutation' ? schema.getMutationType() : schema.getQueryType();
  if (!root) return null;
  const rootFields = operation.selectionSet.selections.length;
  if (rootFields > QUERY_BOUNDS.maxRootFields) return `The operation has ${rootFields} root fields; at most ${QUERY_BOUNDS.maxRootFields} are allowed.`;
  const total: Measure = { depth: 0, aliases: 0, cost: 0 };
  measure(schema, operation.selectionSet, root, fragments, variables, 1, undefined, 1, new Set(), total);
  if (total.depth > QUERY_BOUNDS.maxDepth) return `The operation nests ${total.depth} levels deep; at most ${QUERY_BOUNDS.maxDepth} are allowed.`;
  if (total.aliases > QUERY_BOUNDS.maxAliases) return `The operation uses ${total.aliases} aliases; at most ${QUERY_BOUNDS.maxAliases} are allowed.`;
  if (total.cost > QUERY_BOUNDS.maxCost) {
    return `The operation could load about ${total.cost} records; at most ${QUERY_BOUNDS.maxCost} are allowed. Ask for smaller pages (limit) or fewer nested lists.`;
  }
  return null;
}

export function useQueryBounds(): Plugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const refusal = checkQueryBounds(args.schema, args.document, args.operationName, (args.variableValues ?? {}) as Record<string, unknown>);
      if (refusal) setResultAndStopExecution({ errors: [apiError('BAD_REQUEST', refusal)] });
    },
  };
}

// How a GraphQL request counts against its key's rate limit: one unit per root field (the
// first was counted when the request was admitted), so aliasing many root fields into one
// request cannot multiply a key's allowance. A REST request runs one root field: one unit.
// A batch counts one unit per ten items (100 items: 10 units), a tenth of single calls; an
// import one unit per thousand rows (100,000 rows: 100 units).
import { getOperationAST, Kind, type DocumentNode, type OperationDefinitionNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Admission } from '../auth/admission.js';
import { apiError } from '../errors.js';
import { rateLimitHeaders, type RateLimiter } from '../rate-limit.js';
import { rootFieldKeys } from './query-bounds.js';

export function useRateLimitCharge(rateLimiter: RateLimiter): Plugin<{ admission: Admission }> {
  return {
    async onExecute({ args, setResultAndStopExecution }) {
      const admission = (args.contextValue as { admission: Admission }).admission;
      const document = args.document as DocumentNode;
      const operation = getOperationAST(document, args.operationName);
      // Fields wrapped in fragments run, so they count too.
      const extra = (operation ? rootFieldKeys(document, operation).size + batchUnits(operation, args.variableValues) + importUnits(operation, args.variableValues) : 1) - 1;
      if (extra <= 0) return;
      admission.rate = await rateLimiter.consume(`key:${admission.auth.keyId}`, extra);
      if (admission.rate.limited) {
        setResultAndStopExecution({
          errors: [
            apiError('RATE_LIMITED', `Rate limit of ${admission.rate.limit} requests per window exceeded (this operation counts ${extra + 1}).`, {
              headers: rateLimitHeaders(admission.rate),
            }),
          ],
        });
      }
    },
  };
}

export const ITEMS_PER_UNIT = 10;

/** The units a batch's items add to its own: one per ten items after the first ten. */
function batchUnits(operation: OperationDefinitionNode, variables: Record<string, unknown> | null | undefined): number {
  let units = 0;
  for (const selection of operation.selectionSet.selections) {
    if (selection.kind !== Kind.FIELD || !/^batch[A-Z]/.test(selection.name.value)) continue;
    const items = selection.arguments?.find((argument) => argument.name.value === 'items')?.value;
    const given = items?.kind === Kind.VARIABLE ? variables?.[items.name.value] : undefined;
    const count = items?.kind === Kind.LIST ? items.values.length : Array.isArray(given) ? given.length : 1;
    units += Math.ceil(Math.min(Math.max(count, 1), 100) / ITEMS_PER_UNIT) - 1;
  }
  return units;
}

export const ROWS_PER_UNIT = 1000;

/** The units an import's rows add to its own: one per thousand rows after the first thousand. */
function importUnits(operation: OperationDefinitionNode, variables: Record<string, unknown> | null | undefined): number {
  let units = 0;
  for (const selection of operation.selectionSet.selections) {
    if (selection.kind !== Kind.FIELD || selection.name.value !== 'createImport') continue;
    const csv = selection.arguments?.find((argument) => argument.name.value === 'csv')?.value;
    const text = csv?.kind === Kind.STRING ? csv.value : csv?.kind === Kind.VARIABLE ? variables?.[csv.name.value] : undefined;
    // Lines, less the header: what the import will count as rows, near enough to charge by.
    const rows = typeof text === 'string' ? Math.max((text.match(/\n/g)?.length ?? 0) - 1, 1) : 1;
    units += Math.ceil(rows / ROWS_PER_UNIT) - 1;
  }
  return units;
}

// REST operations are fixed documents, parsed when the route table is built, executed on
// the same envelop pipeline /graphql uses (context, query bounds, rate units, scopes, error
// policy) without a detour through an HTTP request and its JSON.
import type { ExecutionResult } from 'graphql';
import { invalidInput, type FieldError } from '../errors.js';
import { safeError } from '../graphql/error-policy.js';
import type { GraphQLServer, ServerContext } from '../graphql/yoga.js';
import type { Logger } from '../logger.js';
import type { Execute } from './handler.js';

/** Refusals a malformed body comes before, as every input check runs before the record is read. */
const BEFORE_RECORD = new Set(['BAD_REQUEST', 'NOT_FOUND', 'CONFLICT', 'PRECONDITION_FAILED']);

/**
 * The answer to an operation run with a body's faults: the 400 naming them, with the
 * operation's own faults where it found some. A refusal of the key (403), the rate or the
 * database stands.
 */
function withBodyFaults(result: ExecutionResult<{ result: unknown } | null>, faults: FieldError[]): ExecutionResult<{ result: unknown } | null> {
  const refusal = result.errors?.[0];
  if (refusal && !BEFORE_RECORD.has(String(refusal.extensions?.code))) return result;
  const own = (refusal?.extensions?.errors as FieldError[] | undefined) ?? [];
  return { errors: [invalidInput([...faults, ...own.filter((fault) => !faults.some((body) => body.param === fault.param))])] };
}

export function routeExecutor(yoga: GraphQLServer, log: Logger, request: Request, serverContext: ServerContext): Execute {
  return async (route, variables, inputErrors) => {
    // A body's faults (unknown or mistyped fields) make the answer a 400 whatever the
    // operation does. It still runs, to name its own faults beside them, but as a dry run: an
    // operation that forgot them (ctx.inputErrors) cannot write what the client did not mean.
    // A batch's are its items' (a partial batch writes the others): schema/bulk.ts judges them.
    const faulty = route.kind !== 'batch' && inputErrors !== undefined && inputErrors.length > 0;
    const context = { ...serverContext, inputErrors, dryRun: serverContext.dryRun || faulty };
    const enveloped = yoga.getEnveloped({ ...context, request, params: { query: route.document, variables } });
    try {
      const contextValue = await enveloped.contextFactory();
      const result = (await enveloped.execute({ schema: enveloped.schema, document: route.parsed, contextValue, variableValues: variables })) as ExecutionResult<{ result: unknown } | null>;
      return faulty ? withBodyFaults(result, inputErrors) : result;
    } catch (error) {
      return { errors: [safeError(error, log, serverContext.requestId)] };
    }
  };
}

// REST operations are fixed documents, parsed when the route table is built, executed on
// the same envelop pipeline /graphql uses (context, query bounds, rate units, scopes, error
// policy) without a detour through an HTTP request and its JSON.
import type { ExecutionResult } from 'graphql';
import { safeError } from '../graphql/error-policy.js';
import type { GraphQLServer, ServerContext } from '../graphql/yoga.js';
import type { Logger } from '../logger.js';
import type { Execute } from './handler.js';

export function routeExecutor(yoga: GraphQLServer, log: Logger, request: Request, serverContext: ServerContext): Execute {
  return async (route, variables, inputErrors) => {
    const context = { ...serverContext, inputErrors };
    const enveloped = yoga.getEnveloped({ ...context, request, params: { query: route.document, variables } });
    try {
      const contextValue = await enveloped.contextFactory();
      const result = await enveloped.execute({ schema: enveloped.schema, document: route.parsed, contextValue, variableValues: variables });
      return result as ExecutionResult<{ result: unknown } | null>;
    } catch (error) {
      return { errors: [safeError(error, log, serverContext.requestId)] };
    }
  };
}

// Compiled execution (graphql-jit) for the operations that run over and over: every REST
// route's document and the GraphQL documents clients repeat. A compiled operation skips
// most of the executor's per-field work (argument objects, resolve infos, promise checks),
// which dominated the time of a page of records. A document is compiled once it has run
// HOT_AFTER times: a one-off query would pay more for compiling than it saves.
import { useGraphQlJit } from '@envelop/graphql-jit';
import { execute, Kind, type DocumentNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from '../logger.js';

const HOT_AFTER = 3;

export function useCompiledExecution(log: Logger): Plugin {
  // Keyed by the parsed document, which yoga's parser cache (and the REST route table) reuse.
  const runs = new WeakMap<DocumentNode, number>();
  return useGraphQlJit(
    {},
    {
      // Variables that do not coerce never get here: the query bounds refuse them first, with
      // graphql-js's own errors (graphql-jit would report them in a shape of its own).
      enableIf: ({ document }) => {
        // Subscriptions stream from the standard executor.
        if (document.definitions.some((d) => d.kind === Kind.OPERATION_DEFINITION && d.operation === 'subscription')) return false;
        const count = (runs.get(document) ?? 0) + 1;
        if (count <= HOT_AFTER) runs.set(document, count);
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

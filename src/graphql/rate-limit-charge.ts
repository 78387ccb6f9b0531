// How a GraphQL request counts against its key's rate limit: one unit per root field (the
// first was counted when the request was admitted), so aliasing many root fields into one
// request cannot multiply a key's allowance. A REST request runs one root field: one unit.
import { getOperationAST, type DocumentNode } from 'graphql';
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
      const extra = (operation ? rootFieldKeys(document, operation).size : 1) - 1;
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

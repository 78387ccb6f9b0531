// Admission, for REST and GraphQL alike: the API key is authenticated, then counted against
// its own allowance. Requests that fail authentication are counted per client address, so
// a flood of bad keys from behind a shared proxy never refuses the valid keys behind it.
import type { GraphQLError } from 'graphql';
import type { Admission } from '../context.js';
import { apiError } from '../errors.js';
import { safeError } from '../graphql/error-policy.js';
import type { Fields, Logger } from '../logger.js';
import { rateLimitHeaders, type RateLimiter } from '../rate-limit.js';
import type { Response } from '../http/fetch.js';
import type { Authenticator, Auth } from './authenticate.js';

// The type lives with the request's context, which carries it (and which the error policy reads).
export type { Admission } from '../context.js';

/** Admits a request, or throws the refusal (a coded GraphQLError) for the surface to render. */
export type Admit = (request: Request, requestId: string, clientAddress: string, logFields: Fields) => Promise<Admission>;

export function createAdmission(authenticate: Authenticator, rateLimiter: RateLimiter, log: Logger): Admit {
  return async (request, requestId, clientAddress, logFields) => {
    let refusal: GraphQLError | undefined;
    try {
      let auth: Auth | undefined;
      try {
        auth = await authenticate(request.headers.get('authorization'));
      } catch (error) {
        const anonymous = await rateLimiter.consume(`address:${clientAddress}`);
        refusal = anonymous.limited
          ? apiError('RATE_LIMITED', 'Too many requests without a valid API key from this address.', { headers: rateLimitHeaders(anonymous) })
          : safeError(error, log, requestId);
      }
      if (auth) {
        logFields.organization_id = auth.organizationId;
        logFields.key_prefix = auth.keyPrefix;
        const rate = await rateLimiter.consume(`key:${auth.keyId}`);
        if (!rate.limited) return { auth, rate };
        refusal = apiError('RATE_LIMITED', `Rate limit of ${rate.limit} requests per window exceeded; retry in ${rate.resetSeconds} s.`, { headers: rateLimitHeaders(rate) });
      }
    } catch (error) {
      refusal = safeError(error, log, requestId);
    }
    throw refusal;
  };
}

/** Every authenticated response says where its key stands (the latest count, after any extra units). */
export function withRateHeaders(response: Response, admission: Admission): Response {
  for (const [name, value] of Object.entries(rateLimitHeaders(admission.rate))) response.headers.set(name, value);
  return response;
}

// Idempotent writes (creates, updates, deletes, transitions): a request with an
// Idempotency-Key header runs once per API key and Idempotency-Key; a retry with the same
// key and the same request gets the first response again (with Idempotent-Replayed: true)
// and changes nothing. The same key with a different request is refused (400), and a retry
// that arrives while the first is still running gets 409 with Retry-After (retry shortly to
// receive the first response). When the first request ends, its key records how
// (http/idempotency-outcome.ts): its answer, or nothing when it changed nothing (a retry
// runs again at once). A server error is not taken for "nothing": the event log says
// whether the request committed, and a key whose request did is answered with that, never
// run twice. A request whose outcome cannot be learnt yet (the database went away) answers
// 503 saying so, and its key is settled as soon as the database answers. A first request
// that never finished (its process died) may or may not have taken effect: after five
// minutes its retries get a final 409 saying so. Keys are kept for 24 hours, then purged.
import { createHash } from 'node:crypto';
import type { PrismaClient } from '../generated/prisma/client.js';
import { getOperationAST, parse, type GraphQLError } from 'graphql';
import { apiError } from '../errors.js';
import { isDatabaseUnreachable } from '../graphql/error-policy.js';
import type { Logger } from '../logger.js';
import { Request, Response } from './fetch.js';
import { keyOutcomes, type Answer, type Asked, type Claim, type Outcome } from './idempotency-outcome.js';
import { readBody } from './read-body.js';
import { SEALED, type SecretBox } from '../webhooks/secrets.js';
import { runNowAndEvery } from '../background-loop.js';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** A 204 or 304 has no body, not even an empty one. */
const bodyOf = (status: number, body: string | null) => (status === 204 || status === 304 ? null : body);
const TTL_MS = 24 * 3_600_000;
// A first request that has not finished after this long died with its process.
const ABANDONED_MS = 5 * 60_000;
const PURGE_EVERY_MS = 3_600_000;
// How long a request waits for its key's outcome to be recorded before answering without.
const SETTLE_WAIT_MS = 1_000;

/** The database could not be asked; nothing this request would do has been done. */
const unavailable = () => apiError('UNAVAILABLE', 'The database is unreachable; retry shortly.', { headers: { 'Retry-After': '5' } });

/** The answer of a request whose outcome could not be learnt before answering. */
function unknownYet(): GraphQLError {
  return apiError(
    'UNAVAILABLE',
    'The database became unreachable before this request was known to have taken effect or not. Retry with the same Idempotency-Key: the retry answers what this request did, or runs it if it did nothing.',
    { headers: { 'Retry-After': '2' } },
  );
}

/** Runs a step that only reads or claims: a database outage is a 503 rather than a 500. */
async function orUnavailable<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (isDatabaseUnreachable(error)) throw unavailable();
    throw error;
  }
}

/** The caller of a guarded write: its API key, and the request's id (which its changes' events carry). */
export interface Caller {
  organizationId: string;
  keyId: string;
  requestId?: string;
}

// A request id as server.ts accepts a client's own (http/request-id.ts).
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The request's id: the caller's, else the one a problem document names, else the client's
 * own X-Request-Id (which the server adopts when it is sane).
 */
function requestIdOf(caller: Caller, request: Request, answer?: Answer): string | undefined {
  if (caller.requestId) return caller.requestId;
  if (answer?.contentType === 'application/problem+json' && answer.body) {
    try {
      const id = (JSON.parse(answer.body) as { request_id?: unknown }).request_id;
      if (typeof id === 'string' && id) return id;
    } catch {
      // not a problem document after all
    }
  }
  const own = request.headers.get('x-request-id');
  return own && SANE_REQUEST_ID.test(own) ? own : undefined;
}

async function answerOf(response: Response): Promise<Answer> {
  return {
    status: response.status,
    body: bodyOf(response.status, await response.text()),
    contentType: response.headers.get('content-type'),
    location: response.headers.get('location'),
    etag: response.headers.get('etag'),
  };
}

/** A recorded answer as a response; `replayed` when it answers a retry. */
function responseOf(answer: Answer, replayed: boolean, headers?: Headers): Response {
  const out = new Headers(headers);
  if (replayed) out.set('idempotent-replayed', 'true');
  if (answer.contentType) out.set('content-type', answer.contentType);
  if (answer.location) out.set('location', answer.location);
  if (answer.etag) out.set('etag', answer.etag);
  return new Response(bodyOf(answer.status, answer.body), { status: answer.status, headers: out });
}

function idempotencyKeyError(key: string): GraphQLError | null {
  return /^[\x21-\x7e]{1,255}$/.test(key)
    ? null
    : apiError('BAD_REQUEST', 'Invalid Idempotency-Key header.', { errors: [{ param: 'Idempotency-Key', message: 'must be 1 to 255 visible ASCII characters' }] });
}

/** Whether a /graphql request body runs a mutation: queries with the header are not stored. */
export function graphqlRequestWrites(body: string): boolean {
  try {
    const { query, operationName } = JSON.parse(body) as { query?: unknown; operationName?: unknown };
    if (typeof query !== 'string') return false;
    return getOperationAST(parse(query), typeof operationName === 'string' ? operationName : undefined)?.operation === 'mutation';
  } catch {
    return false; // the request fails on its own, storing nothing
  }
}

export function fingerprint(method: string, path: string, body: string): string {
  return createHash('sha256').update(`${method}\n${path}\n${body}`).digest('hex');
}

/** Purges expired keys now and every hour, in the background, never on a request's path; unref'd. Answers how to stop. */
export function scheduleIdempotencyPurge(prisma: PrismaClient, log: Logger): () => void {
  const purge = () =>
    prisma.idempotencyKey
      .deleteMany({ where: { createdAt: { lt: new Date(Date.now() - TTL_MS) } } })
      .then(({ count }) => count > 0 && log.info('expired idempotency keys purged', { count }))
      .catch((error: Error) => log.warn('idempotency key purge failed', { error: error.message }));
  return runNowAndEvery(PURGE_EVERY_MS, purge);
}

/**
 * `box` keeps stored answers encrypted: an answer may carry a secret shown once (a webhook
 * endpoint's signing secret), which must not lie in the database in the clear.
 */
export function createIdempotency(prisma: PrismaClient, log: Logger, box: () => Promise<SecretBox>) {
  const outcomes = keyOutcomes(prisma, log, box, ABANDONED_MS);
  // Keys whose first request runs on this instance.
  const running = new Set<string>();
  // Claims this instance sent whose answer was lost (their request ended, writing nothing),
  // by key: their creation time. Taking one back may run before its INSERT does (it was still
  // on its way to a loaded database), leaving a row that no request will settle; a retry
  // that meets that row knows it for this and frees the key.
  const lostClaims = new Map<string, number>();

  /** Claims the key for this request; the creation time it stamps tells this claim from any other. */
  async function claim(mine: Claim, print: string): Promise<boolean> {
    const { organizationId, key, claimedAt } = mine;
    const { count } = await prisma.idempotencyKey.createMany({ data: [{ organizationId, key, fingerprint: print, createdAt: claimedAt }], skipDuplicates: true });
    return count === 1;
  }

  /** What a retry gets while the key's first request has not settled. */
  function unsettledAnswer(id: string, createdAt: Date): GraphQLError {
    if (running.has(id) || createdAt.getTime() >= Date.now() - ABANDONED_MS) {
      return apiError('CONFLICT', 'A request with this Idempotency-Key is still in progress; retry shortly.', { headers: { 'Retry-After': '1' } });
    }
    return apiError('CONFLICT', 'The first request with this Idempotency-Key did not finish, so whether it took effect is unknown. Check for its record before sending it again with a new key.');
  }

  /** Answers a retry from the key's record (or throws its refusal), or undefined when the key is free again. */
  async function replay(organizationId: string, key: string, print: string): Promise<Response | undefined> {
    const first = await prisma.idempotencyKey.findUnique({ where: { organizationId_key: { organizationId, key } } });
    if (!first) return undefined;
    if (first.fingerprint !== print) {
      throw apiError('BAD_REQUEST', 'This Idempotency-Key was used with a different request; use a new key for a new request.', {
        errors: [{ param: 'Idempotency-Key', message: 'was already used with a different request' }],
      });
    }
    if (first.status === null) {
      const id = `${organizationId}\n${key}`;
      if (lostClaims.get(id) === first.createdAt.getTime()) {
        await outcomes.release({ organizationId, key, claimedAt: first.createdAt });
        lostClaims.delete(id);
        return undefined;
      }
      throw unsettledAnswer(id, first.createdAt);
    }
    // Answers stored before they were sealed are JSON (they begin with `{`).
    const body = first.body?.startsWith(SEALED) ? (await box()).open(first.body) : first.body;
    return responseOf({ status: first.status, body, contentType: first.contentType, location: first.location, etag: first.etag }, true);
  }

  /**
   * Runs `execute` once for this API key and Idempotency-Key, or answers what the first run
   * answered, or throws the refusal to send.
   */
  async function once(caller: Caller, idempotencyKey: string, print: string, request: Request, rest: Asked['rest'], execute: () => Promise<Response>): Promise<Response> {
    const { organizationId } = caller;
    // One API key's keys are its own: another key of the organization (say, a read-only
    // one) can neither replay nor block them.
    const key = `${caller.keyId}:${idempotencyKey}`;
    const id = `${organizationId}\n${key}`;
    // A first request of this instance that ended without recording its outcome: record it now.
    if ((await outcomes.pending(organizationId, key, SETTLE_WAIT_MS)) === 'unsettled') throw unknownYet();
    for (let attempt = 0; ; attempt++) {
      await orUnavailable(() => prisma.idempotencyKey.deleteMany({ where: { organizationId, key, createdAt: { lt: new Date(Date.now() - TTL_MS) } } }));
      const mine: Claim = { organizationId, key, claimedAt: new Date() };
      let claimed: boolean;
      try {
        claimed = await claim(mine, print);
      } catch (error) {
        if (!isDatabaseUnreachable(error)) throw error;
        // The claim may have been written without this instance hearing so: take it back.
        lostClaims.set(id, mine.claimedAt.getTime());
        setTimeout(() => lostClaims.get(id) === mine.claimedAt.getTime() && lostClaims.delete(id), ABANDONED_MS).unref();
        void outcomes.settle(mine, () => outcomes.release(mine), 0);
        throw unavailable();
      }
      if (claimed) return run(mine, id, caller, request, rest, execute);
      const answer = await orUnavailable(() => replay(organizationId, key, print));
      // The key was released between the claim and the look: claim it again.
      if (answer !== undefined) return answer;
      if (attempt >= 2) throw unavailable();
    }
  }

  /** Runs the first request with a key and records how it ended. */
  async function run(claim: Claim, id: string, caller: Caller, request: Request, rest: Asked['rest'], execute: () => Promise<Response>): Promise<Response> {
    running.add(id);
    // The request counts as running until its outcome is being recorded (retries then wait for that).
    const record = (task: () => Promise<Outcome>) => {
      const recorded = outcomes.settle(claim, task, SETTLE_WAIT_MS);
      running.delete(id);
      return recorded;
    };
    let response: Response | undefined;
    let failure: unknown;
    let answer: Answer | undefined;
    try {
      response = await execute();
      answer = await answerOf(response);
    } catch (error) {
      failure = error;
    }
    if (answer && answer.status === 429) {
      // Refused before it ran: the key is free for a retry.
      await record(() => outcomes.release(claim));
      return responseOf(answer, false, response!.headers);
    }
    if (answer && answer.status < 500) {
      // The client gets its answer even if it cannot be recorded yet: it is what happened.
      await record(() => outcomes.store(claim, answer));
      return responseOf(answer, false, response!.headers);
    }
    // A server error, or a throw: changed nothing, or committed before failing?
    const asked: Asked = { requestId: requestIdOf(caller, request, answer), rest };
    const outcome = await record(() => outcomes.check(claim, asked));
    if (outcome && 'answer' in outcome) return responseOf(outcome.answer, false);
    if (!outcome) throw unknownYet();
    if (answer) return responseOf(answer, false, response!.headers);
    if (isDatabaseUnreachable(failure)) throw unavailable();
    throw failure;
  }

  /**
   * Runs a write once per Idempotency-Key; without the header, or for a request that writes
   * nothing (`writes` says, from the body), just runs it. A refusal is thrown (a coded
   * GraphQLError) for the caller's surface to render.
   */
  async function guard(
    request: Request,
    caller: Caller,
    path: string,
    run: (request: Request) => Promise<Response>,
    writes: (body: string) => boolean = () => true,
    /** The route's body cap (an import's CSV is larger than a JSON body may be). */
    limit?: number,
  ): Promise<Response> {
    const key = request.headers.get(IDEMPOTENCY_HEADER);
    if (key === null || !WRITES.has(request.method)) return run(request);
    const invalid = idempotencyKeyError(key);
    if (invalid) throw invalid;
    const body = await readBody(request, limit);
    const replayable = new Request(request.url, { method: request.method, headers: request.headers, body });
    if (!writes(body)) return run(replayable);
    const rest = path === '/graphql' ? undefined : { pathname: new URL(request.url).pathname, path };
    // The query is part of what a write asks (an import's resource and mode): a key reused
    // with another query is another request.
    return once(caller, key, fingerprint(request.method, path + new URL(request.url).search, body), replayable, rest, () => run(replayable));
  }

  return { guard };
}

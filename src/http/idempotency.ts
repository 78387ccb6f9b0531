// Idempotent writes (creates, updates, deletes, transitions): a request with an
// Idempotency-Key header runs once per API key and Idempotency-Key; a retry with the same
// key and the same request gets the first response again (with Idempotent-Replayed: true)
// and changes nothing. The same key with a different
// request is refused (400), and a retry that arrives while the first is still running gets
// 409 with Retry-After (retry shortly to receive the first response). A first request that
// never finished (its process died) may or may not have created its record, so its key is
// never run again: retries get 409 saying so. Keys are kept for 24 hours, then purged.
import { createHash } from 'node:crypto';
import type { PrismaClient } from '../generated/prisma/client.js';
import { getOperationAST, GraphQLError, parse } from 'graphql';
import type { Auth } from '../auth/authenticate.js';
import { apiError } from '../errors.js';
import type { Logger } from '../logger.js';
import { Request, Response } from './fetch.js';
import { readBody } from './read-body.js';
import { SEALED, type SecretBox } from '../webhooks/secrets.js';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
const WRITES = new Set(['POST', 'PATCH', 'DELETE']);

/** A 204 or 304 has no body, not even an empty one. */
const bodyOf = (status: number, body: string | null) => (status === 204 || status === 304 ? null : body);
const TTL_MS = 24 * 3_600_000;
// A first request that has not finished after this long died with its process.
const ABANDONED_MS = 5 * 60_000;
const PURGE_EVERY_MS = 3_600_000;

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

/**
 * `box` keeps stored answers encrypted: an answer may carry a secret shown once (a webhook
 * endpoint's signing secret), which must not lie in the database in the clear.
 */
export function createIdempotency(prisma: PrismaClient, log: Logger, box: () => Promise<SecretBox>) {
  // Expired keys go in the background, never on a request's path.
  const purge = () =>
    prisma.idempotencyKey
      .deleteMany({ where: { createdAt: { lt: new Date(Date.now() - TTL_MS) } } })
      .then(({ count }) => count > 0 && log.info('expired idempotency keys purged', { count }))
      .catch((error: Error) => log.warn('idempotency key purge failed', { error: error.message }));
  void purge();
  // Unref'd: it never keeps a stopping process alive, so nothing needs to stop it.
  setInterval(purge, PURGE_EVERY_MS).unref();

  async function claim(organizationId: string, key: string, print: string): Promise<boolean> {
    const { count } = await prisma.idempotencyKey.createMany({ data: [{ organizationId, key, fingerprint: print }], skipDuplicates: true });
    return count === 1;
  }

  /**
   * Runs `execute` once for this API key and Idempotency-Key, or answers what the first run
   * answered, or the refusal to send.
   */
  async function once(
    organizationId: string,
    apiKeyId: string,
    idempotencyKey: string,
    print: string,
    execute: () => Promise<Response>,
  ): Promise<Response | GraphQLError> {
    // One API key's keys are its own: another key of the organization (say, a read-only
    // one) can neither replay nor block them.
    const key = `${apiKeyId}:${idempotencyKey}`;
    const where = { organizationId_key: { organizationId, key } };
    await prisma.idempotencyKey.deleteMany({ where: { organizationId, key, createdAt: { lt: new Date(Date.now() - TTL_MS) } } });
    if (!(await claim(organizationId, key, print))) {
      const first = await prisma.idempotencyKey.findUnique({ where });
      if (!first) return once(organizationId, apiKeyId, idempotencyKey, print, execute);
      if (first.fingerprint !== print) {
        return apiError('BAD_REQUEST', 'This Idempotency-Key was used with a different request; use a new key for a new request.', {
          errors: [{ param: 'Idempotency-Key', message: 'was already used with a different request' }],
        });
      }
      if (first.status === null) {
        return first.createdAt.getTime() < Date.now() - ABANDONED_MS
          ? apiError('CONFLICT', 'The first request with this Idempotency-Key did not finish, so whether it took effect is unknown. Check for its record before sending it again with a new key.')
          : apiError('CONFLICT', 'A request with this Idempotency-Key is still in progress; retry shortly.', { headers: { 'Retry-After': '1' } });
      }
      const headers: Record<string, string> = { 'idempotent-replayed': 'true' };
      if (first.contentType) headers['content-type'] = first.contentType;
      if (first.location) headers.location = first.location;
      if (first.etag) headers.etag = first.etag;
      // Answers stored before they were sealed are JSON (they begin with `{`).
      const stored = first.body?.startsWith(SEALED) ? (await box()).open(first.body) : first.body;
      return new Response(bodyOf(first.status, stored), { status: first.status, headers });
    }
    let response: Response;
    try {
      response = await execute();
    } catch (error) {
      await prisma.idempotencyKey.delete({ where }).catch(() => undefined);
      throw error;
    }
    if (response.status >= 500 || response.status === 429) {
      // Nothing was created: a retry should run again.
      await prisma.idempotencyKey.delete({ where }).catch(() => undefined);
      return response;
    }
    const body = await response.text();
    await prisma.idempotencyKey.update({
      where,
      data: { status: response.status, body: (await box()).seal(body), contentType: response.headers.get('content-type'), location: response.headers.get('location'), etag: response.headers.get('etag') },
    });
    return new Response(bodyOf(response.status, body), { status: response.status, headers: response.headers });
  }

  /**
   * Runs a write once per Idempotency-Key; without the header, or for a request that writes
   * nothing (`writes` says, from the body), just runs it. A refusal comes back as an error
   * for the caller's surface to render.
   */
  async function guard(
    request: Request,
    auth: Pick<Auth, 'organizationId' | 'keyId'>,
    path: string,
    run: (request: Request) => Promise<Response>,
    writes: (body: string) => boolean = () => true,
  ): Promise<Response | GraphQLError> {
    const key = request.headers.get(IDEMPOTENCY_HEADER);
    if (key === null || !WRITES.has(request.method)) return run(request);
    const invalid = idempotencyKeyError(key);
    if (invalid) return invalid;
    let body: string;
    try {
      body = await readBody(request);
    } catch (error) {
      if (error instanceof GraphQLError) return error;
      throw error;
    }
    const replayable = new Request(request.url, { method: request.method, headers: request.headers, body });
    if (!writes(body)) return run(replayable);
    return once(auth.organizationId, auth.keyId, key, fingerprint(request.method, path, body), () => run(replayable));
  }

  return { guard };
}

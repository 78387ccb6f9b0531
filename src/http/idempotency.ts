// Idempotent creates: a request with an Idempotency-Key header runs once per organization
// and key; a retry with the same key and the same request gets the first response again
// (with Idempotent-Replayed: true) and creates nothing. The same key with a different
// request is refused (400), and a retry that arrives while the first is still running gets
// 409 (retry shortly to receive the first response). Keys are kept for 24 hours.
import { createHash } from 'node:crypto';
import type { PrismaClient } from '../generated/prisma/client.js';
import type { FieldError } from '../errors.js';
import { Response } from './fetch.js';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
const TTL_MS = 24 * 3_600_000;
// A first request that has not finished after this long died with its process; a retry
// may then run the create again.
const ABANDONED_MS = 5 * 60_000;

export type IdempotencyRefusal = { status: 400 | 409; detail: string; errors?: FieldError[] };

export function idempotencyKeyError(key: string): IdempotencyRefusal | null {
  return /^[\x21-\x7e]{1,255}$/.test(key)
    ? null
    : {
        status: 400,
        detail: 'Invalid Idempotency-Key header.',
        errors: [{ param: 'Idempotency-Key', message: 'must be 1 to 255 visible ASCII characters' }],
      };
}

export function fingerprint(method: string, path: string, body: string): string {
  return createHash('sha256').update(`${method}\n${path}\n${body}`).digest('hex');
}

export function createIdempotency(prisma: PrismaClient) {
  async function claim(organizationId: string, key: string, print: string): Promise<boolean> {
    const { count } = await prisma.idempotencyKey.createMany({ data: [{ organizationId, key, fingerprint: print }], skipDuplicates: true });
    return count === 1;
  }

  /**
   * Runs `execute` once for this organization and key, or answers what the first run
   * answered, or the refusal to send.
   */
  return async function once(
    organizationId: string,
    key: string,
    print: string,
    execute: () => Promise<Response>,
  ): Promise<Response | IdempotencyRefusal> {
    const where = { organizationId_key: { organizationId, key } };
    // Expired and abandoned records free their key.
    await prisma.idempotencyKey.deleteMany({
      where: {
        organizationId,
        key,
        OR: [{ createdAt: { lt: new Date(Date.now() - TTL_MS) } }, { status: null, createdAt: { lt: new Date(Date.now() - ABANDONED_MS) } }],
      },
    });
    if (!(await claim(organizationId, key, print))) {
      const first = await prisma.idempotencyKey.findUnique({ where });
      if (!first) return once(organizationId, key, print, execute);
      if (first.fingerprint !== print) {
        return {
          status: 400,
          detail: 'This Idempotency-Key was used with a different request; use a new key for a new request.',
          errors: [{ param: 'Idempotency-Key', message: 'was already used with a different request' }],
        };
      }
      if (first.status === null) return { status: 409, detail: 'A request with this Idempotency-Key is still in progress; retry shortly.' };
      const headers: Record<string, string> = { 'idempotent-replayed': 'true' };
      if (first.contentType) headers['content-type'] = first.contentType;
      if (first.location) headers.location = first.location;
      return new Response(first.body, { status: first.status, headers });
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
      data: { status: response.status, body, contentType: response.headers.get('content-type'), location: response.headers.get('location') },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
}

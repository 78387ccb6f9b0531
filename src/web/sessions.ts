// Browser sessions for the account pages: a random token in an HttpOnly, SameSite=Strict
// cookie; the database keeps only its SHA-256 (so a leaked table opens no session), the
// user, a CSRF token for the session's forms, and an expiry.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { PrismaClient } from '../generated/prisma/client.js';
import { runNowAndEvery } from '../background-loop.js';

export const SESSION_COOKIE = 'crm_session';
export const LOGIN_CSRF_COOKIE = 'crm_login_csrf';
const SESSION_HOURS = 12;

export function token(): string {
  return randomBytes(32).toString('base64url');
}

function digest(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

export function sameSecret(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b) return false;
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

export function readCookies(request: Request): Record<string, string> {
  const cookies: Record<string, string> = {};
  for (const part of (request.headers.get('cookie') ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at <= 0) continue;
    try {
      cookies[part.slice(0, at).trim()] = decodeURIComponent(part.slice(at + 1).trim());
    } catch {
      // A malformed cookie (%E0%A4%A) is no cookie at all.
    }
  }
  return cookies;
}

/** Secure whenever the page is served over HTTPS (directly or behind a proxy that says so). */
export function cookie(request: Request, name: string, value: string, maxAgeSeconds: number, path = '/'): string {
  const https = new URL(request.url).protocol === 'https:' || request.headers.get('x-forwarded-proto') === 'https';
  return `${name}=${encodeURIComponent(value)}; Path=${path}; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${https ? '; Secure' : ''}`;
}

export interface SessionUser {
  sessionId: string;
  userId: string;
  email: string;
  organizationId: string;
  csrf: string;
}

export async function startSession(prisma: PrismaClient, userId: string): Promise<{ token: string; maxAge: number }> {
  const value = token();
  await prisma.session.create({
    data: { id: digest(value), userId, csrfToken: token(), expiresAt: new Date(Date.now() + SESSION_HOURS * 3_600_000) },
  });
  return { token: value, maxAge: SESSION_HOURS * 3600 };
}

export async function currentUser(prisma: PrismaClient, request: Request): Promise<SessionUser | null> {
  const value = readCookies(request)[SESSION_COOKIE];
  if (!value) return null;
  const session = await prisma.session.findUnique({ where: { id: digest(value) }, include: { user: true } });
  if (!session || session.expiresAt.getTime() <= Date.now()) return null;
  return { sessionId: session.id, userId: session.userId, email: session.user.email, organizationId: session.user.organizationId, csrf: session.csrfToken };
}

export async function endSession(prisma: PrismaClient, sessionId: string): Promise<void> {
  await prisma.session.deleteMany({ where: { id: sessionId } });
}

/** Forgets ended sessions: at start and hourly, in the background; unref'd. Answers how to stop. */
export function scheduleSessionPurge(prisma: PrismaClient, log: { warn(msg: string, fields?: object): void }): () => void {
  const purge = () => prisma.session.deleteMany({ where: { expiresAt: { lt: new Date() } } }).catch((error: Error) => log.warn('session purge failed', { error: error.message }));
  return runNowAndEvery(3_600_000, purge);
}

// A service instance on a fresh database, with organizations and API keys made for the test,
// and small clients that call it exactly as an integration would.
import { request as httpRequest } from 'node:http';
import { createApiKey } from '../../src/auth/api-keys.js';
import { hashPassword } from '../../src/auth/passwords.js';
import { organizationFor, type Mode } from '../../src/auth/modes.js';
import { parseScopes } from '../../src/auth/scopes.js';
import { openDatabase, type Database } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrator.js';
import { migratedDatabase, type DbKind, type TestDatabase } from './databases.js';
import { loadConfig } from '../../src/config.js';
import { startInstance, type Instance } from '../../src/instance.js';
import { createLogger } from '../../src/logger.js';

export interface KeySpec {
  org: string;
  scopes?: string;
  expiresAt?: Date;
  revoked?: boolean;
  /** A svc_test_ key, in the organization's test twin. */
  mode?: Mode;
}

export interface Api {
  url: string;
  db: TestDatabase;
  server: ServedInstance;
  keys: Record<string, string>;
  stop(): Promise<void>;
}

/** Creates the keys (and their organizations) directly in the database, before the server holds it. */
export async function makeKeys(db: TestDatabase, specs: Record<string, KeySpec>): Promise<Record<string, string>> {
  const open = await openDatabase({ databaseUrl: db.env.DATABASE_URL, dataDir: db.env.DATA_DIR ?? '' });
  try {
    await migrate(open.sql);
    return await keysIn(open, specs);
  } finally {
    await open.close();
  }
}

/** The keys of `specs` (and their organizations), made in an open, migrated database. */
export async function keysIn(open: Database, specs: Record<string, KeySpec>): Promise<Record<string, string>> {
  const keys: Record<string, string> = {};
  for (const [name, spec] of Object.entries(specs)) {
    const live = await open.prisma.organization.upsert({ where: { name: spec.org }, create: { name: spec.org }, update: {} });
    const organization = await organizationFor(open.prisma, live, spec.mode ?? 'live');
    const { key, record } = await createApiKey(open.prisma, {
      mode: spec.mode,
      organizationId: organization.id,
      name,
      scopes: parseScopes(spec.scopes ?? 'all'),
      expiresAt: spec.expiresAt,
    });
    if (spec.revoked) await open.prisma.apiKey.update({ where: { id: record.id }, data: { revokedAt: new Date() } });
    keys[name] = key;
  }
  return keys;
}

/** A user of organization `org` (made if it does not exist yet) who can log in to the account pages. */
export async function addUser(api: Pick<Api, 'db'>, org: string, email: string, password: string): Promise<void> {
  const db = await openDatabase({ databaseUrl: api.db.env.DATABASE_URL, dataDir: '' });
  try {
    const organization = await db.prisma.organization.upsert({ where: { name: org }, create: { name: org }, update: {} });
    await db.prisma.user.create({ data: { organizationId: organization.id, email, passwordHash: await hashPassword(password) } });
  } finally {
    await db.close();
  }
}

/** A service instance the test started: its address, its log, and how to stop it. */
export interface ServedInstance {
  url: string;
  /** Every log line it wrote so far. */
  output(): string;
  /** SQL on the instance's own database connection (an embedded database has only that one). */
  sql: Database['sql'];
  stop(): Promise<unknown>;
}

/**
 * Serves the app in this process, on a real port and the given database, configured from
 * `env` exactly as the server reads its environment. Tests whose subject is the process
 * itself (signals, cluster, CLI, first start) use startServer instead. `prepare` runs on
 * the migrated database before the instance starts (an embedded one is opened only once).
 */
export async function serveInProcess(env: Record<string, string>, prepare?: (db: Database) => Promise<void>): Promise<ServedInstance> {
  const config = loadConfig({ SEED_ON_FIRST_START: 'false', LOG_LEVEL: 'info', ...env, PORT: '0', HOST: '127.0.0.1' });
  let output = '';
  const log = createLogger(config.logLevel, (line) => (output += line));
  const db = await openDatabase(config);
  let instance: Instance;
  try {
    await migrate(db.sql);
    await prepare?.(db);
    instance = await startInstance(config, log, db);
  } catch (error) {
    await db.close();
    throw error;
  }
  let stopped: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${instance.port}`,
    output: () => output,
    sql: db.sql,
    stop: () => (stopped ??= instance.stop().finally(() => db.close())),
  };
}

export async function startApi(kind: DbKind, specs: Record<string, KeySpec>, env: Record<string, string> = {}): Promise<Api> {
  const db = await migratedDatabase(kind);
  let keys: Record<string, string> = {};
  const server = await serveInProcess({ ...db.env, ...env }, async (open) => void (keys = await keysIn(open, specs))).catch(async (error: unknown) => {
    await db.drop();
    throw error;
  });
  return {
    url: server.url,
    db,
    server,
    keys,
    async stop() {
      await server.stop();
      await db.drop();
    },
  };
}

export interface JsonResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export async function call<T = any>(url: string, init: RequestInit & { key?: string; json?: unknown } = {}): Promise<JsonResponse<T>> {
  const headers = new Headers(init.headers);
  if (init.key) headers.set('authorization', `Bearer ${init.key}`);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set('content-type', 'application/json');
    body = JSON.stringify(init.json);
  }
  const response = await fetch(url, { ...init, headers, body });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

/** POST /graphql; throws when the operation fails, so set-up steps stay short. */
export async function gql<T = any>(api: Pick<Api, 'url'>, key: string, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const response = await call(`${api.url}/graphql`, { method: 'POST', key, json: { query, variables } });
  if (response.body.errors) throw new Error(JSON.stringify(response.body.errors));
  return response.body.data as T;
}

export const rest = (api: Pick<Api, 'url'>, key: string) => ({
  get: (path: string, headers: Record<string, string> = {}) => call(`${api.url}/v1${path}`, { key, headers }),
  post: (path: string, json?: unknown, headers: Record<string, string> = {}) => call(`${api.url}/v1${path}`, { method: 'POST', key, json, headers }),
  patch: (path: string, json: unknown, headers: Record<string, string> = {}) => call(`${api.url}/v1${path}`, { method: 'PATCH', key, json, headers }),
  delete: (path: string, headers: Record<string, string> = {}) => call(`${api.url}/v1${path}`, { method: 'DELETE', key, headers }),
});

/** The CSRF token of a page's form. */
export const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)![1]!;

/**
 * Signs in through the login form as a browser does (the form's CSRF cookie and token).
 * Returns the raw response, the token it used and, on success, the session cookie
 * (`crm_session=...`).
 */
export async function postLogin(url: string, email: string, password: string) {
  const form = await fetch(`${url}/login`);
  const cookie = form.headers.get('set-cookie')!.split(';')[0]!;
  const csrf = csrfOf(await form.text());
  const response = await fetch(`${url}/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: new URLSearchParams({ csrf, email, password }).toString(),
  });
  return { response, csrf, session: response.headers.get('set-cookie')?.split(';')[0] };
}

/**
 * POSTs a body sent chunked (no Content-Length to refuse it on): `head`, then `count` times
 * `chunk`, then `tail`. A server that refuses it part-way answers and drops the connection;
 * the client may see either: the status, or 'reset'.
 */
export function postChunked(url: string, path: string, headers: Record<string, string>, body: { head?: string; chunk: string | Buffer; count: number; tail?: string }): Promise<number | 'reset'> {
  const { port } = new URL(url);
  return new Promise((resolve) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: 'POST', headers }, (res) => {
      resolve(res.statusCode!);
      req.destroy();
    });
    req.on('error', () => resolve('reset'));
    req.on('close', () => resolve('reset'));
    if (body.head) req.write(body.head);
    let sent = 0;
    const pump = () => {
      while (sent < body.count && !req.destroyed) {
        sent++;
        if (!req.write(body.chunk)) return void req.once('drain', pump);
      }
      if (!req.destroyed) req.end(body.tail);
    };
    pump();
  });
}

// Instances remember valid keys; a change to a key made anywhere must still take effect on
// every instance's next request. Two instances on one PostgreSQL database, served in this
// process: each has its own key cache and its own LISTEN connection, as two processes do.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import pg from 'pg';
import { hashPassword } from '../../src/auth/passwords.js';
import { changeKeyEverywhere } from '../../src/auth/key-changes.js';
import { openDatabase, type Database } from '../../src/db/connection.js';
import { call, csrfOf, makeKeys, postLogin, serveInProcess, type ServedInstance } from '../helpers/api.js';
import { migratedDatabase, type TestDatabase } from '../helpers/databases.js';
import { runNpm } from '../helpers/processes.js';

async function waitFor(check: () => boolean, what: string, ms = 10_000) {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('remembered API keys, across instances', () => {
  let db: TestDatabase;
  let a: ServedInstance;
  let b: ServedInstance;
  let keys: Record<string, string>;
  let sql: pg.Client;
  const status = async (server: ServedInstance, key: string) => (await call(`${server.url}/v1/customers?limit=1`, { key })).status;
  const revoke = (key: string) => sql.query(`UPDATE api_keys SET revoked_at = now() WHERE prefix = $1`, [key.slice(0, 17)]);

  beforeAll(async () => {
    db = await migratedDatabase('postgres');
    keys = await makeKeys(db, { cli: { org: 'Acme' }, page: { org: 'Acme' }, sql: { org: 'Acme' }, cut: { org: 'Acme' }, kept: { org: 'Acme' } });
    const open = await openDatabase({ databaseUrl: db.env.DATABASE_URL, dataDir: '' });
    const org = await open.prisma.organization.findFirstOrThrow({ where: { name: 'Acme' } });
    await open.prisma.user.create({ data: { organizationId: org.id, email: 'owner@acme.example', passwordHash: await hashPassword('the right password') } });
    await open.close();
    [a, b] = await Promise.all([serveInProcess(db.env), serveInProcess(db.env)]);
    sql = new pg.Client({ connectionString: db.env.DATABASE_URL });
    await sql.connect();
    // Both instances are listening once a key lookup can be remembered; use every key once.
    for (const key of Object.values(keys)) for (const server of [a, b]) expect(await status(server, key)).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await sql?.end();
    await Promise.all([a?.stop(), b?.stop()]);
    await db?.drop();
  });

  it('a remembered key is served without looking it up again', async () => {
    await sql.query('ALTER TABLE api_keys RENAME TO api_keys_away');
    try {
      expect(await status(a, keys.kept!)).toBe(200);
      expect(await status(b, keys.kept!)).toBe(200);
    } finally {
      await sql.query('ALTER TABLE api_keys_away RENAME TO api_keys');
    }
  });

  it('a key revoked with the CLI is refused by both instances on their next request', async () => {
    expect(await status(a, keys.cli!)).toBe(200);
    // The CLI as an operator runs it: a process of its own, outside both instances. It returns
    // once both have answered that they forgot the key (auth/key-changes.ts).
    const result = await runNpm('cli', ['keys', 'revoke', keys.cli!], db.env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toContain('did not confirm');
    expect(await status(a, keys.cli!)).toBe(401);
    expect(await status(b, keys.cli!)).toBe(401);
  });

  it('a key revoked in one instance\'s account page is refused by both on their next request', async () => {
    const session = (await postLogin(a.url, 'owner@acme.example', 'the right password')).session!;
    const page = await (await fetch(`${a.url}/settings/api-keys`, { headers: { cookie: session } })).text();
    const [, keyId] = new RegExp(`${keys.page!.slice(0, 17)}[\\s\\S]*?/settings/api-keys/([0-9a-f-]{36})/revoke`).exec(page)!;
    const csrf = csrfOf(page);
    const revoked = await fetch(`${a.url}/settings/api-keys/${keyId}/revoke`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: session },
      body: new URLSearchParams({ csrf }).toString(),
    });
    expect(revoked.status).toBe(303);
    // The page answered once the other instance had forgotten the key too.
    expect(await status(b, keys.page!)).toBe(401);
    expect(await status(a, keys.page!)).toBe(401);
    expect(a.output()).not.toContain('did not confirm');
  });

  /** Milliseconds from the commit until `server` refuses `key`. */
  async function refusedAfter(server: ServedInstance, key: string): Promise<number> {
    const committed = performance.now();
    while ((await status(server, key)) !== 401) {
      if (performance.now() - committed > 2000) throw new Error('the key still works 2 s after its revocation');
    }
    return performance.now() - committed;
  }

  // Nobody waits for the instances here: a request that reaches one before the NOTIFY does
  // (milliseconds; longer on a loaded machine) is still served.
  it('a key revoked in plain SQL is refused as soon as the change is announced', async () => {
    await revoke(keys.sql!);
    expect(await refusedAfter(b, keys.sql!)).toBeLessThan(500);
  });

  it('while the notifications are cut off, keys are looked up every time, and remembered again once they return', async () => {
    await sql.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'crm listen api_key_changes'`);
    await waitFor(() => a.output().includes('lost the key-change notifications') && b.output().includes('lost the key-change notifications'), 'the loss to be noticed');
    // No instance hears this one, yet neither may honour the key.
    await revoke(keys.cut!);
    expect(await status(a, keys.cut!)).toBe(401);
    expect(await status(b, keys.cut!)).toBe(401);
    expect(await status(a, keys.kept!)).toBe(200);
    await waitFor(() => a.output().includes('key-change notifications are back') && b.output().includes('key-change notifications are back'), 'the notifications to return');
    expect(await status(a, keys.kept!)).toBe(200);
    await revoke(keys.kept!);
    expect(await refusedAfter(b, keys.kept!)).toBeLessThan(500);
  });
});

describe('a key change waits for every listening instance (changeKeyEverywhere)', () => {
  let db: TestDatabase;
  let open: Database;
  let standIn: pg.Client;
  let keyId: string;
  const heard: string[] = [];
  let onHeard = () => {};

  beforeAll(async () => {
    db = await migratedDatabase('postgres');
    await makeKeys(db, { one: { org: 'Acme' } });
    open = await openDatabase({ databaseUrl: db.env.DATABASE_URL, dataDir: '' });
    keyId = (await open.prisma.apiKey.findFirstOrThrow()).id;
  });
  afterAll(async () => {
    await open?.close();
    await db?.drop();
  });
  // An instance as the change sees it: a session listening under the instances' name, which
  // answers only when the test says so.
  beforeEach(async () => {
    heard.length = 0;
    standIn = new pg.Client({ connectionString: db.env.DATABASE_URL });
    await standIn.connect();
    standIn.on('notification', (message) => {
      heard.push(message.payload!);
      onHeard();
    });
    await standIn.query(`LISTEN api_key_changes; SET application_name TO 'crm listen api_key_changes'`);
  });
  afterEach(() => standIn.end().catch(() => undefined));

  const touch = async () => (await open.prisma.apiKey.updateMany({ where: { id: keyId }, data: { scopes: ['customers:read'] } })).count > 0;
  const answer = () => standIn.query("SELECT pg_notify('api_key_changes_heard', $1 || ' ' || pg_backend_pid())", [keyId]);

  it('returns only after the instance answered', async () => {
    let settled = false;
    const change = changeKeyEverywhere(open, keyId, touch, 10_000).finally(() => (settled = true));
    await new Promise<void>((resolve) => (onHeard = resolve));
    await standIn.query('SELECT 1');
    expect(settled).toBe(false);
    await answer();
    expect(await change).toBe(0);
    expect(heard).toEqual([keyId]);
  });

  it('reports an instance that stays silent, after the wait', async () => {
    expect(await changeKeyEverywhere(open, keyId, touch, 300)).toBe(1);
  });

  it('stops waiting for an instance whose listening session ended', async () => {
    onHeard = () => void standIn.end();
    expect(await changeKeyEverywhere(open, keyId, touch, 10_000)).toBe(0);
  });

  it('waits for nobody when nothing changed', async () => {
    expect(await changeKeyEverywhere(open, keyId, async () => false, 10_000)).toBe(0);
    expect(heard).toEqual([]);
  });
});

// The command line's commands (npm run --silent cli -- <command>): headless set-up of
// organizations, API keys and users, imports and `listen`. They write to a Terminal, so a
// test runs them in its own process; src/cli/main.ts runs them on the process's own.
// Each command loads what it uses when it runs: `listen` (a client of a running server)
// and a usage error need neither the database nor the schema, whose modules took most of
// a process's start (`listen` through tsx took 1.5-1.9 CPU-s on 2 cores with them, 0.45 without).
import { parseArgs } from 'node:util';
import type { Mode } from '../auth/modes.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import { withDatabase, type Terminal } from './runtime.js';

const USAGE = `usage:
  cli keys create --org <name> [--mode live|test] [--scopes <s1,s2,...|all>] [--name <label>] [--expires-at <ISO date>]
  cli keys list --org <name>   (live and test keys)
  cli keys revoke <key | display-prefix | id>
  cli users create --org <name> --email <e> --password-stdin
  cli listen --forward-to <http://127.0.0.1:PORT/path> [--url <server, default http://127.0.0.1:3000>] [--events <type,...>]   (key in CRM_API_KEY)
  cli imports run --org <name> --resource customers [--mode create|upsert] <file.csv>`;

class UsageError extends Error {}

function organizationByName(prisma: PrismaClient, name: string) {
  return prisma.organization.upsert({ where: { name }, create: { name }, update: {} });
}

function requireOption(value: string | undefined, flag: string): string {
  if (!value || !value.trim()) throw new UsageError(`${flag} is required`);
  return value.trim();
}

const commands: Record<string, (args: string[], terminal: Terminal) => Promise<number>> = {
  async 'keys create'(args, terminal) {
    const { values } = parseArgs({
      args,
      options: { org: { type: 'string' }, mode: { type: 'string' }, scopes: { type: 'string' }, name: { type: 'string' }, 'expires-at': { type: 'string' } },
    });
    const org = requireOption(values.org, '--org');
    const mode = (values.mode ?? 'live') as Mode;
    const [{ MODES, organizationFor }, { parseScopes }, { createApiKey }] = await Promise.all([
      import('../auth/modes.js'),
      import('../auth/scopes.js'),
      import('../auth/api-keys.js'),
      // Declares the scopes (auth/scopes.ts), each beside what it guards.
      import('../schema/index.js'),
    ]);
    if (!MODES.includes(mode)) throw new UsageError('--mode must be live or test');
    let scopes;
    try {
      scopes = parseScopes(values.scopes ?? 'all');
    } catch (error) {
      throw new UsageError(`--scopes: ${(error as Error).message}`);
    }
    const expiresAt = values['expires-at'] ? new Date(values['expires-at']) : null;
    if (expiresAt && Number.isNaN(expiresAt.getTime())) throw new UsageError('--expires-at must be an ISO 8601 date');
    return withDatabase(terminal, async ({ prisma }) => {
      // A test key works in the organization's test twin (auth/modes.ts).
      const organization = await organizationFor(prisma, await organizationByName(prisma, org), mode);
      const { key, record } = await createApiKey(prisma, {
        organizationId: organization.id,
        name: values.name?.trim() || 'CLI key',
        scopes,
        expiresAt,
        mode,
      });
      terminal.err(`Created ${mode} key ${record.prefix}… (id ${record.id}) for ${org} with scopes ${scopes.join(',')}.`);
      terminal.err('It is shown once; store it now.');
      terminal.out(key);
    });
  },

  async 'keys list'(args, terminal) {
    const { values } = parseArgs({ args, options: { org: { type: 'string' } } });
    const org = requireOption(values.org, '--org');
    return withDatabase(terminal, async ({ prisma }) => {
      const organization = await prisma.organization.findUnique({ where: { name: org } });
      if (!organization) throw new Error(`no organization named "${org}"`);
      const twin = await prisma.organization.findUnique({ where: { liveId: organization.id } });
      const keys = await prisma.apiKey.findMany({ where: { organizationId: { in: [organization.id, ...(twin ? [twin.id] : [])] } }, orderBy: { createdAt: 'desc' } });
      const now = new Date();
      for (const k of keys) {
        const status = k.revokedAt ? 'revoked' : k.expiresAt && k.expiresAt <= now ? 'expired' : 'active';
        terminal.out(
          [k.id, k.prefix, k.name, status, k.scopes.join(','), k.createdAt.toISOString(), k.lastUsedAt?.toISOString() ?? '-', k.expiresAt?.toISOString() ?? '-'].join('\t'),
        );
      }
    });
  },

  async 'keys revoke'(args, terminal) {
    const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
    const ref = requireOption(positionals[0], 'a key, display prefix or id');
    const [{ findApiKey }, { changeKeyEverywhere, KEY_CHANGE_WAIT_MS }] = await Promise.all([import('../auth/api-keys.js'), import('../auth/key-changes.js')]);
    return withDatabase(terminal, async (db) => {
      const key = await findApiKey(db.prisma, ref);
      if (!key) throw new Error('no such key');
      // Returns once every running instance has forgotten the key, so the next request is refused.
      const silent = await changeKeyEverywhere(db, key.id, async () => {
        const { count } = await db.prisma.apiKey.updateMany({ where: { id: key.id, revokedAt: null }, data: { revokedAt: new Date() } });
        return count > 0;
      });
      terminal.out(`Revoked ${key.prefix}… (id ${key.id}).`);
      if (silent > 0) terminal.err(`warning: ${silent} running instance(s) did not confirm within ${KEY_CHANGE_WAIT_MS / 1000} s; they refuse the key once they hear of it, within a minute at most.`);
    });
  },

  async 'users create'(args, terminal) {
    const { values } = parseArgs({
      args,
      options: { org: { type: 'string' }, email: { type: 'string' }, 'password-stdin': { type: 'boolean' } },
    });
    const org = requireOption(values.org, '--org');
    const email = requireOption(values.email, '--email').toLowerCase();
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) throw new UsageError('--email must be an e-mail address');
    if (!values['password-stdin']) throw new UsageError('--password-stdin is required (the password is read from standard input)');
    const password = (await terminal.input()).replace(/\r?\n$/, '');
    if (password.length < 12) throw new UsageError('the password must be at least 12 characters');
    const { hashPassword } = await import('../auth/passwords.js');
    const passwordHash = await hashPassword(password);
    return withDatabase(terminal, async ({ prisma }) => {
      const organization = await organizationByName(prisma, org);
      const user = await prisma.user.create({ data: { organizationId: organization.id, email, passwordHash } });
      terminal.out(`Created user ${user.email} (id ${user.id}) in ${organization.name}.`);
    });
  },

  async 'imports run'(args, terminal) {
    // A CSV file's rows written as POST /v1/imports would (cli/imports.ts).
    const { importFile } = await import('./imports.js');
    return importFile(args, terminal, (message) => new UsageError(message));
  },
};

/** `listen` forwards the organization's events from a running server (cli/listen.ts) until Ctrl-C (SIGINT) or SIGTERM, then exits 0. */
async function listenCommand(args: string[], terminal: Terminal): Promise<number> {
  const { listen, ListenUsageError, parseListenArgs } = await import('./listen.js');
  let options;
  try {
    options = parseListenArgs(args, terminal.env);
  } catch (error) {
    if (error instanceof ListenUsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) throw new UsageError((error as Error).message);
    throw error;
  }
  const stop = new AbortController();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => stop.abort());
  await listen({ ...options, out: terminal.out, err: terminal.err, signal: stop.signal }).catch((error: unknown) => {
    // Stopped while a request was under way: that is the user's Ctrl-C, not a failure.
    if (!stop.signal.aborted) throw error;
  });
  terminal.err('Stopped.');
  return 0;
}

/** Runs the command `argv` names; answers its exit code (2: bad usage, 1: it failed). */
export async function runCli(argv: string[], terminal: Terminal): Promise<number> {
  const [group, action, ...rest] = argv;
  const command = group === 'listen' ? () => listenCommand(argv.slice(1), terminal) : commands[`${group} ${action}`];
  if (!command) {
    terminal.err(USAGE);
    return 2;
  }
  try {
    return await command(rest, terminal);
  } catch (error) {
    terminal.err(`error: ${(error as Error).message}`);
    if (error instanceof UsageError) terminal.err(USAGE);
    return error instanceof UsageError ? 2 : 1;
  }
}


// npm run --silent cli -- <command>: headless set-up of organizations, API keys and users.
import { parseArgs } from 'node:util';
import { createApiKey, findApiKey } from '../auth/api-keys.js';
import { hashPassword } from '../auth/passwords.js';
import { MODES, organizationFor, type Mode } from '../auth/modes.js';
import { parseScopes } from '../auth/scopes.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import { withDatabase } from './runtime.js';
// `listen`: forwards the organization's events from a running server (cli/listen.ts).
import { listen, ListenUsageError, parseListenArgs } from './listen.js';
// `imports run`: a CSV file's rows written as POST /v1/imports would (cli/imports.ts).
import { importFile } from './imports.js';

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

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

const commands: Record<string, (args: string[]) => Promise<void>> = {
  async 'keys create'(args) {
    const { values } = parseArgs({
      args,
      options: { org: { type: 'string' }, mode: { type: 'string' }, scopes: { type: 'string' }, name: { type: 'string' }, 'expires-at': { type: 'string' } },
    });
    const org = requireOption(values.org, '--org');
    const mode = (values.mode ?? 'live') as Mode;
    if (!MODES.includes(mode)) throw new UsageError('--mode must be live or test');
    let scopes;
    try {
      scopes = parseScopes(values.scopes ?? 'all');
    } catch (error) {
      throw new UsageError(`--scopes: ${(error as Error).message}`);
    }
    const expiresAt = values['expires-at'] ? new Date(values['expires-at']) : null;
    if (expiresAt && Number.isNaN(expiresAt.getTime())) throw new UsageError('--expires-at must be an ISO 8601 date');
    await withDatabase(async ({ prisma }) => {
      // A test key works in the organization's test twin (auth/modes.ts).
      const organization = await organizationFor(prisma, await organizationByName(prisma, org), mode);
      const { key, record } = await createApiKey(prisma, {
        organizationId: organization.id,
        name: values.name?.trim() || 'CLI key',
        scopes,
        expiresAt,
        mode,
      });
      console.error(`Created ${mode} key ${record.prefix}… (id ${record.id}) for ${org} with scopes ${scopes.join(',')}.`);
      console.error('It is shown once; store it now.');
      console.log(key);
    });
  },

  async 'keys list'(args) {
    const { values } = parseArgs({ args, options: { org: { type: 'string' } } });
    const org = requireOption(values.org, '--org');
    await withDatabase(async ({ prisma }) => {
      const organization = await prisma.organization.findUnique({ where: { name: org } });
      if (!organization) throw new Error(`no organization named "${org}"`);
      const twin = await prisma.organization.findUnique({ where: { liveId: organization.id } });
      const keys = await prisma.apiKey.findMany({ where: { organizationId: { in: [organization.id, ...(twin ? [twin.id] : [])] } }, orderBy: { createdAt: 'desc' } });
      const now = new Date();
      for (const k of keys) {
        const status = k.revokedAt ? 'revoked' : k.expiresAt && k.expiresAt <= now ? 'expired' : 'active';
        console.log(
          [k.id, k.prefix, k.name, status, k.scopes.join(','), k.createdAt.toISOString(), k.lastUsedAt?.toISOString() ?? '-', k.expiresAt?.toISOString() ?? '-'].join('\t'),
        );
      }
    });
  },

  async 'keys revoke'(args) {
    const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
    const ref = requireOption(positionals[0], 'a key, display prefix or id');
    await withDatabase(async ({ prisma }) => {
      const key = await findApiKey(prisma, ref);
      if (!key) throw new Error('no such key');
      if (!key.revokedAt) await prisma.apiKey.update({ where: { id: key.id }, data: { revokedAt: new Date() } });
      console.log(`Revoked ${key.prefix}… (id ${key.id}).`);
    });
  },

  async 'users create'(args) {
    const { values } = parseArgs({
      args,
      options: { org: { type: 'string' }, email: { type: 'string' }, 'password-stdin': { type: 'boolean' } },
    });
    const org = requireOption(values.org, '--org');
    const email = requireOption(values.email, '--email').toLowerCase();
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) throw new UsageError('--email must be an e-mail address');
    if (!values['password-stdin']) throw new UsageError('--password-stdin is required (the password is read from standard input)');
    const password = await readStdin();
    if (password.length < 12) throw new UsageError('the password must be at least 12 characters');
    const passwordHash = await hashPassword(password);
    await withDatabase(async ({ prisma }) => {
      const organization = await organizationByName(prisma, org);
      const user = await prisma.user.create({ data: { organizationId: organization.id, email, passwordHash } });
      console.log(`Created user ${user.email} (id ${user.id}) in ${organization.name}.`);
    });
  },

  async 'imports run'(args) {
    await importFile(args, (message) => new UsageError(message));
  },
};

/** `listen` runs until Ctrl-C (SIGINT) or SIGTERM, then exits 0. */
async function listenCommand(args: string[]): Promise<void> {
  let options;
  try {
    options = parseListenArgs(args, process.env);
  } catch (error) {
    if (error instanceof ListenUsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) throw new UsageError((error as Error).message);
    throw error;
  }
  const stop = new AbortController();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => stop.abort());
  await listen({ ...options, out: (line) => console.log(line), err: (line) => console.error(line), signal: stop.signal }).catch((error: unknown) => {
    // Stopped while a request was under way: that is the user's Ctrl-C, not a failure.
    if (!stop.signal.aborted) throw error;
  });
  console.error('Stopped.');
}

const [group, action, ...rest] = process.argv.slice(2);
const command = group === 'listen' ? () => listenCommand(process.argv.slice(3)) : commands[`${group} ${action}`];
if (!command) {
  console.error(USAGE);
  process.exitCode = 2;
} else {
  try {
    await command(rest);
  } catch (error) {
    console.error(`error: ${(error as Error).message}`);
    if (error instanceof UsageError) console.error(USAGE);
    process.exitCode = error instanceof UsageError ? 2 : 1;
  }
}

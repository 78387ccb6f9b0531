// `cli imports run --org <name> --resource customers [--mode create|upsert] FILE`: the import
// POST /v1/imports would start, run in this process to its end: the same file checks, the
// same chunks and events (src/imports/worker.ts). It is an import like any other: a server
// running on the database shows it at GET /v1/imports/{id}, and takes it over if this
// process dies (once its lease runs out), resuming at the first row not written.
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { GraphQLError } from 'graphql';
import type { FieldError } from '../errors.js';
import { createLogger } from '../logger.js';
import { IMPORTABLE, newImport, type ImportMode } from '../imports/plan.js';
import { claimImport, runImport } from '../imports/worker.js';
import { schema } from '../schema/index.js';
import { withDatabase, type Terminal } from './runtime.js';

/** Answers the exit code: 1 when a row was refused. */
export async function importFile(args: string[], terminal: Terminal, usage: (message: string) => Error): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { org: { type: 'string' }, resource: { type: 'string' }, mode: { type: 'string' } } });
  const org = values.org?.trim();
  if (!org) throw usage('--org is required');
  const resource = values.resource ?? '';
  if (!Object.hasOwn(IMPORTABLE, resource)) throw usage(`--resource must be one of ${Object.keys(IMPORTABLE).join(', ')}`);
  const mode = (values.mode ?? 'create') as ImportMode;
  if (mode !== 'create' && mode !== 'upsert') throw usage('--mode must be create or upsert');
  if (positionals.length !== 1) throw usage('name one CSV file');
  const file = await readFile(positionals[0]!, 'utf8');
  let stored;
  try {
    stored = newImport(schema, resource, mode, file);
  } catch (error) {
    if (!(error instanceof GraphQLError)) throw error;
    const faults = (error.extensions.errors as FieldError[] | undefined) ?? [];
    throw new Error(`the file cannot be imported: ${faults.map((f) => `${f.param} ${f.message}`).join('; ') || error.message}`);
  }
  return withDatabase(terminal, async ({ kind, prisma }) => {
    const organization = await prisma.organization.findUnique({ where: { name: org } });
    if (!organization) throw new Error(`no organization named "${org}"`);
    // Made and claimed in one transaction: the running servers it is announced to (at commit)
    // find it leased to this process.
    const job = await prisma.$transaction(async (tx) => {
      const { id } = await tx.import.create({ data: { organizationId: organization.id, ...stored, requestId: 'cli' }, select: { id: true } });
      return (await claimImport(tx, undefined, { organizationId: organization.id, id }))!;
    });
    const { id } = job;
    terminal.err(`Import ${id}: ${stored.total} rows of ${resource} (${mode}).`);
    const log = createLogger('warn', (line) => terminal.err(line.trimEnd()));
    await runImport(prisma, schema, job, log, { database: kind });
    const done = await prisma.import.findUniqueOrThrow({ where: { organizationId_id: { organizationId: organization.id, id } } });
    terminal.err(`${done.status}: ${done.created} created, ${done.updated} updated, ${done.failed} failed.`);
    const { status, total, created, updated, failed, errors } = done;
    terminal.out(JSON.stringify({ id, status, total, created, updated, failed, errors }));
    return done.failed > 0 ? 1 : 0;
  });
}

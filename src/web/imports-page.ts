// The imports section of the account page: start a CSV import for the organization of the
// page's mode (live, or its test twin) and follow the recent ones (status, counts, first row
// errors). The file is judged as POST /v1/imports judges it: the same byte cap and UTF-8 check
// (http/read-body.ts), then imports/plan.ts `newImport` (CSV syntax, columns, rows), and stored
// pending as the API stores it; an instance's import loop writes its rows (imports/worker.ts).
// The client here is not tenant-scoped: every query names the organization.
import { GraphQLError, isNonNullType } from 'graphql';
import { organizationFor, type Mode } from '../auth/modes.js';
import { codeOf, type FieldError } from '../errors.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import { Response } from '../http/fetch.js';
import { readBody } from '../http/read-body.js';
import { createInputOf, IMPORTABLE, MAX_IMPORT_BYTES, MAX_IMPORT_ROWS, newImport, type ImportMode } from '../imports/plan.js';
import type { Logger } from '../logger.js';
import { snakeCase } from '../rest/names.js';
import { schema } from '../schema/index.js';
import { escape } from './html.js';
import { sameSecret, type SessionUser } from './sessions.js';

export const IMPORTS_PATH = '/settings/imports';
/** The page lists this many imports (newest first), each with this many of its row errors. */
const IMPORTS_SHOWN = 10;
const ERRORS_SHOWN = 5;
/** Room in the body for the multipart envelope beside the file: boundaries, part headers, the token, the choices. */
const FORM_OVERHEAD_BYTES = 16 * 1024;
const TOO_LARGE = `The file is larger than ${MAX_IMPORT_BYTES / 1024 / 1024} MiB (${MAX_IMPORT_BYTES} bytes), the most one import takes: split it into several files.`;

export interface ImportExtra {
  error?: string[];
  /** The choices sent, shown again when the form was refused (a file input cannot be refilled). */
  form?: { resource: string; mode: string };
}

interface ImportRow {
  id: string;
  resource: string;
  mode: string;
  status: string;
  total: number;
  created: number;
  updated: number;
  failed: number;
  created_at: Date;
  errors: Array<{ row: number; param: string | null; message: string }>;
  error_count: number;
}

/**
 * The organization's latest imports. The stored file is never read, and of the up to 1,000
 * errors an import keeps, only the first few leave the database.
 */
function recentImports(prisma: PrismaClient, organizationId: string): Promise<ImportRow[]> {
  return prisma.$queryRaw<ImportRow[]>`
    SELECT id::text, resource, mode, status, total, created, updated, failed, created_at,
      jsonb_path_query_array(errors, ${`$[0 to ${ERRORS_SHOWN - 1}]`}::jsonpath) AS errors,
      jsonb_array_length(errors) AS error_count
    FROM imports WHERE organization_id = ${organizationId}::uuid
    ORDER BY created_at DESC, id DESC
    LIMIT ${IMPORTS_SHOWN}`;
}

const when = (date: Date) => `<time datetime="${date.toISOString()}">${date.toISOString().slice(0, 19).replace('T', ' ')} UTC</time>`;
const STATUS_CLASS: Record<string, string> = { completed: 'status-active', failed: 'status-revoked' };

function importRows(row: ImportRow): string {
  const done = row.created + row.updated + row.failed;
  const progress = row.status === 'pending' || row.status === 'running' ? ` <span class="import-progress">(${done} of ${row.total} rows)</span>` : '';
  const errors = row.errors.length
    ? `<tr class="import-errors" data-import-id="${escape(row.id)}"><td></td><td colspan="7">
        <p>${row.error_count > row.errors.length ? `The first ${row.errors.length} of ${row.error_count} row errors (all of them: <code>GET /v1/imports/${escape(row.id)}</code>):` : 'Row errors:'}</p>
        <table class="row-errors"><thead><tr><th>Row</th><th>Column</th><th>Message</th></tr></thead><tbody>${row.errors
          .map((e) => `<tr class="row-error"><td class="error-row">${e.row}</td><td class="error-param">${e.param === null ? '—' : `<code>${escape(e.param)}</code>`}</td><td class="error-message">${escape(e.message)}</td></tr>`)
          .join('')}</tbody></table>
      </td></tr>`
    : '';
  return `<tr class="import" data-import-id="${escape(row.id)}">
      <td>${when(row.created_at)}</td><td>${escape(row.resource)}</td><td>${escape(row.mode)}</td>
      <td><span class="import-status ${STATUS_CLASS[row.status] ?? ''}">${escape(row.status)}</span>${progress}</td>
      <td class="import-total">${row.total}</td><td class="import-created">${row.created}</td><td class="import-updated">${row.updated}</td><td class="import-failed">${row.failed}</td>
    </tr>${errors}`;
}

/** Each importable resource's columns, as a file's header may name them. */
function columnsHelp(): string {
  return Object.keys(IMPORTABLE)
    .map((resource) => {
      const names = Object.values(createInputOf(schema, resource).getFields()).map((field) => {
        const name = snakeCase(field.name);
        return name === 'metadata' ? 'metadata.&lt;key&gt;' : `${name}${isNonNullType(field.type) ? ' (required)' : ''}`;
      });
      return `${escape(resource)}: ${names.join(', ')}`;
    })
    .join('; ');
}

/** The section's HTML: faults of the form just sent, the recent imports of `organizationId` (none yet: undefined), the form. */
export async function importsSection(prisma: PrismaClient, user: SessionUser, organizationId: string | undefined, mode: Mode, extra: ImportExtra = {}): Promise<string> {
  const rows = organizationId ? await recentImports(prisma, organizationId) : [];
  const faults = extra.error ?? [];
  const error = faults.length
    ? `<div class="error" role="alert" id="import-error">${faults.length === 1 ? `<p>${escape(faults[0])}</p>` : `<ul>${faults.map((f) => `<li>${escape(f)}</li>`).join('')}</ul>`}</div>`
    : '';
  const chosenResource = extra.form?.resource ?? Object.keys(IMPORTABLE)[0];
  const chosenMode = extra.form?.mode === 'upsert' ? 'upsert' : 'create';
  const radio = (value: ImportMode, label: string) => `<label><input type="radio" name="mode" value="${value}"${chosenMode === value ? ' checked' : ''}> ${label}</label>`;
  return `<section id="imports">
    <h2>Imports</h2>
    ${error}
    ${rows.length === 0 ? '<p class="no-imports">No imports yet.</p>' : `<p>Imports run in the background: reload the page to follow one.</p>
    <table class="imports"><thead><tr><th>Started</th><th>Records</th><th>Mode</th><th>Status</th><th>Rows</th><th>Created</th><th>Updated</th><th>Failed</th></tr></thead><tbody>${rows.map(importRows).join('')}</tbody></table>`}
    <h3>Import a CSV file</h3>
    <p>The first line names the columns (${columnsHelp()}); then up to ${MAX_IMPORT_ROWS.toLocaleString('en')} rows, ${MAX_IMPORT_BYTES / 1024 / 1024} MiB at most. The API takes the same files: <code>POST /v1/imports</code>.</p>
    <form method="post" action="${IMPORTS_PATH}${mode === 'test' ? '?mode=test' : ''}" enctype="multipart/form-data" id="import-form">
      <input type="hidden" name="csrf" value="${escape(user.csrf)}">
      <label for="import-resource">Records</label>
      <select id="import-resource" name="resource" style="padding: .45rem; font: inherit">${Object.keys(IMPORTABLE)
        .map((resource) => `<option value="${escape(resource)}"${resource === chosenResource ? ' selected' : ''}>${escape(resource)}</option>`)
        .join('')}</select>
      <fieldset><legend>Mode</legend>
        ${radio('create', 'create: each row a new record')}
        ${radio('upsert', 'upsert: each row creates or updates the record holding its <code>external_id</code>')}
      </fieldset>
      <label for="import-file">CSV file</label><input id="import-file" name="file" type="file" accept=".csv,text/csv" required>
      <p><button class="primary" type="submit">Start import</button></p>
    </form>
  </section>`;
}

export interface ImportRouteDeps {
  prisma: PrismaClient;
  log: Logger;
  withUser(request: Request, then: (user: SessionUser) => Promise<Response>): Promise<Response>;
  /** The page's mode, from its address (`?mode=test`). */
  modeOf(request: Request): Mode;
  /** The whole account page, in `mode`, with the section as given, at this status. */
  page(user: SessionUser, mode: Mode, extra: ImportExtra, status: number): Promise<Response>;
  /** The answer to a form without this session's CSRF token. */
  stale(): Response;
  redirect(location: string): Response;
}

/** The posted form, read under the imports' byte cap, or why it could not be read. */
async function readUpload(request: Request): Promise<{ form: FormData } | { status: number; error?: string }> {
  const type = request.headers.get('content-type') ?? '';
  // Any other body carries no token to check, so it is refused as the other forms refuse one.
  if (!/^multipart\/form-data\s*;/i.test(type)) return { status: 403 };
  let body: string;
  try {
    body = await readBody(request, MAX_IMPORT_BYTES + FORM_OVERHEAD_BYTES);
  } catch (error) {
    if (!(error instanceof GraphQLError)) throw error;
    return codeOf(error) === 'PAYLOAD_TOO_LARGE' ? { status: 413, error: TOO_LARGE } : { status: 400, error: 'The file is not UTF-8 text: save it as CSV in UTF-8 and send it again.' };
  }
  try {
    return { form: (await new Response(body, { headers: { 'content-type': type } }).formData()) as FormData };
  } catch {
    // Whatever the parser trips on, it is the bytes this client sent.
    return { status: 400, error: 'The upload could not be read (it is not a well-formed form): choose the file and send it again.' };
  }
}

const text = (value: FormDataEntryValue | null) => (typeof value === 'string' ? value : '');

/** A fault of the file as the API names it (`csv`, or a column), in the page's words. */
function inWords(fault: FieldError): string {
  const what = fault.param === 'csv' ? 'The file' : /^column \d+$/.test(fault.param) ? `Column ${fault.param.slice(7)} of the header` : `Column “${fault.param}”`;
  return `${what} ${fault.message}.`;
}

/** POST /settings/imports: starts an import (post-redirect-get to the section), or shows the page with what is wrong. */
export function importRoute(deps: ImportRouteDeps) {
  const { prisma, log } = deps;
  return (request: Request) =>
    deps.withUser(request, async (user) => {
      const mode = deps.modeOf(request);
      const upload = await readUpload(request);
      if (!('form' in upload)) return upload.error ? deps.page(user, mode, { error: [upload.error] }, upload.status) : deps.stale();
      const { form } = upload;
      if (!sameSecret(text(form.get('csrf')), user.csrf)) return deps.stale();
      const resource = text(form.get('resource'));
      const importMode = text(form.get('mode')) || 'create';
      const values = { resource, mode: importMode };
      const refuse = (error: string[], status = 400) => deps.page(user, mode, { error, form: values }, status);
      const faults: string[] = [];
      if (!Object.hasOwn(IMPORTABLE, resource)) faults.push(`Records must be one of ${Object.keys(IMPORTABLE).join(', ')}.`);
      if (importMode !== 'create' && importMode !== 'upsert') faults.push('Mode must be create or upsert.');
      const file = form.get('file');
      // A form sent with no file chosen carries an empty part without a name.
      if (file === null || typeof file === 'string' || (file.name === '' && file.size === 0)) faults.push('Choose a CSV file to import.');
      else if (file.size > MAX_IMPORT_BYTES) return refuse([TOO_LARGE], 413);
      if (faults.length > 0) return refuse(faults);
      // The whole body was checked to be UTF-8, so the file's part is.
      const csv = await (file as File).text();
      let stored: ReturnType<typeof newImport>;
      try {
        stored = newImport(schema, resource, importMode as ImportMode, csv);
      } catch (error) {
        if (!(error instanceof GraphQLError)) throw error;
        const named = (error.extensions.errors as FieldError[] | undefined) ?? [];
        return refuse(named.length > 0 ? named.map(inWords) : [error.message]);
      }
      // The test twin is made on first use, as for a test key.
      const live = await prisma.organization.findUniqueOrThrow({ where: { id: user.organizationId } });
      const organization = await organizationFor(prisma, live, mode);
      // No request id of the API: the import's own id stands for it in its rows' events.
      const created = await prisma.import.create({ data: { organizationId: organization.id, ...stored, requestId: null }, select: { id: true } });
      log.info('import started', { user_id: user.userId, import_id: created.id, organization_id: organization.id, rows: stored.total });
      // Post-redirect-get: a reload shows the list, and never starts the import again.
      return deps.redirect(`/settings/api-keys${mode === 'test' ? '?mode=test' : ''}#imports`);
    });
}

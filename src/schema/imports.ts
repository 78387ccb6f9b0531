// CSV imports (CONTRACT section 10): `createImport` (REST: POST /v1/imports?resource=&mode=,
// the CSV as the body) judges the file and stores it; an instance's import loop writes its
// rows in the background (src/imports/worker.ts); `import(id)` (GET /v1/imports/{id}) shows
// its progress and per-row errors. The resource's write scope reads and starts its imports.
import { EVENT_TYPES } from '../events/types.js';
import { IMPORTABLE, newImport, type ImportMode } from '../imports/plan.js';
import { builder } from './builder.js';
import { InputCheck, isUuid } from './validation.js';

// The event an import ends with (written by a trigger, see the imports migration).
EVENT_TYPES.add('import.completed');
EVENT_TYPES.add('import.failed');

const ImportResource = builder.enumType('ImportResource', {
  description: 'What an import writes.',
  values: Object.keys(IMPORTABLE) as ['customers'],
});

const ImportMode = builder.enumType('ImportMode', {
  description: '`create`: each row a new record; `upsert`: each row creates or updates the live record holding its `external_id`.',
  values: ['create', 'upsert'] as const,
});

const ImportStatus = builder.enumType('ImportStatus', {
  description: '`pending` (not started), `running`, `completed` (every row written or refused: see `failed` and `errors`), `failed` (given up: it kept failing).',
  values: ['pending', 'running', 'completed', 'failed'] as const,
});

interface ImportRowError {
  row: number;
  param: string | null;
  message: string;
}

const ImportError = builder.objectRef<ImportRowError>('ImportRowError').implement({
  description: "A refused row's fault, as its single call would name it.",
  fields: (t) => ({
    row: t.exposeInt('row', { description: 'The data row, from 1 (the header is not a row).' }),
    param: t.exposeString('param', { nullable: true, description: 'The column (field) at fault; null when the row as a whole is (a wrong number of cells, a conflict).' }),
    message: t.exposeString('message'),
  }),
});

// The REST extension is written out: `import` is a row kind of its own (rest/routes.ts), with a CSV body.
const restRow = (kind: 'item' | 'import') => ({ rest: { path: 'imports', kind, ...(kind === 'item' ? { embedded: ['errors'] } : {}) } });

// Each answer reads only the columns its fields show: never the file, which the import keeps
// until it ends (up to 50 MiB), so a client polling a large import's progress does not fetch
// it every time.
const Import = builder.prismaObject('Import', {
  description: 'A CSV import and its progress.',
  select: { id: true },
  fields: (t) => ({
    id: t.exposeID('id'),
    status: t.field({ type: ImportStatus, select: { status: true }, resolve: (row) => row.status as 'pending' }),
    resource: t.field({ type: ImportResource, select: { resource: true }, resolve: (row) => row.resource as 'customers' }),
    mode: t.field({ type: ImportMode, select: { mode: true }, resolve: (row) => row.mode as ImportMode }),
    total: t.exposeInt('total', { description: 'Data rows in the file.' }),
    created: t.exposeInt('created', { description: 'Rows that created a record so far.' }),
    updated: t.exposeInt('updated', { description: 'Rows that updated a record so far (upsert).' }),
    failed: t.exposeInt('failed', { description: 'Rows refused so far (exact, however many).' }),
    errors: t.field({
      type: [ImportError],
      description: 'The refused rows\' faults, by row: the first 1,000.',
      select: { errors: true },
      resolve: (row) => row.errors as unknown as ImportRowError[],
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    completedAt: t.expose('completedAt', { type: 'DateTime', nullable: true }),
  }),
});

builder.queryFields((t) => ({
  import: t.prismaField({
    type: Import,
    nullable: true,
    description: "An import's progress and per-row errors.",
    authScopes: { scope: 'customers:write' },
    extensions: restRow('item'),
    args: { id: t.arg.id({ required: true }) },
    resolve: (query, _root, { id }, ctx) => (isUuid(String(id)) ? ctx.prisma.import.findFirst({ ...query, where: { id: String(id) } }) : null),
  }),
}));

builder.mutationFields((t) => ({
  createImport: t.prismaField({
    type: Import,
    description:
      'Starts an import of a CSV file: a header row of field names (snake_case; `metadata.<key>` for a metadata key), then up to 100,000 data rows, written in the background. Unknown, repeated or missing required columns are refused before anything runs.',
    authScopes: { scope: 'customers:write' },
    extensions: restRow('import'),
    args: {
      resource: t.arg({ type: ImportResource, description: 'What the rows are (required).' }),
      mode: t.arg({ type: ImportMode, description: '`create` when absent.' }),
      csv: t.arg.string({ required: true, description: 'The file (REST: the request body, Content-Type: text/csv).' }),
    },
    resolve: async (query, _root, args, ctx, info) => {
      const check = new InputCheck(ctx.inputErrors);
      if (!args.resource) check.fail('resource', `is required (one of ${Object.keys(IMPORTABLE).join(', ')})`);
      check.done();
      const stored = newImport(info.schema, args.resource!, args.mode ?? 'create', args.csv);
      return ctx.prisma.import.create({ ...query, data: { organizationId: ctx.auth.organizationId, ...stored, requestId: ctx.requestId } });
    },
  }),
}));

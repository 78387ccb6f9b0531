// install_resource_triggers (migration 20261127000000_resource_triggers): the one line a
// resource's migration needs for its triggers (its current version: statement_triggers). It
// must make exactly what the existing tables have, and a table given them behaves as a
// resource: versions and the change sequence stamped, its totals kept, its events written in
// its transaction and seen by others only once it commits.
// With TEST_CITUS_URL the database is distributed (Citus): the table is then distributed too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/connection.js';
import { migrate, readMigrations, type Migration } from '../../src/db/migrator.js';
import { DB_KINDS, migratedDatabase, ON_CITUS, type TestDatabase } from '../helpers/databases.js';

/** The arguments each existing table's hand-written triggers were made with. */
const EXISTING = [
  { table: 'customers', args: "'customer'" },
  { table: 'jobs', args: "'job', 'status'" },
  { table: 'emails', args: "'email', 'type'" },
  { table: 'invoices', args: "'invoice', 'status', 'invoice_line_items'" },
];

describe.each(DB_KINDS)('install_resource_triggers on %s', (kind) => {
  let migrated: TestDatabase;
  let db: Database;
  let citus: boolean;
  beforeAll(async () => {
    migrated = await migratedDatabase(kind);
    db = await openDatabase({ databaseUrl: migrated.env.DATABASE_URL, dataDir: migrated.env.DATA_DIR ?? '' });
    citus = (await db.sql.query("SELECT 1 FROM pg_extension WHERE extname = 'citus'")).length > 0;
  });
  afterAll(async () => {
    await db?.close();
    await migrated?.drop();
  });

  /** A table's own triggers (not Citus's or the foreign keys'), as CREATE statements. */
  const triggerDefs = async (table: string) =>
    (
      await db.sql.query<{ def: string }>(
        'SELECT pg_get_triggerdef(oid) AS def FROM pg_trigger WHERE tgrelid = $1::regclass AND NOT tgisinternal ORDER BY tgname',
        [table],
      )
    ).map((row) => row.def);

  /**
   * Applies `script` as one more migration, through the migrator. On Citus, in a session
   * where triggers on distributed tables are still refused, as in the one that applies
   * every migration of a new database in a row.
   */
  const scratch: Migration[] = [];
  const migration = async (script: string) => {
    const name = `99999999${String(scratch.length + 1).padStart(6, '0')}_scratch`;
    scratch.push({ name, script: `${citus ? "SELECT set_config('citus.enable_unsafe_triggers', 'off', true);\n" : ''}${script}`, checksum: name });
    expect(await migrate(db.sql, [...readMigrations(), ...scratch])).toEqual([name]);
  };

  it.each(EXISTING)('makes the triggers $table has, to the letter', async ({ table, args }) => {
    const copy = `scratch_${table}`;
    await migration(`CREATE TABLE ${copy} (LIKE ${table}); SELECT install_resource_triggers('${copy}', ${args});`);
    const expected = (await triggerDefs(table)).map((def) =>
      def.replace(new RegExp(`^(CREATE (?:CONSTRAINT )?TRIGGER )${table}_| ON (public\\.)?${table} `, 'g'), (match) => match.replace(table, copy)),
    );
    // Per row on Citus (it refuses statement triggers); per statement elsewhere, except the
    // events of a table with lines (written at commit, when the lines are there).
    const perStatement = citus ? 0 : table === 'invoices' ? 3 : 5;
    expect(expected.filter((def) => def.includes('FOR EACH STATEMENT'))).toHaveLength(perStatement);
    expect(expected).toHaveLength(citus ? 3 : table === 'invoices' ? 5 : 6);
    expect(await triggerDefs(copy)).toEqual(expected);
  });

  it('gives a new tenant table versions, the change sequence, totals by its split column and events seen once committed', async () => {
    // What a resource's migration holds, as Prisma's diff writes it: the table, its indexes,
    // the one line, then its named foreign keys (on Citus the line must come before them:
    // a local table may not refer to customers).
    // The enumeration from a migration of its own: creating a type in the same transaction
    // would switch Citus to sequential mode and hide whether the line does that itself.
    await migration("CREATE TYPE scratch_note_kind AS ENUM ('call', 'visit')");
    await migration(`
      CREATE TABLE scratch_notes (
        id UUID NOT NULL DEFAULT gen_random_uuid(),
        organization_id UUID NOT NULL,
        customer_id UUID NOT NULL,
        kind scratch_note_kind NOT NULL DEFAULT 'call',
        body TEXT NOT NULL,
        version INTEGER NOT NULL DEFAULT 1,
        deleted_at TIMESTAMPTZ(3),
        change_seq BIGINT NOT NULL DEFAULT 0,
        CONSTRAINT scratch_notes_pkey PRIMARY KEY (organization_id, id)
      );
      CREATE INDEX scratch_notes_organization_id_change_seq_idx ON scratch_notes (organization_id, change_seq);
      SELECT install_resource_triggers('scratch_notes', 'scratch_note', 'kind');
      ALTER TABLE scratch_notes ADD CONSTRAINT scratch_notes_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES organizations(id) ON DELETE RESTRICT ON UPDATE NO ACTION;
      ALTER TABLE scratch_notes ADD CONSTRAINT scratch_notes_organization_id_customer_id_fkey FOREIGN KEY (organization_id, customer_id) REFERENCES customers(organization_id, id) ON DELETE RESTRICT ON UPDATE NO ACTION;
    `);
    if (citus) {
      const [placed] = await db.sql.query<{ column: string; colocated: boolean }>(
        `SELECT n.distribution_column AS column, n.colocation_id = c.colocation_id AS colocated
         FROM citus_tables n, citus_tables c WHERE n.table_name = 'scratch_notes'::regclass AND c.table_name = 'organization_counters'::regclass`,
      );
      expect(placed).toEqual({ column: 'organization_id', colocated: true });
    }

    const organizationId = (await db.prisma.organization.create({ data: { name: `Scratch ${kind}` } })).id;
    const customerId = (await db.prisma.customer.create({ data: { organizationId, name: 'Ann' } })).id;
    const counter = async () =>
      Number((await db.sql.query<{ seq: string | number }>('SELECT change_seq AS seq FROM organization_counters WHERE organization_id = $1', [organizationId]))[0]!.seq);
    const events = async () =>
      (await db.sql.query<{ seq: string | number; type: string; body: string; previous: Record<string, unknown> | null }>(
        "SELECT seq, type, object ->> 'body' AS body, previous FROM events WHERE organization_id = $1 AND resource = 'scratch_note' ORDER BY seq",
        [organizationId],
      )).map((event) => ({ ...event, seq: Number(event.seq) }));
    const counts = async () =>
      Object.fromEntries(
        (await db.sql.query<{ status: string; count: string | number }>(
          "SELECT status, count FROM record_counts WHERE organization_id = $1 AND resource = 'scratch_notes'",
          [organizationId],
        )).map((row) => [row.status, Number(row.count)]),
      );

    // The record is stamped at once; its event is seen by others once the transaction commits.
    const noteId = await db.prisma.$transaction(async (tx) => {
      // RETURNING kind::text, as Prisma reads an enumeration (on Citus it needs the immutable cast).
      const [note] = await tx.$queryRawUnsafe<{ id: string; kind: string; version: number; change_seq: bigint }[]>(
        'INSERT INTO scratch_notes (organization_id, customer_id, body) VALUES ($1::uuid, $2::uuid, $3) RETURNING id, kind::text, version, change_seq',
        organizationId, customerId, 'Called',
      );
      expect(note).toMatchObject({ kind: 'call', version: 1 });
      // (PGlite has one connection: a second would wait for this transaction.)
      if (kind === 'postgres') expect(await db.sql.query("SELECT 1 FROM events WHERE organization_id = $1 AND resource = 'scratch_note'", [organizationId])).toEqual([]);
      return note!.id;
    });
    expect(await events()).toEqual([{ seq: await counter(), type: 'scratch_note.created', body: 'Called', previous: null }]);
    await db.sql.query("INSERT INTO scratch_notes (organization_id, customer_id, kind, body) VALUES ($1, $2, 'visit', 'Visited')", [organizationId, customerId]);
    expect(await counts()).toEqual({ call: 1, visit: 1 });

    const change = async (set: string) => {
      const [row] = await db.sql.query<{ version: number; change_seq: string | number }>(
        `UPDATE scratch_notes SET ${set} WHERE organization_id = $1 AND id = $2 RETURNING version, change_seq`,
        [organizationId, noteId],
      );
      expect(Number(row!.change_seq)).toBe(await counter());
      return row!.version;
    };
    expect(await change("body = 'Called back'")).toBe(2);
    expect(await change("kind = 'visit'")).toBe(3);
    expect(await counts()).toEqual({ call: 0, visit: 2 });
    expect(await change('deleted_at = now()')).toBe(4);
    expect(await counts()).toEqual({ call: 0, visit: 1 });
    expect(await change('deleted_at = NULL')).toBe(5);
    expect(await counts()).toEqual({ call: 0, visit: 2 });
    await db.sql.query('DELETE FROM scratch_notes WHERE organization_id = $1 AND id = $2', [organizationId, noteId]);
    expect(await counts()).toEqual({ call: 0, visit: 1 });

    const log = await events();
    expect(log.map((event) => event.type)).toEqual([
      'scratch_note.created',
      'scratch_note.created',
      'scratch_note.updated',
      'scratch_note.updated',
      'scratch_note.deleted',
      'scratch_note.restored',
    ]);
    expect(log[2]!.previous).toEqual({ body: 'Called' });
    expect(log[3]!.previous).toEqual({ kind: 'call' });
  });
  // Not declared on Citus: its tables keep the row triggers, and a statement over two
  // organizations spans shards, whose prepared commit the event trigger's NOTIFY refuses (the
  // service's statements each stay within one organization).
  if (!ON_CITUS) it('keeps totals and events exact through statements of many rows over two organizations', async () => {
    const organizations = await Promise.all(['Rows A', 'Rows B'].map(async (name) => (await db.prisma.organization.create({ data: { name: `${name} ${kind}` } })).id));
    const customers = await Promise.all(organizations.map(async (organizationId) => (await db.prisma.customer.create({ data: { organizationId, name: 'Owner' } })).id));
    /** The totals as kept, against the totals counted from the rows themselves (zero totals left out). */
    const totals = async () => {
      const kept = await db.sql.query<{ organization_id: string; status: string; count: string | number }>(
        "SELECT organization_id, status, count FROM record_counts WHERE resource = 'jobs' AND organization_id = ANY($1::uuid[]) AND count <> 0 ORDER BY 1, 2",
        [organizations],
      );
      const counted = await db.sql.query<{ organization_id: string; status: string; count: string | number }>(
        'SELECT organization_id, status::text AS status, count(*) AS count FROM jobs WHERE deleted_at IS NULL AND organization_id = ANY($1::uuid[]) GROUP BY 1, 2 ORDER BY 1, 2',
        [organizations],
      );
      const plain = (rows: typeof kept) => rows.map((row) => `${row.organization_id} ${row.status} ${Number(row.count)}`);
      expect(plain(kept)).toEqual(plain(counted));
      return plain(kept).length;
    };
    const jobEvents = async () => Number((await db.sql.query<{ n: string | number }>("SELECT count(*) AS n FROM events WHERE resource = 'job' AND organization_id = ANY($1::uuid[])", [organizations]))[0]!.n);

    // One INSERT: three jobs in each organization, in several statuses.
    await db.sql.query(
      `INSERT INTO jobs (id, organization_id, customer_id, title, status, updated_at)
       SELECT gen_random_uuid(), o.id, o.customer, 'Job ' || s.status, s.status::job_status, now()
       FROM unnest($1::uuid[], $2::uuid[]) AS o(id, customer), unnest(ARRAY['scheduled', 'scheduled', 'in_progress']) AS s(status)`,
      [organizations, customers],
    );
    expect(await totals()).toBe(4);
    expect(await jobEvents()).toBe(6);
    // One UPDATE over both: statuses move, one job a side is deleted and one changes only its title.
    await db.sql.query(
      `UPDATE jobs SET
         status = CASE WHEN status = 'in_progress' THEN 'completed'::job_status ELSE status END,
         deleted_at = CASE WHEN title = 'Job scheduled' AND id = (SELECT min(id::text)::uuid FROM jobs j WHERE j.organization_id = jobs.organization_id AND j.title = 'Job scheduled') THEN now() END,
         title = title || '!'
       WHERE organization_id = ANY($1::uuid[])`,
      [organizations],
    );
    expect(await totals()).toBe(4);
    const types = await db.sql.query<{ type: string; n: string | number }>(
      "SELECT type, count(*) AS n FROM events WHERE resource = 'job' AND organization_id = ANY($1::uuid[]) GROUP BY 1 ORDER BY 1",
      [organizations],
    );
    expect(types.map((row) => `${row.type} ${Number(row.n)}`)).toEqual(['job.completed 2', 'job.created 6', 'job.deleted 2', 'job.updated 2']);
    // One DELETE of every job: the live ones leave the totals, the deleted ones were out already.
    await db.sql.query('DELETE FROM jobs WHERE organization_id = ANY($1::uuid[])', [organizations]);
    expect(await totals()).toBe(0);
  });
});

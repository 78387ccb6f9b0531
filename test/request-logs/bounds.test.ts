// The request log is bounded: a flood beyond the writer's buffer is dropped and counted (the
// buffer never grows past its cap), and the purge keeps 7 days and at most a number of rows
// per organization, the newest. Driven directly on a real database: entries are recorded
// without yielding (so no timed flush can run between them) and flushed on demand.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/connection.js';
import { createLogger } from '../../src/logger.js';
import { purgeRequestLogs } from '../../src/request-logs/retention.js';
import { createRequestLogWriter, type RequestLogEntry } from '../../src/request-logs/writer.js';
import { DB_KINDS, migratedDatabase, type TestDatabase } from '../helpers/databases.js';

describe.each(DB_KINDS)('request log bounds on %s', (kind) => {
  let test: TestDatabase;
  let db: Database;
  let output = '';
  const log = createLogger('info', (line) => (output += line));
  const orgs: string[] = [];

  beforeAll(async () => {
    test = await migratedDatabase(kind);
    db = await openDatabase({ databaseUrl: test.env.DATABASE_URL, dataDir: test.env.DATA_DIR ?? '' });
    for (const name of ['Flood Co', 'Quiet Co']) orgs.push((await db.prisma.organization.create({ data: { name } })).id);
  });
  afterAll(async () => {
    await db?.close();
    await test?.drop();
  });

  const entry = (organizationId: string, n: number, createdAt = new Date()): RequestLogEntry => ({
    organizationId,
    requestId: `req-${n}`,
    method: 'GET',
    path: '/v1/customers',
    status: 200,
    durationMs: 1,
    errorCode: null,
    keyPrefix: 'svc_live_abcdefgh',
    createdAt,
  });
  const count = async (organizationId: string) => db.prisma.requestLog.count({ where: { organizationId } });

  it('drops and counts what a flood sends beyond the buffer, and writes the rest in batches', async () => {
    // A timer that never fires in the test: only flush() writes.
    const writer = createRequestLogWriter(db.sql, log, { maxPending: 50, maxPerFlush: 20, flushEveryMs: 3_600_000 });
    for (let n = 0; n < 500; n++) writer.record(entry(orgs[0]!, n));
    expect(writer.dropped()).toBe(450);
    await writer.flush();
    expect(await count(orgs[0]!)).toBe(50);
    // The first 50 were kept (a flood never displaces what was already accepted).
    const kept = await db.prisma.requestLog.findMany({ where: { organizationId: orgs[0]! }, select: { requestId: true } });
    expect(new Set(kept.map((row) => row.requestId))).toEqual(new Set(Array.from({ length: 50 }, (_, n) => `req-${n}`)));
    expect(output).toContain('"msg":"request log entries dropped: the buffer was full","count":450');
    // Room again once written: the next entries are accepted.
    writer.record(entry(orgs[0]!, 1000));
    expect(writer.dropped()).toBe(450);
    await writer.stop();
    expect(await count(orgs[0]!)).toBe(51);
  });

  it('purges rows older than 7 days, and an organization beyond its cap down to its newest rows', async () => {
    const writer = createRequestLogWriter(db.sql, log, { flushEveryMs: 3_600_000 });
    const old = new Date(Date.now() - 8 * 86_400_000);
    for (let n = 0; n < 5; n++) writer.record(entry(orgs[1]!, n, old));
    for (let n = 5; n < 8; n++) writer.record(entry(orgs[1]!, n));
    await writer.stop();
    expect(await count(orgs[1]!)).toBe(8);
    expect(await count(orgs[0]!)).toBe(51);
    const newest = await db.prisma.requestLog.findMany({ where: { organizationId: orgs[0]! }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: 20, select: { id: true } });
    await purgeRequestLogs(db.prisma, log, { rowsPerOrganization: 20 });
    // The quiet organization keeps its 3 recent rows; the flood one is cut to its newest 20.
    const quiet = await db.prisma.requestLog.findMany({ where: { organizationId: orgs[1]! }, select: { requestId: true } });
    expect(quiet.map((row) => row.requestId).sort()).toEqual(['req-5', 'req-6', 'req-7']);
    const left = await db.prisma.requestLog.findMany({ where: { organizationId: orgs[0]! }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], select: { id: true } });
    expect(left).toEqual(newest);
    expect(output).not.toContain('request log purge failed');
  });
});

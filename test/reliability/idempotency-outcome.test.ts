// How an Idempotency-Key settles when the database link fails around a write: a key whose
// request changed nothing is free again at once; a key whose request committed answers
// that, never a second write; a key is never left "in progress" by a request that ended.
// In-process, through a TCP proxy that cuts the link at a chosen statement, on PostgreSQL.
import { afterEach, describe, expect, it } from 'vitest';
import { startAppBehindProxy, type Answer, type AppBehindProxy } from '../helpers/app-behind-proxy.js';

describe('Idempotency-Key outcomes across database failures', () => {
  let app: AppBehindProxy;
  afterEach(() => app?.stop());

  const create = (name: string, key: string, headers: Record<string, string> = {}) =>
    app.call('POST', '/v1/customers', { json: { name }, headers: { 'idempotency-key': key, ...headers } });
  const customers = (name: string) => app.direct.prisma.customer.count({ where: { name } });
  /**
   * Sends as a client does after an outage: again while the answer is 503 (a request that
   * meets a connection whose reset is not noticed yet gets one too).
   */
  async function retried(send: () => Promise<Answer>): Promise<Answer> {
    for (let attempt = 0; ; attempt++) {
      const answer = await send();
      if (answer.status !== 503 || attempt === 20) return answer;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  it('a create whose COMMIT committed but whose answer was lost answers 201 with the record, and its retry replays it', async () => {
    app = await startAppBehindProxy();
    const lost = app.proxy.cutAfter('COMMIT', { after: 'INSERT INTO "customers"' }).then(() => app.proxy.restore());
    const first = await create('Lost answer', 'lost-answer');
    await lost;
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.body.name).toBe('Lost answer');
    expect(first.headers.get('location')).toBe(`/v1/customers/${first.body.id}`);
    const retry = await create('Lost answer', 'lost-answer');
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toEqual(first.body);
    expect(await customers('Lost answer')).toBe(1);
    // The rebuilt answer is the record as REST shows it.
    const read = await app.call('GET', `/v1/customers/${first.body.id}`);
    expect(read.body).toEqual(first.body);
    expect(read.headers.get('etag')).toBe(first.headers.get('etag'));
  });

  it('a create whose COMMIT reaches PostgreSQL only after the link broke is found committed, never run twice', async () => {
    app = await startAppBehindProxy();
    // The service sees the cut at once; its COMMIT runs 300 ms later, after the check began.
    const lost = app.proxy.cutAfter('COMMIT', { after: 'INSERT INTO "customers"', lateMs: 300 }).then(() => app.proxy.restore());
    const first = await create('Late commit', 'late-commit');
    await lost;
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const retry = await create('Late commit', 'late-commit');
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toEqual(first.body);
    expect(await customers('Late commit')).toBe(1);
  });

  it('a create whose COMMIT committed while the database stays away answers 503 "unknown"; once it is back, the retry finds the committed record', async () => {
    app = await startAppBehindProxy();
    const lost = app.proxy.cutAfter('COMMIT', { after: 'INSERT INTO "customers"' });
    const first = await create('Committed, unknown', 'commit-unknown');
    await lost;
    expect(first.status).toBe(503);
    expect(first.body.code).toBe('UNAVAILABLE');
    expect(first.body.detail).toMatch(/Retry with the same Idempotency-Key/);
    expect(Number(first.headers.get('retry-after'))).toBeGreaterThan(0);
    // While the database is away the retry cannot tell either: 503, never 409.
    const during = await create('Committed, unknown', 'commit-unknown');
    expect(during.status).toBe(503);

    app.proxy.restore();
    const retry = await retried(() => create('Committed, unknown', 'commit-unknown'));
    expect(retry.status, JSON.stringify(retry.body)).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await customers('Committed, unknown')).toBe(1);
    expect((await app.call('GET', `/v1/customers/${retry.body.id}`)).body).toEqual(retry.body);
    expect((await create('Committed, unknown', 'commit-unknown')).body).toEqual(retry.body);
  });

  it('a create cut before its COMMIT leaves its key free: once the database is back the retry runs it, once', async () => {
    app = await startAppBehindProxy();
    const cut = app.proxy.cutAfter('INSERT INTO "customers"');
    const first = await create('Never committed', 'never-committed');
    await cut;
    expect(first.status).toBe(503);
    app.proxy.restore();
    const retry = await retried(() => create('Never committed', 'never-committed'));
    expect(retry.status, JSON.stringify(retry.body)).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(await customers('Never committed')).toBe(1);
  });

  it('a claim of a key whose answer was lost is taken back: the retry runs the request', async () => {
    app = await startAppBehindProxy();
    const cut = app.proxy.cutAfter('INSERT INTO "public"."idempotency_keys"');
    const first = await create('Lost claim', 'lost-claim');
    await cut;
    expect(first.status).toBe(503);
    app.proxy.restore();
    const retry = await retried(() => create('Lost claim', 'lost-claim'));
    expect(retry.status, JSON.stringify(retry.body)).toBe(201);
    expect(await customers('Lost claim')).toBe(1);
  });

  it('a lost claim whose INSERT reaches PostgreSQL after it was taken back does not hold the key: the retry runs the request', async () => {
    app = await startAppBehindProxy();
    // The service sees the cut at once and takes its claim back (250 ms on, once the link is
    // back: nothing to delete yet); the claim's INSERT lands 1.5 s after the cut.
    const cut = app.proxy.cutAfter('INSERT INTO "public"."idempotency_keys"', { lateMs: 1_500 });
    const first = await create('Late claim', 'late-claim');
    await cut;
    expect(first.status).toBe(503);
    app.proxy.restore();
    const claims = () => app.direct.prisma.idempotencyKey.count({ where: { key: { endsWith: ':late-claim' } } });
    await expect.poll(claims).toBe(1);
    const retry = await retried(() => create('Late claim', 'late-claim'));
    expect(retry.status, JSON.stringify(retry.body)).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(await customers('Late claim')).toBe(1);
    // The key now answers that request.
    const again = await create('Late claim', 'late-claim');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(retry.body);
  });

  it('a GraphQL mutation whose COMMIT committed but whose answer was lost is not run again: its key answers what it changed', async () => {
    app = await startAppBehindProxy();
    const mutation = { query: 'mutation { createCustomer(input: { name: "GraphQL lost" }) { id name } }' };
    // The client's own request id, which the server adopts and the change's event carries.
    const headers = { 'idempotency-key': 'graphql-lost', 'x-request-id': 'graphql-lost-1' };
    const lost = app.proxy.cutAfter('COMMIT', { after: 'INSERT INTO "customers"' });
    const first = await app.call('POST', '/graphql', { json: mutation, headers });
    await lost;
    expect(first.status).toBe(503);
    expect(first.body.errors[0].extensions.code).toBe('UNAVAILABLE');
    app.proxy.restore();
    const retry = await retried(() => app.call('POST', '/graphql', { json: mutation, headers: { ...headers, 'x-request-id': 'graphql-lost-2' } }));
    expect(retry.status, JSON.stringify(retry.body)).toBe(409);
    expect(retry.body.errors[0].extensions.code).toBe('CONFLICT');
    const [record] = retry.body.errors[0].extensions.records;
    expect(record).toMatchObject({ type: 'customer', event: 'customer.created' });
    expect(await customers('GraphQL lost')).toBe(1);
    expect((await app.call('GET', `/v1/customers/${record.id}`)).body.name).toBe('GraphQL lost');
  });

  it('after four database cuts, every key ends with exactly one record and none stays in progress', async () => {
    app = await startAppBehindProxy();
    const KEYS = 16;
    let cutting = true;
    const seen: number[] = [];
    // Each client sends its create and, on a 503, retries it with the same key.
    const client = async (i: number) => {
      for (;;) {
        const answer = await create(`Storm ${i}`, `storm-${i}`);
        seen.push(answer.status);
        if (answer.status !== 503) return answer;
        await new Promise((resolve) => setTimeout(resolve, cutting ? 50 : 200));
      }
    };
    const clients = Promise.all(Array.from({ length: KEYS }, (_, i) => client(i)));
    for (let outage = 0; outage < 4; outage++) {
      await new Promise((resolve) => setTimeout(resolve, 300));
      app.proxy.cut();
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      app.proxy.restore();
    }
    cutting = false;
    const answers = await clients;
    expect(seen.filter((s) => s !== 201 && s !== 503)).toEqual([]);
    expect(answers.map((a) => a.status)).toEqual(Array(KEYS).fill(201));
    for (let i = 0; i < KEYS; i++) expect(await customers(`Storm ${i}`)).toBe(1);
    // Every key replays its record.
    for (let i = 0; i < KEYS; i++) {
      const replay = await create(`Storm ${i}`, `storm-${i}`);
      expect(replay.status).toBe(201);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.body.id).toBe(answers[i]!.body.id);
    }
    expect(await app.direct.prisma.idempotencyKey.count({ where: { status: null } })).toBe(0);
    expect(app.output()).not.toContain('"level":"error"');
  }, 60_000);
});

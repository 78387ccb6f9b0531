// Redis Cluster (CONTRACT §10): two instances whose REDIS_URL names ONE node of a real
// three-master cluster share the limits exactly, and the redirects (MOVED) to the other
// nodes are never taken for an outage. In-process apps; the cluster is redis-server child
// processes on loopback ports, killed with their folder after the tests on every path.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/auth/api-keys.js';
import { allScopes } from '../../src/auth/scopes.js';
import '../../src/schema/index.js';
import { openDatabase, type Database } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrator.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { createRateLimiter, type RateLimiter } from '../../src/rate-limit.js';
import { redisKey } from '../../src/rate-limit/redis.js';
import { createApp } from '../../src/server.js';
import { migratedDatabase, type TestDatabase } from '../helpers/databases.js';

const MASTERS = 3;
const LIMIT = 5;

/** A port free on loopback, with its cluster bus port (port + 10000) free too. */
async function freePortPair(): Promise<number> {
  const free = (port: number) =>
    new Promise<boolean>((resolve) => {
      const server = createServer()
        .once('error', () => resolve(false))
        .listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
  for (;;) {
    // Below the usual ephemeral range, so outgoing connections do not take them meanwhile.
    const port = 20_000 + Math.floor(Math.random() * 10_000);
    if ((await free(port)) && (await free(port + 10_000))) return port;
  }
}

/** Runs `command` to its end; rejects with its output when it fails or is not installed. */
function run(command: string, args: string[], onStart?: (child: ChildProcess) => void, ready?: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    onStart?.(child);
    let output = '';
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      if (ready?.test(output)) resolve(output);
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'ENOENT' ? new Error(`${command} is not installed: this test runs a real Redis Cluster (Debian: apt-get install redis-server)`) : error),
    );
    child.once('exit', (code) => (code === 0 && !ready ? resolve(output) : reject(new Error(`${command} ${args.join(' ')} exited with ${code}:\n${output}`))));
  });
}

/** Three masters on loopback, each a child process, formed into one cluster. */
class LocalCluster {
  readonly dir = mkdtempSync(join(tmpdir(), 'crm-redis-cluster-'));
  readonly ports: number[] = [];
  private readonly children: ChildProcess[] = [];
  private readonly clients: Redis[] = [];

  /** Starts (or starts again: its nodes file keeps its place in the cluster) the node on `port`. */
  private node(port: number): Promise<string> {
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', join(this.dir, `nodes-${port}.conf`)];
    args.push('--dir', this.dir, '--save', '', '--appendonly', 'no', '--daemonize', 'no');
    return run('redis-server', args, (child) => this.children.push(child), /Ready to accept connections/);
  }

  async start(): Promise<void> {
    while (this.ports.length < MASTERS) {
      const port = await freePortPair();
      try {
        await this.node(port);
        this.ports.push(port);
      } catch (error) {
        // Taken between the check and the start: another port. Anything else is a failure.
        if (!/Address already in use/.test((error as Error).message)) throw error;
      }
    }
    await run('redis-cli', ['--cluster', 'create', ...this.ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes']);
    for (const port of this.ports) this.clients.push(new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 1 }).on('error', () => undefined));
    await this.ok();
  }

  /** Resolves once every node sees every slot served. */
  private async ok(): Promise<void> {
    for (const client of this.clients) {
      const deadline = Date.now() + 30_000;
      while (!/cluster_state:ok/.test(String(await client.call('CLUSTER', 'INFO').catch(() => '')))) {
        if (Date.now() > deadline) throw new Error(`Redis Cluster node ${client.options.port} did not reach cluster_state:ok`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  }

  /** Kills the node on `port` (a crash: SIGKILL). */
  async kill(port: number): Promise<void> {
    const child = this.children.find((c) => c.spawnargs.includes(String(port)) && c.exitCode === null && c.signalCode === null)!;
    await new Promise((resolve) => child.once('exit', resolve).kill('SIGKILL'));
  }

  /** Starts the node on `port` again and waits for the cluster to be whole. */
  async restart(port: number): Promise<void> {
    await this.node(port);
    await this.ok();
  }

  /** The port of the master serving `key`. */
  async ownerOf(key: string): Promise<number> {
    const slot = Number(await this.clients[0]!.call('CLUSTER', 'KEYSLOT', key));
    const ranges = (await this.clients[0]!.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
    return ranges.find(([from, to]) => slot >= from && slot <= to)![2][1];
  }

  /** Runs `args` on every node (ACLs, for one, are per node). */
  async onEveryNode(...args: string[]): Promise<void> {
    await Promise.all(this.clients.map((client) => client.call(args[0]!, ...args.slice(1))));
  }

  /** How many keys each master holds, by port. */
  async keysPerNode(): Promise<Map<number, number>> {
    return new Map(await Promise.all(this.clients.map(async (client, i) => [this.ports[i]!, await client.dbsize()] as [number, number])));
  }

  async stop(): Promise<void> {
    for (const client of this.clients) client.disconnect();
    await Promise.all(
      this.children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGKILL');
          }),
      ),
    );
    rmSync(this.dir, { recursive: true, force: true });
  }
}

it('REDIS_URL accepts a cluster URL', () => {
  for (const url of ['redis+cluster://127.0.0.1:7000', 'rediss+cluster://user:secret@cache.internal:6380']) expect(loadConfig({ REDIS_URL: url }).redisUrl).toBe(url);
  expect(() => loadConfig({ REDIS_URL: 'cluster://127.0.0.1:7000' })).toThrow(/REDIS_URL must be a URL starting with redis, rediss, redis\+cluster or rediss\+cluster/);
});

describe('rate limits on a Redis Cluster, REDIS_URL naming one node', () => {
  const cluster = new LocalCluster();
  let test: TestDatabase;
  let db: Database;
  let organizationId: string;
  const limiters: RateLimiter[] = [];
  const logged: { level: string; msg: string }[] = [];
  const log = createLogger('info', (line) => void logged.push(JSON.parse(line)));

  beforeAll(async () => {
    await cluster.start();
    test = await migratedDatabase('pglite');
    db = await openDatabase({ dataDir: test.env.DATA_DIR! });
    await migrate(db.sql);
    organizationId = (await db.prisma.organization.create({ data: { name: 'Acme' } })).id;
  });
  afterAll(async () => {
    await Promise.all(limiters.map((limiter) => limiter.close()));
    await db?.close();
    await test?.drop();
    await cluster.stop();
  });

  /** Two instances of the service, sharing the database and REDIS_URL. */
  async function instances(redisUrl: string) {
    return Promise.all(
      [1, 2].map(async () => {
        const rateLimiter = createRateLimiter({ redisUrl, max: LIMIT, windowSeconds: 3600, log });
        limiters.push(rateLimiter);
        await rateLimiter.ready; // as serve.ts does before listening
        return createApp({ db, log, rateLimiter });
      }),
    );
  }

  /** API keys until at least two are counted on each master (so most requests are redirected from the one named). */
  async function keysOnEveryNode(): Promise<string[]> {
    const keys: string[] = [];
    const perNode = new Map<number, number>();
    while (cluster.ports.some((port) => (perNode.get(port) ?? 0) < 2)) {
      const { key, record } = await createApiKey(db.prisma, { organizationId, name: 'cluster', scopes: allScopes() });
      const owner = await cluster.ownerOf(redisKey('rate-limit:', `key:${record.id}`));
      perNode.set(owner, (perNode.get(owner) ?? 0) + 1);
      keys.push(key);
    }
    return keys;
  }

  /**
   * One request at a time: the embedded database works on this process's event loop, and
   * requests in parallel would hold a Redis reply past the limiter's 500 ms on a busy machine.
   */
  async function tenRequestsPerKey(apps: Awaited<ReturnType<typeof instances>>, keys: string[]) {
    const outcomes: { status: number; remaining: string | null }[][] = [];
    for (const key of keys) {
      const seen: { status: number; remaining: string | null }[] = [];
      for (let i = 0; i < 10; i++) {
        const response = await apps[i % 2]!.fetch(new Request('http://test/v1/customers', { headers: { authorization: `Bearer ${key}` } }));
        await response.arrayBuffer();
        seen.push({ status: response.status, remaining: response.headers.get('ratelimit-remaining') });
      }
      outcomes.push(seen);
    }
    return outcomes;
  }

  for (const [scheme, form] of [
    ['redis', 'found a cluster node at start'],
    ['redis+cluster', 'said to be a cluster'],
  ] as const) {
    it(`${scheme}://: each key is admitted exactly ${LIMIT} times out of 10 alternating between two instances, and nothing is taken for an outage (${form})`, async () => {
      const before = await cluster.keysPerNode();
      const apps = await instances(`${scheme}://127.0.0.1:${cluster.ports[0]}`);
      const keys = await keysOnEveryNode();
      const outcomes = await tenRequestsPerKey(apps, keys);
      for (const seen of outcomes) {
        expect(seen.map((s) => s.status)).toEqual([200, 200, 200, 200, 200, 429, 429, 429, 429, 429]);
        // One count for both instances: each admitted request leaves one less, whichever instance took it.
        expect(seen.slice(0, LIMIT).map((s) => s.remaining)).toEqual(['4', '3', '2', '1', '0']);
      }
      expect(logged.filter((line) => line.level === 'warn')).toEqual([]);
      // The counts are in the cluster, on every master: not in either instance's memory.
      const after = await cluster.keysPerNode();
      for (const port of cluster.ports) expect(after.get(port)!).toBeGreaterThanOrEqual(before.get(port)! + 2);
    });
  }

  it('a node that will not say it is one (INFO refused to the user): the first redirect moves the instance to the cluster client', async () => {
    // Without INFO the instance cannot tell a cluster node at start, and talks to it as to one
    // server: keys the node holds are counted there, the others answer MOVED.
    await cluster.onEveryNode('ACL', 'SETUSER', 'limiter', 'on', '>s3cret', '~*', '&*', '+@all', '-info');
    const before = await cluster.keysPerNode();
    const notices = logged.length;
    const apps = await instances(`redis://limiter:s3cret@127.0.0.1:${cluster.ports[0]}`);
    expect(logged.slice(notices).filter((line) => line.msg.startsWith('Redis is a cluster'))).toEqual([]);
    const keys = await keysOnEveryNode();
    for (const seen of await tenRequestsPerKey(apps, keys)) {
      expect(seen.map((s) => s.status)).toEqual([200, 200, 200, 200, 200, 429, 429, 429, 429, 429]);
      expect(seen.slice(0, LIMIT).map((s) => s.remaining)).toEqual(['4', '3', '2', '1', '0']);
    }
    expect(logged.filter((line) => line.level === 'warn')).toEqual([]);
    expect(logged.slice(notices).filter((line) => line.msg.startsWith('Redis is a cluster'))).toHaveLength(2); // one per instance
    const after = await cluster.keysPerNode();
    for (const port of cluster.ports) expect(after.get(port)!).toBeGreaterThanOrEqual(before.get(port)! + 2);
  });

  it('a master that crashes: one warning, counting in memory until it is back (no flapping while it is out), then shared again', async () => {
    // Last: it takes a node down. Identities the limiter sees, on the node that goes and on the one named.
    const [named, lost] = [cluster.ports[0]!, cluster.ports[2]!];
    const on = async (port: number) => {
      for (let i = 0; ; i++) if ((await cluster.ownerOf(redisKey('rate-limit:', `crash:${i}`))) === port) return `crash:${i}`;
    };
    const [here, there] = [await on(named), await on(lost)];
    const notices = logged.length;
    const warnings = () => logged.slice(notices).filter((line) => line.level === 'warn').map((line) => line.msg);
    const limiter = createRateLimiter({ redisUrl: `redis://127.0.0.1:${named}`, max: LIMIT, windowSeconds: 3600, log });
    limiters.push(limiter);
    await limiter.ready;
    expect(await limiter.consume(there)).toMatchObject({ remaining: 4 });

    await cluster.kill(lost);
    await limiter.consume(there);
    expect(warnings()).toEqual([expect.stringMatching(/^Redis is unreachable/)]);
    // Over three probe periods, the node named answers and the lost one does not: the probe asks
    // the lost one, so the limiter stays in memory (a PING to any node would flip it back each second).
    const deadline = Date.now() + 3_000;
    while (Date.now() < deadline) {
      await limiter.consume(here);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(warnings()).toEqual([expect.stringMatching(/^Redis is unreachable/)]);

    await cluster.restart(lost);
    await expect.poll(warnings, { timeout: 20_000 }).toContain('rate limits are shared through Redis again');
  });
});

// A TCP proxy the test controls, between the service and PostgreSQL or Redis: `cut` makes
// the peer look stopped (connections dropped, new ones refused); `stall` (or `blackhole`)
// makes it look hung (connections, new ones too, stay open and nothing is forwarded; what
// was held is delivered on `resume`/`restore`, as TCP delivers it once a network heals);
// `cutAfter` cuts the link the moment a given statement has reached the peer, so its
// answer is lost (a COMMIT that committed, say).
import net from 'node:net';
import { STATEMENT_NAME_PREFIX } from '../../src/db/statement-names.js';

/**
 * The service prepares its statements (src/db/statement-names.ts): a statement's text goes out
 * once per connection, in the Parse message that names it, and then only its name, in a Bind.
 * The texts of the names seen so far, so a statement is recognized by its name too.
 */
const PARSE = new RegExp(`P[\\s\\S]{4}(${STATEMENT_NAME_PREFIX}[\\w-]+)\\0([^\\0]*)\\0`, 'g');
function statementTexts() {
  const texts = new Map<string, string>();
  return {
    learn(chunk: Buffer) {
      for (const [, name, text] of chunk.toString('latin1').matchAll(PARSE)) texts.set(name!, text!);
    },
    /** Whether `chunk` sends a statement containing `text`, by its text or by its name. */
    sends(chunk: Buffer, text: string) {
      if (chunk.includes(text)) return true;
      for (const [name, statement] of texts) if (statement.includes(text) && chunk.includes(name)) return true;
      return false;
    },
  };
}

export interface TcpProxy {
  port: number;
  cut(): void;
  /** Ends a cut or a blackhole: new connections are forwarded, held bytes delivered. */
  restore(): void;
  stall(): void;
  resume(): void;
  /** A hung link: nothing is forwarded, nothing is closed, new connections hang too. */
  blackhole(): void;
  /**
   * Once a chunk from the service containing `text` has been forwarded, cuts the link (as
   * `cut`) before any answer comes back; resolves when that happened. With `after`, only on
   * a connection that sent `after` first (a COMMIT of the request's own transaction, not of
   * a background job's that happens to commit meanwhile). With `lateMs`, the peer gets the
   * chunk only that much later (a statement still on its way when the service saw the cut).
   */
  cutAfter(text: string, options?: { after?: string; lateMs?: number }): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  let up = true;
  let stalled = false;
  let trap: { text: string; after?: string; lateMs: number; armed: WeakSet<net.Socket>; sprung: () => void } | undefined;
  const held: Array<[net.Socket, Buffer]> = [];
  const statements = statementTexts();
  const sockets = new Set<net.Socket>();
  const cut = () => {
    up = false;
    for (const s of sockets) s.destroy();
  };
  const forward = (from: net.Socket, to: net.Socket, outbound: boolean) =>
    from.on('data', (chunk: Buffer) => {
      if (stalled) return void held.push([to, chunk]);
      if (outbound) statements.learn(chunk);
      if (outbound && trap?.after && statements.sends(chunk, trap.after)) trap.armed.add(from);
      if (outbound && trap && statements.sends(chunk, trap.text) && (!trap.after || trap.armed.has(from))) {
        const { sprung, lateMs } = trap;
        trap = undefined;
        // The peer gets the chunk and then the end of the stream (closing its socket at once
        // could reset it before the peer read the chunk); the service gets no answer.
        sockets.delete(to);
        from.removeAllListeners('close');
        setTimeout(() => to.end(chunk), lateMs);
        cut();
        sprung();
        return;
      }
      to.write(chunk);
    });
  const server = net.createServer((client) => {
    if (!up) return client.destroy();
    const upstream = net.connect(targetPort, targetHost);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    forward(client, upstream, true);
    forward(upstream, client, false);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const resume = () => {
    stalled = false;
    for (const [to, chunk] of held.splice(0)) if (!to.destroyed) to.write(chunk);
  };
  return {
    port: (server.address() as net.AddressInfo).port,
    cut,
    restore: () => {
      up = true;
      resume();
    },
    stall: () => {
      stalled = true;
    },
    resume,
    blackhole: () => {
      stalled = true;
    },
    cutAfter: (text, options = {}) => new Promise((sprung) => (trap = { text, after: options.after, lateMs: options.lateMs ?? 0, armed: new WeakSet(), sprung })),
    close: () => {
      trap = undefined;
      cut();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

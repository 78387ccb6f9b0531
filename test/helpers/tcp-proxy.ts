// A TCP proxy the test controls, between the service and PostgreSQL or Redis: `cut` makes
// the peer look stopped (connections dropped, new ones refused); `stall` makes it look hung
// (connections stay open, nothing is forwarded; what was held is delivered on `resume`, as
// a peer that wakes up would).
import net from 'node:net';

export interface TcpProxy {
  port: number;
  cut(): void;
  restore(): void;
  stall(): void;
  resume(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  let up = true;
  let stalled = false;
  const held: Array<[net.Socket, Buffer]> = [];
  const sockets = new Set<net.Socket>();
  const forward = (from: net.Socket, to: net.Socket) =>
    from.on('data', (chunk: Buffer) => (stalled ? held.push([to, chunk]) : to.write(chunk)));
  const server = net.createServer((client) => {
    if (!up) return client.destroy();
    const upstream = net.connect(targetPort, targetHost);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    forward(client, upstream);
    forward(upstream, client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cut = () => {
    up = false;
    for (const s of sockets) s.destroy();
  };
  return {
    port: (server.address() as net.AddressInfo).port,
    cut,
    restore: () => {
      up = true;
    },
    stall: () => {
      stalled = true;
    },
    resume: () => {
      stalled = false;
      for (const [to, chunk] of held.splice(0)) to.write(chunk);
    },
    close: () => {
      cut();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

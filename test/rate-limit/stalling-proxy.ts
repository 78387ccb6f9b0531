// A TCP proxy that can stop forwarding while keeping its connections open, as a hung Redis
// looks to a client (the cutting proxy in test/helpers/tcp-proxy.ts looks like a stopped
// one). Bytes held while stalled are delivered on resume, as a Redis that wakes up would.
import net from 'node:net';

export interface StallingProxy {
  port: number;
  stall(): void;
  resume(): void;
  close(): Promise<void>;
}

export async function startStallingProxy(targetHost: string, targetPort: number): Promise<StallingProxy> {
  let stalled = false;
  const held: Array<[net.Socket, Buffer]> = [];
  const sockets = new Set<net.Socket>();
  const forward = (from: net.Socket, to: net.Socket) =>
    from.on('data', (chunk: Buffer) => (stalled ? held.push([to, chunk]) : to.write(chunk)));
  const server = net.createServer((client) => {
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
  return {
    port: (server.address() as net.AddressInfo).port,
    stall: () => {
      stalled = true;
    },
    resume: () => {
      stalled = false;
      for (const [to, chunk] of held.splice(0)) to.write(chunk);
    },
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

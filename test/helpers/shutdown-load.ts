// Creates under load, then SIGTERM: how graceful-shutdown tests drive a server. Sixteen
// clients create customers in a loop; once `acknowledged` creates have answered 201 the
// server gets SIGTERM. Answers what the clients saw and the server's exit code.
import { expect } from 'vitest';
import type { RunningServer } from './processes.js';

export interface LoadOutcome {
  created: number;
  refused: number;
  sent: number;
  exitCode: number | null;
}

export async function stopUnderLoad(server: RunningServer, key: string, acknowledged: number): Promise<LoadOutcome> {
  let created = 0;
  let refused = 0;
  let sent = 0;
  let loaded: () => void;
  const underLoad = new Promise<void>((resolve) => (loaded = resolve));
  const createOne = async (i: number) => {
    sent++;
    try {
      const response = await fetch(`${server.url}/v1/customers`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `Load ${i}` }),
      });
      if (response.status === 201) {
        if (++created === acknowledged) loaded();
      } else {
        expect(response.status).toBe(503); // refused while shutting down, before any write
        refused++;
      }
      await response.arrayBuffer();
    } catch {
      refused++; // the connection was refused or closed before an answer
    }
  };
  // SIGTERM once enough creates are acknowledged (a fixed delay saw only a few on a busy machine).
  let stop = false;
  const clients = Array.from({ length: 16 }, async (_, c) => {
    for (let i = 0; !stop && i < 1000; i++) await createOne(c * 1000 + i);
  });
  await underLoad;
  server.process.kill('SIGTERM');
  const exitCode = await server.exited;
  stop = true;
  await Promise.all(clients);
  return { created, refused, sent, exitCode };
}

// Calls from a cluster worker to its primary over the IPC channel node:cluster opens: one
// message out, one back, matched by id. The primary owns the state the workers must share
// (rate-limit counts, login throttles without Redis); messages on one channel keep their order.
import type { Worker } from 'node:cluster';

interface Call {
  crm: 'call';
  id: number;
  method: string;
  args: unknown;
}

interface Reply {
  crm: 'reply';
  id: number;
  result?: unknown;
  error?: string;
}

export type Handlers = Record<string, (args: any) => unknown>;

const isMessage = <T extends Call | Reply>(message: unknown, kind: T['crm']): message is T =>
  typeof message === 'object' && message !== null && (message as { crm?: unknown }).crm === kind;

const pending = new Map<number, { resolve(result: unknown): void; reject(error: Error): void }>();
let nextId = 0;
let subscribed = false;

function subscribe() {
  subscribed = true;
  process.on('message', (message) => {
    if (!isMessage<Reply>(message, 'reply')) return;
    const call = pending.get(message.id);
    pending.delete(message.id);
    if (message.error !== undefined) call?.reject(new Error(message.error));
    else call?.resolve(message.result);
  });
  // The primary is gone (node:cluster then ends this worker): nothing pending will be answered.
  process.on('disconnect', () => {
    for (const call of pending.values()) call.reject(new Error('the cluster primary is gone'));
    pending.clear();
  });
}

/** In a worker: runs `method` in the primary and resolves with its result. */
export function callPrimary<T>(method: string, args: unknown): Promise<T> {
  if (!subscribed) subscribe();
  return new Promise<T>((resolve, reject) => {
    if (!process.send || !process.connected) return reject(new Error('no channel to the cluster primary'));
    const id = nextId++;
    pending.set(id, { resolve: resolve as (result: unknown) => void, reject });
    const call: Call = { crm: 'call', id, method, args };
    process.send(call, undefined, undefined, (error: Error | null) => {
      if (!error) return;
      pending.delete(id);
      reject(error);
    });
  });
}

/** In the primary: answers `worker`'s calls with `handlers` (synchronous, so each is atomic). */
export function answerCalls(worker: Worker, handlers: Handlers): void {
  worker.on('message', (message: unknown) => {
    if (!isMessage<Call>(message, 'call')) return;
    let reply: Reply;
    try {
      const handler = handlers[message.method];
      if (!handler) throw new Error(`unknown method ${message.method}`);
      reply = { crm: 'reply', id: message.id, result: handler(message.args) };
    } catch (error) {
      reply = { crm: 'reply', id: message.id, error: (error as Error).message };
    }
    // A worker that died meanwhile needs no answer.
    if (worker.isConnected()) worker.send(reply, undefined, () => undefined);
  });
}

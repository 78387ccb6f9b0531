// The requests an instance is serving, so that its background work (imports) gives way to
// them: an import's chunk takes most of a core for tens of milliseconds (its rows' checks in
// this process, their INSERT in the database), and other organizations' requests served
// meanwhile waited for it (the bench's p99 of a create beside an import: nearly 3x idle).
// Before each chunk the import waits until no request has been in flight for `settleMs`,
// but never longer than `maxWaitMs`: alone it runs at full speed; under steady traffic it
// still moves, a chunk at least every `maxWaitMs`. While requests come, it also writes
// smaller chunks (`busy`): a request that arrives mid-chunk waits for less of it.

export interface Foreground {
  /** A request began; call what it answers when it has ended. */
  enter(): () => void;
  /** Resolves once no request has been in flight for `settleMs`, or after `maxWaitMs`. */
  quiet(options?: { settleMs?: number; maxWaitMs?: number }): Promise<void>;
  /** Whether a request is in flight, or one ended within the last `withinMs`. */
  busy(withinMs?: number): boolean;
}

export const SETTLE_MS = 2;
export const MAX_WAIT_MS = 100;
/** Traffic this recent makes the next chunk a small one: steady traffic, not a poll now and then. */
export const BUSY_WITHIN_MS = 10;

/**
 * Whether a request counts: a stream (a subscription, Accept: text/event-stream) stays open for
 * as long as its client listens, and would hold every import at its slowest while it does.
 */
export const countsAsForeground = (accept: string | undefined) => !(accept ?? '').includes('text/event-stream');

export function createForeground(now: () => number = () => performance.now()): Foreground {
  let inFlight = 0;
  let lastEnded = -Infinity;
  const waiters = new Set<() => void>();
  const recheck = () => {
    for (const waiter of [...waiters]) waiter();
  };

  return {
    enter() {
      inFlight++;
      let left = false;
      return () => {
        if (left) return;
        left = true;
        inFlight--;
        lastEnded = now();
        recheck();
      };
    },
    busy(withinMs = BUSY_WITHIN_MS) {
      return inFlight > 0 || now() - lastEnded < withinMs;
    },
    quiet({ settleMs = SETTLE_MS, maxWaitMs = MAX_WAIT_MS } = {}) {
      const begun = now();
      return new Promise<void>((resolve) => {
        let timer: NodeJS.Timeout | undefined;
        const check = () => {
          clearTimeout(timer);
          const at = now();
          const settledAt = inFlight === 0 ? lastEnded + settleMs : Infinity;
          const due = Math.min(settledAt, begun + maxWaitMs);
          if (at >= due) {
            waiters.delete(check);
            resolve();
            return;
          }
          // Looked at again when it is due, or when a request ends (the settling starts over).
          timer = setTimeout(check, Math.ceil(due - at));
        };
        waiters.add(check);
        check();
      });
    },
  };
}

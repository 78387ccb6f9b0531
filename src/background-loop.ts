// An instance's background loop (webhook deliveries, imports): `drain` runs when woken, by
// its timer or by a notification, never twice at once; woken while it runs, it runs again
// once it ends, so no wake-up is lost. `stop` ends the timer and waits for the run under way.

export interface BackgroundLoop {
  /** Runs `drain` now, or again once the run under way ends. */
  wake(): void;
  stop(): Promise<void>;
}

export function startBackgroundLoop({ everyMs, drain, onError }: {
  everyMs: number;
  /** One pass over the due work; `stopped()` tells it to end early. */
  drain: (stopped: () => boolean) => Promise<void>;
  onError: (error: Error) => void;
}): BackgroundLoop {
  let stopped = false;
  let again = false;
  let running: Promise<void> | undefined;

  async function run(): Promise<void> {
    do {
      again = false;
      await drain(() => stopped);
    } while (again && !stopped);
  }

  function wake(): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = run()
      .catch(onError)
      .finally(() => {
        running = undefined;
      });
  }

  const timer = setInterval(wake, everyMs);
  timer.unref();
  wake();

  return {
    wake,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}

/**
 * Runs `run` now and every `everyMs` (a purge), never on a request's path; unref'd, so it
 * never keeps a stopping process alive. `run` reports its own failures. Answers how to stop.
 */
export function runNowAndEvery(everyMs: number, run: () => Promise<unknown>): () => void {
  void run();
  const timer = setInterval(() => void run(), everyMs).unref();
  return () => clearInterval(timer);
}

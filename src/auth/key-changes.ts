// A change to an API key (revoked, re-scoped, expired, deleted) must hold on the very next
// request, on every instance, while instances remember keys for a minute. The api_keys
// trigger NOTIFYs `api_key_changes` with the key's id when the change commits; each
// instance forgets the key and then answers on `api_key_changes_heard` from its listening
// session. Whoever made the change (the CLI, an account page) waits for the answer of every
// session that was listening before it committed, so once it returns no instance still
// accepts the key. A NOTIFY alone reaches the other processes a little later, and under load
// a request sent right after the change could overtake it.
import type { Database } from '../db/connection.js';
import { listenerName, type Subscription } from '../db/notifications.js';
import type { Logger } from '../logger.js';

export const KEY_CHANGES_CHANNEL = 'api_key_changes';
const HEARD_CHANNEL = 'api_key_changes_heard';
/** How long a change waits for the instances' answers before it reports the silent ones. */
export const KEY_CHANGE_WAIT_MS = 5_000;
// How often the wait looks for listening sessions that ended (they will never answer, and
// their instance forgot every key when it lost that session).
const RECHECK_MS = 250;

/** An instance's answer, once it has forgotten `keyId`: sent from its listening session, whose pid it carries. */
export function confirmKeyChange(changes: Subscription | undefined, keyId: string): void {
  changes?.query?.("SELECT pg_notify($1, $2 || ' ' || pg_backend_pid())", [HEARD_CHANNEL, keyId]).catch(() => undefined);
}

/**
 * Runs `change` (a write to the key `keyId`, resolving to whether it changed anything) and,
 * when it did, waits until every instance listening for key changes has forgotten the key, for
 * at most `waitMs`. Resolves to the number of instances that did not answer in time (0 when all
 * did). On PGlite there is one process, told by its own NOTIFY, and nothing to wait for.
 */
export async function changeKeyEverywhere(db: Pick<Database, 'listen'>, keyId: string, change: () => Promise<boolean>, waitMs = KEY_CHANGE_WAIT_MS): Promise<number> {
  const heard = new Set<number>();
  let wake = () => {};
  let listening!: () => void;
  const ready = new Promise<void>((resolve) => (listening = resolve));
  const answers = await db.listen(HEARD_CHANNEL, {
    notify(payload) {
      const [id, pid] = payload.split(' ');
      if (id !== keyId) return;
      heard.add(Number(pid));
      wake();
    },
    lost: () => undefined,
    listening: () => listening(),
  });
  try {
    const query = answers.query;
    if (!query) {
      await change();
      return 0;
    }
    // Until it listens, the listing below fails and nothing is changed.
    await Promise.race([ready, new Promise((resolve) => setTimeout(resolve, waitMs).unref())]);
    const listeners = async () => {
      const rows = await query('SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()', [listenerName(KEY_CHANGES_CHANNEL)]);
      return new Set(rows.map((row) => Number(row.pid)));
    };
    // Read before the change commits: these sessions were listening, so each will hear it.
    const waitingFor = await listeners();
    if (!(await change())) return 0;
    const deadline = Date.now() + waitMs;
    for (;;) {
      for (const pid of heard) waitingFor.delete(pid);
      const left = deadline - Date.now();
      if (waitingFor.size === 0 || left <= 0) return waitingFor.size;
      const answered = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), Math.min(left, RECHECK_MS));
        wake = () => {
          clearTimeout(timer);
          resolve(true);
        };
      });
      if (answered) continue;
      // The change has committed: a lost connection now ends the wait, it does not fail the change.
      const alive = await listeners().catch(() => undefined);
      if (!alive) return waitingFor.size;
      for (const pid of waitingFor) if (!alive.has(pid)) waitingFor.delete(pid);
    }
  } finally {
    await answers.close();
  }
}

/** How an instance changes a key: the write, resolving to whether it changed anything. */
export type KeyChanger = (keyId: string, change: () => Promise<boolean>) => Promise<void>;

/** An instance's KeyChanger: it forgets the key itself at once, then waits for the others. */
export function instanceKeyChanger(db: Pick<Database, 'listen'>, forget: (keyId: string) => void, log: Logger): KeyChanger {
  return async (keyId, change) => {
    const silent = await changeKeyEverywhere(db, keyId, async () => {
      const changed = await change();
      if (changed) forget(keyId);
      return changed;
    });
    if (silent > 0) log.warn('instances did not confirm a key change in time; they refuse the key once they hear of it', { key_id: keyId, instances: silent });
  };
}

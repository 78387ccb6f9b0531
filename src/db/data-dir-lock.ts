// The embedded database is a folder that one process may open at a time: a second opener
// (the CLI while the server runs, a second server) must refuse at once, not corrupt it.
import { mkdirSync, openSync, readFileSync, unlinkSync, writeSync, closeSync } from 'node:fs';
import { join, resolve } from 'node:path';

export class DataDirLockedError extends Error {
  constructor(dataDir: string, pid: number) {
    super(
      `The data folder ${resolve(dataDir)} is in use by another process (pid ${pid}), probably the server (npm start). ` +
        'It printed an API key for the demo organization at its first start, and more keys can be made at /settings/api-keys. ' +
        'To use this command, stop that process first, or set DATA_DIR to another folder, or use DATABASE_URL (PostgreSQL) to share one database.',
    );
    this.name = 'DataDirLockedError';
  }
}

function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

// Folders this process holds: its own pid in a lock file is otherwise taken as stale (a
// restarted container often gets the same pid as its crashed predecessor).
const held = new Set<string>();

/** Takes the folder's lock file; returns the function that gives it back. */
export function lockDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, 'crm.lock');
  if (held.has(resolve(file))) throw new DataDirLockedError(dataDir, process.pid);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      held.add(resolve(file));
      return () => {
        held.delete(resolve(file));
        try {
          unlinkSync(file);
        } catch {
          // already gone
        }
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number(readFileSync(file, 'utf8').trim());
      if (isAlive(owner)) throw new DataDirLockedError(dataDir, owner);
      // A crashed owner left its lock behind.
      unlinkSync(file);
    }
  }
  throw new Error(`Could not lock the data folder ${resolve(dataDir)}`);
}

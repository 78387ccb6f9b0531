// What every command-line entry point shares: where it writes and reads (a terminal: the
// process's, or a test's), configuration from its environment, an open and migrated
// database, and an exit code with a one-line message on failure.
import { loadConfig } from '../config.js';
import type { Database } from '../db/connection.js';

export interface Terminal {
  /** A line on standard output (what a script reads: a key, a JSON summary). */
  out: (line: string) => void;
  /** A line on standard error (what a person reads). */
  err: (line: string) => void;
  /** Standard input, whole. */
  input: () => Promise<string>;
  env: NodeJS.ProcessEnv;
}

/** The process's own standard streams and environment. */
export function processTerminal(): Terminal {
  return {
    out: (line) => console.log(line),
    err: (line) => console.error(line),
    input: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
    env: process.env,
  };
}

/** Runs `run` on the configured database; answers the exit code (1 after a failure, said on standard error). */
export async function withDatabase(terminal: Terminal, run: (db: Database) => Promise<number | void>): Promise<number> {
  let db: Database | undefined;
  try {
    const config = loadConfig(terminal.env);
    // Loaded here, not on import: commands that open no database (cli/commands.ts) skip them.
    const [{ openDatabase }, { migrate }] = await Promise.all([import('../db/connection.js'), import('../db/migrator.js')]);
    db = await openDatabase(config);
    const applied = await migrate(db.sql);
    if (applied.length > 0) terminal.err(`Applied migrations: ${applied.join(', ')}`);
    return (await run(db)) ?? 0;
  } catch (error) {
    terminal.err(`error: ${(error as Error).message}`);
    return 1;
  } finally {
    await db?.close();
  }
}

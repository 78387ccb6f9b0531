// npm run db:migrate: apply pending migrations to the configured database and exit.
import './short-lived.js';
import { processTerminal, withDatabase } from './runtime.js';

const terminal = processTerminal();
process.exitCode = await withDatabase(terminal, async () => {
  terminal.out('The database is up to date.');
});

// npm run --silent cli -- <command>: the commands (src/cli/commands.ts) on this process's
// standard streams and environment.
import './short-lived.js';
import { runCli } from './commands.js';
import { processTerminal } from './runtime.js';

process.exitCode = await runCli(process.argv.slice(2), processTerminal());

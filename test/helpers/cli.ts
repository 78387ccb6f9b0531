// The CLI's commands run in the test's own process, on a terminal that records what they
// write: the same code as `npm run cli`, without a process and a module load per run. The
// process itself (exit code, standard streams, npm) is tested by a few runs of runNpm.
import { runCli } from '../../src/cli/commands.js';
import type { CliResult } from './processes.js';

export async function runCliHere(args: string[], env: Record<string, string>, input = ''): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    out: (line) => (stdout += `${line}\n`),
    err: (line) => (stderr += `${line}\n`),
    input: async () => input,
    env: { LOG_LEVEL: 'warn', ...env },
  });
  return { code, stdout, stderr };
}

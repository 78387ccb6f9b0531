// Starts the service and the CLI exactly as a user does: separate Node processes.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { builtService } from './service-build.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'test' };
  // Tests make their own data; only the first-run test asks for the demo. One server
  // process unless a test asks for a cluster (test/server/cluster.test.ts): the suite's
  // speed and its per-process expectations do not depend on the machine's cores.
  return { ...base, LOG_LEVEL: 'info', SEED_ON_FIRST_START: 'false', WEB_CONCURRENCY: '1', ...env };
}

export interface RunningServer {
  url: string;
  process: ChildProcess;
  /** Everything the process wrote so far (stdout and stderr). */
  output(): string;
  /** Sends the signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  exited: Promise<number | null>;
}

/**
 * A test's server lives seconds: V8's optimizing tier for WebAssembly (PGlite, Prisma's query
 * compiler) costs it more CPU than it returns, as for the CLI (src/cli/short-lived.ts) and
 * the test workers (vitest.config.ts). What these tests check (start, signals, ports, exit
 * codes, migrations) does not depend on the tier; `npm start` and `npm run start:production`
 * (startNpm) run exactly as a user runs them.
 */
const BASELINE_WASM = ['--liftoff-only'];

/**
 * `args`: Node's arguments; by default the compiled service, as the Docker image runs it
 * (test/helpers/service-build.ts; `npm start`'s sources: startNpm('start')).
 * A server not listening within `timeoutMs` is killed, and the start fails.
 */
export function startServer(env: Record<string, string>, args = [builtService()], timeoutMs = 30_000): Promise<RunningServer> {
  return listening(timeoutMs, spawn(process.execPath, [...BASELINE_WASM, ...args], { cwd: ROOT, env: childEnv({ PORT: '0', HOST: '127.0.0.1', ...env }), stdio: ['ignore', 'pipe', 'pipe'], detached: true }));
}

/** `npm run <script>` (start, start:production) exactly as a user or a process manager runs it. */
export function startNpm(script: string, env: Record<string, string>, timeoutMs = 30_000): Promise<RunningServer> {
  return listening(timeoutMs, spawn('npm', ['run', '--silent', script], { cwd: ROOT, env: childEnv({ PORT: '0', HOST: '127.0.0.1', ...env }), stdio: ['ignore', 'pipe', 'pipe'], detached: true }));
}

/**
 * Children run in a process group of their own (`detached`), so that killing one kills what
 * it started too (npm's node); every one still running is killed when the test process exits.
 */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) killGroup(child);
});

function killGroup(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}

function track<T extends ChildProcess>(child: T): T {
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

function listening(timeoutMs: number, child: ChildProcess): Promise<RunningServer> {
  track(child);
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      // A server that did not start in time is not left running behind the failed test.
      killGroup(child);
      reject(new Error(`server did not start in time:\n${output}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /"msg":"listening".*"port":(\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({
          url: `http://127.0.0.1:${match[1]}`,
          process: child,
          output: () => output,
          exited,
          async stop(signal = 'SIGTERM') {
            if (child.exitCode === null && child.signalCode === null) child.kill(signal);
            return exited;
          },
        });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${output}`));
    });
  });
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `npm run --silent <script> -- ...args` as documented, and collects its output. */
export function runNpm(script: string, args: string[], env: Record<string, string>, stdin = ''): Promise<CliResult> {
  return run('npm', ['run', '--silent', script, '--', ...args], env, stdin);
}

function run(command: string, args: string[], env: Record<string, string>, stdin: string): Promise<CliResult> {
  const child = track(spawn(command, args, { cwd: ROOT, env: childEnv(env), stdio: 'pipe', detached: true }));
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdin.end(stdin);
  return exitOf(child, [command, ...args], () => ({ stdout, stderr }));
}

export interface ToolResult {
  code: number | null;
  /** Standard output and error, interleaved as they came. */
  output: string;
  stdout: string;
}

/**
 * Runs another language's tool (python3, ruby, php, composer, gem) and collects its output.
 * A tool that is not installed fails the test at once, saying which (.ci/run installs them),
 * rather than leaving it to wait out its timeout for an exit that never comes.
 */
export function runTool(command: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<ToolResult> {
  const child = spawn(command[0]!, command.slice(1), { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let stdout = '';
  child.stdout.on('data', (c: Buffer) => ((output += c), (stdout += c)));
  child.stderr.on('data', (c: Buffer) => (output += c));
  return exitOf(child, command, () => ({ output, stdout }));
}

function exitOf<T>(child: ChildProcess, command: string[], collected: () => T): Promise<T & { code: number | null }> {
  return new Promise((resolve, reject) => {
    child.once('error', (error) => reject(new Error(`${command.join(' ')} could not start (${error.message}); is ${command[0]} installed?`)));
    child.once('exit', (code) => resolve({ code, ...collected() }));
  });
}

export function lastLine(text: string): string {
  return text.trimEnd().split('\n').at(-1) ?? '';
}

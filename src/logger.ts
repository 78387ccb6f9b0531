// One JSON object per line on stdout. Callers pass fields, never secrets: keys, passwords,
// cookies and Authorization headers are not logged anywhere in the service.
import { LOG_LEVELS, type LogLevel } from './config.js';

export type Fields = Record<string, unknown>;
export type Logger = Record<Exclude<LogLevel, 'silent'>, (msg: string, fields?: Fields) => void>;

/**
 * Lines to stdout, gathered and written once per turn of the event loop: stdout to a file
 * or pipe is synchronous in Node, one system call per line, and under load a request log
 * line per request cost more than some queries. What is still gathered at exit is written.
 */
export function bufferedStdout(): (line: string) => void {
  let pending: string[] = [];
  const flush = () => {
    if (pending.length === 0) return;
    const text = pending.join('');
    pending = [];
    process.stdout.write(text);
  };
  process.on('exit', flush);
  return (line) => {
    if (pending.push(line) === 1) setImmediate(flush);
    else if (pending.length >= 1000) flush();
  };
}

/** `base`: fields every line carries (a cluster worker's pid, so its lines can be told apart). */
export function createLogger(level: LogLevel, write: (line: string) => void = (l) => process.stdout.write(l), base: Fields = {}): Logger {
  const threshold = level === 'silent' ? -1 : LOG_LEVELS.indexOf(level);
  const at = (name: Exclude<LogLevel, 'silent'>) => (msg: string, fields?: Fields) => {
    if (LOG_LEVELS.indexOf(name) > threshold) return;
    write(JSON.stringify({ time: new Date().toISOString(), level: name, msg, ...base, ...fields }) + '\n');
  };
  return { fatal: at('fatal'), error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug'), trace: at('trace') };
}

export function errorFields(error: unknown): Fields {
  return error instanceof Error ? { err: { name: error.name, message: error.message, stack: error.stack } } : { err: String(error) };
}

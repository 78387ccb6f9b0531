// One JSON object per line on stdout. Callers pass fields, never secrets: keys, passwords,
// cookies and Authorization headers are not logged anywhere in the service.
import { LOG_LEVELS, type LogLevel } from './config.js';

export type Fields = Record<string, unknown>;
export type Logger = Record<Exclude<LogLevel, 'silent'>, (msg: string, fields?: Fields) => void>;

export function createLogger(level: LogLevel, write: (line: string) => void = (l) => process.stdout.write(l)): Logger {
  const threshold = level === 'silent' ? -1 : LOG_LEVELS.indexOf(level);
  const at = (name: Exclude<LogLevel, 'silent'>) => (msg: string, fields?: Fields) => {
    if (LOG_LEVELS.indexOf(name) > threshold) return;
    write(JSON.stringify({ time: new Date().toISOString(), level: name, msg, ...fields }) + '\n');
  };
  return { fatal: at('fatal'), error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug'), trace: at('trace') };
}

export function errorFields(error: unknown): Fields {
  return error instanceof Error ? { err: { name: error.name, message: error.message, stack: error.stack } } : { err: String(error) };
}

// Type-checks a project folder as a user does, `tsc -p` on the command line, with the compiler
// this repository checks and builds with (TypeScript 7, package.json's `typescript-7`). The
// `typescript` package (5.9) stays only for the libraries that call its JavaScript API
// (openapi-typescript), which TypeScript 7 no longer has; both name their command `tsc`, so
// it is called by its path.
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';

const TSC = resolve(import.meta.dirname, '../../node_modules/typescript-7/bin/tsc');

export interface CompileError {
  /** As tsc names it: relative to the project folder. */
  file: string;
  line: number;
  code: number;
}

export interface TypeCheck {
  /** tsc's own output: empty when the project type-checks. */
  output: string;
  /** Each of tsc's messages, with its continuation lines. */
  messages: string[];
  errors: CompileError[];
  /** Every file in the program, absolute (--listFiles). */
  files: string[];
}

/** `tsc -p <project>` in `dir`: the tsconfig.json there, or the one named. */
export async function typeCheck(dir: string, project = '.'): Promise<TypeCheck> {
  const { stdout } = await promisify(execFile)(process.execPath, [TSC, '-p', project, '--pretty', 'false', '--listFiles'], { cwd: dir }).catch(
    (error: { stdout?: string }) => {
      if (error.stdout === undefined) throw error;
      return { stdout: error.stdout };
    },
  );
  const lines = stdout.split('\n');
  const files = lines.filter((line) => line.startsWith('/'));
  const output = lines.filter((line) => line && !line.startsWith('/')).join('\n');
  const messages = output ? output.split(/\n(?! )/) : [];
  const errors = [...output.matchAll(/^(.+)\((\d+),\d+\): error TS(\d+):/gm)].map((m) => ({ file: m[1]!, line: Number(m[2]), code: Number(m[3]) }));
  return { output, messages, errors, files };
}

// Splits a migration script into its statements, for a database that must take them one at
// a time (Citus: db/migrator.ts). Quoted text, quoted names, dollar-quoted bodies and
// comments are kept whole, so a semicolon inside them splits nothing. Not handled (our
// migrations have none): E'...' strings with backslash-escaped quotes, nested /* */ comments.
export function splitStatements(script: string): string[] {
  const statements: string[] = [];
  let start = 0;
  let i = 0;
  while (i < script.length) {
    const c = script[i]!;
    if (c === "'" || c === '"') {
      i = script.indexOf(c, i + 1);
      while (i !== -1 && script[i + 1] === c) i = script.indexOf(c, i + 2);
      i = i === -1 ? script.length : i + 1;
    } else if (c === '-' && script[i + 1] === '-') {
      const end = script.indexOf('\n', i);
      i = end === -1 ? script.length : end + 1;
    } else if (c === '/' && script[i + 1] === '*') {
      const end = script.indexOf('*/', i + 2);
      i = end === -1 ? script.length : end + 2;
    } else if (c === '$' && /^\$[A-Za-z_]?[A-Za-z0-9_]*\$/.test(script.slice(i)) && !/[A-Za-z0-9_]/.test(script[i - 1] ?? '')) {
      const tag = /^\$[A-Za-z_]?[A-Za-z0-9_]*\$/.exec(script.slice(i))![0];
      const end = script.indexOf(tag, i + tag.length);
      i = end === -1 ? script.length : end + tag.length;
    } else if (c === ';') {
      statements.push(script.slice(start, i + 1));
      start = ++i;
    } else i++;
  }
  statements.push(script.slice(start));
  return statements.filter((s) => s.replace(/--[^\n]*|\s/g, '') !== '');
}

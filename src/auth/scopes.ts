// The scopes an API key can hold. Each is declared beside what it guards, never in a list
// here: a resource's read and write scopes by its defineResource, events, webhooks and the
// request log by their schema files. Twice there, once for each checker: its name in
// ScopeNames (declaration merging, so a misspelled scope fails tsc, the way Pothos types its
// builder), and at run time with declareScopes, which fills the list the CLI, the account
// page and the docs show. That list is read at call time, once the schema has loaded.

/**
 * Every scope's name, merged in by the files that declare them:
 * `declare module '../auth/scopes.js' { interface ScopeNames { 'notes:read': true } }`.
 */
export interface ScopeNames {}

export type Scope = Extract<keyof ScopeNames, string>;

const declared = new Set<Scope>();
/** The declared scopes, sorted once after the last declaration (read per key on the account page). */
let sorted: readonly Scope[] = [];

export function declareScopes(...scopes: Scope[]): void {
  for (const scope of scopes) declared.add(scope);
  sorted = [...declared].sort();
}

/** Every scope, sorted; throws if none is declared yet: the schema (src/schema/index.ts) was not loaded. */
export function allScopes(): Scope[] {
  if (sorted.length === 0) throw new Error('No scope is declared yet: import the schema (src/schema/index.ts) before reading the scopes');
  return [...sorted];
}

export function isScope(value: string): value is Scope {
  return declared.has(value as Scope);
}

/** Parses "all" or a comma-separated list; throws naming the first unknown scope. */
export function parseScopes(input: string): Scope[] {
  const parts = input.split(',').map((s) => s.trim()).filter(Boolean);
  if (parts.length === 1 && parts[0] === 'all') return allScopes();
  if (parts.length === 0) throw new Error('at least one scope is required');
  for (const part of parts) {
    if (!isScope(part)) throw new Error(`unknown scope "${part}" (known: all, ${allScopes().join(', ')})`);
  }
  return [...new Set(parts as Scope[])];
}

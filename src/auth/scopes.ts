export const SCOPES = [
  'customers:read',
  'customers:write',
  'jobs:read',
  'jobs:write',
  'emails:read',
  'invoices:read',
  'invoices:write',
  'estimates:read',
  'estimates:write',
  'proposals:read',
  'proposals:write',
  'events:read',
  'webhooks:read',
  'webhooks:write',
  // The organization's request log (GET /v1/request_logs).
  'logs:read',
] as const;

export type Scope = (typeof SCOPES)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** Parses "all" or a comma-separated list; throws naming the first unknown scope. */
export function parseScopes(input: string): Scope[] {
  const parts = input.split(',').map((s) => s.trim()).filter(Boolean);
  if (parts.length === 1 && parts[0] === 'all') return [...SCOPES];
  if (parts.length === 0) throw new Error('at least one scope is required');
  for (const part of parts) {
    if (!isScope(part)) throw new Error(`unknown scope "${part}" (known: all, ${SCOPES.join(', ')})`);
  }
  return [...new Set(parts as Scope[])];
}

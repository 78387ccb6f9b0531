// `Prefer: dry-run` (RFC 7240's Prefer header, a preference of this API): a write runs its
// real code path and answers what the real call would, and nothing is persisted. The
// execution side is graphql/dry-run.ts; this reads the request and marks the response.

/** Whether the request asks for a dry run (`Prefer: dry-run`, among other preferences). */
export function wantsDryRun(request: Request): boolean {
  const prefer = request.headers.get('prefer');
  return !!prefer && prefer.split(',').some((preference) => preference.split(';')[0]!.trim().toLowerCase() === 'dry-run');
}

/** Marks the answer of a dry run (`Dry-Run: true`, and RFC 7240's Preference-Applied). */
export function markDryRun(response: Response): Response {
  response.headers.set('dry-run', 'true');
  response.headers.set('preference-applied', 'dry-run');
  return response;
}

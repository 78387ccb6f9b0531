// The event types there are, `<resource>.<what happened>`: each resource declaration
// (schema/resource.ts) adds its own, so endpoints can be refused an unknown type.

export const EVENT_TYPES = new Set<string>();

/** What a move to `status` is called in an event: the trigger names transitions the same way. */
export function transitionKind(status: string): string {
  return status === 'in_progress' ? 'started' : status;
}

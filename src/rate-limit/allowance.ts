// The per-key allowance as a leaky bucket (the GCRA in its "meter" form): each identity is
// one number, its level, that charges add units to and that drains at `max` units per
// window. O(1) per request whatever `max` is, and exact in units: a refused charge is not
// added. The Redis script in ./redis.ts applies the same rule; both share `standing`.

/** Where an identity stands after a charge, as the rate-limit headers tell it. */
export interface RateState {
  limit: number;
  remaining: number;
  /** Seconds until the allowance is whole again; when limited, until the request would fit. */
  resetSeconds: number;
  limited: boolean;
}

export interface Policy {
  max: number;
  windowMs: number;
}

export interface Charge {
  /** The level after the charge (before it, when refused). */
  level: number;
  admitted: boolean;
}

/**
 * Drains `level` over `elapsedMs`, then adds `units` if they fit. `units` 0 charges nothing
 * and tells whether one more unit would fit.
 */
export function charge({ max, windowMs }: Policy, level: number, elapsedMs: number, units: number): Charge {
  const drained = Math.max(0, level - (Math.max(0, elapsedMs) * max) / windowMs);
  const admitted = drained + Math.max(units, 1) <= max;
  return { level: admitted ? drained + units : drained, admitted };
}

/** Milliseconds until a bucket at `level` is empty, so its entry can be forgotten. */
export const drainMs = ({ max, windowMs }: Policy, level: number) => (level * windowMs) / max;

/**
 * The headers' view of a charge. Remaining: whole units that still fit now. Reset: when
 * admitted, seconds until the allowance is whole again; when refused, seconds until this
 * charge would fit (also Retry-After). Both in whole seconds, at least 1.
 */
export function standing(policy: Policy, { level, admitted }: Charge, units: number): RateState {
  const { max } = policy;
  const waitMs = admitted ? drainMs(policy, level) : drainMs(policy, level + Math.min(Math.max(units, 1), max) - max);
  return {
    limit: max,
    remaining: Math.max(0, Math.floor(max - level)),
    resetSeconds: Math.max(1, Math.ceil(waitMs / 1000)),
    limited: !admitted,
  };
}

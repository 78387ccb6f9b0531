// The in-memory state a cluster's workers must share to stay correct: rate-limit counts
// (without Redis, or while it is down) and failed-login throttles. The primary owns one copy
// and answers each worker's charge in one IPC round trip; a worker cut off from its primary
// (it is about to exit) counts in its own memory rather than failing the request.
import type { LocalCounter } from '../rate-limit.js';
import type { Charge, Policy } from '../rate-limit/allowance.js';
import { MemoryCounter } from '../rate-limit/memory.js';
import { createLoginThrottle, type LocalThrottle, type Throttle, type ThrottleFactory, type ThrottleOptions } from '../web/login-throttle.js';
import { callPrimary, type Handlers } from './ipc.js';

interface ThrottleCall {
  name: string;
  options: ThrottleOptions;
  keys: string[];
}

/** In the primary: the one copy of the shared state, and the handlers workers call. */
export function primaryState(policy: Policy): { handlers: Handlers; close(): void } {
  const counter = new MemoryCounter(policy);
  const throttles = new Map<string, LocalThrottle>();
  const throttle = ({ name, options }: ThrottleCall) => {
    let found = throttles.get(name);
    if (!found) throttles.set(name, (found = createLoginThrottle(options)));
    return found;
  };
  return {
    handlers: {
      'rate.charge': ({ identity, units }: { identity: string; units: number }): Charge => counter.charge(identity, units),
      'throttle.attempt': (call: ThrottleCall): boolean => throttle(call).attempt(call.keys),
      'throttle.succeeded': (call: ThrottleCall): void => throttle(call).succeeded(call.keys),
    },
    close: () => counter.close(),
  };
}

/** In a worker: the rate limiter's counts, kept by the primary. */
export function counterInPrimary(policy: Policy): LocalCounter {
  const fallback = new MemoryCounter(policy);
  return {
    charge: (identity, units) => callPrimary<Charge>('rate.charge', { identity, units }).catch(() => fallback.charge(identity, units)),
    close: () => fallback.close(),
  };
}

/** In a worker: login throttles kept by the primary. */
export const throttlesInPrimary: ThrottleFactory = (name, options): Throttle => {
  const fallback = createLoginThrottle(options);
  return {
    attempt: (keys) => callPrimary<boolean>('throttle.attempt', { name, options, keys }).catch(() => fallback.attempt(keys)),
    // Fire and forget: the channel keeps order, so a later attempt sees this one.
    succeeded: (keys) => void callPrimary('throttle.succeeded', { name, options, keys }).catch(() => fallback.succeeded(keys)),
  };
};

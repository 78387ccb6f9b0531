// State machines of jobs, invoices, estimates and proposals (contract section 3). A move is
// one conditional UPDATE, so two concurrent moves cannot both succeed from the same state.
import { apiError } from '../errors.js';
import { isUuid } from './validation.js';

export interface Move<Status extends string> {
  from: readonly Status[];
  to: Status;
  /** Timestamp columns the move records. */
  stamps?: readonly string[];
}

export interface Movable<Status extends string> {
  updateMany(args: { where: { id: string; status: { in: Status[] } }; data: object }): Promise<{ count: number }>;
  findFirst(args: { where: { id: string }; select: { status: true } }): Promise<{ status: Status } | null>;
}

export async function applyMove<Status extends string>(
  model: Movable<Status>,
  resource: string,
  id: string,
  move: Move<Status>,
): Promise<void> {
  if (!isUuid(id)) throw apiError('NOT_FOUND', `No ${resource} with this id in this organization.`);
  const now = new Date();
  const data = Object.fromEntries([['status', move.to], ...(move.stamps ?? []).map((column) => [column, now])]);
  const { count } = await model.updateMany({ where: { id, status: { in: [...move.from] } }, data });
  if (count === 1) return;
  const current = await model.findFirst({ where: { id }, select: { status: true } });
  if (!current) throw apiError('NOT_FOUND', `No ${resource} with this id in this organization.`);
  // A refusal because of the record's current state (contract section 3).
  throw apiError(
    'CONFLICT',
    `Cannot move ${resource} ${id} to ${move.to}: its status is ${current.status} (allowed from ${move.from.join(' or ')}).`,
    { errors: [{ param: 'status', message: `is ${current.status}` }] },
  );
}

type QuoteStatus = 'draft' | 'sent' | 'accepted' | 'declined';
type QuoteVerb = 'send' | 'accept' | 'decline';

/**
 * Estimates and proposals share one life cycle: draft -> sent -> accepted | declined, as
 * `sendEstimate`, `acceptEstimate`, ...; `stamps` adds the timestamps a move records.
 */
export function quoteMoves(type: string, stamps: Partial<Record<QuoteVerb, string[]>> = {}): Record<string, Move<QuoteStatus>> {
  const moves: Record<QuoteVerb, Move<QuoteStatus>> = {
    send: { from: ['draft'], to: 'sent' },
    accept: { from: ['sent'], to: 'accepted' },
    decline: { from: ['sent'], to: 'declined' },
  };
  return Object.fromEntries(Object.entries(moves).map(([verb, move]) => [`${verb}${type}`, { ...move, stamps: stamps[verb as QuoteVerb] }]));
}

// State machines of jobs, invoices, estimates and proposals (contract section 3). A move is
// one conditional UPDATE (schema/changes.ts), so two concurrent moves cannot both succeed
// from the same state.

export interface Move<Status extends string> {
  /** REST: POST /v1/{resource}/{id}/{verb}. */
  verb: string;
  from: readonly Status[];
  to: Status;
  /** Timestamp columns the move records. */
  stamps?: readonly string[];
}

type QuoteStatus = 'draft' | 'sent' | 'accepted' | 'declined';
type QuoteVerb = 'send' | 'accept' | 'decline';

/**
 * Estimates and proposals share one life cycle: draft -> sent -> accepted | declined, as
 * `sendEstimate`, `acceptEstimate`, ...; `stamps` adds the timestamps a move records.
 */
export function quoteMoves(type: string, stamps: Partial<Record<QuoteVerb, string[]>> = {}): Record<string, Move<QuoteStatus>> {
  const moves: Record<QuoteVerb, Omit<Move<QuoteStatus>, 'verb'>> = {
    send: { from: ['draft'], to: 'sent' },
    accept: { from: ['sent'], to: 'accepted' },
    decline: { from: ['sent'], to: 'declined' },
  };
  return Object.fromEntries(Object.entries(moves).map(([verb, move]) => [`${verb}${type}`, { ...move, verb, stamps: stamps[verb as QuoteVerb] }]));
}

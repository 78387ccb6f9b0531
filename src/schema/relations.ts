// Arguments of list-valued relations (a customer's jobs, ...): newest first, bounded.
import { builder } from './builder.js';
import { DEFAULT_LIMIT, limitErrors, MAX_LIMIT, NEWEST_FIRST } from './pagination.js';
import { invalidInput } from '../errors.js';

export const relationArgs = builder.args((t) => ({
  limit: t.int({ defaultValue: DEFAULT_LIMIT, description: `How many, newest first: 1 to ${MAX_LIMIT}.` }),
}));

export function relationQuery(args: { limit?: number | null }) {
  const errors = limitErrors(args.limit);
  if (errors.length > 0) throw invalidInput(errors);
  // Deleted records are not part of a relation (a nested read bypasses the tenant client's filter).
  return { where: { deletedAt: null }, orderBy: NEWEST_FIRST, take: args.limit ?? DEFAULT_LIMIT };
}

// References between records (customer_id, job_id) must name a record of the caller's own
// organization; the tenant client makes a foreign id indistinguishable from a missing one.
import { invalidInput } from '../errors.js';
import { isUuid, type InputCheck } from './validation.js';

interface Countable {
  count(args: { where: { id: string } }): Promise<number>;
}

export async function requireReference(check: InputCheck, model: Countable, param: string, id: string | null): Promise<void> {
  if (id === null || check.errors.some((e) => e.param === param)) return;
  if ((await model.count({ where: { id } })) === 0) check.fail(param, 'does not name a record of this organization');
}

/** The `customerId` list filter; another organization's customer simply matches nothing. */
export function customerFilter(customerId: string | number | null | undefined) {
  if (customerId === null || customerId === undefined) return {};
  if (!isUuid(String(customerId))) throw invalidInput([{ param: 'customerId', message: 'must be a UUID' }]);
  return { customerId: String(customerId).toLowerCase() };
}

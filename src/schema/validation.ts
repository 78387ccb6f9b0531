// Input rules of the contract (section 2), checked once here for GraphQL and so for REST.
// A check collects every offending field before failing, so a client fixes them in one go.
import { invalidInput, type FieldError } from '../errors.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// An address as mail systems accept it: a dot-atom local part (no leading, trailing or
// doubled dot), and a domain of labels that neither start nor end with a hyphen, ending in a
// top-level label of at least two letters.
const EMAIL_LOCAL = /^[^\s@<>(),;:"[\]\\.]+(\.[^\s@<>(),;:"[\]\\.]+)*$/u;
const DOMAIN_LABEL = /^[\p{L}\p{N}]([\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?$/u;

function isEmail(text: string): boolean {
  const at = text.lastIndexOf('@');
  const local = text.slice(0, at);
  const labels = text.slice(at + 1).split('.');
  return (
    at > 0 &&
    local.length <= 64 &&
    EMAIL_LOCAL.test(local) &&
    labels.length >= 2 &&
    labels.every((label) => DOMAIN_LABEL.test(label)) &&
    /^\p{L}{2,}$/u.test(labels.at(-1)!)
  );
}

/** Characters that show nothing: spaces of every kind and format characters (zero-width space, ...). */
const INVISIBLE = /[\p{Z}\p{Cf}\s]/gu;
const E164 = /^\+[0-9]{8,15}$/;
export const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));
/** GraphQL's Int: the one 32-bit bound (amounts, quantities, and what REST accepts for an Int). */
export const INT32_MAX = 2_147_483_647;
export const INT32_MIN = -2_147_483_648;
export const MAX_AMOUNT = INT32_MAX;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/** Whether two parameters name the same field or one lies inside the other. */
function overlaps(a: string, b: string): boolean {
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  return long === short || long.startsWith(`${short}.`) || long.startsWith(`${short}[`);
}

export class InputCheck {
  readonly errors: FieldError[];

  /**
   * `prior`: faults found before the resolver ran (a REST body's unknown or mistyped fields,
   * which arrive removed); they are reported with the rules' faults, and a field that has
   * one is not judged again.
   */
  constructor(private readonly prior: readonly FieldError[] = []) {
    this.errors = [...prior];
  }

  fail(param: string, message: string): void {
    if (this.prior.some((p) => overlaps(p.param, param))) return;
    this.errors.push({ param, message });
  }

  /** A trimmed string of `min`..`max` characters; null when absent and optional. */
  text(param: string, value: string | null | undefined, { max, required = false }: { max: number; required?: boolean }): string | null {
    if (value === null || value === undefined) {
      if (required) this.fail(param, 'is required');
      return null;
    }
    const trimmed = value.trim();
    if (trimmed.replace(INVISIBLE, '').length === 0 && required) this.fail(param, 'must not be blank');
    else if (trimmed.length > max) this.fail(param, `must be at most ${max} characters`);
    else if (trimmed.includes('\u0000')) this.fail(param, 'must not contain NUL characters');
    return trimmed.length === 0 ? null : trimmed;
  }

  /** A text that must also match a format; one error per field, the first that applies. */
  private formatted(param: string, value: string | null | undefined, limits: { max: number; required?: boolean }, valid: (text: string) => boolean, message: string) {
    const before = this.errors.length;
    const text = this.text(param, value, limits);
    if (text !== null && this.errors.length === before && !valid(text)) this.fail(param, message);
    return text;
  }

  email(param: string, value: string | null | undefined, { required = false } = {}): string | null {
    return this.formatted(param, value, { max: 254, required }, isEmail, 'must be a valid e-mail address')?.toLowerCase() ?? null;
  }

  phone(param: string, value: string | null | undefined): string | null {
    return this.formatted(param, value, { max: 16 }, (t) => E164.test(t), 'must be in E.164 format: + then 8 to 15 digits');
  }

  currency(param: string, value: string | null | undefined): string {
    const valid = (t: string) => /^[A-Z]{3}$/.test(t) && CURRENCIES.has(t);
    return this.formatted(param, value, { max: 3, required: true }, valid, 'must be an ISO 4217 currency code such as USD') ?? '';
  }

  amount(param: string, value: number | null | undefined, { required = true } = {}): number {
    if (value === null || value === undefined) {
      if (required) this.fail(param, 'is required');
      return 0;
    }
    if (!Number.isInteger(value) || value < 0 || value > MAX_AMOUNT) this.fail(param, `must be an integer from 0 to ${MAX_AMOUNT}`);
    return value;
  }

  id(param: string, value: string | null | undefined, { required = true } = {}): string | null {
    if (value === null || value === undefined) {
      if (required) this.fail(param, 'is required');
      return null;
    }
    if (!isUuid(value)) this.fail(param, 'must be a UUID');
    return value.toLowerCase();
  }

  /** Throws one BAD_REQUEST listing every failure so far. */
  done(): void {
    if (this.errors.length > 0) throw invalidInput(this.errors);
  }
}

/**
 * What a merge patch writes: each field it names, through that field's rule. Absent fields
 * stay as they are; null reaches the rule, which clears an optional field (its value null)
 * and refuses a required one.
 */
export function patchData<Patch extends Record<string, unknown>>(
  patch: Patch,
  rules: { [Field in keyof Patch]?: (value: Patch[Field]) => unknown },
): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(rules)
      .filter(([field]) => patch[field] !== undefined)
      .map(([field, rule]) => [field, (rule as (value: unknown) => unknown)(patch[field])]),
  );
}

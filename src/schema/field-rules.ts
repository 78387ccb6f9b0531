// Input field rules, declared once: the same value says what an input field accepts in its
// description, checks it (InputCheck, every fault at once), and becomes the JSON Schema
// keywords of the OpenAPI document (maxLength, pattern, format, minimum/maximum), so a
// validator generated from the document and the server agree on every field.
import { CURRENCIES, MAX_AMOUNT } from './validation.js';

export interface TextRule { kind: 'text'; max: number; required: boolean }
export interface EmailRule { kind: 'email'; required: boolean }
export interface IdRule { kind: 'id'; required: boolean }
export interface ItemsRule { kind: 'items'; min: number; max: number }
export type FieldRule = TextRule | EmailRule | IdRule | ItemsRule | { kind: 'phone' } | { kind: 'currency' } | { kind: 'amount' };

// Each is what InputCheck's method of the same name takes, so a check passes the rule itself.
export const rules = {
  /** A trimmed text of at most `max` characters (not blank when required). */
  text: (max: number, required = false): TextRule => ({ kind: 'text', max, required }),
  email: (required = false): EmailRule => ({ kind: 'email', required }),
  phone: () => ({ kind: 'phone' }) as const,
  currency: () => ({ kind: 'currency' }) as const,
  amount: () => ({ kind: 'amount' }) as const,
  id: (required = true): IdRule => ({ kind: 'id', required }),
  /** A list of `min` to `max` items. */
  items: (min: number, max: number): ItemsRule => ({ kind: 'items', min, max }),
};

/** The rule in words, for the field's description. */
export function describeRule(rule: FieldRule): string {
  switch (rule.kind) {
    case 'text':
      return rule.required ? `1 to ${rule.max} characters after trimming.` : `At most ${rule.max} characters.`;
    case 'email':
      return 'A valid address, at most 254 characters; stored lower-cased.';
    case 'phone':
      return 'E.164: + then 8 to 15 digits, such as +14155550123.';
    case 'currency':
      return 'ISO 4217, such as USD.';
    case 'amount':
      return `Minor units (cents), 0 to ${MAX_AMOUNT}.`;
    case 'id':
      return 'A UUID.';
    case 'items':
      return `${rule.min} to ${rule.max} items.`;
  }
}

/** A GraphQL input field's description and the rule it carries (the OpenAPI document reads `extensions.rule`). */
export function ruled(rule: FieldRule, note?: string) {
  return { description: note ? `${describeRule(rule)} ${note}` : describeRule(rule), extensions: { rule } };
}

/**
 * The rule as JSON Schema keywords. Texts are trimmed before they are measured, and a
 * required one must hold a character that is not white space.
 */
export function jsonSchemaOfRule(rule: FieldRule): Record<string, unknown> {
  switch (rule.kind) {
    case 'text':
      return { maxLength: rule.max, ...(rule.required ? { pattern: '\\S' } : {}) };
    case 'email':
      return { format: 'email', maxLength: 254 };
    case 'phone':
      return { pattern: '^\\+[0-9]{8,15}$' };
    case 'currency':
      return { enum: [...CURRENCIES].sort() };
    case 'amount':
      return { minimum: 0, maximum: MAX_AMOUNT };
    case 'id':
      return { format: 'uuid' };
    case 'items':
      return { minItems: rule.min, maxItems: rule.max };
  }
}

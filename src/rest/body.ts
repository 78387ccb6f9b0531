// Turns a JSON request body into the variables of a create mutation: snake_case keys to
// the input type's fields, every unknown field and every type mismatch named at once, in
// REST's words ("must be a string"), not GraphQL's.
import {
  coerceInputValue,
  getNamedType,
  getNullableType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  type GraphQLInputObjectType,
  type GraphQLInputType,
} from 'graphql';
import type { FieldError } from '../errors.js';
import { INT32_MAX, INT32_MIN } from '../schema/validation.js';
import { snakeCase } from './names.js';

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function renameKeys(value: unknown, type: GraphQLInputType, path: string, errors: FieldError[]): unknown {
  const nullable = getNullableType(type);
  if (isListType(nullable) && Array.isArray(value)) {
    return value.map((item, i) => renameKeys(item, nullable.ofType, `${path}[${i}]`, errors));
  }
  if (!isInputObjectType(nullable) || !isPlainObject(value)) return value;
  const bySnakeName = new Map(Object.values(nullable.getFields()).map((field) => [snakeCase(field.name), field]));
  const renamed: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const field = bySnakeName.get(key);
    const at = path ? `${path}.${key}` : key;
    if (!field) errors.push({ param: at, message: 'is not a known field' });
    else renamed[field.name] = renameKeys(item, field.type, at, errors);
  }
  return renamed;
}

/** GraphQL's path `['lineItems', 0, 'unitAmount']` as `lineItems[0].unitAmount`. */
function paramOf(path: ReadonlyArray<string | number>): string {
  return path.reduce<string>((acc, part) => (typeof part === 'number' ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), '');
}

/** The input type found at `path` below `type`. */
function typeAt(type: GraphQLInputType, path: ReadonlyArray<string | number>): GraphQLInputType | undefined {
  let current: GraphQLInputType | undefined = type;
  for (const part of path) {
    const nullable: GraphQLInputType | undefined = current && getNullableType(current);
    if (typeof part === 'number') current = isListType(nullable) ? (nullable.ofType as GraphQLInputType) : undefined;
    else {
      // A single value where a list is expected is coerced as a list of one: its fields are the item's.
      const object = isListType(nullable) ? getNullableType(nullable.ofType as GraphQLInputType) : nullable;
      current = isInputObjectType(object) ? object.getFields()[part]?.type : undefined;
    }
  }
  return current;
}

/** What a value of `type` must be, in plain words. */
function expectation(type: GraphQLInputType | undefined, graphqlMessage: string): string {
  if (!type) return graphqlMessage;
  if (isNonNullType(type) && /not to be null/.test(graphqlMessage)) return 'must not be null';
  const nullable = getNullableType(type);
  if (isListType(nullable)) return 'must be an array';
  if (isInputObjectType(nullable)) return 'must be an object';
  const named = getNamedType(type);
  if (isEnumType(named)) return `must be one of ${named.getValues().map((v) => v.name).join(', ')}`;
  switch (named.name) {
    case 'String':
    case 'ID':
      return 'must be a string';
    case 'Int':
      return `must be a whole number from ${INT32_MIN} to ${INT32_MAX}`;
    case 'Float':
      return 'must be a number';
    case 'Boolean':
      return 'must be true or false';
    default:
      // Custom scalars already speak plainly ("must be a calendar date such as 2026-01-31").
      return graphqlMessage.replace(/^Expected value of type "[^"]+", found [^;]+; /, '');
  }
}

/**
 * A value of `type` that coerces: it stands in for a field already reported as missing or
 * mistyped, so the operation can judge the other fields (it runs nothing while any error
 * stands, and does not report the stand-in's field again; see InputCheck).
 */
function standIn(type: GraphQLInputType): unknown {
  const nullable = getNullableType(type);
  if (!isNonNullType(type)) return null;
  if (isListType(nullable)) return [];
  if (isInputObjectType(nullable)) {
    const fields = Object.values(nullable.getFields()).filter((field) => isNonNullType(field.type));
    return Object.fromEntries(fields.map((field) => [field.name, standIn(field.type)]));
  }
  if (isEnumType(nullable)) return nullable.getValues()[0]!.name;
  return STAND_INS[nullable.name] ?? '';
}

const STAND_INS: Record<string, unknown> = { Int: 0, Float: 0, Boolean: false, DateTime: '1970-01-01T00:00:00Z', Date: '1970-01-01', BigInt: '0' };

/** Replaces the value a type error is about (the nearest field holding it) by a stand-in. */
function standInAt(root: Record<string, unknown>, input: GraphQLInputObjectType, path: ReadonlyArray<string | number>): void {
  let holder: unknown = root;
  let target: { object: Record<string, unknown>; key: string; at: ReadonlyArray<string | number> } | undefined;
  path.forEach((part, i) => {
    if (typeof part === 'string' && isPlainObject(holder)) target = { object: holder, key: part, at: path.slice(0, i + 1) };
    holder = (holder as Record<string | number, unknown> | undefined)?.[part];
  });
  if (!target) return;
  const type = typeAt(input, target.at);
  if (type && isNonNullType(type)) target.object[target.key] = standIn(type);
  else delete target.object[target.key];
}

export interface BodyInput {
  /** The fields that are well-typed; absent when the body is not an object at all. */
  value?: Record<string, unknown>;
  /** Unknown fields and type mismatches, by their GraphQL path (`lineItems[0].unitAmount`). */
  errors: FieldError[];
}

/**
 * The body as the mutation's input, every unknown or mistyped field named. The well-typed
 * rest is returned too, so the mutation can add its business-rule errors to the same answer
 * (it runs nothing while any error stands: see InputCheck).
 */
export function bodyToInput(body: unknown, input: GraphQLInputObjectType): BodyInput {
  if (!isPlainObject(body)) return { errors: [{ param: 'body', message: 'must be a JSON object' }] };
  const errors: FieldError[] = [];
  const value = renameKeys(body, input, '', errors) as Record<string, unknown>;
  const mistyped: Array<ReadonlyArray<string | number>> = [];
  coerceInputValue(value, input, (path, _invalid, error) => {
    // A missing required field is reported at its parent's path, with the field's name.
    const missing = /^Field "(\w+)" of required type "[^"]+" was not provided\.$/.exec(error.message);
    if (missing) {
      mistyped.push([...path, missing[1]!]);
      errors.push({ param: paramOf([...path, missing[1]!]), message: 'is required' });
      return;
    }
    mistyped.push(path);
    errors.push({ param: paramOf(path) || 'body', message: expectation(typeAt(input, path), error.message) });
  });
  for (const path of mistyped) standInAt(value, input, path);
  return { value, errors };
}

/**
 * A query-string value as the argument's GraphQL type takes it: numbers and `true`/`false`
 * are read from their text, then the type coerces it as it would a variable. The fault is in plain words.
 */
export function queryValue(raw: string, type: GraphQLInputType): { value?: unknown; fault?: string } {
  const name = getNamedType(type).name;
  const numeric = ['Int', 'Float'].includes(name) && /^[+-]?\d+(\.\d+)?$/.test(raw);
  const boolean = name === 'Boolean' && (raw === 'true' || raw === 'false');
  let fault: string | undefined;
  const variable = numeric ? Number(raw) : boolean ? raw === 'true' : raw;
  coerceInputValue(variable, type, (_path, _invalid, error) => (fault ??= expectation(type, error.message)));
  // The variable as JSON would carry it: the operation's own coercion makes it a value.
  return fault ? { fault } : { value: variable };
}

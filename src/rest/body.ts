// Turns a JSON request body into the variables of a create mutation: snake_case keys to
// the input type's fields, every unknown field and every type mismatch named at once.
import {
  coerceInputValue,
  getNullableType,
  isInputObjectType,
  isListType,
  type GraphQLInputObjectType,
  type GraphQLInputType,
} from 'graphql';
import type { FieldError } from '../errors.js';
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

function restPath(path: ReadonlyArray<string | number>): string {
  return path.reduce<string>((acc, part) => (typeof part === 'number' ? `${acc}[${part}]` : acc ? `${acc}.${snakeCase(part)}` : snakeCase(part)), '');
}

export function bodyToInput(body: unknown, input: GraphQLInputObjectType): { value?: Record<string, unknown>; errors: FieldError[] } {
  if (!isPlainObject(body)) return { errors: [{ param: 'body', message: 'must be a JSON object' }] };
  const errors: FieldError[] = [];
  const renamed = renameKeys(body, input, '', errors) as Record<string, unknown>;
  if (errors.length === 0) {
    coerceInputValue(renamed, input, (path, _invalid, error) => {
      const param = restPath(path) || 'body';
      errors.push({ param, message: error.message.replace(/^Expected value of type "[^"]+", found [^;]+; /, '') });
    });
  }
  return errors.length > 0 ? { errors } : { value: renamed, errors };
}

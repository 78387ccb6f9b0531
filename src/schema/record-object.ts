// A resource's GraphQL object from its Prisma model: the fields it shows, by name, each with
// the model field's type and nullability, so a resource's file does not write them again.
import { getDatamodel } from '../generated/pothos-prisma-types.js';
import { builder } from './builder.js';
import type { ResourceType } from './changes.js';
import { enumOf } from './enums.js';

interface Shown {
  /** The model field, where the GraphQL name differs (an e-mail's `from` is `fromAddress`). */
  column?: string;
  /** A DateTime column that holds a day (`@db.Date`): the `Date` scalar, `YYYY-MM-DD`. */
  day?: boolean;
  description?: string;
  extensions?: Record<string, unknown>;
}

const SCALARS: Record<string, string> = { String: 'String', Int: 'Int', Boolean: 'Boolean', DateTime: 'DateTime' };

const days = new Map<ResourceType, ReadonlySet<string>>();

/** The fields of a resource shown as days (`Date`), which its list filters by `YYYY-MM-DD`. */
export function dayFields(type: ResourceType): ReadonlySet<string> {
  return days.get(type) ?? new Set();
}

/**
 * `id`, then `fields` of the model `type`, with `options` for those that need more than the
 * model says; the fields every record has, and its references, are added by defineResource.
 */
export function recordObject(type: ResourceType, fields: string[], options: Record<string, Shown> = {}) {
  const model = getDatamodel().datamodel.models[type]!;
  days.set(type, new Set(fields.filter((name) => options[name]?.day)));
  const shown = fields.map((name) => {
    const { column = name, day, ...more } = options[name] ?? {};
    const field = model.fields.find((f) => f.name === column);
    if (!field || field.kind === 'object') throw new Error(`${type}.${name}: its Prisma model holds no field ${column}`);
    if (day && field.type !== 'DateTime') throw new Error(`${type}.${name}: a day is a DateTime column (@db.Date), not ${field.type}`);
    const graphql = field.kind === 'enum' ? enumOf(field.type).ref : day ? 'Date' : SCALARS[field.type];
    if (!graphql) throw new Error(`${type}.${name}: a ${field.type} field is not shown by recordObject`);
    return { name, column, type: graphql, nullable: !field.isRequired, ...more };
  });
  return builder.prismaObject(type, {
    fields: (t) => ({
      id: t.exposeID('id'),
      ...Object.fromEntries(shown.map(({ name, column, ...rest }) => [name, (t.expose as (column: string, options: object) => never)(column, rest)])),
    }),
  });
}

// The one SchemaBuilder: plugins, scalars and the request context, nothing else.
import SchemaBuilder from '@pothos/core';
import PrismaPlugin from '@pothos/plugin-prisma';
import ScopeAuthPlugin, { AuthScopeFailureType, type AuthFailure } from '@pothos/plugin-scope-auth';
import { GraphQLError, Kind } from 'graphql';
import type { Scope } from '../auth/scopes.js';
import type { Context } from '../context.js';
import { apiError } from '../errors.js';
import type PrismaTypes from '../generated/pothos-prisma-types.js';
import { getDatamodel } from '../generated/pothos-prisma-types.js';

function missingScopes(failure: AuthFailure): string[] {
  if (failure.kind === AuthScopeFailureType.AuthScope) return ([] as unknown[]).concat(failure.parameter).map(String);
  if (failure.kind === AuthScopeFailureType.AnyAuthScopes || failure.kind === AuthScopeFailureType.AllAuthScopes) {
    return failure.failures.flatMap(missingScopes);
  }
  return [];
}

export interface Types {
  Context: Context;
  PrismaTypes: PrismaTypes;
  DefaultFieldNullability: false;
  /** `scope`: this one; `anyScope`: at least one of these. */
  AuthScopes: { scope: Scope; anyScope: readonly Scope[] };
  Scalars: {
    DateTime: { Input: Date; Output: Date };
    Date: { Input: Date; Output: Date };
    BigInt: { Input: bigint; Output: bigint | number };
    JSON: { Input: unknown; Output: unknown };
  };
}

export const builder = new SchemaBuilder<Types>({
  plugins: [ScopeAuthPlugin, PrismaPlugin],
  defaultFieldNullability: false,
  scopeAuth: {
    authScopes: (ctx) => ({
      scope: (scope: Scope) => ctx.auth.scopes.has(scope),
      anyScope: (scopes: readonly Scope[]) => scopes.some((scope) => ctx.auth.scopes.has(scope)),
    }),
    unauthorizedError: (_parent, _ctx, info, result) => {
      const scopes = missingScopes(result.failure);
      return apiError(
        'FORBIDDEN',
        scopes.length > 0
          ? `This API key lacks the scope ${scopes.join(' or ')}, required for ${info.parentType.name}.${info.fieldName}.`
          : `Not allowed: ${info.parentType.name}.${info.fieldName}.`,
        scopes.length > 0 ? { details: { scopes } } : {},
      );
    },
  },
  prisma: {
    // Each request carries its own organization-bound client (see db/tenant.ts).
    client: (ctx) => ctx.prisma,
    dmmf: getDatamodel(),
    onUnusedQuery: process.env.NODE_ENV === 'production' ? null : 'warn',
  },
});

/** A real calendar day of years 1 to 9999 (no February 30, no year 0, which PostgreSQL lacks). */
function isCalendarDay(year: number, month: number, day: number): boolean {
  const date = new Date(Date.UTC(2000, month - 1, day));
  date.setUTCFullYear(year);
  return year >= 1 && year <= 9999 && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-](\d{2}):(\d{2}))$/;

function parseDateTime(value: unknown): Date {
  const parts = typeof value === 'string' ? DATE_TIME.exec(value) : null;
  if (parts) {
    const [year, month, day, hour, minute, second = 0, , offsetHours = 0, offsetMinutes = 0] = parts.slice(1).map((p) => (p === undefined ? undefined : Number(p)));
    const date = new Date(value as string);
    if (
      isCalendarDay(year!, month!, day!) &&
      hour! <= 23 && minute! <= 59 && second <= 59 && offsetHours <= 23 && offsetMinutes <= 59 &&
      !Number.isNaN(date.getTime())
    ) {
      return date;
    }
  }
  throw new GraphQLError('must be an ISO 8601 date-time with a time zone, such as 2026-01-02T03:04:05Z');
}

function parseDate(value: unknown): Date {
  const parts = typeof value === 'string' ? /^(\d{4})-(\d{2})-(\d{2})$/.exec(value) : null;
  if (parts && isCalendarDay(Number(parts[1]), Number(parts[2]), Number(parts[3]))) return new Date(`${value}T00:00:00.000Z`);
  throw new GraphQLError('must be a calendar date such as 2026-01-31');
}

builder.scalarType('DateTime', {
  description: 'An ISO 8601 UTC timestamp, such as 2026-01-02T03:04:05.000Z.',
  serialize: (value) => (value as Date).toISOString(),
  parseValue: parseDateTime,
  parseLiteral: (ast) => parseDateTime(ast.kind === Kind.STRING ? ast.value : undefined),
});

builder.scalarType('Date', {
  description: 'A calendar date, such as 2026-01-31.',
  serialize: (value) => (value as Date).toISOString().slice(0, 10),
  parseValue: parseDate,
  parseLiteral: (ast) => parseDate(ast.kind === Kind.STRING ? ast.value : undefined),
});

builder.queryType({});
builder.mutationType({});

builder.scalarType('BigInt', {
  description: 'An integer of any size, as a decimal string such as "12550": exact where a JSON number would round.',
  serialize: (value) => {
    if ((typeof value === 'number' && Number.isSafeInteger(value)) || typeof value === 'bigint') return String(value);
    throw new Error(`BigInt cannot represent ${String(value)} exactly`);
  },
  parseValue: (value) => {
    if (typeof value === 'string' && /^-?\d{1,30}$/.test(value)) return BigInt(value);
    throw new GraphQLError('must be an integer as a decimal string, such as "12550"');
  },
  parseLiteral: (ast) => {
    if (ast.kind === Kind.STRING && /^-?\d{1,30}$/.test(ast.value)) return BigInt(ast.value);
    throw new GraphQLError('must be an integer as a decimal string, such as "12550"');
  },
});

builder.scalarType('JSON', {
  description: 'Any JSON value (an event\'s `data`: the record as REST shows it).',
  serialize: (value) => value,
  parseValue: (value) => value,
});

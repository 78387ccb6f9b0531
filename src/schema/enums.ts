import type { EnumRef } from '@pothos/core';
import { EmailType, InvoiceStatus, JobStatus, QuoteStatus } from '../generated/prisma/enums.js';
import { builder, type Types } from './builder.js';

type SchemaTypes = PothosSchemaTypes.ExtendDefaultTypes<Types>;

const declared = new Map<string, { ref: EnumRef<SchemaTypes, string, string>; values: readonly string[] }>();

/** A Prisma enum as the GraphQL enum of the same name, its values in declared order. */
function prismaEnum<const Values extends Record<string, string>>(values: Values, name: string, description?: string) {
  const ref = builder.enumType(values, { name, description } as never);
  declared.set(name, { ref: ref as EnumRef<SchemaTypes, string, string>, values: Object.values(values) });
  return ref;
}

// Values are the same lower-case words REST uses, so both surfaces speak one vocabulary.
export const JobStatusEnum = prismaEnum(JobStatus, 'JobStatus');
export const EmailTypeEnum = prismaEnum(EmailType, 'EmailType');
export const InvoiceStatusEnum = prismaEnum(InvoiceStatus, 'InvoiceStatus');
export const QuoteStatusEnum = prismaEnum(QuoteStatus, 'QuoteStatus', 'Status of an estimate or a proposal.');

/** The GraphQL enum of a list field whose model field has the Prisma enum `name`, and its values. */
export function enumOf(name: string): { ref: EnumRef<SchemaTypes, string, string>; values: readonly string[] } {
  const found = declared.get(name);
  if (!found) throw new Error(`the Prisma enum ${name} has no GraphQL enum in src/schema/enums.ts`);
  return found;
}

import type { EnumRef } from '@pothos/core';
import * as prismaEnums from '../generated/prisma/enums.js';
import { EmailType, InvoiceStatus, JobStatus, QuoteStatus } from '../generated/prisma/enums.js';
import { builder, type Types } from './builder.js';

type SchemaTypes = PothosSchemaTypes.ExtendDefaultTypes<Types>;

// Values are the same lower-case words REST uses, so both surfaces speak one vocabulary.
export const JobStatusEnum = builder.enumType(JobStatus, { name: 'JobStatus' });
export const EmailTypeEnum = builder.enumType(EmailType, { name: 'EmailType' });
export const InvoiceStatusEnum = builder.enumType(InvoiceStatus, { name: 'InvoiceStatus' });
export const QuoteStatusEnum = builder.enumType(QuoteStatus, {
  name: 'QuoteStatus',
  description: 'Status of an estimate or a proposal.',
});

const REFS = new Map<string, EnumRef<SchemaTypes, string, string>>(
  [JobStatusEnum, EmailTypeEnum, InvoiceStatusEnum, QuoteStatusEnum].map((ref) => [ref.name, ref as EnumRef<SchemaTypes, string, string>]),
);

/**
 * A Prisma enum's GraphQL enum (same name) and its values in declared order, for a list
 * field whose model field has that enum type.
 */
export function enumOf(name: string): { ref: EnumRef<SchemaTypes, string, string>; values: readonly string[] } {
  const ref = REFS.get(name);
  const values = (prismaEnums as Record<string, Record<string, string>>)[name];
  if (!ref || !values) throw new Error(`the Prisma enum ${name} has no GraphQL enum in src/schema/enums.ts`);
  return { ref, values: Object.values(values) };
}

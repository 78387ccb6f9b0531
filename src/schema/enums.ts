import { EmailType, InvoiceStatus, JobStatus, QuoteStatus } from '../generated/prisma/enums.js';
import { builder } from './builder.js';

// Values are the same lower-case words REST uses, so both surfaces speak one vocabulary.
export const JobStatusEnum = builder.enumType(JobStatus, { name: 'JobStatus' });
export const EmailTypeEnum = builder.enumType(EmailType, { name: 'EmailType' });
export const InvoiceStatusEnum = builder.enumType(InvoiceStatus, { name: 'InvoiceStatus' });
export const QuoteStatusEnum = builder.enumType(QuoteStatus, {
  name: 'QuoteStatus',
  description: 'Status of an estimate or a proposal.',
});

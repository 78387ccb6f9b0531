// npm run seed: the demo organization with data in every resource, and a key for it
// (printed alone on the last line of standard output).
import './short-lived.js';
import { seedDemo } from '../db/demo-data.js';
import { processTerminal, withDatabase } from './runtime.js';

const terminal = processTerminal();
process.exitCode = await withDatabase(terminal, async ({ prisma }) => {
  const { organization, key, seeded } = await seedDemo(prisma);
  terminal.err(seeded ? `Seeded ${organization} with customers, jobs, emails, invoices, estimates and proposals.` : `${organization} already has data; adding a key only.`);
  terminal.err('API key for the demo organization (shown once):');
  terminal.out(key);
});

// npm run seed: the demo organization with data in every resource, and a key for it
// (printed alone on the last line of standard output).
import { seedDemo } from '../db/demo-data.js';
import { withDatabase } from './runtime.js';

await withDatabase(async ({ prisma }) => {
  const { organization, key, seeded } = await seedDemo(prisma);
  console.error(seeded ? `Seeded ${organization} with customers, jobs, emails, invoices, estimates and proposals.` : `${organization} already has data; adding a key only.`);
  console.error('API key for the demo organization (shown once):');
  console.log(key);
});

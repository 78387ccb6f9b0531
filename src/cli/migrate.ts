// npm run db:migrate: apply pending migrations to the configured database and exit.
import { withDatabase } from './runtime.js';

await withDatabase(async () => {
  console.log('The database is up to date.');
});

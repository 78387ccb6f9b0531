// Health for load balancers and orchestrators: /healthz while the process is up, /readyz
// while the database answers (503 with Retry-After otherwise).
import type { Database } from '../db/connection.js';
import { apiError } from '../errors.js';
import type { Logger } from '../logger.js';
import { Response } from './fetch.js';
import { problemResponse } from './problem.js';

export function healthCheck(db: Pick<Database, 'sql'>, log: Logger) {
  return async (pathname: string, requestId: string): Promise<Response | undefined> => {
    if (pathname === '/healthz') return Response.json({ status: 'ok' });
    if (pathname !== '/readyz') return undefined;
    try {
      await db.sql.query('SELECT 1');
      return Response.json({ status: 'ready' });
    } catch (error) {
      log.warn('readiness check failed', { request_id: requestId, error: (error as Error).message });
      return problemResponse(apiError('UNAVAILABLE', 'The database is unreachable.', { headers: { 'Retry-After': '5' } }), requestId);
    }
  };
}

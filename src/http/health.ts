// Health for load balancers and orchestrators: /healthz while the process is up, /readyz
// while the database answers (503 with Retry-After otherwise). A probe answers within a
// second whatever the database does: a hung database is as unready as a stopped one.
import type { Database } from '../db/connection.js';
import { apiError } from '../errors.js';
import type { Logger } from '../logger.js';
import { Response } from './fetch.js';
import { problemResponse } from './problem.js';

/** How long a readiness probe waits for the database's answer. */
export const READY_TIMEOUT_MS = 800;

export function healthCheck(db: Pick<Database, 'sql'>, log: Logger) {
  // One check at a time: probes arriving while the database is slow share it rather than
  // each taking a connection for as long as the database takes to fail.
  let inFlight: Promise<void> | undefined;
  const check = () =>
    (inFlight ??= db.sql.query('SELECT 1').then(
      () => {
        inFlight = undefined;
      },
      (error: unknown) => {
        inFlight = undefined;
        throw error;
      },
    ));

  async function ready(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
    });
    try {
      await Promise.race([check(), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  return async (pathname: string, requestId: string): Promise<Response | undefined> => {
    if (pathname === '/healthz') return Response.json({ status: 'ok' });
    if (pathname !== '/readyz') return undefined;
    try {
      await ready();
      return Response.json({ status: 'ready' });
    } catch (error) {
      log.warn('readiness check failed', { request_id: requestId, error: (error as Error).message });
      return problemResponse(apiError('UNAVAILABLE', 'The database is unreachable.', { headers: { 'Retry-After': '5' } }), requestId);
    }
  };
}

// The account page's "Recent API requests": the organization's latest 50 requests, as the
// API shows them (GET /v1/request_logs has the filters and the rest).
import type { PrismaClient } from '../generated/prisma/client.js';
import { escape } from '../web/html.js';
import { flushRequestLogs } from './writer.js';

export const PAGE_ROWS = 50;

export async function requestLogsSection(prisma: PrismaClient, organizationId: string): Promise<string> {
  // What this process still holds is written first, as for the API.
  await flushRequestLogs();
  const rows = await prisma.requestLog.findMany({ where: { organizationId }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: PAGE_ROWS });
  const body = rows
    .map(
      (row) => `<tr>
        <td><time datetime="${row.createdAt.toISOString()}">${row.createdAt.toISOString().slice(0, 19).replace('T', ' ')} UTC</time></td>
        <td>${escape(row.method)}</td><td><code>${escape(row.path)}</code></td>
        <td class="${row.status >= 400 ? 'status-revoked' : 'status-active'}">${row.status}</td><td>${row.durationMs} ms</td>
        <td>${row.errorCode ? `<code>${escape(row.errorCode)}</code>` : ''}</td>
        <td><code>${escape(row.keyPrefix)}…</code></td><td><code>${escape(row.requestId)}</code></td>
      </tr>`,
    )
    .join('');
  return `<h2 id="request-logs">Recent API requests</h2>
    <p>The latest ${PAGE_ROWS} of the last 7 days; <code>GET /v1/request_logs</code> (scope <code>logs:read</code>) filters them by status, method and request id.</p>
    ${body ? `<table class="request-logs"><thead><tr><th>Time</th><th>Method</th><th>Path</th><th>Status</th><th>Duration</th><th>Error</th><th>Key</th><th>Request id</th></tr></thead><tbody>${body}</tbody></table>` : '<p class="no-requests">No API requests yet.</p>'}`;
}

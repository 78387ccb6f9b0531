<?php
declare(strict_types=1);

namespace Crm;

/**
 * The event log: every committed change, ['id' => 'evt_...', 'type', 'created_at', 'data' =>
 * ['object', 'previous_attributes'?], 'request_id']. list/iterate: newest first (type, limit,
 * page, cursor, after).
 */
final class Events
{
    use Pages;

    private string $path = 'events';

    public function __construct(private Client $client) {}

    /** Queues the event again, now: to one endpoint, or to every enabled endpoint that receives its type. */
    public function resend(string $id, ?string $endpointId = null, ?string $idempotencyKey = null, bool $dryRun = false): array
    {
        return $this->client->request('POST', $this->item($id) . '/resend', [], $endpointId === null ? (object) [] : ['endpoint_id' => $endpointId], $idempotencyKey ?? Client::uuid(), null, $dryRun);
    }

    /**
     * The events committed after $eventId (or after where $cursor, from an earlier catch-up, left
     * off), oldest first, optionally of one $type: iterate it, then save its `cursor` for next time.
     */
    public function since(?string $eventId = null, ?string $cursor = null, ?string $type = null, int $limit = 100): EventSync
    {
        return new EventSync($this, $eventId, $cursor, $type, $limit);
    }
}

<?php
declare(strict_types=1);

namespace Crm;

/**
 * CSV files written in the background: ['id', 'status' => 'pending' | 'running' | 'completed' |
 * 'failed', 'resource', 'mode', 'total', 'created', 'updated', 'failed', 'errors' => [['row',
 * 'param', 'message'], ...], ...].
 */
final class Imports
{
    public function __construct(private Client $client) {}

    /**
     * A CSV file (a header row of field names, metadata.<key> columns), each row created ($mode
     * 'create') or upserted by its external_id ('upsert'): answers ['id', 'status'], to follow with get($id).
     */
    public function create(string $csv, string $resource, string $mode = 'create', ?string $idempotencyKey = null, bool $dryRun = false): array
    {
        return $this->client->request('POST', '/imports', ['resource' => $resource, 'mode' => $mode], $csv, $idempotencyKey ?? Client::uuid(), null, $dryRun);
    }

    public function get(string $id): array
    {
        return $this->client->request('GET', '/imports/' . rawurlencode($id));
    }
}

<?php
declare(strict_types=1);

namespace Crm;

/**
 * A resource's records. Every write takes $dryRun (sent as Prefer: dry-run): the server runs it
 * and answers what it would (the record, or the error it would throw), keeping nothing.
 */
class Resource
{
    use Pages;

    /** @param list<string> $moves the transitions of the resource's status */
    public function __construct(protected Client $client, protected string $path, private bool $editable = true, private bool $sync = true, private array $moves = []) {}

    public function create(array $body, ?string $idempotencyKey = null, bool $dryRun = false): array
    {
        // A generated key makes retries safe: a retried create never duplicates.
        return $this->write('POST', "/{$this->path}", null, $idempotencyKey, $body, $dryRun);
    }

    /**
     * Creates the record holding $externalId, or updates the live one that holds it with the
     * fields an update takes (PUT /{resource}/by_external_id/{external_id}); a created record is
     * at version 1. Concurrent upserts of one external id make one record.
     */
    public function upsert(string $externalId, array $body, ?string $idempotencyKey = null, bool $dryRun = false): array
    {
        return $this->write('PUT', "/{$this->path}/by_external_id/" . rawurlencode($externalId), null, $idempotencyKey, $body, $dryRun);
    }

    /**
     * Up to 100 writes in one transaction, each ['op' => 'create' | 'update' | 'upsert' | 'delete',
     * 'id'?, 'external_id'?, 'data'?, 'if_match'?]. Answers ['results' => [['index', 'status',
     * 'record'?, 'error'?], ...]]. $mode 'atomic': every item or none (a refusal throws, its errors
     * naming items[i].field); 'partial': each item on its own, a refused one answered with its 'error'.
     */
    public function batch(array $items, string $mode = 'atomic', ?string $idempotencyKey = null, bool $dryRun = false): array
    {
        return $this->write('POST', "/{$this->path}/batch", null, $idempotencyKey, ['items' => $items, 'mode' => $mode], $dryRun);
    }

    /**
     * A JSON merge patch: the fields given change, null clears one (metadata merges key by key: a
     * key with null is removed). With $ifMatch (a version), throws PreconditionFailed unless the
     * record is still at that version.
     */
    public function update(string $id, array $patch, int|string|null $ifMatch = null, ?string $idempotencyKey = null, bool $dryRun = false): array
    {
        if (!$this->editable) {
            throw new \BadMethodCallException("{$this->path} cannot be edited through the REST API");
        }
        // (object): an empty patch is the JSON object {}, not [].
        return $this->write('PATCH', $this->item($id), $ifMatch, $idempotencyKey, (object) $patch, $dryRun);
    }

    /** Updates $record only if it is still at $record['version']; otherwise throws PreconditionFailed, whose `current` is the record as it is now. */
    public function updateIfUnchanged(array $record, array $patch, ?string $idempotencyKey = null, bool $dryRun = false): array
    {
        return $this->update($record['id'], $patch, $record['version'], $idempotencyKey, $dryRun);
    }

    /** Soft delete: the record reads as NotFound until restored. */
    public function delete(string $id, int|string|null $ifMatch = null, ?string $idempotencyKey = null, bool $dryRun = false): void
    {
        $this->write('DELETE', $this->item($id), $ifMatch, $idempotencyKey, null, $dryRun);
    }

    public function restore(string $id, int|string|null $ifMatch = null, ?string $idempotencyKey = null, bool $dryRun = false): array
    {
        return $this->write('POST', $this->item($id) . '/restore', $ifMatch, $idempotencyKey, null, $dryRun);
    }

    /** A change of status, such as $crm->invoices->transition($id, 'send'). */
    public function transition(string $id, string $move, int|string|null $ifMatch = null, ?string $idempotencyKey = null, bool $dryRun = false): array
    {
        if (!in_array($move, $this->moves, true)) {
            throw new \InvalidArgumentException("{$this->path} have no transition '$move': one of " . ($this->moves ? implode(', ', $this->moves) : 'none'));
        }
        return $this->write('POST', $this->item($id) . "/$move", $ifMatch, $idempotencyKey, null, $dryRun);
    }

    /** One record's history: a page of its events, newest first ('limit', 'page', 'cursor'). */
    public function events(string $id, array $params = []): array
    {
        return $this->client->request('GET', $this->item($id) . '/events', $params);
    }

    /**
     * Every change (records and tombstones), oldest first, from $cursor (or the first change, or
     * $updatedSince, an ISO 8601 time): iterate it, then save its `cursor` for next time.
     */
    public function sync(?string $cursor = null, ?string $updatedSince = null, int $limit = 100): Sync
    {
        if (!$this->sync) {
            throw new \BadMethodCallException("{$this->path} have no sync");
        }
        return new Sync($this, $cursor, $updatedSince, $limit);
    }

    /** Whether update() is allowed, and the moves transition() knows. */
    public function isEditable(): bool
    {
        return $this->editable;
    }

    /** @return list<string> */
    public function moves(): array
    {
        return $this->moves;
    }

    /** Every write carries an Idempotency-Key, the same on each retry: a retried write is applied once. */
    protected function write(string $method, string $path, int|string|null $ifMatch, ?string $idempotencyKey, array|object|null $body = null, bool $dryRun = false): array
    {
        return $this->client->request($method, $path, [], $body, $idempotencyKey ?? Client::uuid(), $ifMatch === null ? null : Client::entityTag($ifMatch), $dryRun);
    }
}

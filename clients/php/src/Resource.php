<?php
declare(strict_types=1);

namespace Crm;

final class Resource
{
    use Pages;

    /** @param list<string> $moves the transitions of the resource's status */
    public function __construct(private Client $client, private string $path, private bool $editable = true, private array $moves = []) {}

    public function create(array $body, ?string $idempotencyKey = null): array
    {
        // A generated key makes retries safe: a retried create never duplicates.
        return $this->client->request('POST', "/{$this->path}", [], $body, $idempotencyKey ?? Client::uuid());
    }

    /**
     * A JSON merge patch: the fields given change, null clears one. With $ifMatch (a version),
     * throws PreconditionFailed unless the record is still at that version.
     */
    public function update(string $id, array $patch, int|string|null $ifMatch = null, ?string $idempotencyKey = null): array
    {
        if (!$this->editable) {
            throw new \BadMethodCallException("{$this->path} cannot be edited through the REST API");
        }
        // (object): an empty patch is the JSON object {}, not [].
        return $this->write('PATCH', $this->item($id), $ifMatch, $idempotencyKey, (object) $patch);
    }

    /** Updates $record only if it is still at $record['version']; otherwise throws PreconditionFailed, whose `current` is the record as it is now. */
    public function updateIfUnchanged(array $record, array $patch, ?string $idempotencyKey = null): array
    {
        return $this->update($record['id'], $patch, $record['version'], $idempotencyKey);
    }

    /** Soft delete: the record reads as NotFound until restored. */
    public function delete(string $id, int|string|null $ifMatch = null, ?string $idempotencyKey = null): void
    {
        $this->write('DELETE', $this->item($id), $ifMatch, $idempotencyKey);
    }

    public function restore(string $id, int|string|null $ifMatch = null, ?string $idempotencyKey = null): array
    {
        return $this->write('POST', $this->item($id) . '/restore', $ifMatch, $idempotencyKey);
    }

    /** A change of status, such as $crm->invoices->transition($id, 'send'). */
    public function transition(string $id, string $move, int|string|null $ifMatch = null, ?string $idempotencyKey = null): array
    {
        if (!in_array($move, $this->moves, true)) {
            throw new \InvalidArgumentException("{$this->path} have no transition '$move': one of " . ($this->moves ? implode(', ', $this->moves) : 'none'));
        }
        return $this->write('POST', $this->item($id) . "/$move", $ifMatch, $idempotencyKey);
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
    private function write(string $method, string $path, int|string|null $ifMatch, ?string $idempotencyKey, ?object $body = null): array
    {
        return $this->client->request($method, $path, [], $body, $idempotencyKey ?? Client::uuid(), $ifMatch === null ? null : Client::entityTag($ifMatch));
    }
}

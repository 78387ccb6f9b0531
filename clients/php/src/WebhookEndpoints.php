<?php
declare(strict_types=1);

namespace Crm;

/** Where events are sent: ['id', 'url', 'description', 'event_types', 'enabled', 'disabled_reason', ...]. */
final class WebhookEndpoints
{
    use Pages;

    private string $path = 'webhook_endpoints';

    public function __construct(private Client $client) {}

    /**
     * ['url', 'description'?, 'event_types'?, 'enabled'?]: answers the endpoint with its signing
     * 'secret' (whsec_...), this once. A retry answers the same secret (the call's Idempotency-Key).
     */
    public function create(array $body, ?string $idempotencyKey = null, bool $dryRun = false): array
    {
        return $this->client->request('POST', "/{$this->path}", [], $body, $idempotencyKey ?? Client::uuid(), null, $dryRun);
    }

    /** The fields given are set (null clears the description; 'enabled' => true also clears disabled_reason). */
    public function update(string $id, array $patch, ?string $idempotencyKey = null, bool $dryRun = false): array
    {
        return $this->client->request('PATCH', $this->item($id), [], (object) $patch, $idempotencyKey ?? Client::uuid(), null, $dryRun);
    }

    /** Removes the endpoint, its pending deliveries and its delivery log. */
    public function delete(string $id, ?string $idempotencyKey = null, bool $dryRun = false): void
    {
        $this->client->request('DELETE', $this->item($id), [], null, $idempotencyKey ?? Client::uuid(), null, $dryRun);
    }

    /** A new signing secret, answered this once in 'secret'; for 24 hours deliveries are signed with the old one too. */
    public function rotateSecret(string $id, ?string $idempotencyKey = null, bool $dryRun = false): array
    {
        return $this->client->request('POST', $this->item($id) . '/rotate_secret', [], null, $idempotencyKey ?? Client::uuid(), null, $dryRun);
    }

    /** Sends a signed webhook.ping now: ['status_code', 'duration_ms', 'error'] as the endpoint took it. */
    public function test(string $id): array
    {
        return $this->client->request('POST', $this->item($id) . '/test');
    }

    /** The endpoint's delivery attempts, newest first: ['event_id', 'status_code', 'duration_ms', 'error', 'created_at']. */
    public function deliveries(string $id, array $params = []): array
    {
        return $this->client->request('GET', $this->item($id) . '/deliveries', $params);
    }
}

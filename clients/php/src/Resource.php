<?php
declare(strict_types=1);

namespace Crm;

final class Resource
{
    public function __construct(private Client $client, private string $path, private bool $creatable) {}

    /** One page: ['data' => [...], 'pagination' => ['page', 'limit', 'total']]. */
    public function list(array $params = []): array
    {
        return $this->client->request('GET', "/{$this->path}", $params);
    }

    public function get(string $id): array
    {
        return $this->client->request('GET', "/{$this->path}/" . rawurlencode($id));
    }

    /** Every record over all pages. */
    public function iterate(array $params = []): \Generator
    {
        $params['limit'] ??= 100;
        for ($page = 1; ; $page++) {
            $result = $this->list([...$params, 'page' => $page]);
            yield from $result['data'];
            if (!$result['data'] || $page * $result['pagination']['limit'] >= $result['pagination']['total']) {
                return;
            }
        }
    }

    public function create(array $body, ?string $idempotencyKey = null): array
    {
        if (!$this->creatable) {
            throw new \BadMethodCallException("{$this->path} cannot be created through the REST API");
        }
        // A generated key makes retries safe: a retried create never duplicates.
        return $this->client->request('POST', "/{$this->path}", [], $body, $idempotencyKey ?? Client::uuid());
    }
}

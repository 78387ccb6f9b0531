<?php
declare(strict_types=1);

namespace Crm;

/**
 * The organization's recent API requests, newest first: ['request_id', 'method', 'path', 'status',
 * 'duration_ms', 'error_code', 'key_prefix', 'created_at']; list and iterate take 'status' (400 or
 * '4xx'), 'method', 'request_id'. They are listed, not read one by one.
 */
final class RequestLogs
{
    public function __construct(private Client $client) {}

    public function list(array $params = []): array
    {
        return $this->client->request('GET', '/request_logs', $params);
    }

    /** Every request logged over all pages. */
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
}

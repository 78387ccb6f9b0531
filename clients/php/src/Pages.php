<?php
declare(strict_types=1);

namespace Crm;

/** list, get and iterate of a collection: the class has $client and $path. */
trait Pages
{
    /** One page: ['data' => [...], 'pagination' => ['page', 'limit', 'total', 'next_cursor', 'has_more']]. */
    public function list(array $params = []): array
    {
        return $this->client->request('GET', "/{$this->path}", $params);
    }

    public function get(string $id): array
    {
        return $this->client->request('GET', $this->item($id));
    }

    /** Every item over all pages. */
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

    private function item(string $id): string
    {
        return "/{$this->path}/" . rawurlencode($id);
    }
}

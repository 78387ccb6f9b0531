<?php
declare(strict_types=1);

namespace Crm;

/** list, get and iterate of a collection: the class has $client and $path. */
trait Pages
{
    /**
     * One page: ['data' => [...], 'pagination' => ['page', 'limit', 'total', 'next_cursor', 'has_more']].
     *
     * Sorted by 'order_by' (['due_date', '-total_amount']; '-' sorts descending), filtered by
     * 'where' (or the same filters beside the others): ranges ['gte' => 10000, 'lt' => 50000]
     * (DateTimeInterface allowed; a bare value matches exactly), sets ['sent', 'paid'], exact
     * values, search, and a related list's filters one level deep (['customer' => ['search' =>
     * 'acme']], ['invoices' => ['status' => 'sent']]). 'expand' (['customer']) answers references
     * as records beside their ids; 'fields' (['number']) only those fields (and id).
     */
    public function list(array $params = []): array
    {
        return $this->client->request('GET', "/{$this->path}", $params);
    }

    /** One record; ['expand' => [...]] answers its references as records beside their ids, ['fields' => [...]] only those fields (and id). */
    public function get(string $id, array $params = []): array
    {
        return $this->client->request('GET', $this->item($id), $params);
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

    protected function item(string $id): string
    {
        return "/{$this->path}/" . rawurlencode($id);
    }
}

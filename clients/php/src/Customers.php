<?php
declare(strict_types=1);

namespace Crm;

/** Customers: a resource's records, and their duplicates and merges. */
final class Customers extends Resource
{
    /**
     * Live customers sharing an e-mail or a phone, grouped (e-mail groups first): a page of
     * ['key' => 'email' | 'phone', 'value', 'count', 'customers' => [...]] ('page', 'limit', 'cursor').
     */
    public function duplicates(array $params = []): array
    {
        return $this->client->request('GET', "/{$this->path}/duplicates", $params);
    }

    /**
     * Moves every job, e-mail, invoice, estimate and proposal of the $sourceIds customers to this
     * one and deletes them, in one transaction; answers this customer.
     *
     * @param list<string> $sourceIds
     */
    public function merge(string $id, array $sourceIds, int|string|null $ifMatch = null, ?string $idempotencyKey = null, bool $dryRun = false): array
    {
        return $this->write('POST', $this->item($id) . '/merge', $ifMatch, $idempotencyKey, ['source_ids' => $sourceIds], $dryRun);
    }
}

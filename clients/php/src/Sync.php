<?php
declare(strict_types=1);

namespace Crm;

/**
 * The changes of a resource, oldest first: records as they are now, and for each deleted record
 * a tombstone ['id', 'deleted' => true, 'deleted_at', 'version']. Iterating follows next_cursor
 * until the last page; afterwards `cursor` is where to resume later. It moves only once every
 * item of a page has been consumed, so leaving the loop early resumes at the unfinished page
 * (items may repeat, none is missed). Iterating the same Sync again yields the changes made since.
 *
 * @implements \IteratorAggregate<int, array>
 */
final class Sync implements \IteratorAggregate
{
    public function __construct(private Resource $resource, public ?string $cursor = null, private ?string $updatedSince = null, private int $limit = 100) {}

    public function getIterator(): \Generator
    {
        while (true) {
            // A cursor embeds its list's filters.
            $result = $this->cursor !== null
                ? $this->resource->list(['cursor' => $this->cursor, 'limit' => $this->limit])
                : $this->resource->list(array_filter(['include_deleted' => 'true', 'updated_since' => $this->updatedSince, 'limit' => $this->limit], fn ($v) => $v !== null));
            foreach ($result['data'] as $record) {
                yield $record;
            }
            $next = $result['pagination']['next_cursor'] ?? null;
            if ($next !== null) {
                $this->cursor = $next;
            }
            if (!($result['pagination']['has_more'] ?? false) || $next === null) {
                return;
            }
        }
    }
}

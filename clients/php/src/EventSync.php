<?php
declare(strict_types=1);

namespace Crm;

/**
 * Catching up on the event log: the events committed after an event, oldest first. Iterating
 * follows next_cursor until the last page; afterwards `cursor` is where to resume later. It moves
 * only once every event of a page has been consumed, so leaving the loop early resumes at the
 * unfinished page (events may repeat, none is missed). Iterating the same EventSync again yields
 * the events committed since.
 *
 * @implements \IteratorAggregate<int, array>
 */
final class EventSync implements \IteratorAggregate
{
    public function __construct(private Events $events, private ?string $eventId = null, public ?string $cursor = null, private ?string $type = null, private int $limit = 100)
    {
        if ($eventId === null && $cursor === null) {
            throw new \InvalidArgumentException('events->since needs an event id, or the cursor of an earlier catch-up');
        }
    }

    public function getIterator(): \Generator
    {
        while (true) {
            // The cursor embeds the event and the type.
            $result = $this->cursor !== null
                ? $this->events->list(['cursor' => $this->cursor, 'limit' => $this->limit])
                : $this->events->list(array_filter(['after' => $this->eventId, 'type' => $this->type, 'limit' => $this->limit], fn ($v) => $v !== null));
            foreach ($result['data'] as $event) {
                yield $event;
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

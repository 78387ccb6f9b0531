<?php
// Plain-assertion tests (no PHPUnit), run against a real server:
// CRM_BASE_URL, CRM_API_KEY, CRM_READONLY_KEY, CRM_LIMITED_BASE_URL, CRM_LIMITED_KEY.
declare(strict_types=1);

// The package's own PSR-4 map (composer.json), without Composer: Crm\X is src/X.php.
spl_autoload_register(function (string $class): void {
    $file = __DIR__ . '/../src/' . substr($class, strlen('Crm\\')) . '.php';
    if (str_starts_with($class, 'Crm\\') && is_file($file)) require $file;
});

use Crm\{BadRequest, Client, Conflict, CrmError, Forbidden, NetworkError, NotFound, PreconditionFailed, RateLimited, ServerError, Unauthorized, Webhook, WebhookVerificationError};

$failures = 0;
$passed = 0;
function check(bool $condition, string $what): void
{
    if (!$condition) {
        throw new RuntimeException("failed: $what");
    }
}
function raises(string $class, callable $run): CrmError
{
    try {
        $run();
    } catch (CrmError $error) {
        check($error instanceof $class, "expected $class, got " . get_class($error));
        return $error;
    }
    throw new RuntimeException("expected $class, nothing was thrown");
}
/** Runs $run, which must throw a $class (any Throwable). */
function throws(string $class, callable $run): Throwable
{
    try {
        $run();
    } catch (Throwable $error) {
        check($error instanceof $class, "expected $class, got " . get_class($error) . ': ' . $error->getMessage());
        return $error;
    }
    throw new RuntimeException("expected $class, nothing was thrown");
}

/**
 * A webhook receiver in this process: a listening socket whose connections wait in its backlog
 * until read. Answers each request 204; returns the requests [headers (lower-cased names), body]
 * read until one concerns record $recordId (the $count-th one), or fails after 20 seconds.
 */
function deliveriesOf($server, array &$received, string $recordId, int $count = 1): array
{
    $deadline = microtime(true) + 20;
    while (true) {
        $found = array_values(array_filter($received, fn ($r) => json_decode($r[1], true)['data']['object']['id'] === $recordId));
        if (count($found) >= $count) {
            return $found;
        }
        $left = $deadline - microtime(true);
        check($left > 0, "a delivery for $recordId");
        $socket = @stream_socket_accept($server, $left);
        if ($socket === false) {
            continue;
        }
        stream_set_timeout($socket, 10);
        fgets($socket); // the request line
        $headers = [];
        while (($line = fgets($socket)) !== false && $line !== "\r\n") {
            [$name, $value] = explode(':', $line, 2);
            $headers[strtolower($name)] = trim($value);
        }
        $body = '';
        while (strlen($body) < (int) $headers['content-length'] && !feof($socket)) {
            $body .= fread($socket, (int) $headers['content-length'] - strlen($body));
        }
        fwrite($socket, "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n");
        fclose($socket);
        $received[] = [$headers, $body];
    }
}

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const OTHER = 'whsec_bm90IHRoZSBzZWNyZXQgb2YgdGhpcyBlbmRwb2ludA==';
const EVENT_ID = 'evt_0123456789abcdef0123456789abcdef';
const NOW = 1_700_000_000;
define('BODY', json_encode(['id' => EVENT_ID, 'type' => 'customer.created', 'created_at' => '2023-11-14T22:13:20.000Z', 'data' => ['object' => ['id' => 'c1', 'name' => 'Ada']], 'request_id' => 'r1']));
/** A signature computed here with hash_hmac. */
function sign(string $secret, int $timestamp = NOW, string $body = BODY, string $id = EVENT_ID): string
{
    return 'v1,' . base64_encode(hash_hmac('sha256', "$id.$timestamp.$body", base64_decode(substr($secret, 6)), true));
}
function hookHeaders(string $signature, int $timestamp = NOW, string $id = EVENT_ID): array
{
    return ['webhook-id' => $id, 'webhook-timestamp' => (string) $timestamp, 'webhook-signature' => $signature];
}

$tests = [
    'create, get and list' => function () {
        $crm = new Client();
        $ada = $crm->customers->create(['name' => 'Ada PHP', 'email' => 'ada.php@example.com']);
        check($crm->customers->get($ada['id']) === $ada, 'get answers the created customer');
        $job = $crm->jobs->create(['customer_id' => $ada['id'], 'title' => 'Boiler']);
        $invoice = $crm->invoices->create(['customer_id' => $ada['id'], 'job_id' => $job['id'], 'currency' => 'USD',
            'line_items' => [['description' => 'Work', 'quantity' => 5, 'unit_amount' => 20]]]);
        check($invoice['total_amount'] === 100, 'invoice total');
        $page = $crm->customers->list(['search' => 'ada php', 'limit' => 5]);
        check(array_intersect_key($page['pagination'], ['page' => 0, 'limit' => 0, 'total' => 0]) === ['page' => 1, 'limit' => 5, 'total' => 1], 'pagination');
        check(in_array($invoice['number'], array_column($crm->invoices->list(['status' => 'draft'])['data'], 'number'), true), 'status filter');
        foreach ([$crm->emails, $crm->estimates, $crm->proposals] as $resource) {
            check(isset($resource->list()['pagination']), 'list of every resource');
        }
    },
    'iterate over pages' => function () {
        $crm = new Client();
        for ($i = 0; $i < 5; $i++) {
            $crm->customers->create(['name' => "PhpPaged $i"]);
        }
        $names = array_column(iterator_to_array($crm->customers->iterate(['search' => 'phppaged', 'limit' => 2]), false), 'name');
        sort($names);
        check($names === ['PhpPaged 0', 'PhpPaged 1', 'PhpPaged 2', 'PhpPaged 3', 'PhpPaged 4'], 'all pages');
    },
    'typed errors' => function () {
        $crm = new Client();
        $bad = raises(BadRequest::class, fn () => $crm->customers->create(['name' => '']));
        check($bad->errors === [['param' => 'name', 'message' => 'must not be blank']] && $bad->errorCode === 'BAD_REQUEST' && $bad->requestId !== null, 'bad request details');
        raises(Unauthorized::class, fn () => (new Client('svc_live_nope'))->customers->list());
        raises(Forbidden::class, fn () => (new Client(getenv('CRM_READONLY_KEY')))->invoices->list());
        raises(NotFound::class, fn () => $crm->customers->get('00000000-0000-4000-8000-000000000000'));
        $failing = new Client('k', maxRetries: 0);
        $failing->transport = fn () => [500, [], '{"code":"INTERNAL","detail":"x","request_id":"r1"}'];
        $server = raises(ServerError::class, fn () => $failing->customers->list());
        check($server->status === 500 && $server->requestId === 'r1', 'server error details');
        check(is_subclass_of(RateLimited::class, CrmError::class), 'RateLimited is a CrmError');
    },
    'retry after 429' => function () {
        $base = getenv('CRM_LIMITED_BASE_URL');
        $key = getenv('CRM_LIMITED_KEY');
        $impatient = new Client($key, $base, maxRetries: 0);
        raises(RateLimited::class, function () use ($impatient) {
            for ($i = 0; $i < 5; $i++) {
                $impatient->customers->list();
            }
        });
        $started = microtime(true);
        (new Client($key, $base, maxRetries: 3))->customers->list();
        check(microtime(true) - $started > 0.5, 'waited before retrying');
    },
    'retries a 409 in flight' => function () {
        // The in-flight proxy answers a create's first try with 409 and Retry-After, as a server
        // does while a request with the same Idempotency-Key runs. The client waits and retries.
        $crm = new Client(getenv('CRM_API_KEY'), getenv('CRM_IN_FLIGHT_BASE_URL'));
        check($crm->customers->create(['name' => 'PHP in flight'])['name'] === 'PHP in flight', 'created after the retry');
        check(is_subclass_of(\Crm\Conflict::class, CrmError::class), 'Conflict is a CrmError');
    },
    'a retried create is created once' => function () {
        $client = new Client();
        $real = $client->transport;
        $dropped = false;
        $client->transport = function (string $method, ...$rest) use ($real, &$dropped) {
            $answer = $real($method, ...$rest);
            if ($method === 'POST' && !$dropped) {
                $dropped = true; // the server created it; the answer is lost
                throw new NetworkError('connection reset');
            }
            return $answer;
        };
        $created = $client->customers->create(['name' => 'PHP exactly once']);
        check($dropped, 'the first answer was dropped');
        $found = (new Client())->customers->list(['search' => 'php exactly once'])['data'];
        check(array_column($found, 'id') === [$created['id']], 'one record');
    },
    'update with a merge patch' => function () {
        $crm = new Client();
        $customer = $crm->customers->create(['name' => 'PHP Patch', 'email' => 'patch.php@example.com', 'phone' => '+14155550103']);
        check($customer['version'] === 1 && $customer['deleted_at'] === null, 'a new record is at version 1, live');
        $updated = $crm->customers->update($customer['id'], ['name' => 'PHP Patched', 'phone' => null]);
        check([$updated['name'], $updated['email'], $updated['phone'], $updated['version']] === ['PHP Patched', 'patch.php@example.com', null, 2], 'patched; null cleared the phone');
        check($crm->customers->get($customer['id']) === $updated, 'get answers the update');
        check($crm->customers->update($customer['id'], ['email' => 'patched.php@example.com'], ifMatch: 2)['version'] === 3, 'update with If-Match');
        try {
            $crm->emails->update($customer['id'], ['subject' => 'x']);
            check(false, 'emails cannot be edited');
        } catch (BadMethodCallException) {
        }
    },
    'conditional update of a stale record' => function () {
        $crm = new Client();
        $read = $crm->customers->create(['name' => 'PHP Stale']);
        $fresh = $crm->customers->updateIfUnchanged($read, ['name' => 'PHP Fresh']);
        check($fresh['name'] === 'PHP Fresh' && $fresh['version'] === $read['version'] + 1, 'the first update applies');
        $stale = raises(PreconditionFailed::class, fn () => $crm->customers->updateIfUnchanged($read, ['name' => 'PHP Lost update']));
        check($stale->status === 412 && $stale->errorCode === 'PRECONDITION_FAILED', 'status and code');
        check([$stale->current['id'], $stale->current['name'], $stale->current['version']] === [$read['id'], 'PHP Fresh', $fresh['version']], 'the current record');
        check($crm->customers->get($read['id'])['name'] === 'PHP Fresh', 'the stale update was not applied');
        raises(PreconditionFailed::class, fn () => $crm->customers->delete($read['id'], ifMatch: $read['version']));
    },
    'delete and restore' => function () {
        $crm = new Client();
        $customer = $crm->customers->create(['name' => 'PHP Deleted']);
        $crm->customers->delete($customer['id']);
        raises(NotFound::class, fn () => $crm->customers->get($customer['id']));
        $restored = $crm->customers->restore($customer['id']);
        check([$restored['id'], $restored['name'], $restored['deleted_at']] === [$customer['id'], 'PHP Deleted', null], 'restored');
        check($restored['version'] > $customer['version'], 'a restore is a change');
        check($crm->customers->get($customer['id']) === $restored, 'found again');
        $email = $crm->emails->create(['customer_id' => $customer['id'], 'type' => 'outgoing', 'from' => 'us@example.com', 'to' => 'them@example.com', 'subject' => 'Hello']);
        $crm->emails->delete($email['id']);
        raises(NotFound::class, fn () => $crm->emails->get($email['id']));
    },
    'transitions' => function () {
        $crm = new Client();
        $customer = $crm->customers->create(['name' => 'PHP Transitions']);
        $invoice = $crm->invoices->create(['customer_id' => $customer['id'], 'currency' => 'USD', 'line_items' => [['description' => 'Work', 'quantity' => 1, 'unit_amount' => 900]]]);
        $sent = $crm->invoices->transition($invoice['id'], 'send', ifMatch: $invoice['version']);
        check($sent['status'] === 'sent' && $sent['version'] === $invoice['version'] + 1, 'sent');
        raises(Conflict::class, fn () => $crm->invoices->update($invoice['id'], ['currency' => 'EUR']));
        raises(PreconditionFailed::class, fn () => $crm->invoices->transition($invoice['id'], 'pay', ifMatch: $invoice['version']));
        check($crm->invoices->transition($invoice['id'], 'pay')['status'] === 'paid', 'paid');
        $estimate = $crm->estimates->create(['customer_id' => $customer['id'], 'currency' => 'USD', 'line_items' => [['description' => 'Plan', 'quantity' => 1, 'unit_amount' => 50]]]);
        $crm->estimates->transition($estimate['id'], 'send');
        check($crm->estimates->transition($estimate['id'], 'decline')['status'] === 'declined', 'declined');
        $job = $crm->jobs->create(['customer_id' => $customer['id'], 'title' => 'Boiler']);
        check($crm->jobs->transition($job['id'], 'start')['status'] === 'in_progress', 'started');
        try {
            $crm->invoices->transition($invoice['id'], 'start');
            check(false, 'invoices have no start');
        } catch (InvalidArgumentException) {
        }
    },
    'a retried update is applied once' => function () {
        $crm = new Client();
        $customer = $crm->customers->create(['name' => 'PHP Once']);
        $client = new Client();
        $real = $client->transport;
        $keys = [];
        $client->transport = function (string $method, string $url, array $headers, ?string $body) use ($real, &$keys) {
            $answer = $real($method, $url, $headers, $body);
            if ($method === 'PATCH') {
                $keys[] = $headers['Idempotency-Key'];
                if (count($keys) === 1) {
                    throw new NetworkError('connection reset'); // the server applied it; the answer is lost
                }
            }
            return $answer;
        };
        $updated = $client->customers->update($customer['id'], ['name' => 'PHP Once more']);
        check(count($keys) === 2 && $keys[0] === $keys[1], 'the retry carried the same Idempotency-Key');
        check($updated['version'] === $customer['version'] + 1, 'applied once');
        check($crm->customers->get($customer['id'])['version'] === $customer['version'] + 1, 'applied once, as stored');
    },
    'sync, then resume from the cursor' => function () {
        $crm = new Client();
        $kept = $crm->customers->create(['name' => 'PHP Sync kept']);
        $gone = $crm->customers->create(['name' => 'PHP Sync gone']);
        $first = $crm->customers->sync(limit: 2);
        $seen = iterator_to_array($first, false);
        check(count($seen) > 2, 'more than one page was followed');
        check(!array_diff([$kept['id'], $gone['id']], array_column($seen, 'id')), 'both new records seen');
        check(is_string($first->cursor), 'a cursor to resume from');
        $saved = $first->cursor;

        $crm->customers->update($kept['id'], ['name' => 'PHP Sync changed']);
        $crm->customers->delete($gone['id']);
        $resumed = $crm->customers->sync($saved, limit: 1);
        $changes = array_column(iterator_to_array($resumed, false), null, 'id');
        $ids = array_keys($changes);
        sort($ids);
        $expected = [$kept['id'], $gone['id']];
        sort($expected);
        check($ids === $expected, 'exactly the two changes');
        check($changes[$kept['id']]['name'] === 'PHP Sync changed' && $changes[$kept['id']]['version'] === $kept['version'] + 1, 'the change');
        $tombstone = $changes[$gone['id']];
        check($tombstone['deleted'] === true && is_string($tombstone['deleted_at']) && $tombstone['version'] > $gone['version'], 'the tombstone');
        check($resumed->cursor !== $saved, 'the cursor moved');
        check(iterator_to_array($crm->customers->sync($resumed->cursor), false) === [], 'nothing since');
        check(iterator_to_array($resumed, false) === [], 'iterating again: nothing changed since');
    },
    'sorts, filters, expands and shapes lists and items' => function () {
        $crm = new Client();
        $acme = $crm->customers->create(['name' => 'PHP Sorted Acme', 'email' => 'sorted@php.example']);
        $other = $crm->customers->create(['name' => 'PHP Sorted Other']);
        $job = $crm->jobs->create(['customer_id' => $acme['id'], 'title' => 'PHP sorted job', 'scheduled_at' => '2026-12-01T09:00:00Z']);
        $invoice = function (array $customer, string $due, int $amount, array $moves) use ($crm): string {
            $created = $crm->invoices->create(['customer_id' => $customer['id'], 'currency' => 'EUR', 'due_date' => $due,
                'line_items' => [['description' => 'x', 'quantity' => 1, 'unit_amount' => $amount]]]);
            foreach ($moves as $move) {
                $crm->invoices->transition($created['id'], $move);
            }
            return $created['id'];
        };
        $later = $invoice($acme, '2026-11-01', 500, ['send']);
        $first = $invoice($acme, '2026-10-01', 100, ['send']);
        $dearer = $invoice($acme, '2026-11-01', 900, ['send']);
        $paid = $invoice($acme, '2026-10-15', 300, ['send', 'pay']);
        $invoice($acme, '2026-12-15', 700, ['send']); // not yet due
        $invoice($other, '2026-10-01', 100, ['send']); // another customer's

        $overdue = $crm->invoices->list([
            'order_by' => ['due_date', '-total_amount'],
            'where' => ['status' => ['sent'], 'due_date' => ['lt' => '2026-12-01'], 'customer' => ['search' => 'php sorted acme']],
            'expand' => ['customer'],
            'fields' => ['number', 'due_date'],
        ]);
        check(array_column($overdue['data'], 'id') === [$first, $dearer, $later], 'sent, due before December, this customer, by due date then dearest');
        check($overdue['pagination']['total'] === 3, 'total counts what matches');
        $keys = array_keys($overdue['data'][0]);
        sort($keys);
        check($keys === ['customer', 'due_date', 'id', 'number'], 'only the fields asked, and the customer: ' . implode(',', $keys));
        check($overdue['data'][0]['customer']['email'] === 'sorted@php.example', 'the customer expanded');
        // Filters beside the others; one value for a set, a bare value for an exact match.
        check(array_column($crm->invoices->list(['status' => 'paid', 'total_amount' => 300, 'customer_id' => $acme['id']])['data'], 'id') === [$paid], 'paid, exactly 300');
        $utc = new DateTimeZone('UTC');
        $window = ['gte' => new DateTimeImmutable('2026-12-01', $utc), 'lt' => new DateTimeImmutable('2026-12-02', $utc)];
        check(array_column($crm->jobs->list(['where' => ['scheduled_at' => $window, 'customer_id' => $acme['id']]])['data'], 'id') === [$job['id']], 'a range of DateTimes');
        // A related list's range, one level deep: customers with a sent invoice due before November.
        $owing = $crm->customers->list(['where' => ['invoices' => ['status' => 'sent', 'due_date' => ['lt' => '2026-11-01']], 'search' => 'php sorted'], 'order_by' => '-name']);
        check(array_column($owing['data'], 'id') === [$other['id'], $acme['id']], 'customers by their invoices, by name descending');
        $names = iterator_to_array($crm->customers->iterate(['search' => 'php sorted', 'order_by' => 'name', 'fields' => ['name'], 'limit' => 1]), false);
        check($names === [['id' => $acme['id'], 'name' => 'PHP Sorted Acme'], ['id' => $other['id'], 'name' => 'PHP Sorted Other']], 'iterate, sorted and shaped');
        $one = $crm->invoices->get($first, ['expand' => ['customer'], 'fields' => ['number']]);
        $keys = array_keys($one);
        sort($keys);
        check($keys === ['customer', 'id', 'number'] && $one['customer']['id'] === $acme['id'], 'get, expanded and shaped');
        $bad = raises(BadRequest::class, fn () => $crm->invoices->list(['where' => ['due_date' => ['lt' => 'soon']], 'order_by' => 'colour']));
        $params = array_column($bad->errors, 'param');
        sort($params);
        check($params === ['due_date[lt]', 'order_by'], 'each fault named as sent');
    },
    'covers every route of the OpenAPI document' => function () {
        $crm = new Client();
        $camel = fn (string $name) => lcfirst(str_replace('_', '', ucwords($name, '_')));
        $missing = '00000000-0000-4000-8000-000000000000';
        $document = json_decode(file_get_contents(getenv('CRM_BASE_URL') . '/openapi.json'), true);
        foreach ($document['paths'] as $path => $methods) {
            $parts = explode('/', $path);
            $resource = $crm->{$camel($parts[1])}; // /webhook_endpoints is $crm->webhookEndpoints
            $id = $parts[2] ?? null;
            $action = $parts[3] ?? null;
            foreach (array_keys($methods) as $method) {
                $name = match (true) {
                    $id === 'by_external_id' => 'upsert',
                    $id !== null && $action === null && !str_starts_with($id, '{') => $id, // customers->batch, ->duplicates
                    // restore, a record's events, customers->merge; events->resend, webhookEndpoints->rotateSecret and ->deliveries
                    $action !== null && (method_exists($resource, $camel($action)) || !method_exists($resource, 'transition')) => $camel($action),
                    default => match ($method) {
                        'get' => $id ? 'get' : 'list',
                        'post' => $id === null ? 'create' : 'transition',
                        'patch' => 'update',
                        'delete' => 'delete',
                    },
                };
                check(method_exists($resource, $name), "$method $path");
                check($name !== 'update' || !method_exists($resource, 'isEditable') || $resource->isEditable(), "$method $path");
                check($name !== 'transition' || in_array($action, $resource->moves(), true), "$method $path");
                // The method calls this route (not a missing one): what it answers there.
                if ($name === 'upsert') {
                    $refused = raises(BadRequest::class, fn () => $resource->upsert('php-route', [], dryRun: true)); // every create requires a field
                    check($refused->errors !== [], "$method $path");
                } elseif ($name === 'batch') {
                    $results = $resource->batch([['op' => 'delete', 'id' => $missing]], 'partial', dryRun: true)['results'];
                    check([$results[0]['index'], $results[0]['status']] === [0, 404], "$method $path");
                } elseif ($name === 'duplicates') {
                    check($resource->duplicates()['pagination']['page'] === 1, "$method $path");
                } elseif ($name === 'merge') {
                    $source = $crm->customers->create(['name' => 'PHP merge source']);
                    raises(NotFound::class, fn () => $resource->merge($missing, [$source['id']])); // into a customer that does not exist
                } elseif ($action !== null && $name !== 'restore' && $name !== 'transition') {
                    // An unknown record is NotFound.
                    raises(NotFound::class, fn () => $resource->$name($parts[1] === 'events' ? 'evt_' . str_repeat('0', 32) : $missing));
                }
            }
        }
    },
    'upserts, batches, integration keys and dry runs' => function () {
        $crm = new Client();
        $created = $crm->customers->upsert('php-crm-1', ['name' => 'PHP Upserted', 'metadata' => ['tier' => 'gold', 'region' => 'eu']]);
        check([$created['external_id'], $created['metadata'], $created['version']] === ['php-crm-1', ['tier' => 'gold', 'region' => 'eu'], 1], 'created by its external id');
        $updated = $crm->customers->upsert('php-crm-1', ['name' => 'PHP Upserted again', 'metadata' => ['tier' => 'silver']]);
        check([$updated['id'], $updated['metadata'], $updated['version']] === [$created['id'], ['tier' => 'silver', 'region' => 'eu'], 2], 'updated, metadata merged');
        // An update merges metadata key by key; null removes one.
        check($crm->customers->update($created['id'], ['metadata' => ['region' => null]])['metadata'] === ['tier' => 'silver'], 'a key removed');
        check(array_column($crm->customers->list(['external_id' => 'php-crm-1'])['data'], 'id') === [$created['id']], 'filtered by external id');
        check(array_column($crm->customers->list(['where' => ['metadata' => ['tier' => 'silver']]])['data'], 'id') === [$created['id']], 'filtered by metadata');

        $results = $crm->customers->batch([
            ['op' => 'create', 'external_id' => 'php-batch-1', 'data' => ['name' => 'PHP Batch 1']],
            ['op' => 'upsert', 'external_id' => 'php-crm-1', 'data' => ['name' => 'PHP Upserted by batch']],
            ['op' => 'update', 'external_id' => 'php-batch-1', 'data' => ['phone' => '+14155550196']],
            ['op' => 'delete', 'id' => $created['id'], 'if_match' => 4],
        ])['results'];
        check(array_map(fn ($r) => [$r['index'], $r['status']], $results) === [[0, 201], [1, 200], [2, 200], [3, 204]], 'each item written');
        check($results[2]['record']['phone'] === '+14155550196', 'the record as written');
        raises(NotFound::class, fn () => $crm->customers->get($created['id']));
        // Atomic: a refusal throws, naming the item's field, and nothing is written.
        $refused = raises(BadRequest::class, fn () => $crm->customers->batch([['op' => 'create', 'data' => ['name' => 'PHP never']], ['op' => 'create', 'data' => ['name' => 'PHP bad', 'email' => 'nope']]]));
        check(array_column($refused->errors, 'param') === ['items[1].email'], 'the item named');
        check($crm->customers->list(['search' => 'php never'])['pagination']['total'] === 0, 'nothing written');
        // Partial: each refused item in its result.
        $partial = $crm->customers->batch([['op' => 'create', 'data' => ['name' => 'PHP partial']], ['op' => 'update', 'external_id' => 'php-nobody', 'data' => ['name' => 'x']]], 'partial')['results'];
        check(array_column($partial, 'status') === [201, 404], 'each on its own');
        check([$partial[1]['error']['code'], $partial[1]['error']['errors'][0]['param']] === ['NOT_FOUND', 'external_id'], 'the refusal in its result');

        // Dry runs answer what the write would, and keep nothing.
        $tried = $crm->customers->create(['name' => 'PHP dry run'], dryRun: true);
        check([$tried['name'], $tried['version']] === ['PHP dry run', 1], 'answered as created');
        raises(NotFound::class, fn () => $crm->customers->get($tried['id']));
        check($crm->customers->batch([['op' => 'upsert', 'external_id' => 'php-dry', 'data' => ['name' => 'PHP dry batch']]], dryRun: true)['results'][0]['status'] === 201, 'a dry batch');
        check($crm->customers->list(['external_id' => 'php-dry'])['pagination']['total'] === 0, 'kept nothing');
        $kept = $crm->customers->list(['external_id' => 'php-batch-1'])['data'][0];
        raises(PreconditionFailed::class, fn () => $crm->customers->update($kept['id'], ['name' => 'PHP stale'], 1, dryRun: true));
        check($crm->customers->update($kept['id'], ['name' => 'PHP renamed'], dryRun: true)['version'] === $kept['version'] + 1, 'the version it would have');
        $crm->customers->delete($kept['id'], dryRun: true);
        check($crm->customers->get($kept['id']) === $kept, 'unchanged');
    },
    'duplicates and merge' => function () {
        $crm = new Client();
        $kept = $crm->customers->create(['name' => 'PHP Kept', 'email' => 'php.twin@example.com']);
        $twin = $crm->customers->create(['name' => 'PHP Twin', 'email' => 'PHP.Twin@example.com']);
        $job = $crm->jobs->create(['customer_id' => $twin['id'], 'title' => 'PHP twin job']);
        $groups = array_values(array_filter($crm->customers->duplicates(['limit' => 100])['data'], fn ($g) => $g['key'] === 'email' && $g['value'] === 'php.twin@example.com'));
        check(count($groups) === 1 && $groups[0]['count'] === 2 && array_column($groups[0]['customers'], 'id') === [$kept['id'], $twin['id']], 'the group, oldest first');
        check($crm->customers->merge($kept['id'], [$twin['id']], dryRun: true) === $kept, 'a dry merge');
        check($crm->jobs->get($job['id'])['customer_id'] === $twin['id'], 'nothing moved');
        check($crm->customers->merge($kept['id'], [$twin['id']], $kept['version']) === $kept, 'merged');
        check($crm->jobs->get($job['id'])['customer_id'] === $kept['id'], 'the job moved');
        raises(NotFound::class, fn () => $crm->customers->get($twin['id']));
        check(!array_filter($crm->customers->duplicates(['limit' => 100])['data'], fn ($g) => $g['value'] === 'php.twin@example.com'), 'no group left');
        $refused = raises(BadRequest::class, fn () => $crm->customers->merge($kept['id'], [$kept['id']]));
        check(array_column($refused->errors, 'param') === ['source_ids[0]'], 'the source named');
    },
    'imports and request logs' => function () {
        $crm = new Client();
        $started = $crm->imports->create("name,external_id,metadata.team\nPHP Imported,php-import-1,blue\n", 'customers', 'upsert');
        check(in_array($started['status'], ['pending', 'running', 'completed'], true), 'accepted');
        // It runs in the background: wait for it to end (no import left running behind this test).
        $progress = $crm->imports->get($started['id']);
        for ($deadline = microtime(true) + 20; !in_array($progress['status'], ['completed', 'failed'], true) && microtime(true) < $deadline; $progress = $crm->imports->get($started['id'])) {
            usleep(100_000);
        }
        check([$progress['id'], $progress['status'], $progress['mode'], $progress['total'], $progress['created']] === [$started['id'], 'completed', 'upsert', 1, 1], 'its progress');
        check(array_column($crm->customers->list(['external_id' => 'php-import-1'])['data'], 'metadata') === [['team' => 'blue']], 'the row written');
        $refused = raises(BadRequest::class, fn () => $crm->imports->create("nickname\nx\n", 'customers'));
        $logged = $crm->requestLogs->list(['request_id' => $refused->requestId])['data'];
        check(array_map(fn ($r) => [$r['method'], $r['status'], $r['error_code']], $logged) === [['POST', 400, 'BAD_REQUEST']], 'the refusal logged');
        foreach ($crm->requestLogs->iterate(['status' => '4xx', 'limit' => 5]) as $log) {
            check($log['status'] >= 400, 'only 4xx');
        }
    },
    'events: list, get, iterate, and catch up after an event' => function () {
        $crm = new Client();
        $customer = $crm->customers->create(['name' => 'PHP Evented']);
        $crm->customers->update($customer['id'], ['name' => 'PHP Evented twice']);
        [$updated, $created] = $crm->events->list(['limit' => 2])['data'];
        check([$updated['type'], $created['type']] === ['customer.updated', 'customer.created'], 'newest first');
        check((bool) preg_match('/^evt_[0-9a-f]{32}$/', $updated['id']), 'event id');
        check($updated['data']['object']['name'] === 'PHP Evented twice' && $updated['data']['previous_attributes'] === ['name' => 'PHP Evented'], 'event data');
        check($crm->events->get($created['id']) === $created, 'get');
        raises(NotFound::class, fn () => $crm->events->get('evt_' . str_repeat('0', 32)));
        $types = array_column(iterator_to_array($crm->events->iterate(['type' => 'customer.created', 'limit' => 2]), false), 'type');
        check(count($types) === $crm->events->list(['type' => 'customer.created'])['pagination']['total'] && array_unique($types) === ['customer.created'], 'iterate every page');

        $since = $crm->events->since($created['id'], limit: 1);
        check(array_column(iterator_to_array($since, false), 'id') === [$updated['id']], 'caught up');
        check(is_string($since->cursor), 'a cursor to resume from');
        $later = $crm->customers->create(['name' => 'PHP Evented later']);
        $last = $crm->customers->create(['name' => 'PHP Evented last']);
        $resumed = $crm->events->since(cursor: $since->cursor, limit: 1);
        $seen = array_map(fn ($e) => [$e['type'], $e['data']['object']['id']], iterator_to_array($resumed, false));
        check($seen === [['customer.created', $later['id']], ['customer.created', $last['id']]], 'resumed from the cursor');
        check(iterator_to_array($resumed, false) === [], 'iterating again: nothing since');
        check(array_column(iterator_to_array($crm->events->since($created['id'], type: 'customer.updated'), false), 'id') === [$updated['id']], 'by type');
        throws(InvalidArgumentException::class, fn () => $crm->events->since());
        raises(BadRequest::class, fn () => $crm->events->list(['after' => 'evt_' . str_repeat('0', 32)]));
    },
    'real webhook deliveries verify with the endpoint secret' => function () {
        $crm = new Client();
        $server = stream_socket_server('tcp://127.0.0.1:0', $errno, $errstr);
        check($server !== false, "a receiver: $errstr");
        $port = (int) substr(strrchr(stream_socket_get_name($server, false), ':'), 1);
        $received = [];
        $hooks = $crm->webhookEndpoints;
        $endpoint = $hooks->create(['url' => "http://127.0.0.1:$port/hook", 'description' => 'PHP receiver', 'event_types' => ['customer.created']]);
        try {
            check(str_starts_with($endpoint['secret'], 'whsec_') && $endpoint['event_types'] === ['customer.created'] && $endpoint['enabled'] === true, 'created, with its secret');
            check(!array_key_exists('secret', $hooks->get($endpoint['id'])), 'the secret is shown once');
            check(in_array($endpoint['id'], array_column($hooks->list()['data'], 'id'), true), 'listed');
            check(in_array($endpoint['id'], array_column(iterator_to_array($hooks->iterate(), false), 'id'), true), 'iterated');

            $customer = $crm->customers->create(['name' => 'PHP Hooked']);
            [[$headers, $body]] = deliveriesOf($server, $received, $customer['id']);
            $event = Webhook::verify($body, $headers, $endpoint['secret']);
            check($event['type'] === 'customer.created' && $event['data']['object'] === $customer, 'the delivered event');
            check($headers['webhook-id'] === $event['id'], 'webhook-id is the event id');
            check($crm->events->get($event['id']) === $event, 'the event as the API reads it');
            $serverStyle = [];
            foreach ($headers as $name => $value) {
                $serverStyle['HTTP_' . strtoupper(str_replace('-', '_', $name))] = $value;
            }
            check(Webhook::verify($body, $serverStyle, substr($endpoint['secret'], 6))['id'] === $event['id'], '$_SERVER-style headers, secret without whsec_');
            $other = $hooks->create(['url' => 'http://127.0.0.1:9/never', 'enabled' => false]);
            throws(WebhookVerificationError::class, fn () => Webhook::verify($body, $headers, $other['secret']));
            $hooks->delete($other['id']);
            raises(NotFound::class, fn () => $hooks->get($other['id']));

            // Resent by hand: the same event (the same webhook-id) arrives again.
            check($crm->events->resend($event['id'], $endpoint['id'])['id'] === $event['id'], 'resent');
            [, [$headers, $body]] = deliveriesOf($server, $received, $customer['id'], 2);
            check(Webhook::verify($body, $headers, $endpoint['secret'])['id'] === $event['id'], 'the resent delivery verifies');

            // After a rotation, deliveries carry two signatures: the new secret and the old one verify.
            $rotated = $hooks->rotateSecret($endpoint['id']);
            check($rotated['secret'] !== $endpoint['secret'], 'a new secret');
            $later = $crm->customers->create(['name' => 'PHP Hooked after rotation']);
            [[$headers, $body]] = deliveriesOf($server, $received, $later['id']);
            check(count(explode(' ', $headers['webhook-signature'])) === 2, 'two signatures');
            check(Webhook::verify($body, $headers, $rotated['secret'])['data']['object'] === $later, 'the new secret verifies');
            check(Webhook::verify($body, $headers, $endpoint['secret'])['data']['object'] === $later, 'the old secret verifies');

            $changed = $hooks->update($endpoint['id'], ['description' => null, 'event_types' => []]);
            check($changed['description'] === null && $changed['event_types'] === [], 'updated');
            $deadline = microtime(true) + 10;
            do {
                $log = $hooks->deliveries($endpoint['id'], ['limit' => 100])['data'];
            } while (count($log) < 3 && microtime(true) < $deadline);
            check(count(array_filter($log, fn ($a) => $a['event_id'] === $event['id'])) === 2, 'the delivery log');
            check($log[0]['status_code'] === 204 && $log[0]['error'] === null, 'the latest attempt');
        } finally {
            $hooks->delete($endpoint['id']);
            fclose($server);
        }
    },
    'verify: the specification\'s example' => function () {
        $example = ['webhook-id' => 'msg_p5jXN8AQM9LWM0D4loKWxJek', 'webhook-timestamp' => '1614265330', 'webhook-signature' => 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE='];
        check(Webhook::verify('{"test": 2432232314}', $example, SECRET, now: 1614265330) === ['test' => 2432232314], 'verified');
        throws(WebhookVerificationError::class, fn () => Webhook::verify('{"test": 2432232314}', $example, SECRET, now: 1614265330 + 301));
    },
    'verify: valid' => function () {
        check(Webhook::verify(BODY, hookHeaders(sign(SECRET)), SECRET, now: NOW) === json_decode(BODY, true), 'the event');
        check(Webhook::verify(BODY, hookHeaders(sign(SECRET)), substr(SECRET, 6), now: NOW)['id'] === EVENT_ID, 'secret without whsec_');
        check(Webhook::verify(BODY, ['Webhook-Id' => EVENT_ID, 'WEBHOOK-TIMESTAMP' => (string) NOW, 'Webhook-Signature' => [sign(SECRET)]], SECRET, now: NOW)['id'] === EVENT_ID, 'header names in any case');
        check(Webhook::verify(BODY, ['HTTP_WEBHOOK_ID' => EVENT_ID, 'HTTP_WEBHOOK_TIMESTAMP' => (string) NOW, 'HTTP_WEBHOOK_SIGNATURE' => sign(SECRET)], SECRET, now: NOW)['id'] === EVENT_ID, '$_SERVER');
        check(Webhook::verify(BODY, hookHeaders(sign(SECRET)), SECRET, now: NOW + 299)['id'] === EVENT_ID, 'just within 5 minutes');
        check(Webhook::verify(BODY, hookHeaders(sign(SECRET)), SECRET, now: NOW - 299)['id'] === EVENT_ID, 'just within 5 minutes, ahead');
    },
    'verify: tampered body or headers' => function () {
        foreach ([[str_replace('Ada', 'Eve', BODY), hookHeaders(sign(SECRET))], [BODY . ' ', hookHeaders(sign(SECRET))],
            [BODY, hookHeaders(sign(SECRET), NOW + 1)], [BODY, hookHeaders(sign(SECRET), NOW, 'evt_' . str_repeat('f', 32))]] as [$body, $headers]) {
            throws(WebhookVerificationError::class, fn () => Webhook::verify($body, $headers, SECRET, now: NOW));
        }
    },
    'verify: wrong secret' => function () {
        throws(WebhookVerificationError::class, fn () => Webhook::verify(BODY, hookHeaders(sign(SECRET)), OTHER, now: NOW));
        throws(WebhookVerificationError::class, fn () => Webhook::verify(BODY, hookHeaders(sign(OTHER)), SECRET, now: NOW));
    },
    'verify: stale or future timestamp' => function () {
        foreach ([NOW - 301, NOW + 301] as $timestamp) {
            throws(WebhookVerificationError::class, fn () => Webhook::verify(BODY, hookHeaders(sign(SECRET, $timestamp), $timestamp), SECRET, now: NOW));
        }
        $stale = time() - 600; // real time by default
        $error = throws(WebhookVerificationError::class, fn () => Webhook::verify(BODY, hookHeaders(sign(SECRET, $stale), $stale), SECRET));
        check(str_contains($error->getMessage(), 'too old'), 'says why');
    },
    'verify: two signatures, the second matching' => function () {
        $two = sign(OTHER) . ' ' . sign(SECRET);
        check(Webhook::verify(BODY, hookHeaders($two), SECRET, now: NOW)['id'] === EVENT_ID, 'the second matches');
        check(Webhook::verify(BODY, hookHeaders($two), OTHER, now: NOW)['id'] === EVENT_ID, 'the first matches');
        $mixed = 'v2,' . substr(sign(SECRET), 3) . ' v1,not*base64 v1 ' . sign(SECRET);
        check(Webhook::verify(BODY, hookHeaders($mixed), SECRET, now: NOW)['id'] === EVENT_ID, 'other versions and malformed entries skipped');
        throws(WebhookVerificationError::class, fn () => Webhook::verify(BODY, hookHeaders('v2,' . substr(sign(SECRET), 3)), SECRET, now: NOW));
    },
    'verify: missing headers, bad secret' => function () {
        throws(WebhookVerificationError::class, fn () => Webhook::verify(BODY, ['webhook-id' => EVENT_ID, 'webhook-timestamp' => (string) NOW], SECRET, now: NOW));
        throws(WebhookVerificationError::class, fn () => Webhook::verify(BODY, ['webhook-timestamp' => 'soon'] + hookHeaders(sign(SECRET)), SECRET, now: NOW));
        throws(InvalidArgumentException::class, fn () => Webhook::verify(BODY, hookHeaders(sign(SECRET)), 'whsec_', now: NOW));
        check(is_subclass_of(WebhookVerificationError::class, RuntimeException::class), 'a RuntimeException');
    },
];

foreach ($tests as $name => $test) {
    try {
        $test();
        $passed++;
        echo "ok - $name\n";
    } catch (Throwable $error) {
        $failures++;
        echo "not ok - $name: {$error->getMessage()}\n";
    }
}
echo "$passed passed, $failures failed\n";
exit($failures === 0 ? 0 : 1);

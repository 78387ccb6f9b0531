<?php
// Plain-assertion tests (no PHPUnit), run against a real server:
// CRM_BASE_URL, CRM_API_KEY, CRM_READONLY_KEY, CRM_LIMITED_BASE_URL, CRM_LIMITED_KEY.
declare(strict_types=1);

// The package's own PSR-4 map (composer.json), without Composer: Crm\X is src/X.php.
spl_autoload_register(function (string $class): void {
    $file = __DIR__ . '/../src/' . substr($class, strlen('Crm\\')) . '.php';
    if (str_starts_with($class, 'Crm\\') && is_file($file)) require $file;
});

use Crm\{BadRequest, Client, Conflict, CrmError, Forbidden, NetworkError, NotFound, PreconditionFailed, RateLimited, ServerError, Unauthorized};

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
    'covers every route of the OpenAPI document' => function () {
        $crm = new Client();
        $document = json_decode(file_get_contents(getenv('CRM_BASE_URL') . '/openapi.json'), true);
        foreach ($document['paths'] as $path => $methods) {
            $parts = explode('/', $path);
            $resource = $crm->{$parts[1]};
            $id = $parts[2] ?? null;
            $action = $parts[3] ?? null;
            foreach (array_keys($methods) as $method) {
                $name = match ($method) {
                    'get' => $id ? 'get' : 'list',
                    'post' => $id === null ? 'create' : ($action === 'restore' ? 'restore' : 'transition'),
                    'patch' => 'update',
                    'delete' => 'delete',
                };
                check(method_exists($resource, $name), "$method $path");
                check($name !== 'update' || $resource->isEditable(), "$method $path");
                check($name !== 'transition' || in_array($action, $resource->moves(), true), "$method $path");
            }
        }
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

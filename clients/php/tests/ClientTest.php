<?php
// Plain-assertion tests (no PHPUnit), run against a real server:
// CRM_BASE_URL, CRM_API_KEY, CRM_READONLY_KEY, CRM_LIMITED_BASE_URL, CRM_LIMITED_KEY.
declare(strict_types=1);

// The package's own PSR-4 map (composer.json), without Composer: Crm\X is src/X.php.
spl_autoload_register(function (string $class): void {
    $file = __DIR__ . '/../src/' . substr($class, strlen('Crm\\')) . '.php';
    if (str_starts_with($class, 'Crm\\') && is_file($file)) require $file;
});

use Crm\{BadRequest, Client, CrmError, Forbidden, NetworkError, NotFound, RateLimited, ServerError, Unauthorized};

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
        check($page['pagination'] === ['page' => 1, 'limit' => 5, 'total' => 1], 'pagination');
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
    'covers every route of the OpenAPI document' => function () {
        $crm = new Client();
        $document = json_decode(file_get_contents(getenv('CRM_BASE_URL') . '/openapi.json'), true);
        foreach ($document['paths'] as $path => $methods) {
            $resource = $crm->{explode('/', $path)[1]};
            foreach (array_keys($methods) as $method) {
                $name = $method === 'post' ? 'create' : (str_ends_with($path, '{id}') ? 'get' : 'list');
                check(method_exists($resource, $name), "$method $path");
            }
        }
        // A create on a resource without a POST route is refused by the client itself.
        try {
            $crm->emails->create([]);
            check(false, 'emails cannot be created');
        } catch (BadMethodCallException) {
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

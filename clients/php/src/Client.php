<?php
declare(strict_types=1);

namespace Crm;

// Official PHP client of the CRM REST API v1 (no extensions beyond PHP's core: JSON and
// the http stream wrapper).
final class Client
{
    // A resource's property ($customers, $jobs, ...), made from the generated Resources.
    use Resources;

    public const VERSION = '0.1.0';
    /** The event log: every committed change. */
    public readonly Events $events;
    /** Where events are sent, signed (see Webhook::verify). */
    public readonly WebhookEndpoints $webhookEndpoints;
    /** CSV files written in the background. */
    public readonly Imports $imports;
    /** The organization's recent API requests. */
    public readonly RequestLogs $requestLogs;
    private string $apiKey;
    private string $baseUrl;
    /** @var callable(string, string, array, ?string): array{0:int,1:array<string,string>,2:string} */
    public $transport;

    public function __construct(?string $apiKey = null, ?string $baseUrl = null, private float $timeout = 30.0, private int $maxRetries = 3)
    {
        $apiKey ??= getenv('CRM_API_KEY') ?: null;
        if (!$apiKey) {
            throw new \InvalidArgumentException('An API key is required: pass $apiKey or set CRM_API_KEY.');
        }
        $this->apiKey = $apiKey;
        $this->baseUrl = rtrim($baseUrl ?? (getenv('CRM_BASE_URL') ?: 'http://localhost:3000/v1'), '/');
        $this->makeResources();
        $this->events = new Events($this);
        $this->webhookEndpoints = new WebhookEndpoints($this);
        $this->imports = new Imports($this);
        $this->requestLogs = new RequestLogs($this);
        $this->transport = fn (string $method, string $url, array $headers, ?string $body) => $this->send($method, $url, $headers, $body);
    }

    public static function uuid(): string
    {
        $bytes = random_bytes(16);
        $bytes[6] = chr(ord($bytes[6]) & 0x0f | 0x40);
        $bytes[8] = chr(ord($bytes[8]) & 0x3f | 0x80);
        return vsprintf('%s%s-%s-%s-%s-%s%s%s', str_split(bin2hex($bytes), 4));
    }

    /** If-Match of a version: '"7"' (an entity tag given whole, such as '"7"' or '*', is sent as is). */
    public static function entityTag(int|string $version): string
    {
        $text = (string) $version;
        return str_starts_with($text, '"') || str_starts_with($text, 'W/') || $text === '*' ? $text : "\"$text\"";
    }

    /**
     * Query parameters in REST's words: lists comma-separated (status=sent,paid), keyed arrays in
     * brackets (due_date[lt]=..., customer[search]=..., invoices[due_date][lt]=...), dates in
     * ISO 8601, booleans as true/false, nulls left out. A list's 'where' filters sit beside the others.
     */
    public static function queryString(array $query): string
    {
        $where = $query['where'] ?? [];
        unset($query['where']);
        $text = fn (mixed $value): string => match (true) {
            $value instanceof \DateTimeInterface => $value->format(DATE_ATOM),
            is_bool($value) => $value ? 'true' : 'false',
            default => (string) $value,
        };
        $pairs = [];
        $add = function (string $name, mixed $value) use (&$add, &$pairs, $text): void {
            if ($value === null) {
                return;
            }
            if (is_array($value) && array_is_list($value)) {
                $pairs[] = rawurlencode($name) . '=' . implode(',', array_map(fn ($v) => rawurlencode($text($v)), $value));
            } elseif (is_array($value)) {
                foreach ($value as $key => $inner) {
                    $add("{$name}[{$key}]", $inner);
                }
            } else {
                $pairs[] = rawurlencode($name) . '=' . rawurlencode($text($value));
            }
        };
        foreach ([...$query, ...$where] as $name => $value) {
            $add((string) $name, $value);
        }
        return implode('&', $pairs);
    }

    /** One HTTP exchange: [status, lower-cased headers, body]. */
    private function send(string $method, string $url, array $headers, ?string $body): array
    {
        $lines = [];
        foreach ($headers as $name => $value) {
            $lines[] = "$name: $value";
        }
        $context = stream_context_create(['http' => [
            'method' => $method,
            'header' => implode("\r\n", $lines),
            'content' => $body ?? '',
            'timeout' => $this->timeout,
            'ignore_errors' => true,
        ]]);
        $response = @file_get_contents($url, false, $context);
        if ($response === false || !isset($http_response_header)) {
            throw new NetworkError("could not reach $url");
        }
        preg_match('#^HTTP/\S+ (\d{3})#', $http_response_header[0], $match);
        $received = [];
        foreach (array_slice($http_response_header, 1) as $line) {
            [$name, $value] = array_map('trim', explode(':', $line, 2) + [1 => '']);
            $received[strtolower($name)] = $value;
        }
        return [(int) $match[1], $received, $response];
    }

    /**
     * The decoded answer; [] when it has no body (204). A PATCH body is sent as a JSON merge
     * patch; a string body is a file (an import's CSV), sent as it is. $dryRun sends Prefer:
     * dry-run: the server answers what the write would, keeping nothing.
     */
    public function request(string $method, string $path, array $query = [], array|object|string|null $body = null, ?string $idempotencyKey = null, ?string $ifMatch = null, bool $dryRun = false): array
    {
        $queryString = self::queryString($query);
        $url = $this->baseUrl . $path . ($queryString !== '' ? "?$queryString" : '');
        $headers = ['Authorization' => "Bearer {$this->apiKey}", 'Accept' => 'application/json', 'User-Agent' => 'crm-client-php/' . self::VERSION];
        $payload = null;
        if (is_string($body)) {
            $headers['Content-Type'] = 'text/csv';
            $payload = $body;
        } elseif ($body !== null) {
            $headers['Content-Type'] = $method === 'PATCH' ? 'application/merge-patch+json' : 'application/json';
            $payload = json_encode($body, JSON_THROW_ON_ERROR);
        }
        if ($idempotencyKey !== null) {
            $headers['Idempotency-Key'] = $idempotencyKey;
        }
        if ($ifMatch !== null) {
            $headers['If-Match'] = $ifMatch;
        }
        if ($dryRun) {
            $headers['Prefer'] = 'dry-run';
        }
        for ($attempt = 0; ; $attempt++) {
            try {
                [$status, $received, $raw] = ($this->transport)($method, $url, $headers, $payload);
            } catch (NetworkError $error) {
                if ($attempt >= $this->maxRetries) {
                    throw $error;
                }
                usleep($this->backoff($attempt));
                continue;
            }
            // A 409 with Retry-After: a request with the same Idempotency-Key is still running.
            $retryable = $status === 429 || $status === 503 || ($status === 409 && isset($received['retry-after']));
            if ($retryable && $attempt < $this->maxRetries) {
                $retryAfter = $received['retry-after'] ?? '';
                usleep(ctype_digit($retryAfter) ? (int) $retryAfter * 1_000_000 : $this->backoff($attempt));
                continue;
            }
            $decoded = $raw === '' ? [] : json_decode($raw, true, 512, JSON_THROW_ON_ERROR);
            if ($status >= 200 && $status < 300) {
                return $decoded;
            }
            $problem = [$status, $decoded['code'] ?? 'UNKNOWN', $decoded['detail'] ?? '', $decoded['errors'] ?? [], $decoded['request_id'] ?? ($received['x-request-id'] ?? null)];
            if ($status === 412) {
                throw new PreconditionFailed(...$problem, current: $decoded['current'] ?? null);
            }
            $class = match (true) {
                $status === 401 => Unauthorized::class,
                $status === 403 => Forbidden::class,
                $status === 404 => NotFound::class,
                $status === 409 => Conflict::class,
                $status === 429 => RateLimited::class,
                $status >= 500 => ServerError::class,
                default => BadRequest::class,
            };
            throw new $class(...$problem);
        }
    }

    /** Exponential backoff with full jitter, in microseconds: up to 0.5 s, 1 s, 2 s, ... */
    private function backoff(int $attempt): int
    {
        return random_int(0, (int) (500_000 * 2 ** $attempt));
    }
}

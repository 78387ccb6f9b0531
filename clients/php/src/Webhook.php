<?php
declare(strict_types=1);

namespace Crm;

/** Webhook deliveries, signed per the Standard Webhooks specification. */
final class Webhook
{
    public const TOLERANCE_SECONDS = 300;

    /**
     * Verifies a delivery and answers its event. $body is the request body exactly as received
     * (file_get_contents('php://input'), never re-encoded JSON); $headers the request's headers,
     * names in any case (getallheaders(), or $_SERVER with its HTTP_WEBHOOK_ID); $secret the
     * endpoint's whsec_... (the prefix is optional). Accepts the delivery when one of the `v1,`
     * signatures of webhook-signature (two during a rotation) is the HMAC-SHA256 of
     * "{webhook-id}.{webhook-timestamp}.{body}", compared with hash_equals (constant time), and
     * the timestamp is within $tolerance seconds (5 minutes) of now, either way; otherwise throws
     * WebhookVerificationError.
     *
     * @param array<string, string|list<string>> $headers
     */
    public static function verify(string $body, array $headers, string $secret, int $tolerance = self::TOLERANCE_SECONDS, ?int $now = null): array
    {
        $key = base64_decode(str_starts_with($secret, 'whsec_') ? substr($secret, 6) : $secret, true);
        if ($key === false || $key === '') {
            throw new \InvalidArgumentException("The webhook secret must be the endpoint's whsec_... secret (base64 after whsec_)");
        }
        $id = self::header($headers, 'webhook-id');
        $timestamp = self::header($headers, 'webhook-timestamp');
        $signatures = self::header($headers, 'webhook-signature');
        if ($id === null || $id === '' || $timestamp === null || $timestamp === '' || $signatures === null || trim($signatures) === '') {
            throw new WebhookVerificationError('Missing webhook-id, webhook-timestamp or webhook-signature header');
        }
        $timestamp = trim($timestamp);
        if (!preg_match('/^\d{1,15}$/', $timestamp)) {
            throw new WebhookVerificationError('Invalid webhook-timestamp header');
        }
        $age = ($now ?? time()) - (int) $timestamp;
        if ($age > $tolerance) {
            throw new WebhookVerificationError('The webhook timestamp is too old');
        }
        if ($age < -$tolerance) {
            throw new WebhookVerificationError('The webhook timestamp is too far in the future');
        }
        $expected = hash_hmac('sha256', "$id.$timestamp.$body", $key, true);
        $valid = false;
        foreach (preg_split('/\s+/', trim($signatures)) as $entry) {
            [$version, $encoded] = explode(',', $entry, 2) + [1 => ''];
            $candidate = $version === 'v1' ? base64_decode($encoded, true) : false;
            if ($candidate !== false && hash_equals($expected, $candidate)) {
                $valid = true;
            }
        }
        if (!$valid) {
            throw new WebhookVerificationError('No webhook signature matches: wrong secret, or the body was altered');
        }
        try {
            $event = json_decode($body, true, 512, JSON_THROW_ON_ERROR);
        } catch (\JsonException) {
            throw new WebhookVerificationError('The webhook body is not JSON');
        }
        if (!is_array($event)) {
            throw new WebhookVerificationError('The webhook body is not a JSON object');
        }
        return $event;
    }

    /** @param array<string, string|list<string>> $headers */
    private static function header(array $headers, string $name): ?string
    {
        foreach ($headers as $key => $value) {
            $normalized = str_replace('_', '-', strtolower((string) $key));
            if ($normalized === $name || $normalized === "http-$name") {
                return is_array($value) ? implode(' ', $value) : (string) $value;
            }
        }
        return null;
    }
}

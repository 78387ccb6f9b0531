<?php
declare(strict_types=1);

namespace Crm;

// The base of every error the client raises: the problem document's fields.
class CrmError extends \RuntimeException
{
    public function __construct(
        public readonly int $status,
        public readonly string $errorCode,
        public readonly string $detail,
        public readonly array $errors,
        public readonly ?string $requestId,
    ) {
        parent::__construct("$status $errorCode: $detail", $status);
    }
}

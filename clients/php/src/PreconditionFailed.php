<?php
declare(strict_types=1);

namespace Crm;

/** 412: the record is no longer at the version given in If-Match; `current` is the record as it is now (null when the key may not read it). */
class PreconditionFailed extends CrmError
{
    public function __construct(int $status, string $errorCode, string $detail, array $errors, ?string $requestId, public readonly ?array $current = null)
    {
        parent::__construct($status, $errorCode, $detail, $errors, $requestId);
    }
}

<?php
declare(strict_types=1);

namespace Crm;

/** A webhook request that is not a delivery of the CRM signed with this secret, or too old (or too far in the future) to accept. */
class WebhookVerificationError extends \RuntimeException {}

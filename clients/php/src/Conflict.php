<?php
declare(strict_types=1);

namespace Crm;

/** 409: refused because of a record's current state (or an Idempotency-Key whose first request never finished). */
class Conflict extends CrmError {}

<?php
declare(strict_types=1);

namespace Crm;

class RateLimited extends CrmError {}

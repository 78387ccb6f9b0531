<?php
declare(strict_types=1);

namespace Crm;

class Forbidden extends CrmError {}

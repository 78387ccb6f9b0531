<?php
declare(strict_types=1);

namespace Crm;

/** Thrown when the server could not be reached or the connection failed. */
class NetworkError extends \RuntimeException {}

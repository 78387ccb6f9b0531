"""Official Python client of the CRM REST API v1 (standard library only)."""
from __future__ import annotations

import json
import os
import random
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from typing import Any, Dict, Iterator, List, Optional

__version__ = "0.1.0"
__all__ = ["Client", "CrmError", "BadRequest", "Unauthorized", "Forbidden", "NotFound", "Conflict", "RateLimited", "ServerError"]


class CrmError(Exception):
    """An error answer of the API (RFC 9457 problem details)."""

    def __init__(self, status: int, code: str, detail: str, errors: List[Dict[str, str]], request_id: Optional[str]):
        super().__init__(f"{status} {code}: {detail}")
        self.status = status
        self.code = code
        self.detail = detail
        self.errors = errors
        self.request_id = request_id


class BadRequest(CrmError): pass
class Unauthorized(CrmError): pass
class Forbidden(CrmError): pass
class NotFound(CrmError): pass
class Conflict(CrmError): pass  # a record's state refused it (or an unfinished Idempotency-Key)
class RateLimited(CrmError): pass
class ServerError(CrmError): pass


def _error_class(status: int) -> type:
    return {401: Unauthorized, 403: Forbidden, 404: NotFound, 409: Conflict, 429: RateLimited}.get(status, ServerError if status >= 500 else BadRequest)


class _Resource:
    def __init__(self, client: "Client", path: str, creatable: bool):
        self._client = client
        self._path = path
        self._creatable = creatable

    def list(self, **params: Any) -> Dict[str, Any]:
        """One page: {"data": [...], "pagination": {"page", "limit", "total"}}."""
        return self._client._request("GET", f"/{self._path}", query=params)

    def get(self, id: str) -> Dict[str, Any]:
        return self._client._request("GET", f"/{self._path}/{urllib.parse.quote(id, safe='')}")

    def iterate(self, **params: Any) -> Iterator[Dict[str, Any]]:
        """Every record over all pages (from `page`, if given)."""
        params.setdefault("limit", 100)
        page = params.pop("page", 1)
        while True:
            result = self.list(**params, page=page)
            yield from result["data"]
            if not result["data"] or page * result["pagination"]["limit"] >= result["pagination"]["total"]:
                return
            page += 1

    def create(self, body: Dict[str, Any], idempotency_key: Optional[str] = None) -> Dict[str, Any]:
        if not self._creatable:
            raise AttributeError(f"{self._path} cannot be created through the REST API")
        # A generated key makes retries safe: a retried create never duplicates.
        return self._client._request("POST", f"/{self._path}", body=body, idempotency_key=idempotency_key or str(uuid.uuid4()))


class Client:
    """client = Client(api_key="svc_live_...", base_url="http://localhost:3000/v1")"""

    def __init__(self, api_key: Optional[str] = None, base_url: Optional[str] = None, timeout: float = 30.0, max_retries: int = 3):
        self.api_key = api_key or os.environ.get("CRM_API_KEY")
        if not self.api_key:
            raise ValueError("An API key is required: pass api_key or set CRM_API_KEY.")
        self.base_url = (base_url or os.environ.get("CRM_BASE_URL") or "http://localhost:3000/v1").rstrip("/")
        self.timeout = timeout
        self.max_retries = max_retries
        self.customers = _Resource(self, "customers", True)
        self.jobs = _Resource(self, "jobs", True)
        self.emails = _Resource(self, "emails", False)
        self.invoices = _Resource(self, "invoices", True)
        self.estimates = _Resource(self, "estimates", False)
        self.proposals = _Resource(self, "proposals", False)

    def _send(self, request: urllib.request.Request):
        """One HTTP exchange: (status, headers, body bytes). Raises OSError on network failure."""
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return response.status, response.headers, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.headers, error.read()

    def _request(self, method: str, path: str, query: Optional[Dict[str, Any]] = None, body: Any = None, idempotency_key: Optional[str] = None) -> Any:
        url = self.base_url + path
        if query:
            url += "?" + urllib.parse.urlencode({k: v for k, v in query.items() if v is not None})
        headers = {"Authorization": f"Bearer {self.api_key}", "Accept": "application/json", "User-Agent": f"crm-client-python/{__version__}"}
        data = None
        if body is not None:
            headers["Content-Type"] = "application/json"
            data = json.dumps(body).encode()
        if idempotency_key:
            headers["Idempotency-Key"] = idempotency_key
        attempt = 0
        while True:
            request = urllib.request.Request(url, data=data, headers=headers, method=method)
            try:
                status, response_headers, raw = self._send(request)
            except OSError:
                if attempt >= self.max_retries:
                    raise
                time.sleep(self._backoff(attempt))
                attempt += 1
                continue
            # A 409 with Retry-After: a request with the same Idempotency-Key is still running.
            retryable = status in (429, 503) or (status == 409 and response_headers.get("Retry-After"))
            if retryable and attempt < self.max_retries:
                retry_after = response_headers.get("Retry-After")
                time.sleep(float(retry_after) if retry_after and retry_after.isdigit() else self._backoff(attempt))
                attempt += 1
                continue
            payload = json.loads(raw) if raw else None
            if 200 <= status < 300:
                return payload
            payload = payload or {}
            raise _error_class(status)(status, payload.get("code", "UNKNOWN"), payload.get("detail", ""), payload.get("errors", []),
                                       payload.get("request_id") or response_headers.get("X-Request-Id"))

    @staticmethod
    def _backoff(attempt: int) -> float:
        """Exponential backoff with full jitter: up to 0.5 s, 1 s, 2 s, ..."""
        return random.uniform(0, 0.5 * 2 ** attempt)

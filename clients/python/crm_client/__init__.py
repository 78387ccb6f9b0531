"""Official Python client of the CRM REST API v1 (standard library only)."""
from __future__ import annotations

import base64
import binascii
import datetime
import hashlib
import hmac
import json
import os
import random
import re
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from ._resources import _Resources

__version__ = "0.1.0"
__all__ = ["Client", "Sync", "EventSync", "CrmError", "BadRequest", "Unauthorized", "Forbidden", "NotFound", "Conflict", "PreconditionFailed",
           "RateLimited", "ServerError", "WebhookVerificationError", "verify_webhook"]


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


class PreconditionFailed(CrmError):
    """412: the record is no longer at the version given in If-Match; `current` is the record as it is now
    (None when the key may not read it)."""

    def __init__(self, status: int, code: str, detail: str, errors: List[Dict[str, str]], request_id: Optional[str],
                 current: Optional[Dict[str, Any]] = None):
        super().__init__(status, code, detail, errors, request_id)
        self.current = current


def _error_class(status: int) -> type:
    return {401: Unauthorized, 403: Forbidden, 404: NotFound, 409: Conflict, 412: PreconditionFailed, 429: RateLimited}.get(
        status, ServerError if status >= 500 else BadRequest)


def _entity_tag(version: Union[int, str]) -> str:
    """If-Match of a version: '"7"' (an entity tag given whole, such as '"7"' or '*', is sent as is)."""
    text = str(version)
    return text if text.startswith(('"', 'W/')) or text == "*" else f'"{text}"'


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return str(value)


def _query_pairs(query: Mapping[str, Any]) -> List[Tuple[str, str]]:
    """Query parameters in REST's words: lists comma-separated (status=sent,paid), dicts in brackets
    (due_date[lt]=..., customer[search]=..., invoices[due_date][lt]=...), dates in ISO 8601, None left out."""
    pairs: List[Tuple[str, str]] = []

    def add(name: str, value: Any) -> None:
        if value is None:
            return
        if isinstance(value, Mapping):
            for key, inner in value.items():
                add(f"{name}[{key}]", inner)
        elif isinstance(value, (list, tuple, set, frozenset)):
            pairs.append((name, ",".join(_text(v) for v in value)))
        else:
            pairs.append((name, _text(value)))

    for name, value in query.items():
        add(name, value)
    return pairs


def _list_query(params: Dict[str, Any]) -> Dict[str, Any]:
    """A list call's keyword arguments as its query: the filters of `where` beside the others."""
    where = params.pop("where", None) or {}
    return {**params, **where}


class _CursorWalk:
    """Follows next_cursor from a first page until the last; afterwards `cursor` is where to resume
    later. It moves only once every item of a page has been consumed, so leaving the loop early resumes
    at the unfinished page (items may repeat, none is missed). Iterating again fetches what came since."""

    cursor: Optional[str]

    def __init__(self, collection: Any, cursor: Optional[str], limit: int):
        self._collection = collection
        self.cursor = cursor
        self._limit = limit

    def _first_query(self) -> Dict[str, Any]:
        raise NotImplementedError

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        while True:
            # A cursor embeds its list's filters.
            query = {"cursor": self.cursor} if self.cursor else self._first_query()
            result = self._collection.list(**query, limit=self._limit)
            yield from result["data"]
            pagination = result["pagination"]
            if pagination.get("next_cursor"):
                self.cursor = pagination["next_cursor"]
            if not pagination.get("has_more") or not pagination.get("next_cursor"):
                return


class Sync(_CursorWalk):
    """The changes of a resource, oldest first: records as they are now, and for each deleted record a
    tombstone {"id", "deleted": True, "deleted_at", "version"} (see _CursorWalk for cursor and resuming)."""

    def __init__(self, resource: "_Resource", cursor: Optional[str], updated_since: Any, limit: int):
        super().__init__(resource, cursor, limit)
        self._updated_since = updated_since.isoformat() if hasattr(updated_since, "isoformat") else updated_since

    def _first_query(self) -> Dict[str, Any]:
        return {"include_deleted": "true", "updated_since": self._updated_since}


class EventSync(_CursorWalk):
    """Catching up on the event log: the events committed after an event, oldest first (see _CursorWalk;
    `cursor` is never None once a page was read)."""

    def __init__(self, events: "_Events", event_id: Optional[str], cursor: Optional[str], type: Optional[str], limit: int):
        if not event_id and not cursor:
            raise ValueError("events.since needs an event id, or the cursor of an earlier catch-up")
        super().__init__(events, cursor, limit)
        self._event_id = event_id
        self._type = type

    def _first_query(self) -> Dict[str, Any]:
        return {"after": self._event_id, "type": self._type}


class _List:
    """list and iterate of a collection."""

    def __init__(self, client: "Client", path: str):
        self._client = client
        self._path = path

    def _item(self, id: str) -> str:
        return f"/{self._path}/{urllib.parse.quote(id, safe='')}"

    def list(self, **params: Any) -> Dict[str, Any]:
        """One page: {"data": [...], "pagination": {"page", "limit", "total", "next_cursor", "has_more"}}.

        Sorted by order_by (["due_date", "-total_amount"]; "-" sorts descending), filtered by where (or the
        same filters as keyword arguments): ranges {"gte": 10000, "lt": 50000} (dates and datetimes allowed;
        a bare value matches exactly), sets ["sent", "paid"], exact values, search, and a related list's
        filters one level deep ({"customer": {"search": "acme"}}, {"invoices": {"status": "sent"}}). expand
        (["customer"]) answers references as records beside their ids; fields (["number"]) only those
        fields (and id)."""
        return self._client._request("GET", f"/{self._path}", query=_list_query(params))

    def iterate(self, **params: Any) -> Iterator[Dict[str, Any]]:
        """Every item over all pages (from `page`, if given)."""
        params.setdefault("limit", 100)
        page = params.pop("page", 1)
        while True:
            result = self.list(**params, page=page)
            yield from result["data"]
            if not result["data"] or page * result["pagination"]["limit"] >= result["pagination"]["total"]:
                return
            page += 1


class _Pages(_List):
    """list, get and iterate of a collection."""

    def get(self, id: str, expand: Optional[Sequence[str]] = None, fields: Optional[Sequence[str]] = None) -> Dict[str, Any]:
        """One record; expand answers its references as records beside their ids, fields only those fields (and id)."""
        return self._client._request("GET", self._item(id), query={"expand": expand, "fields": fields})


class _Imports:
    """CSV files written in the background: {"id", "status": "pending" | "running" | "completed" | "failed", "resource",
    "mode", "total", "created", "updated", "failed", "errors": [{"row", "param", "message"}], ...}."""

    def __init__(self, client: "Client"):
        self._client = client

    def create(self, csv: str, resource: str, mode: str = "create", idempotency_key: Optional[str] = None, dry_run: bool = False) -> Dict[str, Any]:
        """A CSV file (a header row of field names, metadata.<key> columns), each row created (mode "create") or
        upserted by its external_id ("upsert"): answers {"id", "status"}, to follow with get(id)."""
        return self._client._request("POST", "/imports", query={"resource": resource, "mode": mode}, body=csv, content_type="text/csv",
                                     idempotency_key=idempotency_key or str(uuid.uuid4()), dry_run=dry_run)

    def get(self, id: str) -> Dict[str, Any]:
        return self._client._request("GET", f"/imports/{urllib.parse.quote(id, safe='')}")


class _RequestLogs(_List):
    """The organization's recent API requests, newest first: {"request_id", "method", "path", "status", "duration_ms",
    "error_code", "key_prefix", "created_at"}; list/iterate take status= (400 or "4xx"), method=, request_id=."""

    def __init__(self, client: "Client"):
        super().__init__(client, "request_logs")


class _Events(_Pages):
    """The event log: every committed change, {"id": "evt_...", "type", "created_at", "data": {"object",
    "previous_attributes"?}, "request_id"}. list/iterate: newest first (type=, limit=, page=, cursor=, after=)."""

    def __init__(self, client: "Client"):
        super().__init__(client, "events")

    def resend(self, id: str, endpoint_id: Optional[str] = None, idempotency_key: Optional[str] = None, dry_run: bool = False) -> Dict[str, Any]:
        """Queues the event again, now: to one endpoint, or to every enabled endpoint that receives its type."""
        return self._client._request("POST", self._item(id) + "/resend", body={"endpoint_id": endpoint_id} if endpoint_id else {},
                                     idempotency_key=idempotency_key or str(uuid.uuid4()), dry_run=dry_run)

    def since(self, event_id: Optional[str] = None, cursor: Optional[str] = None, type: Optional[str] = None, limit: int = 100) -> EventSync:
        """The events committed after `event_id` (or after where `cursor`, from an earlier catch-up, left off),
        oldest first, optionally of one `type`: iterate it, then save its `cursor` for next time."""
        return EventSync(self, event_id, cursor, type, limit)


class _WebhookEndpoints(_Pages):
    """Where events are sent: {"id", "url", "description", "event_types", "enabled", "disabled_reason", ...}."""

    def __init__(self, client: "Client"):
        super().__init__(client, "webhook_endpoints")

    def create(self, body: Dict[str, Any], idempotency_key: Optional[str] = None, dry_run: bool = False) -> Dict[str, Any]:
        """{"url", "description"?, "event_types"?, "enabled"?}: answers the endpoint with its signing `secret`
        (whsec_...), this once. A retry answers the same secret (the call's Idempotency-Key)."""
        return self._client._request("POST", f"/{self._path}", body=body, idempotency_key=idempotency_key or str(uuid.uuid4()), dry_run=dry_run)

    def update(self, id: str, patch: Dict[str, Any], idempotency_key: Optional[str] = None, dry_run: bool = False) -> Dict[str, Any]:
        """The fields given are set (None clears the description; enabled=True also clears disabled_reason)."""
        return self._client._request("PATCH", self._item(id), body=patch, idempotency_key=idempotency_key or str(uuid.uuid4()),
                                     content_type="application/merge-patch+json", dry_run=dry_run)

    def delete(self, id: str, idempotency_key: Optional[str] = None, dry_run: bool = False) -> None:
        """Removes the endpoint, its pending deliveries and its delivery log."""
        self._client._request("DELETE", self._item(id), idempotency_key=idempotency_key or str(uuid.uuid4()), dry_run=dry_run)

    def rotate_secret(self, id: str, idempotency_key: Optional[str] = None, dry_run: bool = False) -> Dict[str, Any]:
        """A new signing secret, answered this once in `secret`; for 24 hours deliveries are signed with the old one too."""
        return self._client._request("POST", self._item(id) + "/rotate_secret", idempotency_key=idempotency_key or str(uuid.uuid4()), dry_run=dry_run)

    def test(self, id: str) -> Dict[str, Any]:
        """Sends a signed webhook.ping now: {"status_code", "duration_ms", "error"} as the endpoint took it."""
        return self._client._request("POST", self._item(id) + "/test")

    def deliveries(self, id: str, **params: Any) -> Dict[str, Any]:
        """The endpoint's delivery attempts, newest first: {"event_id", "status_code", "duration_ms", "error", "created_at"}."""
        return self._client._request("GET", self._item(id) + "/deliveries", query=params)


class _Resource(_Pages):
    """Every write takes dry_run=True (sent as Prefer: dry-run): the server runs it and answers what it would
    (the record, or the error it would raise), keeping nothing."""

    def __init__(self, client: "Client", path: str, editable: bool = True, sync: bool = True, moves: Sequence[str] = ()):
        super().__init__(client, path)
        self._editable = editable
        self._sync = sync
        self._moves = tuple(moves)

    def create(self, body: Dict[str, Any], idempotency_key: Optional[str] = None, dry_run: bool = False) -> Dict[str, Any]:
        # A generated key makes retries safe: a retried create never duplicates.
        return self._write("POST", f"/{self._path}", None, idempotency_key, body=body, dry_run=dry_run)

    def upsert(self, external_id: str, body: Dict[str, Any], idempotency_key: Optional[str] = None, dry_run: bool = False) -> Dict[str, Any]:
        """Creates the record holding `external_id`, or updates the live one that holds it with the fields an
        update takes (PUT /{resource}/by_external_id/{external_id}); a created record is at version 1.
        Concurrent upserts of one external id make one record."""
        path = f"/{self._path}/by_external_id/{urllib.parse.quote(external_id, safe='')}"
        return self._write("PUT", path, None, idempotency_key, body=body, dry_run=dry_run)

    def batch(self, items: Sequence[Dict[str, Any]], mode: str = "atomic", idempotency_key: Optional[str] = None,
              dry_run: bool = False) -> Dict[str, Any]:
        """Up to 100 writes in one transaction, each {"op": "create" | "update" | "upsert" | "delete", "id"?,
        "external_id"?, "data"?, "if_match"?}. Answers {"results": [{"index", "status", "record"?, "error"?}]}.
        mode "atomic": every item or none (a refusal raises, its errors naming items[i].field); "partial":
        each item on its own, a refused one answered with its "error"."""
        return self._write("POST", f"/{self._path}/batch", None, idempotency_key, body={"items": list(items), "mode": mode}, dry_run=dry_run)

    def update(self, id: str, patch: Dict[str, Any], if_match: Union[int, str, None] = None,
               idempotency_key: Optional[str] = None, dry_run: bool = False) -> Dict[str, Any]:
        """A JSON merge patch: the fields given change, None clears one (metadata merges key by key: a key
        with None is removed). With if_match (a version), raises PreconditionFailed unless the record is
        still at that version."""
        if not self._editable:
            raise AttributeError(f"{self._path} cannot be edited through the REST API")
        return self._write("PATCH", self._item(id), if_match, idempotency_key, body=patch, dry_run=dry_run)

    def update_if_unchanged(self, record: Dict[str, Any], patch: Dict[str, Any], idempotency_key: Optional[str] = None,
                            dry_run: bool = False) -> Dict[str, Any]:
        """Updates `record` only if it is still at record["version"]; otherwise raises PreconditionFailed,
        whose `current` is the record as it is now."""
        return self.update(record["id"], patch, if_match=record["version"], idempotency_key=idempotency_key, dry_run=dry_run)

    def delete(self, id: str, if_match: Union[int, str, None] = None, idempotency_key: Optional[str] = None, dry_run: bool = False) -> None:
        """Soft delete: the record reads as NotFound until restored."""
        self._write("DELETE", self._item(id), if_match, idempotency_key, dry_run=dry_run)

    def restore(self, id: str, if_match: Union[int, str, None] = None, idempotency_key: Optional[str] = None,
                dry_run: bool = False) -> Dict[str, Any]:
        return self._write("POST", self._item(id) + "/restore", if_match, idempotency_key, dry_run=dry_run)

    def transition(self, id: str, move: str, if_match: Union[int, str, None] = None, idempotency_key: Optional[str] = None,
                   dry_run: bool = False) -> Dict[str, Any]:
        """A change of status, such as invoices.transition(id, "send")."""
        if move not in self._moves:
            raise ValueError(f"{self._path} have no transition {move!r}: one of {', '.join(self._moves) or 'none'}")
        return self._write("POST", f"{self._item(id)}/{move}", if_match, idempotency_key, dry_run=dry_run)

    def events(self, id: str, **params: Any) -> Dict[str, Any]:
        """One record's history: a page of its events, newest first (limit=, page=, cursor=)."""
        return self._client._request("GET", self._item(id) + "/events", query=params)

    def sync(self, cursor: Optional[str] = None, updated_since: Any = None, limit: int = 100) -> Sync:
        """Every change (records and tombstones), oldest first, from `cursor` (or from the first change, or
        from `updated_since`, an ISO 8601 time): iterate it, then save its `cursor` for next time."""
        if not self._sync:
            raise AttributeError(f"{self._path} have no sync")
        return Sync(self, cursor, updated_since, limit)

    def _write(self, method: str, path: str, if_match: Union[int, str, None], idempotency_key: Optional[str], body: Any = None,
               dry_run: bool = False) -> Any:
        # Every write carries an Idempotency-Key, the same on each retry: a retried write is applied once.
        return self._client._request(method, path, body=body, idempotency_key=idempotency_key or str(uuid.uuid4()),
                                     if_match=None if if_match is None else _entity_tag(if_match), dry_run=dry_run,
                                     content_type="application/merge-patch+json" if method == "PATCH" else "application/json")


class _Customers(_Resource):
    def duplicates(self, **params: Any) -> Dict[str, Any]:
        """Live customers sharing an e-mail or a phone, grouped (e-mail groups first): a page of {"key": "email" |
        "phone", "value", "count", "customers": [...]} (page=, limit=, cursor=)."""
        return self._client._request("GET", f"/{self._path}/duplicates", query=params)

    def merge(self, id: str, source_ids: Sequence[str], if_match: Union[int, str, None] = None,
              idempotency_key: Optional[str] = None, dry_run: bool = False) -> Dict[str, Any]:
        """Moves every job, e-mail, invoice, estimate and proposal of the `source_ids` customers to this one and
        deletes them, in one transaction; answers this customer."""
        return self._write("POST", self._item(id) + "/merge", if_match, idempotency_key, body={"source_ids": list(source_ids)}, dry_run=dry_run)


class Client(_Resources):
    """client = Client(api_key="svc_live_...", base_url="http://localhost:3000/v1"); a resource's attribute (customers, jobs,
    ...) is made from the generated _Resources."""

    def __init__(self, api_key: Optional[str] = None, base_url: Optional[str] = None, timeout: float = 30.0, max_retries: int = 3):
        self.api_key = api_key or os.environ.get("CRM_API_KEY")
        if not self.api_key:
            raise ValueError("An API key is required: pass api_key or set CRM_API_KEY.")
        self.base_url = (base_url or os.environ.get("CRM_BASE_URL") or "http://localhost:3000/v1").rstrip("/")
        self.timeout = timeout
        self.max_retries = max_retries
        self._make_resources()
        self.events = _Events(self)
        self.webhook_endpoints = _WebhookEndpoints(self)
        self.imports = _Imports(self)
        self.request_logs = _RequestLogs(self)

    def _send(self, request: urllib.request.Request):
        """One HTTP exchange: (status, headers, body bytes). Raises OSError on network failure."""
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return response.status, response.headers, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.headers, error.read()

    def _request(self, method: str, path: str, query: Optional[Dict[str, Any]] = None, body: Any = None, idempotency_key: Optional[str] = None,
                 if_match: Optional[str] = None, content_type: str = "application/json", dry_run: bool = False) -> Any:
        url = self.base_url + path
        pairs = _query_pairs(query or {})
        if pairs:
            url += "?" + urllib.parse.urlencode(pairs)
        headers = {"Authorization": f"Bearer {self.api_key}", "Accept": "application/json", "User-Agent": f"crm-client-python/{__version__}"}
        data = None
        if body is not None:
            headers["Content-Type"] = content_type
            # A file (an import's CSV) is sent as it is.
            data = body.encode() if isinstance(body, str) and content_type.startswith("text/") else json.dumps(body).encode()
        if idempotency_key:
            headers["Idempotency-Key"] = idempotency_key
        if if_match:
            headers["If-Match"] = if_match
        if dry_run:
            headers["Prefer"] = "dry-run"
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
            problem = (status, payload.get("code", "UNKNOWN"), payload.get("detail", ""), payload.get("errors", []),
                       payload.get("request_id") or response_headers.get("X-Request-Id"))
            if status == 412:
                raise PreconditionFailed(*problem, current=payload.get("current"))
            raise _error_class(status)(*problem)

    @staticmethod
    def _backoff(attempt: int) -> float:
        """Exponential backoff with full jitter: up to 0.5 s, 1 s, 2 s, ..."""
        return random.uniform(0, 0.5 * 2 ** attempt)


class WebhookVerificationError(Exception):
    """A webhook request that is not a delivery of the CRM signed with this secret, or too old (or too far in
    the future) to accept."""


WEBHOOK_TOLERANCE_SECONDS = 5 * 60


def _header(headers: Any, name: str) -> Optional[str]:
    items = headers.items() if hasattr(headers, "items") else headers
    for key, value in items:
        if str(key).lower().replace("_", "-") in (name, "http-" + name):  # also a WSGI environ's HTTP_WEBHOOK_ID
            return " ".join(value) if isinstance(value, (list, tuple)) else str(value)
    return None


def verify_webhook(body: Union[bytes, str], headers: Union[Mapping[str, Any], Any], secret: str,
                   tolerance: int = WEBHOOK_TOLERANCE_SECONDS, now: Optional[float] = None) -> Dict[str, Any]:
    """Verifies a webhook delivery per the Standard Webhooks specification and answers its event.

    `body` is the request body exactly as received (bytes, or str), never re-serialized JSON; `headers` any
    mapping of the request's headers (names in any case: a dict, http.server's self.headers, a WSGI environ);
    `secret` the endpoint's whsec_... (the prefix is optional). Accepts the delivery when one of the `v1,`
    signatures of webhook-signature (two during a rotation) is the HMAC-SHA256 of
    "{webhook-id}.{webhook-timestamp}.{body}", compared in constant time, and the timestamp is within
    `tolerance` seconds (5 minutes) of now, either way; otherwise raises WebhookVerificationError."""
    if isinstance(body, str):
        body = body.encode("utf-8")
    if not isinstance(body, (bytes, bytearray, memoryview)):
        raise TypeError("verify_webhook needs the raw request body (bytes or str), not parsed JSON")
    body = bytes(body)
    try:
        key = base64.b64decode(secret[len("whsec_"):] if secret.startswith("whsec_") else secret, validate=True)
    except (binascii.Error, ValueError):
        key = b""
    if not key:
        raise ValueError("The webhook secret must be the endpoint's whsec_... secret (base64 after whsec_)")
    msg_id, timestamp, signatures = (_header(headers, name) for name in ("webhook-id", "webhook-timestamp", "webhook-signature"))
    if not msg_id or not timestamp or not signatures:
        raise WebhookVerificationError("Missing webhook-id, webhook-timestamp or webhook-signature header")
    timestamp = timestamp.strip()
    if not re.fullmatch(r"[0-9]{1,15}", timestamp):
        raise WebhookVerificationError("Invalid webhook-timestamp header")
    age = int(time.time() if now is None else now) - int(timestamp)
    if age > tolerance:
        raise WebhookVerificationError("The webhook timestamp is too old")
    if age < -tolerance:
        raise WebhookVerificationError("The webhook timestamp is too far in the future")
    expected = hmac.new(key, f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    valid = False
    for entry in signatures.split():
        version, _, encoded = entry.partition(",")
        if version != "v1":
            continue
        try:
            candidate = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            continue
        if hmac.compare_digest(candidate, expected):
            valid = True
    if not valid:
        raise WebhookVerificationError("No webhook signature matches: wrong secret, or the body was altered")
    try:
        return json.loads(body)
    except ValueError:
        raise WebhookVerificationError("The webhook body is not JSON") from None

"""Runs against a real server: CRM_BASE_URL, CRM_API_KEY, CRM_READONLY_KEY, CRM_LIMITED_BASE_URL, CRM_LIMITED_KEY."""
import base64
import datetime
import hashlib
import hmac
import json
import os
import sys
import threading
import time
import unittest
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from crm_client import (BadRequest, Client, Conflict, CrmError, Forbidden, NotFound, PreconditionFailed, RateLimited,  # noqa: E402
                        ServerError, Unauthorized, WebhookVerificationError, verify_webhook)


class ClientTest(unittest.TestCase):
    def setUp(self):
        self.crm = Client()

    def test_create_get_list(self):
        ada = self.crm.customers.create({"name": "Ada Python", "email": "ada.py@example.com"})
        self.assertEqual(self.crm.customers.get(ada["id"]), ada)
        job = self.crm.jobs.create({"customer_id": ada["id"], "title": "Boiler"})
        invoice = self.crm.invoices.create({"customer_id": ada["id"], "job_id": job["id"], "currency": "EUR",
                                            "line_items": [{"description": "Work", "quantity": 3, "unit_amount": 100}]})
        self.assertEqual(invoice["total_amount"], 300)
        page = self.crm.customers.list(search="ada python", limit=5)
        self.assertEqual({k: page["pagination"][k] for k in ("page", "limit", "total")}, {"page": 1, "limit": 5, "total": 1})
        self.assertIn(invoice["number"], [i["number"] for i in self.crm.invoices.list(status="draft")["data"]])
        for resource in (self.crm.emails, self.crm.estimates, self.crm.proposals):
            self.assertIn("pagination", resource.list())

    def test_iterate(self):
        for i in range(5):
            self.crm.customers.create({"name": f"PyPaged {i}"})
        names = [c["name"] for c in self.crm.customers.iterate(search="pypaged", limit=2)]
        self.assertEqual(sorted(names), [f"PyPaged {i}" for i in range(5)])

    def test_iterate_from_a_page(self):
        for i in range(5):
            self.crm.customers.create({"name": f"PyFrom {i}"})
        # Newest first, two a page: page 2 holds the 3rd and 4th newest, page 3 the oldest.
        names = [c["name"] for c in self.crm.customers.iterate(search="pyfrom", limit=2, page=2)]
        self.assertEqual(names, ["PyFrom 2", "PyFrom 1", "PyFrom 0"])

    def test_errors(self):
        with self.assertRaises(BadRequest) as bad:
            self.crm.customers.create({"name": ""})
        self.assertEqual(bad.exception.errors, [{"param": "name", "message": "must not be blank"}])
        self.assertEqual(bad.exception.code, "BAD_REQUEST")
        self.assertTrue(bad.exception.request_id)
        with self.assertRaises(Unauthorized):
            Client(api_key="svc_live_nope").customers.list()
        with self.assertRaises(Forbidden):
            Client(api_key=os.environ["CRM_READONLY_KEY"]).invoices.list()
        with self.assertRaises(NotFound):
            self.crm.customers.get("00000000-0000-4000-8000-000000000000")
        failing = Client(api_key="k", max_retries=0)
        failing._send = lambda request: (500, {"X-Request-Id": "r1"}, b'{"status":500,"code":"INTERNAL","detail":"x","request_id":"r1"}')
        with self.assertRaises(ServerError) as server:
            failing.customers.list()
        self.assertEqual((server.exception.status, server.exception.request_id), (500, "r1"))
        self.assertTrue(issubclass(RateLimited, CrmError))

    def test_retry_after_429(self):
        base, key = os.environ["CRM_LIMITED_BASE_URL"], os.environ["CRM_LIMITED_KEY"]
        impatient = Client(api_key=key, base_url=base, max_retries=0)
        with self.assertRaises(RateLimited):
            for _ in range(5):
                impatient.customers.list()
        started = time.monotonic()
        Client(api_key=key, base_url=base, max_retries=3).customers.list()
        self.assertGreater(time.monotonic() - started, 0.5)

    def test_retries_a_409_in_flight(self):
        # CRM_IN_FLIGHT_BASE_URL answers a create's first try as a server does while a request
        # with the same Idempotency-Key runs: 409 with Retry-After. The client waits and retries.
        crm = Client(base_url=os.environ["CRM_IN_FLIGHT_BASE_URL"])
        created = crm.customers.create({"name": "Py in flight"})
        self.assertEqual(created["name"], "Py in flight")
        self.assertTrue(issubclass(Conflict, CrmError))

    def test_retried_create_is_created_once(self):
        client = Client()
        real_send = client._send
        state = {"dropped": False}

        def lossy(request):
            answer = real_send(request)
            if request.get_method() == "POST" and not state["dropped"]:
                state["dropped"] = True  # the server created it; the answer is lost
                raise ConnectionResetError("connection reset")
            return answer

        client._send = lossy
        created = client.customers.create({"name": "Python exactly once"})
        self.assertTrue(state["dropped"])
        found = self.crm.customers.list(search="python exactly once")["data"]
        self.assertEqual([c["id"] for c in found], [created["id"]])

    def test_update(self):
        customer = self.crm.customers.create({"name": "Py Patch", "email": "patch.py@example.com", "phone": "+14155550101"})
        self.assertEqual((customer["version"], customer["deleted_at"]), (1, None))
        updated = self.crm.customers.update(customer["id"], {"name": "Py Patched", "phone": None})
        self.assertEqual((updated["name"], updated["email"], updated["phone"], updated["version"]), ("Py Patched", "patch.py@example.com", None, 2))
        self.assertEqual(self.crm.customers.get(customer["id"]), updated)
        self.assertEqual(self.crm.customers.update(customer["id"], {"email": "patched.py@example.com"}, if_match=2)["version"], 3)
        with self.assertRaises(AttributeError):
            self.crm.emails.update(customer["id"], {"subject": "x"})

    def test_conditional_update_of_a_stale_record(self):
        read = self.crm.customers.create({"name": "Py Stale"})
        fresh = self.crm.customers.update_if_unchanged(read, {"name": "Py Fresh"})
        self.assertEqual((fresh["name"], fresh["version"]), ("Py Fresh", read["version"] + 1))
        with self.assertRaises(PreconditionFailed) as stale:
            self.crm.customers.update_if_unchanged(read, {"name": "Py Lost update"})
        self.assertEqual((stale.exception.status, stale.exception.code), (412, "PRECONDITION_FAILED"))
        self.assertIsInstance(stale.exception, CrmError)
        current = stale.exception.current
        self.assertEqual((current["id"], current["name"], current["version"]), (read["id"], "Py Fresh", fresh["version"]))
        self.assertEqual(self.crm.customers.get(read["id"])["name"], "Py Fresh")
        with self.assertRaises(PreconditionFailed):
            self.crm.customers.delete(read["id"], if_match=read["version"])

    def test_delete_and_restore(self):
        customer = self.crm.customers.create({"name": "Py Deleted"})
        self.assertIsNone(self.crm.customers.delete(customer["id"]))
        with self.assertRaises(NotFound):
            self.crm.customers.get(customer["id"])
        restored = self.crm.customers.restore(customer["id"])
        self.assertEqual((restored["id"], restored["name"], restored["deleted_at"]), (customer["id"], "Py Deleted", None))
        self.assertGreater(restored["version"], customer["version"])
        self.assertEqual(self.crm.customers.get(customer["id"]), restored)
        email = self.crm.emails.create({"customer_id": customer["id"], "type": "incoming", "from": "them@example.com",
                                        "to": "us@example.com", "subject": "Hello"})
        self.crm.emails.delete(email["id"])
        with self.assertRaises(NotFound):
            self.crm.emails.get(email["id"])

    def test_transitions(self):
        customer = self.crm.customers.create({"name": "Py Transitions"})
        invoice = self.crm.invoices.create({"customer_id": customer["id"], "currency": "USD",
                                            "line_items": [{"description": "Work", "quantity": 1, "unit_amount": 900}]})
        sent = self.crm.invoices.transition(invoice["id"], "send", if_match=invoice["version"])
        self.assertEqual((sent["status"], sent["version"]), ("sent", invoice["version"] + 1))
        with self.assertRaises(Conflict):
            self.crm.invoices.update(invoice["id"], {"currency": "EUR"})
        with self.assertRaises(PreconditionFailed):
            self.crm.invoices.transition(invoice["id"], "pay", if_match=invoice["version"])
        self.assertEqual(self.crm.invoices.transition(invoice["id"], "pay")["status"], "paid")
        estimate = self.crm.estimates.create({"customer_id": customer["id"], "currency": "USD",
                                              "line_items": [{"description": "Plan", "quantity": 1, "unit_amount": 50}]})
        self.crm.estimates.transition(estimate["id"], "send")
        self.assertEqual(self.crm.estimates.transition(estimate["id"], "accept")["status"], "accepted")
        job = self.crm.jobs.create({"customer_id": customer["id"], "title": "Boiler"})
        self.assertEqual(self.crm.jobs.transition(job["id"], "cancel")["status"], "cancelled")
        with self.assertRaises(ValueError):
            self.crm.invoices.transition(invoice["id"], "start")

    def test_retried_update_is_applied_once(self):
        customer = self.crm.customers.create({"name": "Py Once"})
        client = Client()
        real_send = client._send
        keys = []

        def lossy(request):
            answer = real_send(request)
            if request.get_method() == "PATCH":
                keys.append(request.get_header("Idempotency-key"))
                if len(keys) == 1:
                    raise ConnectionResetError("connection reset")  # the server applied it; the answer is lost
            return answer

        client._send = lossy
        updated = client.customers.update(customer["id"], {"name": "Py Once more"})
        self.assertEqual(len(keys), 2)
        self.assertEqual(keys[0], keys[1])
        self.assertEqual(updated["version"], customer["version"] + 1)
        self.assertEqual(self.crm.customers.get(customer["id"])["version"], customer["version"] + 1)

    def test_sync_then_resume_from_the_cursor(self):
        kept = self.crm.customers.create({"name": "Py Sync kept"})
        gone = self.crm.customers.create({"name": "Py Sync gone"})
        first = self.crm.customers.sync(limit=2)
        seen = list(first)
        self.assertGreater(len(seen), 2)  # more than one page was followed
        self.assertTrue({kept["id"], gone["id"]} <= {r["id"] for r in seen})
        self.assertIsInstance(first.cursor, str)
        saved = first.cursor

        self.crm.customers.update(kept["id"], {"name": "Py Sync changed"})
        self.crm.customers.delete(gone["id"])
        resumed = self.crm.customers.sync(cursor=saved, limit=1)
        changes = {r["id"]: r for r in resumed}
        self.assertEqual(set(changes), {kept["id"], gone["id"]})
        self.assertEqual((changes[kept["id"]]["name"], changes[kept["id"]]["version"]), ("Py Sync changed", kept["version"] + 1))
        tombstone = changes[gone["id"]]
        self.assertIs(tombstone["deleted"], True)
        self.assertTrue(tombstone["deleted_at"])
        self.assertGreater(tombstone["version"], gone["version"])
        self.assertNotEqual(resumed.cursor, saved)
        self.assertEqual(list(self.crm.customers.sync(cursor=resumed.cursor)), [])
        self.assertEqual(list(resumed), [])  # iterating again: nothing changed since

    def test_sorts_filters_expands_and_shapes_lists_and_items(self):
        acme = self.crm.customers.create({"name": "Py Sorted Acme", "email": "sorted@py.example"})
        other = self.crm.customers.create({"name": "Py Sorted Other"})
        job = self.crm.jobs.create({"customer_id": acme["id"], "title": "Py sorted job", "scheduled_at": "2026-12-01T09:00:00Z"})

        def invoice(customer, due, amount, moves):
            created = self.crm.invoices.create({"customer_id": customer["id"], "currency": "EUR", "due_date": due,
                                                "line_items": [{"description": "x", "quantity": 1, "unit_amount": amount}]})
            for move in moves:
                self.crm.invoices.transition(created["id"], move)
            return created["id"]

        later = invoice(acme, "2026-11-01", 500, ["send"])
        first = invoice(acme, "2026-10-01", 100, ["send"])
        dearer = invoice(acme, "2026-11-01", 900, ["send"])
        paid = invoice(acme, "2026-10-15", 300, ["send", "pay"])
        invoice(acme, "2026-12-15", 700, ["send"])  # not yet due
        invoice(other, "2026-10-01", 100, ["send"])  # another customer's

        overdue = self.crm.invoices.list(order_by=["due_date", "-total_amount"],
                                         where={"status": ["sent"], "due_date": {"lt": datetime.date(2026, 12, 1)},
                                                "customer": {"search": "py sorted acme"}},
                                         expand=["customer"], fields=["number", "due_date"])
        self.assertEqual([i["id"] for i in overdue["data"]], [first, dearer, later])
        self.assertEqual(overdue["pagination"]["total"], 3)
        self.assertEqual(sorted(overdue["data"][0]), ["customer", "due_date", "id", "number"])
        self.assertEqual(overdue["data"][0]["customer"]["email"], "sorted@py.example")
        # Filters as keyword arguments; one value for a set, a bare value for an exact match.
        self.assertEqual([i["id"] for i in self.crm.invoices.list(status="paid", total_amount=300, customer_id=acme["id"])["data"]], [paid])
        utc = datetime.timezone.utc
        window = {"gte": datetime.datetime(2026, 12, 1, tzinfo=utc), "lt": datetime.datetime(2026, 12, 2, tzinfo=utc)}
        self.assertEqual([j["id"] for j in self.crm.jobs.list(where={"scheduled_at": window, "customer_id": acme["id"]})["data"]], [job["id"]])
        # A related list's range, one level deep: customers with a sent invoice due before November.
        owing = self.crm.customers.list(where={"invoices": {"status": "sent", "due_date": {"lt": "2026-11-01"}}, "search": "py sorted"}, order_by="-name")
        self.assertEqual([c["id"] for c in owing["data"]], [other["id"], acme["id"]])
        names = [c for c in self.crm.customers.iterate(search="py sorted", order_by="name", fields=["name"], limit=1)]
        self.assertEqual(names, [{"id": acme["id"], "name": "Py Sorted Acme"}, {"id": other["id"], "name": "Py Sorted Other"}])
        one = self.crm.invoices.get(first, expand=["customer"], fields=["number"])
        self.assertEqual(sorted(one), ["customer", "id", "number"])
        self.assertEqual(one["customer"]["id"], acme["id"])
        with self.assertRaises(BadRequest) as bad:
            self.crm.invoices.list(where={"due_date": {"lt": "soon"}}, order_by="colour")
        self.assertEqual(sorted(e["param"] for e in bad.exception.errors), ["due_date[lt]", "order_by"])

    def test_covers_every_route_of_the_openapi_document(self):
        with urllib.request.urlopen(os.environ["CRM_BASE_URL"] + "/openapi.json") as response:
            document = json.load(response)
        missing = "00000000-0000-4000-8000-000000000000"
        for path, methods in document["paths"].items():
            _, name, *rest = path.split("/")
            resource = getattr(self.crm, name)
            for method in methods:
                action = rest[1] if len(rest) > 1 else None
                if rest and rest[0] == "by_external_id":
                    operation = "upsert"
                elif rest and not rest[0].startswith("{"):
                    operation = rest[0]  # customers.batch, customers.duplicates
                elif action and (hasattr(resource, action) or not hasattr(resource, "transition")):
                    operation = action  # restore, a record's events, customers.merge; events.resend, webhook_endpoints.rotate_secret and .deliveries
                elif method == "get":
                    operation = "get" if rest else "list"
                elif method == "post":
                    operation = "create" if not rest else "transition"
                else:
                    operation = {"patch": "update", "delete": "delete"}[method]
                self.assertTrue(callable(getattr(resource, operation)), f"{method} {path}")
                if operation == "update" and hasattr(resource, "_editable"):
                    self.assertTrue(resource._editable, f"{method} {path}")
                if operation == "transition":
                    self.assertIn(rest[1], resource._moves, f"{method} {path}")
                # The method calls this route (not a missing one): what it answers there.
                if operation == "upsert":
                    with self.assertRaises(BadRequest, msg=f"{method} {path}") as refused:
                        resource.upsert("py-route", {}, dry_run=True)  # every create requires a field
                    self.assertTrue(refused.exception.errors, f"{method} {path}")
                elif operation == "batch":
                    results = resource.batch([{"op": "delete", "id": missing}], mode="partial", dry_run=True)["results"]
                    self.assertEqual([(r["index"], r["status"]) for r in results], [(0, 404)])
                elif operation == "duplicates":
                    self.assertEqual(resource.duplicates()["pagination"]["page"], 1)
                elif operation == "merge":
                    source = self.crm.customers.create({"name": "Py merge source"})
                    with self.assertRaises(NotFound, msg=f"{method} {path}"):
                        resource.merge(missing, [source["id"]])  # into a customer that does not exist
                elif action and operation != "restore" and operation != "transition":
                    # An unknown record is NotFound.
                    with self.assertRaises(NotFound, msg=f"{method} {path}"):
                        getattr(resource, operation)("evt_" + "0" * 32 if name == "events" else missing)

    def test_upserts_batches_integration_keys_and_dry_runs(self):
        created = self.crm.customers.upsert("py-crm-1", {"name": "Py Upserted", "metadata": {"tier": "gold", "region": "eu"}})
        self.assertEqual((created["external_id"], created["metadata"], created["version"]), ("py-crm-1", {"tier": "gold", "region": "eu"}, 1))
        updated = self.crm.customers.upsert("py-crm-1", {"name": "Py Upserted again", "metadata": {"tier": "silver"}})
        self.assertEqual((updated["id"], updated["metadata"], updated["version"]), (created["id"], {"tier": "silver", "region": "eu"}, 2))
        # An update merges metadata key by key; None removes one.
        self.assertEqual(self.crm.customers.update(created["id"], {"metadata": {"region": None}})["metadata"], {"tier": "silver"})
        self.assertEqual([c["id"] for c in self.crm.customers.list(external_id="py-crm-1")["data"]], [created["id"]])
        self.assertEqual([c["id"] for c in self.crm.customers.list(where={"metadata": {"tier": "silver"}})["data"]], [created["id"]])

        results = self.crm.customers.batch([
            {"op": "create", "external_id": "py-batch-1", "data": {"name": "Py Batch 1"}},
            {"op": "upsert", "external_id": "py-crm-1", "data": {"name": "Py Upserted by batch"}},
            {"op": "update", "external_id": "py-batch-1", "data": {"phone": "+14155550198"}},
            {"op": "delete", "id": created["id"], "if_match": 4},
        ])["results"]
        self.assertEqual([(r["index"], r["status"]) for r in results], [(0, 201), (1, 200), (2, 200), (3, 204)])
        self.assertEqual(results[2]["record"]["phone"], "+14155550198")
        with self.assertRaises(NotFound):
            self.crm.customers.get(created["id"])
        # Atomic: a refusal raises, naming the item's field, and nothing is written.
        with self.assertRaises(BadRequest) as refused:
            self.crm.customers.batch([{"op": "create", "data": {"name": "Py never"}}, {"op": "create", "data": {"name": "Py bad", "email": "nope"}}])
        self.assertEqual([e["param"] for e in refused.exception.errors], ["items[1].email"])
        self.assertEqual(self.crm.customers.list(search="py never")["pagination"]["total"], 0)
        # Partial: each refused item in its result.
        partial = self.crm.customers.batch([{"op": "create", "data": {"name": "Py partial"}},
                                            {"op": "update", "external_id": "py-nobody", "data": {"name": "x"}}], mode="partial")["results"]
        self.assertEqual([r["status"] for r in partial], [201, 404])
        self.assertEqual((partial[1]["error"]["code"], partial[1]["error"]["errors"][0]["param"]), ("NOT_FOUND", "external_id"))

        # Dry runs answer what the write would, and keep nothing.
        tried = self.crm.customers.create({"name": "Py dry run"}, dry_run=True)
        self.assertEqual((tried["name"], tried["version"]), ("Py dry run", 1))
        with self.assertRaises(NotFound):
            self.crm.customers.get(tried["id"])
        batch_tried = self.crm.customers.batch([{"op": "upsert", "external_id": "py-dry", "data": {"name": "Py dry batch"}}], dry_run=True)
        self.assertEqual(batch_tried["results"][0]["status"], 201)
        self.assertEqual(self.crm.customers.list(external_id="py-dry")["pagination"]["total"], 0)
        kept = self.crm.customers.list(external_id="py-batch-1")["data"][0]
        with self.assertRaises(PreconditionFailed):
            self.crm.customers.update(kept["id"], {"name": "Py stale"}, if_match=1, dry_run=True)
        self.assertEqual(self.crm.customers.update(kept["id"], {"name": "Py renamed"}, dry_run=True)["version"], kept["version"] + 1)
        self.crm.customers.delete(kept["id"], dry_run=True)
        self.assertEqual(self.crm.customers.get(kept["id"]), kept)

    def test_duplicates_and_merge(self):
        kept = self.crm.customers.create({"name": "Py Kept", "email": "py.twin@example.com"})
        twin = self.crm.customers.create({"name": "Py Twin", "email": "Py.Twin@example.com"})
        job = self.crm.jobs.create({"customer_id": twin["id"], "title": "Py twin job"})
        groups = self.crm.customers.duplicates(limit=100)["data"]
        group = next(g for g in groups if g["key"] == "email" and g["value"] == "py.twin@example.com")
        self.assertEqual((group["count"], [c["id"] for c in group["customers"]]), (2, [kept["id"], twin["id"]]))
        self.assertEqual(self.crm.customers.merge(kept["id"], [twin["id"]], dry_run=True), kept)
        self.assertEqual(self.crm.jobs.get(job["id"])["customer_id"], twin["id"])
        self.assertEqual(self.crm.customers.merge(kept["id"], [twin["id"]], if_match=kept["version"]), kept)
        self.assertEqual(self.crm.jobs.get(job["id"])["customer_id"], kept["id"])
        with self.assertRaises(NotFound):
            self.crm.customers.get(twin["id"])
        self.assertFalse(any(g["value"] == "py.twin@example.com" for g in self.crm.customers.duplicates(limit=100)["data"]))
        with self.assertRaises(BadRequest) as refused:
            self.crm.customers.merge(kept["id"], [kept["id"]])
        self.assertEqual([e["param"] for e in refused.exception.errors], ["source_ids[0]"])

    def test_imports_and_request_logs(self):
        started = self.crm.imports.create("name,external_id,metadata.team\nPy Imported,py-import-1,blue\n", resource="customers", mode="upsert")
        self.assertIn(started["status"], ("pending", "running", "completed"))
        # It runs in the background: wait for it to end (no import left running behind this test).
        progress, deadline = self.crm.imports.get(started["id"]), time.monotonic() + 20
        while progress["status"] not in ("completed", "failed") and time.monotonic() < deadline:
            time.sleep(0.1)
            progress = self.crm.imports.get(started["id"])
        self.assertEqual((progress["id"], progress["status"], progress["mode"], progress["total"], progress["created"]), (started["id"], "completed", "upsert", 1, 1))
        self.assertEqual([c["metadata"] for c in self.crm.customers.list(external_id="py-import-1")["data"]], [{"team": "blue"}])
        with self.assertRaises(BadRequest) as refused:
            self.crm.imports.create("nickname\nx\n", resource="customers")
        logged = self.crm.request_logs.list(request_id=refused.exception.request_id)["data"]
        self.assertEqual([(r["method"], r["status"], r["error_code"]) for r in logged], [("POST", 400, "BAD_REQUEST")])
        self.assertTrue(all(r["status"] >= 400 for r in self.crm.request_logs.iterate(status="4xx", limit=5)))

    def test_events_list_get_iterate_and_catch_up(self):
        customer = self.crm.customers.create({"name": "Py Evented"})
        self.crm.customers.update(customer["id"], {"name": "Py Evented twice"})
        updated, created = self.crm.events.list(limit=2)["data"]
        self.assertEqual((updated["type"], created["type"]), ("customer.updated", "customer.created"))
        self.assertRegex(updated["id"], r"^evt_[0-9a-f]{32}$")
        self.assertEqual(updated["data"]["object"]["name"], "Py Evented twice")
        self.assertEqual(updated["data"]["previous_attributes"], {"name": "Py Evented"})
        self.assertEqual(self.crm.events.get(created["id"]), created)
        with self.assertRaises(NotFound):
            self.crm.events.get("evt_" + "0" * 32)
        types = [e["type"] for e in self.crm.events.iterate(type="customer.created", limit=2)]
        self.assertEqual(len(types), self.crm.events.list(type="customer.created")["pagination"]["total"])
        self.assertEqual(set(types), {"customer.created"})

        since = self.crm.events.since(created["id"], limit=1)
        self.assertEqual([e["id"] for e in since], [updated["id"]])
        self.assertIsInstance(since.cursor, str)
        later = self.crm.customers.create({"name": "Py Evented later"})
        last = self.crm.customers.create({"name": "Py Evented last"})
        resumed = self.crm.events.since(cursor=since.cursor, limit=1)
        self.assertEqual([(e["type"], e["data"]["object"]["id"]) for e in resumed],
                         [("customer.created", later["id"]), ("customer.created", last["id"])])
        self.assertEqual(list(resumed), [])  # iterating again: nothing since
        self.assertEqual([e["id"] for e in self.crm.events.since(created["id"], type="customer.updated")], [updated["id"]])
        with self.assertRaises(ValueError):
            self.crm.events.since()
        with self.assertRaises(BadRequest):
            self.crm.events.list(after="evt_" + "0" * 32)

    def test_real_webhook_deliveries_verify_with_the_endpoint_secret(self):
        received = []

        class Receiver(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                received.append((self.headers, body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
        threading.Thread(target=server.serve_forever, daemon=True).start()

        def deliveries_of(record_id, count=1):
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                found = [(h, b) for h, b in list(received) if json.loads(b)["data"]["object"]["id"] == record_id]
                if len(found) >= count:
                    return found
                time.sleep(0.05)
            self.fail(f"no delivery for {record_id}")

        hooks = self.crm.webhook_endpoints
        endpoint = hooks.create({"url": f"http://127.0.0.1:{server.server_address[1]}/hook", "description": "Python receiver",
                                 "event_types": ["customer.created"]})
        try:
            self.assertTrue(endpoint["secret"].startswith("whsec_"))
            self.assertEqual((endpoint["event_types"], endpoint["enabled"]), (["customer.created"], True))
            self.assertNotIn("secret", hooks.get(endpoint["id"]))
            self.assertIn(endpoint["id"], [e["id"] for e in hooks.list()["data"]])
            self.assertIn(endpoint["id"], [e["id"] for e in hooks.iterate()])

            customer = self.crm.customers.create({"name": "Py Hooked"})
            (headers, body), = deliveries_of(customer["id"])
            event = verify_webhook(body, headers, endpoint["secret"])
            self.assertEqual((event["type"], event["data"]["object"]), ("customer.created", customer))
            self.assertEqual(headers["Webhook-Id"], event["id"])
            self.assertEqual(self.crm.events.get(event["id"]), event)
            self.assertEqual(verify_webhook(body.decode(), dict(headers), endpoint["secret"][len("whsec_"):])["id"], event["id"])
            other = hooks.create({"url": "http://127.0.0.1:9/never", "enabled": False})
            with self.assertRaises(WebhookVerificationError):
                verify_webhook(body, headers, other["secret"])
            hooks.delete(other["id"])
            with self.assertRaises(NotFound):
                hooks.get(other["id"])

            # Resent by hand: the same event (the same webhook-id) arrives again.
            self.assertEqual(self.crm.events.resend(event["id"], endpoint_id=endpoint["id"])["id"], event["id"])
            again = deliveries_of(customer["id"], 2)[1]
            self.assertEqual(verify_webhook(again[1], again[0], endpoint["secret"])["id"], event["id"])

            # After a rotation, deliveries carry two signatures: the new secret and the old one verify.
            rotated = hooks.rotate_secret(endpoint["id"])
            self.assertNotEqual(rotated["secret"], endpoint["secret"])
            later = self.crm.customers.create({"name": "Py Hooked after rotation"})
            (headers, body), = deliveries_of(later["id"])
            self.assertEqual(len(headers["webhook-signature"].split()), 2)
            self.assertEqual(verify_webhook(body, headers, rotated["secret"])["data"]["object"], later)
            self.assertEqual(verify_webhook(body, headers, endpoint["secret"])["data"]["object"], later)

            changed = hooks.update(endpoint["id"], {"description": None, "event_types": []})
            self.assertEqual((changed["description"], changed["event_types"]), (None, []))
            deadline = time.monotonic() + 10
            log = hooks.deliveries(endpoint["id"], limit=100)["data"]
            while len(log) < 3 and time.monotonic() < deadline:
                log = hooks.deliveries(endpoint["id"], limit=100)["data"]
            self.assertEqual(len([a for a in log if a["event_id"] == event["id"]]), 2)
            self.assertEqual((log[0]["status_code"], log[0]["error"]), (204, None))
        finally:
            hooks.delete(endpoint["id"])
            server.shutdown()
            server.server_close()


SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
OTHER = "whsec_bm90IHRoZSBzZWNyZXQgb2YgdGhpcyBlbmRwb2ludA=="
EVENT_ID = "evt_0123456789abcdef0123456789abcdef"
NOW = 1_700_000_000
BODY = json.dumps({"id": EVENT_ID, "type": "customer.created", "created_at": "2023-11-14T22:13:20.000Z",
                   "data": {"object": {"id": "c1", "name": "Ada"}}, "request_id": "r1"}).encode()


def sign(secret, timestamp=NOW, body=BODY, msg_id=EVENT_ID):
    key = base64.b64decode(secret[len("whsec_"):])
    return "v1," + base64.b64encode(hmac.new(key, f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()).decode()


def headers(signature, timestamp=NOW, msg_id=EVENT_ID):
    return {"webhook-id": msg_id, "webhook-timestamp": str(timestamp), "webhook-signature": signature}


class VerifyWebhookTest(unittest.TestCase):
    """verify_webhook on fixed vectors: the specification's example, and deliveries signed here with hmac."""

    def test_the_specifications_example(self):
        example = {"webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek", "webhook-timestamp": "1614265330",
                   "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="}
        self.assertEqual(verify_webhook(b'{"test": 2432232314}', example, SECRET, now=1614265330), {"test": 2432232314})
        with self.assertRaises(WebhookVerificationError):
            verify_webhook(b'{"test": 2432232314}', example, SECRET, now=1614265330 + 301)

    def test_valid(self):
        self.assertEqual(verify_webhook(BODY, headers(sign(SECRET)), SECRET, now=NOW), json.loads(BODY))
        self.assertEqual(verify_webhook(BODY.decode(), headers(sign(SECRET)), SECRET[len("whsec_"):], now=NOW)["id"], EVENT_ID)
        mixed_case = {"Webhook-Id": EVENT_ID, "WEBHOOK-TIMESTAMP": str(NOW), "Webhook-Signature": sign(SECRET)}
        self.assertEqual(verify_webhook(BODY, mixed_case, SECRET, now=NOW)["id"], EVENT_ID)
        environ = {"HTTP_WEBHOOK_ID": EVENT_ID, "HTTP_WEBHOOK_TIMESTAMP": str(NOW), "HTTP_WEBHOOK_SIGNATURE": sign(SECRET)}
        self.assertEqual(verify_webhook(BODY, environ, SECRET, now=NOW)["id"], EVENT_ID)
        self.assertEqual(verify_webhook(BODY, headers(sign(SECRET)), SECRET, now=NOW + 299)["id"], EVENT_ID)
        self.assertEqual(verify_webhook(BODY, headers(sign(SECRET)), SECRET, now=NOW - 299)["id"], EVENT_ID)

    def test_tampered_body_or_headers(self):
        for body, hdrs in [(BODY.replace(b"Ada", b"Eve"), headers(sign(SECRET))), (BODY + b" ", headers(sign(SECRET))),
                           (BODY, headers(sign(SECRET), timestamp=NOW + 1)), (BODY, headers(sign(SECRET), msg_id="evt_" + "f" * 32))]:
            with self.assertRaises(WebhookVerificationError):
                verify_webhook(body, hdrs, SECRET, now=NOW)

    def test_wrong_secret(self):
        with self.assertRaises(WebhookVerificationError):
            verify_webhook(BODY, headers(sign(SECRET)), OTHER, now=NOW)
        with self.assertRaises(WebhookVerificationError):
            verify_webhook(BODY, headers(sign(OTHER)), SECRET, now=NOW)

    def test_stale_or_future_timestamp(self):
        for timestamp in (NOW - 301, NOW + 301):
            with self.assertRaises(WebhookVerificationError):
                verify_webhook(BODY, headers(sign(SECRET, timestamp), timestamp), SECRET, now=NOW)
        stale = int(time.time()) - 600  # real time by default
        with self.assertRaisesRegex(WebhookVerificationError, "too old"):
            verify_webhook(BODY, headers(sign(SECRET, stale), stale), SECRET)

    def test_two_signatures_the_second_matching(self):
        two = f"{sign(OTHER)} {sign(SECRET)}"
        self.assertEqual(verify_webhook(BODY, headers(two), SECRET, now=NOW)["id"], EVENT_ID)
        self.assertEqual(verify_webhook(BODY, headers(two), OTHER, now=NOW)["id"], EVENT_ID)
        mixed = f"v2,{sign(SECRET)[3:]} v1,not*base64 v1 {sign(SECRET)}"
        self.assertEqual(verify_webhook(BODY, headers(mixed), SECRET, now=NOW)["id"], EVENT_ID)
        with self.assertRaises(WebhookVerificationError):
            verify_webhook(BODY, headers(f"v2,{sign(SECRET)[3:]}"), SECRET, now=NOW)

    def test_missing_headers_parsed_body_bad_secret(self):
        with self.assertRaises(WebhookVerificationError):
            verify_webhook(BODY, {"webhook-id": EVENT_ID, "webhook-timestamp": str(NOW)}, SECRET, now=NOW)
        with self.assertRaises(WebhookVerificationError):
            verify_webhook(BODY, {**headers(sign(SECRET)), "webhook-timestamp": "soon"}, SECRET, now=NOW)
        with self.assertRaises(TypeError):
            verify_webhook(json.loads(BODY), headers(sign(SECRET)), SECRET, now=NOW)
        with self.assertRaises(ValueError):
            verify_webhook(BODY, headers(sign(SECRET)), "whsec_", now=NOW)
        self.assertTrue(issubclass(WebhookVerificationError, Exception))


if __name__ == "__main__":
    unittest.main()

"""Runs against a real server: CRM_BASE_URL, CRM_API_KEY, CRM_READONLY_KEY, CRM_LIMITED_BASE_URL, CRM_LIMITED_KEY."""
import json
import os
import sys
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from crm_client import (BadRequest, Client, Conflict, CrmError, Forbidden, NotFound, PreconditionFailed, RateLimited,  # noqa: E402
                        ServerError, Unauthorized)


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

    def test_covers_every_route_of_the_openapi_document(self):
        with urllib.request.urlopen(os.environ["CRM_BASE_URL"] + "/openapi.json") as response:
            document = json.load(response)
        for path, methods in document["paths"].items():
            _, name, *rest = path.split("/")
            resource = getattr(self.crm, name)
            for method in methods:
                if method == "get":
                    operation = "get" if rest else "list"
                elif method == "post":
                    operation = "create" if not rest else ("restore" if rest[1:] == ["restore"] else "transition")
                else:
                    operation = {"patch": "update", "delete": "delete"}[method]
                self.assertTrue(callable(getattr(resource, operation)), f"{method} {path}")
                if operation == "update":
                    self.assertTrue(resource._editable, f"{method} {path}")
                if operation == "transition":
                    self.assertIn(rest[1], resource._moves, f"{method} {path}")


if __name__ == "__main__":
    unittest.main()

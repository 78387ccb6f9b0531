"""Runs against a real server: CRM_BASE_URL, CRM_API_KEY, CRM_READONLY_KEY, CRM_LIMITED_BASE_URL, CRM_LIMITED_KEY."""
import json
import os
import sys
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from crm_client import BadRequest, Client, Conflict, CrmError, Forbidden, NotFound, RateLimited, ServerError, Unauthorized  # noqa: E402


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
        self.assertEqual(page["pagination"], {"page": 1, "limit": 5, "total": 1})
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

    def test_covers_every_route_of_the_openapi_document(self):
        with urllib.request.urlopen(os.environ["CRM_BASE_URL"] + "/openapi.json") as response:
            document = json.load(response)
        for path, methods in document["paths"].items():
            resource = getattr(self.crm, path.split("/")[1])
            for method in methods:
                name = "create" if method == "post" else ("get" if path.endswith("{id}") else "list")
                self.assertTrue(callable(getattr(resource, name)), f"{method} {path}")
                if method == "post":
                    self.assertTrue(resource._creatable, f"{method} {path}")


if __name__ == "__main__":
    unittest.main()

"""Signed webhooks through the real thing: changes made through the API queue deliveries in
their own transactions, the outbox's sender posts them to a real HTTP receiver on loopback
(allowed by the test's config), and the receiver checks them with the `standardwebhooks`
package, as an integrator's would. A tampered body and an old timestamp fail; a 410 disables
the receiver; a private address is refused by default, when added and when sent."""

import json
import signal
import sqlite3
import threading
from contextlib import closing
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import standardwebhooks
import webtest

import museum
import museum_outbox
import museum_webhooks
import storage
from commands import museum_command
from described import DOCUMENT, schema_errors
from conftest import ADMIN, GATE, NOW, TODAY, VISITOR, Clock
from museum_services import utc_now
from serving import running_instances, running_server, start_server, wait_until
from ticketing import EVENT_DATES, TICKETS, body, buy, create_event, query

EVENTS = "/v1.1/special-events"
ADMISSIONS = "/v1.1/admissions"


class Receiver:
    """A webhook receiver on loopback, in a thread: it keeps every request (headers, body)
    and answers each with the next of `statuses` (then 204 for good), noting the
    `webhook-id` of each 2xx in `received`. With `stall_on`, the request of that number
    (from 1) is held until `release` is set, then answered 503."""

    def __init__(self, statuses=(), stall_on=None):
        self.requests = []
        self.received = []
        self.statuses = list(statuses)
        self.stalled, self.release = threading.Event(), threading.Event()
        lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's name)
                data = self.rfile.read(int(self.headers["Content-Length"]))
                headers = {name.lower(): value for name, value in self.headers.items()}
                with lock:
                    receiver.requests.append((headers, data))
                    number = len(receiver.requests)
                    status = receiver.statuses.pop(0) if receiver.statuses else 204
                if number == stall_on:
                    receiver.stalled.set()
                    receiver.release.wait(60)
                    status = 503
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()
                if 200 <= status < 300:
                    receiver.received.append(headers["webhook-id"])

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks?museum=1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def bodies(self):
        return [json.loads(data) for _, data in self.requests]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    started = []

    def start(statuses=(), stall_on=None):
        started.append(Receiver(statuses, stall_on))
        return started[-1]

    yield start
    for each in started:
        each.close()


ALLOW_PRIVATE = "[webhooks]\nallow_private = true\n"


def add_receiver(store, url, events=storage.WEBHOOK_EVENTS):
    """Register a receiver of `events` as `museum add-webhook` does; return it."""
    webhook = {"webhookId": str(museum.new_uuid()), "url": url,
               "secret": museum_webhooks.new_secret(), "events": list(events),
               "createdAt": "2026-11-22T11:00:00Z"}
    store.add_webhook(webhook)
    return webhook


@pytest.fixture
def hooked(config_text, store, receiver):
    """A client on the store (the test's clock) with a receiver of every event registered,
    and a sender on the real clock (a receiver checks the timestamp against its own)."""

    def make(statuses=(), extra=ALLOW_PRIVATE):
        config = museum.parse_config(config_text + extra, "test.ini")
        client = webtest.TestApp(museum.create_app(config, store=store, clock=Clock()),
                                 lint=True)
        listening = receiver(statuses)
        webhook = add_receiver(store, listening.url)
        return client, museum_outbox.Sender(config, store, utc_now), listening, webhook

    return make


def verified(webhook, request):
    """The payload of a request as the standardwebhooks package verifies it, checked
    against what the OpenAPI document's `webhooks` say of its type."""
    headers, data = request
    payload = standardwebhooks.Webhook(webhook["secret"]).verify(data, headers)
    delivery = DOCUMENT["webhooks"][payload["type"]]["post"]
    assert {parameter["name"] for parameter in delivery["parameters"]} <= set(headers)
    schema = delivery["requestBody"]["content"]["application/json"]["schema"]
    assert schema_errors(schema, payload) == []
    return payload


def test_a_published_event_is_delivered_signed_and_verifies(hooked, store):
    client, sender, listening, webhook = hooked()
    event = create_event(client)
    [queued] = store.list_messages()
    assert (queued["kind"], queued["target"], queued["state"]) == (
        "webhook", listening.url, "queued")
    assert sender.send_due() == 1
    [request] = listening.requests
    headers, _ = request
    assert headers["webhook-id"] == queued["messageId"]
    assert headers["content-type"] == "application/json"
    payload = verified(webhook, request)
    assert payload["type"] == "event.published"
    assert payload["data"] == client.get(f"{EVENTS}/{event['eventId']}", headers=VISITOR,
                                         status=200).json
    [sent] = store.list_messages()
    assert (sent["state"], sent["lastAnswer"]) == ("sent", "204 No Content")
    assert sender.send_due() == 0 and len(listening.requests) == 1


def test_a_tampered_body_or_an_old_timestamp_fails_verification(hooked, store, config_text):
    client, sender, listening, webhook = hooked()
    create_event(client)
    sender.send_due()
    [(headers, data)] = listening.requests
    tampered = data.replace(b"Night at the Museum", b"Day at the Museum")
    with pytest.raises(standardwebhooks.webhooks.WebhookVerificationError):
        standardwebhooks.Webhook(webhook["secret"]).verify(tampered, headers)
    other_secret = museum_webhooks.new_secret()
    with pytest.raises(standardwebhooks.webhooks.WebhookVerificationError):
        standardwebhooks.Webhook(other_secret).verify(data, headers)
    # Sent again by a sender whose clock says days ago: signed right, but too old.
    message = store.list_messages()[0]
    old = museum_webhooks.deliver(message, store.webhook(webhook["webhookId"]), True, NOW)
    assert old == "204 No Content"
    with pytest.raises(standardwebhooks.webhooks.WebhookVerificationError, match="too old"):
        standardwebhooks.Webhook(webhook["secret"]).verify(*reversed(listening.requests[1]))


def test_every_change_is_announced_with_its_data(hooked, store):
    client, sender, listening, webhook = hooked()
    event = create_event(client)
    client.patch_json(f"{EVENTS}/{event['eventId']}", {"name": "Night at the Zoo"},
                      headers={**ADMIN, "Content-Type": "application/merge-patch+json"},
                      status=200)
    ticket = buy(client, body(ticketDate=TODAY), headers=VISITOR).json
    client.post_json(ADMISSIONS, {"confirmationCode": ticket["confirmationCode"]}, headers=GATE,
                     status=201)
    client.delete(f"{ADMISSIONS}/{ticket['ticketId']}", headers=ADMIN, status=204)
    client.delete(f"{TICKETS}/{ticket['ticketId']}", headers=ADMIN, status=204)
    client.delete(f"{EVENTS}/{event['eventId']}", headers=ADMIN, status=204)
    sender.send_due()
    payloads = [verified(webhook, request) for request in listening.requests]
    data = {payload["type"]: payload["data"] for payload in payloads}
    assert sorted(data) == sorted(["event.published", "event.changed", "ticket.admitted",
                                   "ticket.admission-undone", "ticket.voided",
                                   "event.cancelled"])
    published, changed, admitted, undone, voided, cancelled = (data[kind] for kind in (
        "event.published", "event.changed", "ticket.admitted", "ticket.admission-undone",
        "ticket.voided", "event.cancelled"))
    assert changed == {**published, "name": "Night at the Zoo"}
    assert cancelled == {**changed, "cancelled": True}
    assert admitted == {"ticketId": ticket["ticketId"], "admittedAt": admitted["admittedAt"],
                        "admittedBy": "gate"}
    assert undone == {"ticketId": ticket["ticketId"], "undoneAt": undone["undoneAt"],
                      "undoneBy": "admin"}
    assert voided == {"ticketId": ticket["ticketId"], "voidedAt": voided["voidedAt"]}
    # No contact ever leaves in a webhook.
    assert all("email" not in json.dumps(payload) for payload in payloads)


def test_an_order_s_confirmation_and_void_are_announced(hooked, store):
    _, sender, listening, webhook = hooked()
    order = {"orderId": "order-1", "orderCode": "order-792d82-891fc", "status": "pending",
             "channel": "web", "email": "ada@example.org", "createdAt": "2026-11-22T12:00:00Z",
             "expiresAt": "2026-11-22T12:15:00Z", "createdBy": "visitor"}
    ticket = {"ticketId": "6b0c7c4e-1f7a-4a51-9d43-0c8f1f7e2a10", "ticketType": "general",
              "ticketDate": TODAY, "confirmationCode": "ticket-general-0a1b2c-3d4e5",
              "email": "ada@example.org", "price": 0, "currency": "EUR"}
    store.create_order(order, [ticket], "2026-11-22T12:00:00Z")
    assert store.list_messages() == []  # a hold announces nothing
    store.confirm_order("order-1", "2026-11-22T12:01:00Z")
    store.confirm_order("order-1", "2026-11-22T12:02:00Z")  # confirmed already: nothing more
    store.void_order("order-1", "2026-11-22T12:03:00Z")
    sender.send_due()
    confirmed, voided = (verified(webhook, request) for request in listening.requests)
    assert confirmed == {"type": "order.confirmed", "timestamp": "2026-11-22T12:01:00Z",
                         "data": {"orderId": "order-1", "orderCode": "order-792d82-891fc",
                                  "ticketIds": [ticket["ticketId"]]}}
    assert voided["type"] == "order.voided"
    assert voided["data"] == {"orderId": "order-1", "ticketIds": [ticket["ticketId"]],
                              "voidedAt": "2026-11-22T12:03:00Z"}


def test_a_receiver_gets_only_the_events_it_asked_for(hooked, store, receiver):
    client, sender, everything, _ = hooked()
    cancellations = receiver()
    add_receiver(store, cancellations.url, ["event.cancelled"])
    event = create_event(client)
    client.delete(f"{EVENTS}/{event['eventId']}", headers=ADMIN, status=204)
    sender.send_due()
    assert [payload["type"] for payload in cancellations.bodies()] == ["event.cancelled"]
    assert len(everything.requests) == 2


def test_a_failing_receiver_is_tried_again_with_the_outbox_s_backoff(config_text, store,
                                                                    receiver):
    config = museum.parse_config(config_text + ALLOW_PRIVATE, "test.ini")
    clock = Clock()
    client = webtest.TestApp(museum.create_app(config, store=store, clock=clock))
    listening = receiver([500, 503])
    add_receiver(store, listening.url)
    sender = museum_outbox.Sender(config, store, clock)
    ticket = buy(client, body(), headers=VISITOR).json
    client.delete(f"{TICKETS}/{ticket['ticketId']}", headers=ADMIN, status=204)
    assert sender.send_due() == 0
    [message] = store.list_messages()
    assert (message["state"], message["lastAnswer"]) == ("queued", "500 Internal Server Error")
    clock.advance(minutes=1)
    assert sender.send_due() == 0
    clock.advance(minutes=5)
    assert sender.send_due() == 1
    ids = {headers["webhook-id"] for headers, _ in listening.requests}
    assert len(listening.requests) == 3 and ids == {message["messageId"]}  # one id, resent
    assert len({data for _, data in listening.requests}) == 1  # the same bytes each time


def test_a_410_disables_the_receiver(hooked, store, tmp_path, config_text):
    client, sender, listening, webhook = hooked(statuses=[410])
    create_event(client, name="First")
    create_event(client, name="Second")
    assert sender.send_due() == 0
    assert len(listening.requests) == 1  # the second was not sent after the 410
    first, second = sorted(store.list_messages(), key=lambda message: message["createdAt"])
    assert (first["state"], second["state"]) == ("failed", "failed")
    assert first["lastAnswer"].startswith("410 Gone")
    [disabled] = store.webhooks()
    assert disabled["disabledAt"] and disabled["disabledWhy"].startswith("410 Gone")
    create_event(client, name="Third")
    assert len(store.list_messages()) == 2  # a disabled receiver gets nothing queued
    listed = museum_command(tmp_path, config_text, "webhooks", "--db", str(store.path))
    assert listed.status == 0 and "410 Gone" in listed.out


@pytest.mark.parametrize("url", [
    "http://127.0.0.1:9/hooks", "http://localhost/hooks", "http://[::1]/hooks",
    "http://10.0.0.7/hooks", "http://192.168.1.20/hooks", "http://169.254.169.254/latest",
    "https://[fe80::1]/hooks", "http://0.0.0.0/hooks"])
def test_a_private_address_is_refused_by_default(url):
    with pytest.raises(museum_webhooks.AddressRefused, match="allow_private"):
        museum_webhooks.checked_address(url, allow_private=False)


@pytest.mark.parametrize("url", ["ftp://example.org/hooks", "http:///hooks",
                                 "http://no-such-host.invalid/hooks"])
def test_a_url_that_cannot_be_a_receiver_is_refused(url):
    with pytest.raises(museum_webhooks.AddressRefused):
        museum_webhooks.checked_address(url, allow_private=True)


def test_a_receiver_on_a_private_address_is_not_sent_to_unless_allowed(hooked, store):
    """Added while allowed (or before its name moved to a private address): each delivery
    checks the address again, so nothing reaches it; the outbox tries again later."""
    client, sender, listening, _ = hooked(extra="")
    create_event(client)
    assert sender.send_due() == 0
    assert listening.requests == []
    [message] = store.list_messages()
    assert message["state"] == "queued" and "allow_private" in message["lastAnswer"]


def test_the_commands_add_list_and_remove_a_receiver(tmp_path, config_text, db_path, store,
                                                     receiver):
    listening = receiver()
    db = ("--db", str(db_path))
    refused = museum_command(tmp_path, config_text, "add-webhook", listening.url,
                             "--events", "event.published", *db)
    assert refused.status == 2 and "allow_private" in refused.err
    allowed = config_text + ALLOW_PRIVATE
    added = museum_command(tmp_path, allowed, "add-webhook", listening.url, "--events",
                           "event.published", "event.cancelled", *db)
    assert added.status == 0, added.err
    secret = added.out.splitlines()[-1].strip()
    assert secret.startswith("whsec_")
    listed = museum_command(tmp_path, allowed, "webhooks", *db)
    assert listening.url in listed.out and "event.published,event.cancelled" in listed.out
    assert secret not in listed.out
    [webhook] = store.webhooks()
    assert webhook["secret"] == secret
    client = webtest.TestApp(museum.create_app(museum.parse_config(allowed, "test.ini"),
                                               store=store, clock=Clock()))
    create_event(client)
    assert len(store.list_messages()) == 1
    removed = museum_command(tmp_path, allowed, "remove-webhook", webhook["webhookId"], *db)
    assert removed.status == 0
    assert store.webhooks() == [] and store.list_messages() == []  # its delivery too
    again = museum_command(tmp_path, allowed, "remove-webhook", webhook["webhookId"], *db)
    assert again.status == 2 and "no webhook" in again.err


@pytest.fixture(params=["sqlite", "postgres"])
def each_store(request, db_path):
    """A new store of each backend (PostgreSQL: a fresh database on the test server)."""
    url = db_path if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    opened = storage.open_store(url)
    yield opened
    opened.close()


def test_the_store_queues_deliveries_in_the_change_s_transaction(each_store):
    store = each_store
    wanted = add_receiver(store, "https://hooks.example.org/a", ["ticket.voided"])
    other = add_receiver(store, "https://hooks.example.org/b", ["event.published"])
    ticket = {"ticketId": "6b0c7c4e-1f7a-4a51-9d43-0c8f1f7e2a10", "ticketType": "general",
              "ticketDate": TODAY, "confirmationCode": "ticket-general-0a1b2c-3d4e5",
              "email": "ada@example.org", "price": 0, "currency": "EUR"}
    store.create_ticket(ticket)
    assert store.list_messages() == []  # a sale is no change a receiver asked for
    assert store.void_ticket(ticket["ticketId"], "2026-11-22T12:00:00Z")
    assert not store.void_ticket(ticket["ticketId"], "2026-11-22T12:01:00Z")  # void already
    [delivery] = store.list_messages()
    assert (delivery["kind"], delivery["target"], delivery["webhookId"]) == (
        "webhook", wanted["url"], wanted["webhookId"])
    assert delivery["payload"] == {"type": "ticket.voided", "timestamp": "2026-11-22T12:00:00Z",
                                   "data": {"ticketId": ticket["ticketId"],
                                            "voidedAt": "2026-11-22T12:00:00Z"}}
    assert store.webhook(wanted["webhookId"])["secret"] == wanted["secret"]
    assert store.disable_webhook(wanted["webhookId"], "2026-11-22T12:02:00Z", "410 Gone")
    assert not store.disable_webhook(wanted["webhookId"], "2026-11-22T12:03:00Z", "410 Gone")
    [failed] = store.list_messages()
    assert (failed["state"], failed["lastAnswer"]) == ("failed", "410 Gone")
    assert {webhook["webhookId"]: webhook["disabledAt"] for webhook in store.webhooks()} == {
        wanted["webhookId"]: "2026-11-22T12:02:00Z", other["webhookId"]: None}
    store.remove_webhook(wanted["webhookId"])
    assert store.list_messages() == [] and store.webhook(wanted["webhookId"]) is None
    with pytest.raises(storage.NotFound):
        store.remove_webhook(wanted["webhookId"])
    assert [webhook["webhookId"] for webhook in store.webhooks()] == [other["webhookId"]]


def new_event(number):
    return {"name": f"Lecture {number}", "location": "Great Hall",
            "eventDescription": "Owls.", "dates": EVENT_DATES, "price": 5}


@pytest.mark.slow
def test_a_kill_9_during_webhook_sends_loses_none_and_resends_none_answered_2xx(
        tmp_path, config_text, db_path, receiver):
    """kill -9 of a real `museum serve` while a receiver holds its third delivery: the two
    it answered 204 are never sent again; once the claim's lease ends, the held one is sent
    again with its webhook-id after the restart, and so are those not sent yet."""
    listening = receiver(stall_on=3)
    text = config_text + ALLOW_PRIVATE
    store = storage.open_store(str(db_path))
    try:
        add_receiver(store, listening.url, ["event.published"])
    finally:
        store.close()
    server = start_server(tmp_path, text, db=str(db_path))
    try:
        for number in range(5):
            status, _, _ = server.request("POST", EVENTS, new_event(number), ADMIN)
            assert status == 201
        assert listening.stalled.wait(30), "the sender did not reach the third delivery"
        server.stop(signal.SIGKILL)
    finally:
        server.process.kill()
        listening.release.set()
    states = sorted(state for state, in query(db_path, "SELECT state FROM outbox"))
    assert states == ["sending", "sending", "sending", "sent", "sent"]  # one batch claimed
    # Five minutes pass: the dead sender's lease on the rest of its batch ends.
    with closing(sqlite3.connect(db_path)) as conn, conn:
        conn.execute("UPDATE outbox SET next_attempt_at = '2026-01-01T00:00:00Z' "
                     "WHERE state = 'sending'")
    with running_server(tmp_path, text, db=str(db_path)):
        wait_until(lambda: query(db_path, "SELECT count(*) FROM outbox WHERE state = 'sent'")
                   == [(5,)], 60, what="every delivery")
    promised = {message_id for message_id, in query(db_path, "SELECT id FROM outbox")}
    assert sorted(listening.received) == sorted(promised)  # each once, none twice
    held = listening.requests[2][0]["webhook-id"]
    assert [headers["webhook-id"] for headers, _ in listening.requests].count(held) == 2


@pytest.mark.slow
def test_two_instances_on_postgresql_send_each_delivery_once(tmp_path, config_text,
                                                             postgres_url, receiver):
    listening = receiver()
    store = storage.open_store(postgres_url)
    try:
        webhook = add_receiver(store, listening.url, ["event.published"])
        with running_instances(tmp_path, config_text + ALLOW_PRIVATE, postgres_url,
                               2) as servers:
            for number in range(40):
                status, _, _ = servers[number % 2].request("POST", EVENTS, new_event(number),
                                                           ADMIN)
                assert status == 201
            wait_until(lambda: all(message["state"] == "sent"
                                   for message in store.list_messages()), 90,
                       what="every delivery")
        promised = {message["messageId"] for message in store.list_messages()}
    finally:
        store.close()
    assert len(promised) == 40
    assert sorted(listening.received) == sorted(promised)  # each once, by either instance
    assert all(verified(webhook, request) for request in listening.requests)

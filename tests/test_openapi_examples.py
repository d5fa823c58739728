"""Every problem example in the OpenAPI description is what the service answers: each case is
provoked against the app and the whole problem compared with the example (the examples'
messages used to drift from the code's). The door's examples show a made-up ticket: the
members naming it are compared by presence and checked against the schema."""

import json
import re
import uuid
from datetime import timedelta

import pytest
import webtest

import museum
import museum_credentials
import museum_devices
import museum_http
import storage
from conftest import ADMIN, DESK, GATE, NOW, PASSWORDS, TODAY, VISITOR, basic, quick_hash
from ticketing import ended_hold
from described import DOCUMENT, operations, resolve, schema_errors
from museum_http import rfc3339
from ticketing import sell_order

EVENTS = "/v1.1/special-events"
TICKETS = "/v1.1/tickets"
OPEN_DAY = "2026-11-24"  # a Tuesday after conftest's NOW
ADMISSIONS = "/v1.1/admissions"
EVENT = {"name": "Night Tour", "location": "Great Hall", "eventDescription": "Torches.",
         "dates": [OPEN_DAY], "price": 25}
# Members of the door's problems that name the particular ticket and moment, and the event
# a cancelled event's read shows.
PARTICULAR = {"ticketId", "confirmationCode", "ticketDate", "eventName", "admittedAt",
              "eventId", "event"}
# Examples whose detail names the ticket's day: compared with the day masked.
DETAIL_NAMES_A_DAY = {"NotAdmittable/wrong-date"}


def sell(client, day, event=None):
    """A ticket for `day`, general or for `event`; returns its receipt."""
    ticket = {"ticketType": "general", "ticketDate": day, "email": "ada@example.org"}
    if event:
        ticket.update(ticketType="event", eventId=event["eventId"])
    return client.post_json(TICKETS, ticket, headers=VISITOR, status=201).json


def present(client, ticket, status):
    """The ticket's typed confirmation code at the door."""
    return client.post_json(ADMISSIONS, {"confirmationCode": ticket["confirmationCode"]},
                            headers=GATE, status=status)


def bad_request(client, store):
    return client.get("/v1.1/museum-hours", params={"limit": "31"}, headers=ADMIN, status=400)


def unauthorized(client, store):
    return client.get("/v1.1/museum-hours", status=401)


def forbidden(client, store):
    return client.post_json(EVENTS, EVENT, headers=VISITOR, status=403)


def needs_gate_role(client, store):
    return client.get(f"{ADMISSIONS}/summary", headers=VISITOR, status=403)


def needs_desk_role(client, store):
    return client.delete(f"{TICKETS}/{uuid.uuid4()}", headers=GATE, status=403)


def not_todays_ticket(client, store):
    ticket = sell(client, OPEN_DAY)
    return client.delete(f"{TICKETS}/{ticket['ticketId']}", headers=DESK, status=403)


def not_todays_report(client, store):
    return client.get("/v1.1/reports/sales", params={"startDate": OPEN_DAY}, headers=DESK,
                      status=403)


def message_busy(client, store):
    """A failed mail's message claimed again (sent again by an admin, then being sent)."""
    store.create_ticket({"ticketId": str(uuid.uuid4()), "ticketType": "general",
                         "ticketDate": OPEN_DAY, "confirmationCode": "ticket-general-0a1b2c-3d4e5",
                         "email": "ada@example.org", "price": 0, "currency": "EUR"},
                        messages=[{"messageId": str(uuid.uuid4()), "kind": "email",
                                   "target": "ada@example.org", "payload": {},
                                   "createdAt": rfc3339(NOW)}])
    [message] = store.claim_messages(rfc3339(NOW), rfc3339(NOW + timedelta(minutes=5)), 1)
    return client.delete(f"/v1.1/outbox/{message['messageId']}", headers=ADMIN, status=409)


def not_found(client, store):
    return client.get(f"{EVENTS}/{uuid.uuid4()}", headers=ADMIN, status=404)


def conflict(client, store):
    key = {**ADMIN, "Idempotency-Key": "order-1"}
    ticket = {"ticketType": "general", "ticketDate": OPEN_DAY, "email": "ada@example.org"}
    client.post_json(TICKETS, ticket, headers=key, status=201)
    return client.post_json(TICKETS, {**ticket, "email": "bob@example.org"}, headers=key,
                            status=409)


def undo_not_allowed(client, store):
    ticket = sell(client, TODAY)
    client.post_json(ADMISSIONS, {"confirmationCode": ticket["confirmationCode"]},
                     headers=ADMIN, status=201)
    return client.delete(f"{ADMISSIONS}/{ticket['ticketId']}", headers=GATE, status=403)


def sold_out(client, store):
    event = client.post_json(EVENTS, {**EVENT, "dates": ["2027-10-30"], "capacity": 1},
                             headers=ADMIN, status=201).json
    sell(client, "2027-10-30", event)
    ticket = {"ticketType": "event", "ticketDate": "2027-10-30", "email": "ada@example.org",
              "eventId": event["eventId"]}
    return client.post_json(TICKETS, ticket, headers=VISITOR, status=409)


def capacity_below_sold(client, store):
    event = client.post_json(EVENTS, {**EVENT, "dates": ["2027-10-30", "2027-10-31"]},
                             headers=ADMIN, status=201).json
    for _ in range(2):
        sell(client, "2027-10-31", event)
    return client.patch_json(f"{EVENTS}/{event['eventId']}", {"capacity": 1},
                             headers=ADMIN, status=409)


def not_admitted(client, store):
    return client.delete(f"{ADMISSIONS}/{uuid.uuid4()}", headers=ADMIN, status=404)


def unknown_ticket(client, store):
    return client.post_json(ADMISSIONS, {"confirmationCode": "ticket-general-abcdef-12345"},
                            headers=GATE, status=404)


def dates_sold(client, store):
    event = client.post_json(EVENTS, {**EVENT, "dates": ["2027-10-30", "2027-10-31"]},
                             headers=ADMIN, status=201).json
    for _ in range(2):
        sell(client, "2027-10-31", event)
    return client.patch_json(f"{EVENTS}/{event['eventId']}", {"dates": ["2027-10-30"]},
                             headers=ADMIN, status=409)


def already_admitted(client, store):
    ticket = sell(client, TODAY)
    present(client, ticket, 201)
    return client.post_json(ADMISSIONS, {"confirmationCode": ticket["confirmationCode"]},
                            headers=ADMIN, status=409)


def same_device(client, store):
    ticket = sell(client, TODAY)
    present(client, ticket, 201)
    return present(client, ticket, 409)


def double_entry(client, store):
    ticket = sell(client, TODAY)
    present(client, ticket, 201)
    return client.post_json(ADMISSIONS, {"confirmationCode": ticket["confirmationCode"],
                                         "scannedAt": "2026-11-22T11:50:00Z"},
                            headers=ADMIN, status=409)


def key_reused(client, store):
    ticket = sell(client, TODAY)
    key = {**GATE, "Idempotency-Key": "scan-1"}
    client.post_json(ADMISSIONS, {"confirmationCode": ticket["confirmationCode"]},
                     headers=key, status=201)
    return client.post_json(ADMISSIONS, {"confirmationCode": "ticket-general-abcdef-12345"},
                            headers=key, status=422)


def wrong_date(client, store):
    return present(client, sell(client, OPEN_DAY), 409)


def client_with(store, sections):
    """A client of its own over the same store and users, its config with `sections`."""
    users = "".join(f"{name} = {name}:{quick_hash(password)}\n"
                    for name, password in PASSWORDS.items())
    return webtest.TestApp(museum.create_app(museum.parse_config(
        f"[museum]\ntimezone = UTC\n{sections}[users]\n{users}"), store=store,
        clock=lambda: NOW))


def too_early(client, store):
    """A ticket for today's 14:30 slot, at conftest's NOW (noon), on a museum with timed
    entry."""
    timed = client_with(store, "[hours]\nslot_minutes = 30\n")
    ticket = timed.post_json(TICKETS, {"ticketType": "general", "ticketDate": TODAY,
                                       "email": "ada@example.org", "entryTime": "14:30"},
                             headers=VISITOR, status=201).json
    return present(timed, ticket, 409)


def cancelled_ticket(client, store):
    event = client.post_json(EVENTS, {**EVENT, "dates": [TODAY]}, headers=ADMIN,
                             status=201).json
    ticket = sell(client, TODAY, event)
    client.delete(f"{EVENTS}/{event['eventId']}", headers=ADMIN, status=204)
    return present(client, ticket, 410)


def unpaid_ticket(client, store):
    order = sell_order(store, ["adult"], status="pending",
                       expires_at=rfc3339(NOW + timedelta(minutes=15)))
    return present(client, order["tickets"][0], 409)


def void_ticket(client, store):
    ticket = sell(client, TODAY)
    client.delete(f"{TICKETS}/{ticket['ticketId']}", headers=ADMIN, status=204)
    return present(client, ticket, 410)


def void_image(client, store):
    ticket = sell(client, TODAY)
    client.delete(f"{TICKETS}/{ticket['ticketId']}", headers=ADMIN, status=204)
    return client.get(f"{TICKETS}/{ticket['ticketId']}/qr", headers=ADMIN, status=410)


def forged_ticket(client, store):
    well_formed = f"MUSEUM1:{uuid.uuid4()}:ticket-general-abcdef-12345:{'0' * 20}"
    return client.post_json(ADMISSIONS, {"code": well_formed}, headers=GATE, status=422)


def unreadable(client, store):
    return client.post_json(ADMISSIONS, {"code": "WIFI:S:Museum;T:WPA;P:guest;;"},
                            headers=GATE, status=422)


def gone(client, store):
    event = client.post_json(EVENTS, EVENT, headers=ADMIN, status=201).json
    ticket = client.post_json(TICKETS, {"ticketType": "event", "ticketDate": OPEN_DAY,
                                        "email": "ada@example.org",
                                        "eventId": event["eventId"]}, headers=ADMIN).json
    client.delete(f"{EVENTS}/{event['eventId']}", headers=ADMIN, status=204)
    return client.get(f"{TICKETS}/{ticket['ticketId']}/qr", headers=ADMIN, status=410)


def event_cancelled(client, store):
    event = client.post_json(EVENTS, EVENT, headers=ADMIN, status=201).json
    client.delete(f"{EVENTS}/{event['eventId']}", headers=ADMIN, status=204)
    return client.get(f"{EVENTS}/{event['eventId']}", headers=VISITOR, status=410)


def content_too_large(client, store):
    body = json.dumps({**EVENT, "eventDescription": "x" * museum_http.BODY_LIMIT}).encode()
    return client.post(EVENTS, body, headers=ADMIN, content_type="application/json",
                       status=413)


def unsupported_media_type(client, store):
    return client.post(EVENTS, json.dumps(EVENT).encode(), headers=ADMIN,
                       content_type="text/plain", status=415)


def too_many_requests(client, store):
    for number in range(10):  # the default [auth] max_failures, each a new guess
        client.get("/v1.1/museum-hours", headers=basic("admin", f"guess {number}"), status=401)
    return client.get("/v1.1/museum-hours", headers=ADMIN, status=429)


def purchase_limit(client, store):
    limited = client_with(store, "[auth]\nvisitor_tickets_per_hour = 1\n")
    sell(limited, OPEN_DAY)
    return limited.post_json(TICKETS, {"ticketType": "general", "ticketDate": OPEN_DAY,
                                       "email": "ada@example.org"}, headers=VISITOR,
                             status=429)


def order_limit(client, store):
    limited = client_with(store, "[auth]\nvisitor_tickets_per_hour = 1\n")
    return limited.post_json(ORDERS, {**ORDER, "items": [{**ORDER["items"][0], "quantity": 2}]},
                             headers=VISITOR, status=429)


def shop_limit(settings):
    """A case: the second order without credentials from one address and for one email,
    past the shop's limit of one per address or per email."""
    def provoke(client, store):
        shop = client_with(store, f"[shop]\nenabled = true\n{settings}")
        shop.post_json(ORDERS, ORDER, status=201)
        return shop.post_json(ORDERS, ORDER, status=429)
    return provoke


def undo_limit(client, store):
    ticket = sell(client, TODAY)
    path = f"{ADMISSIONS}/{ticket['ticketId']}"
    for _ in range(3):
        present(client, ticket, 201)
        client.delete(path, headers=GATE, status=204)
    present(client, ticket, 201)
    return client.delete(path, headers=GATE, status=429)


PAIR = "/v1.1/devices/pair"
SESSION = "/v1.1/devices/session"


def paired_at(store, moment):
    """The pairing code of a gate device added at `moment`."""
    code, pairing = museum_devices.new_pairing(moment)
    store.add_device("door-north", "gate", museum_credentials.hash_key("unused"),
                     "2026-11-22T11:00:00Z", pairing)
    return code


def unknown_pairing_code(client, store):
    return client.post_json(PAIR, {"code": "Xq3v9Jd0bq1mZr2Lw8Ya4g"}, status=404)


def used_pairing_code(client, store):
    code = paired_at(store, NOW)
    client.post_json(PAIR, {"code": code}, status=200)
    return client.post_json(PAIR, {"code": code}, status=410)


def expired_pairing_code(client, store):
    code = paired_at(store, NOW - timedelta(minutes=museum_devices.PAIRING_MINUTES))
    return client.post_json(PAIR, {"code": code}, status=410)


def pairing_limited(client, store):
    for number in range(museum_devices.PAIRING_FAILURES):
        client.post_json(PAIR, {"code": f"guess-{number}"}, status=404)
    return client.post_json(PAIR, {"code": "Xq3v9Jd0bq1mZr2Lw8Ya4g"}, status=429)


def not_a_stored_device(client, store):
    return client.delete(SESSION, headers=GATE, status=409)


def service_unavailable(client, store):
    def unavailable(event_id, cancelled_too=False):
        raise storage.Unavailable("the database is down")

    store.get_event = unavailable
    return client.get(f"{EVENTS}/{uuid.uuid4()}", headers=ADMIN, status=503)


ORDERS = "/v1.1/orders"
ORDER = {"items": [{"ticketType": "general", "ticketDate": OPEN_DAY}],
         "email": "ada@example.org"}


def channel_refused(client, store):
    return client.post_json(ORDERS, {**ORDER, "channel": "desk", "payment": "cash"},
                            headers=VISITOR, status=403)


def order_not_pending(client, store):
    made = client.post_json(ORDERS, ORDER, headers=VISITOR, status=201).json
    return client.delete(f"{ORDERS}/{made['orderId']}", headers=VISITOR, status=409)


def order_expired(client, store):
    return client.post(f"{ORDERS}/{ended_hold(store)}/confirm",
                       headers=ADMIN, status=409)


def order_paid_otherwise(client, store):
    paid = sell_order(store, ["adult"], channel="desk", payment="card", created_by="desk")
    return client.post_json(f"{ORDERS}/{paid['orderId']}/payment", {"payment": "cash"},
                            headers=DESK, status=409)


def order_voided_not_due(client, store):
    due = sell_order(store, ["adult"], payment="due", created_by="anyone")
    client.delete(f"{ORDERS}/{due['orderId']}", headers=ADMIN, status=204)
    return client.post_json(f"{ORDERS}/{due['orderId']}/payment", {"payment": "cash"},
                            headers=DESK, status=409)


def order_gone(client, store):
    return client.get(f"{ORDERS}/{ended_hold(store)}/qr", headers=ADMIN,
                      status=410)


CASES = {
    "BadRequest": bad_request,
    "Unauthorized": unauthorized,
    "Forbidden": forbidden,
    "NeedsGateRole": needs_gate_role,
    "NeedsDeskRole": needs_desk_role,
    "NotTodaysTicket": not_todays_ticket,
    "NotTodaysReport": not_todays_report,
    "MessageBusy": message_busy,
    "NotFound": not_found,
    "UndoNotAllowed": undo_not_allowed,
    "NotAdmitted": not_admitted,
    "UnknownTicket/unknown": unknown_ticket,
    "PurchaseConflict/key-reused": conflict,
    "PurchaseConflict/sold-out": sold_out,
    "EventChangeRefused/dates-sold": dates_sold,
    "EventChangeRefused/capacity-below-sold": capacity_below_sold,
    "NotAdmittable/already-admitted": already_admitted,
    "NotAdmittable/same-device": same_device,
    "NotAdmittable/double-entry": double_entry,
    "NotAdmittable/wrong-date": wrong_date,
    "NotAdmittable/too-early": too_early,
    "NotAdmittable/unpaid": unpaid_ticket,
    "Gone/cancelled": gone,
    "Gone/void": void_image,
    "EventCancelled": event_cancelled,
    "DeadTicket/cancelled": cancelled_ticket,
    "DeadTicket/void": void_ticket,
    "ForgedTicket/forged": forged_ticket,
    "ForgedTicket/unreadable": unreadable,
    "ForgedTicket/key-reused": key_reused,
    "ContentTooLarge": content_too_large,
    "UnsupportedMediaType": unsupported_media_type,
    "TooManyRequests": too_many_requests,
    "PurchaseLimitReached/too-many-logins": too_many_requests,
    "PurchaseLimitReached/purchase-limit": purchase_limit,
    "OrderLimitReached/too-many-logins": too_many_requests,
    "OrderLimitReached/purchase-limit": order_limit,
    "OrderLimitReached/address-limit": shop_limit("orders_per_hour = 1\n"),
    "OrderLimitReached/email-limit": shop_limit("orders_per_email_per_day = 1\n"),
    "UndoLimitReached/too-many-logins": too_many_requests,
    "UndoLimitReached/undo-limit": undo_limit,
    "ServiceUnavailable": service_unavailable,
    "UnknownPairingCode": unknown_pairing_code,
    "PairingCodeSpent/used": used_pairing_code,
    "PairingCodeSpent/expired": expired_pairing_code,
    "PairingLimited": pairing_limited,
    "NotAStoredDevice": not_a_stored_device,
    "ChannelRefused": channel_refused,
    "OrderConflict/not-pending": order_not_pending,
    "OrderConflict/expired": order_expired,
    "OrderGone": order_gone,
    "OrderNotDue/paid": order_paid_otherwise,
    "OrderNotDue/voided": order_voided_not_due,
}


def problem_media(name):
    """The problem+json content of `name` under components/responses, or None."""
    return DOCUMENT["components"]["responses"][name].get("content", {}).get(
        "application/problem+json")


def problem_examples():
    """{name under components/responses, with `/` and the example's name where it has
    named examples: the problem+json example}."""
    found = {}
    for name in DOCUMENT["components"]["responses"]:
        media = problem_media(name) or {}
        if "example" in media:
            found[name] = media["example"]
        for example_name, example in media.get("examples", {}).items():
            found[f"{name}/{example_name}"] = example["value"]
    return found


def test_every_problem_example_has_a_case():
    assert set(problem_examples()) == set(CASES)


@pytest.mark.parametrize("name", CASES)
def test_the_example_is_what_the_service_answers(name, make_client, config, store):
    client = make_client(config)
    res = CASES[name](client, store)
    assert res.content_type == "application/problem+json"
    example = problem_examples()[name]
    assert res.json.keys() == example.keys()
    answered, shown = res.json, example
    if name in DETAIL_NAMES_A_DAY:
        answered, shown = ({**body, "detail": re.sub(r"\d{4}-\d\d-\d\d", "DAY", body["detail"])}
                           for body in (res.json, example))
    assert {key: value for key, value in answered.items() if key not in PARTICULAR} == {
        key: value for key, value in shown.items() if key not in PARTICULAR}
    schema = problem_media(name.partition("/")[0])["schema"]
    assert schema_errors(schema, res.json) == []


def test_operations_refer_to_the_examples_checked_here():
    """Every error response of an operation is one of the shared ones, so checking those
    checks every error example the description shows."""
    shared = DOCUMENT["components"]["responses"]
    examples = problem_examples()
    for _, _, operation in operations().values():
        for status, response in operation["responses"].items():
            if status[0] in "45":
                name = response["$ref"].rsplit("/", 1)[1]
                assert name in shared
                assert resolve(response)["content"]
                # Listed under the status its examples have.
                assert {example["status"] for key, example in examples.items()
                        if key.partition("/")[0] == name} <= {int(status)}, name

"""A void's reason and a payment taken at the desk: the storage contract on sqlite and
PostgreSQL (the reason kept with a voided ticket and order, a payment due marked paid once,
the order.paid webhook queued with it and no reason in any webhook), then the API as WebTest
drives it (`DELETE` with and without a body, `voidReason` for the staff only, `POST
/orders/{orderId}/payment` with its retry and every refusal, the report unchanged)."""

import json

import pytest

import storage
from conftest import ADMIN, DESK, GATE, TODAY, VISITOR, assert_problem
from test_order_storage import AFTER_HOLD, DAY, START, general, held, order
from test_storage import backend, store, ticket  # noqa: F401 (fixtures)
from test_webhooks import add_receiver
from ticketing import OPEN_DAY, ended_hold, sell_order

ORDERS = "/v1.1/orders"
TICKETS = "/v1.1/tickets"
REASON = "Visitor fell ill; refunded in cash"


def deliveries(store, event_type):
    """The payloads of the queued webhook deliveries of `event_type`."""
    payloads = [message["payload"] for message in store.list_messages("queued")
                if message["kind"] == storage.WEBHOOK_MESSAGE]
    return [payload for payload in payloads if payload["type"] == event_type]


def due_order(store, status="confirmed", **changes):
    """An order booked on the shop to be paid at the desk (20.00 EUR), as read back."""
    return store.create_order(order(status=status, payment=storage.PAYMENT_DUE, **changes),
                              [general(price=12), general(price=8)], START)


# -- the store -------------------------------------------------------------------------------

def test_a_ticket_keeps_its_voids_reason_and_only_the_first(store):
    add_receiver(store, "https://hooks.example.org/museum")
    sold, _ = store.create_ticket(ticket())
    assert store.get_ticket(sold["ticketId"])["voidReason"] is None
    assert store.void_ticket(sold["ticketId"], START, REASON) is True
    assert store.void_ticket(sold["ticketId"], AFTER_HOLD, "Another reason") is False
    assert store.get_ticket(sold["ticketId"])["voidReason"] == REASON
    # The reason may name a person: no webhook carries it.
    assert deliveries(store, "ticket.voided") == [{
        "type": "ticket.voided", "timestamp": START,
        "data": {"ticketId": sold["ticketId"], "voidedAt": START}}]


def test_a_void_without_a_reason_keeps_none(store):
    sold, _ = store.create_ticket(ticket())
    store.void_ticket(sold["ticketId"], START)
    voided = store.get_ticket(sold["ticketId"])
    assert (voided["voidedAt"], voided["voidReason"]) == (START, None)


def test_an_orders_void_keeps_its_reason_on_the_order_and_the_tickets_it_voids(store):
    add_receiver(store, "https://hooks.example.org/museum")
    made = store.create_order(order(), [general(), general()], START)
    already = made["tickets"][0]["ticketId"]
    store.void_ticket(already, START, "Lost ticket")
    assert store.void_order(made["orderId"], AFTER_HOLD, "Booked twice") is True
    voided = store.get_order(made["orderId"], AFTER_HOLD)
    assert voided["voidReason"] == "Booked twice"
    assert {each["ticketId"]: each["voidReason"] for each in voided["tickets"]} == {
        already: "Lost ticket", made["tickets"][1]["ticketId"]: "Booked twice"}
    assert [payload["data"] for payload in deliveries(store, "order.voided")] == [{
        "orderId": made["orderId"], "ticketIds": [made["tickets"][1]["ticketId"]],
        "voidedAt": AFTER_HOLD}]


def test_a_ticket_read_back_names_its_orders_id(store):
    made = store.create_order(order(), [general()], START)
    assert store.get_ticket(made["tickets"][0]["ticketId"])["orderId"] == made["orderId"]
    sold, _ = store.create_ticket(ticket())
    assert sold["orderId"] is None


def test_a_payment_due_is_marked_paid_once_and_a_retry_writes_nothing(store):
    add_receiver(store, "https://hooks.example.org/museum")
    due = due_order(store)
    report, version = store.sales(DAY, DAY, breakdown=True), store.door_list_version(DAY)
    paid = store.mark_order_paid(due["orderId"], "cash", START)
    assert (paid["payment"], paid["paidAt"], paid["status"]) == ("cash", START, "confirmed")
    # Paid, its tickets change in the door's list (which a door reads them from offline).
    assert store.door_list_version(DAY) > version
    version = store.door_list_version(DAY)
    assert store.mark_order_paid(due["orderId"], "cash", AFTER_HOLD) == paid
    assert store.door_list_version(DAY) == version
    assert store.get_order(due["orderId"], AFTER_HOLD)["paidAt"] == START
    assert deliveries(store, "order.paid") == [{"type": "order.paid", "timestamp": START, "data": {
        "orderId": due["orderId"], "orderCode": due["orderCode"], "payment": "cash",
        "paidAt": START}}]
    # Its tickets were counted, with their prices, when they were booked.
    assert store.sales(DAY, DAY, breakdown=True) == report
    assert report[0]["revenue"] == 20


def test_an_order_without_a_payment_due_is_refused_and_left_as_it_is(store):
    cases = {"another payment": (due_order(store), "confirmed", "cash"),
             "free": (store.create_order(order(), [general()], START), "confirmed", None),
             "paid at the sale": (store.create_order(order(channel="desk", payment="card"),
                                                     [general()], START), "confirmed", "card"),
             "held": (due_order(store, "pending", expires_at="2026-11-30T10:00:00Z"),
                      "pending", "due"),
             "ended": (due_order(store, "pending", expires_at="2026-11-30T09:15:00Z"),
                       "expired", "due")}
    store.mark_order_paid(cases["another payment"][0]["orderId"], "cash", START)
    voided = due_order(store)
    store.void_order(voided["orderId"], START)
    cases["voided"] = voided, "voided", "due"
    cancelled = due_order(store, "pending", expires_at="2026-11-30T10:00:00Z")
    store.cancel_order(cancelled["orderId"], "shop", START)
    cases["cancelled"] = cancelled, "cancelled", "due"
    for name, (made, status, payment) in cases.items():
        before = store.get_order(made["orderId"], AFTER_HOLD)
        with pytest.raises(storage.NotDue) as refused:
            store.mark_order_paid(made["orderId"], "card", AFTER_HOLD)
        assert (refused.value.status, refused.value.payment) == (status, payment), name
        assert store.get_order(made["orderId"], AFTER_HOLD) == before, name
    with pytest.raises(storage.NotFound):
        store.mark_order_paid("3fa85f64-5717-4562-b3fc-2c963f66afa6", "cash", START)


def test_a_held_order_marked_paid_is_refused_before_its_hold_ends(store):
    made = store.create_order(held(payment=storage.PAYMENT_DUE), [general()], START)
    with pytest.raises(storage.NotDue):
        store.mark_order_paid(made["orderId"], "cash", START)


# -- the API: a void's reason ----------------------------------------------------------------

def sell_today(client):
    return client.post_json(TICKETS, {"ticketType": "general", "ticketDate": TODAY,
                                      "email": "ada@example.org"}, headers=ADMIN,
                            status=201).json


def void(client, path, reason=None, headers=DESK, status=204):
    """`DELETE path`, with the body `{"reason": reason}` unless reason is None."""
    if reason is None:
        return client.delete(path, headers=headers, status=status)
    return client.delete(path, json.dumps({"reason": reason}), headers=headers,
                         content_type="application/json", status=status)


def test_a_void_without_a_body_is_as_before(client):
    sold = sell_today(client)
    void(client, f"{TICKETS}/{sold['ticketId']}")
    read = client.get(f"{TICKETS}/{sold['ticketId']}", headers=ADMIN, status=200).json
    assert read["status"] == "void" and "voidReason" not in read


def test_a_void_with_a_reason_shows_it_to_every_staff_read(client):
    sold = sell_today(client)
    void(client, f"{TICKETS}/{sold['ticketId']}", f"  {REASON}\n")
    for staff in (GATE, DESK, ADMIN):
        read = client.get(f"{TICKETS}/{sold['ticketId']}", headers=staff, status=200).json
        assert read["voidReason"] == REASON
    found = client.post_json("/v1.1/admissions/lookup", {"code": sold["confirmationCode"]},
                             headers=DESK, status=200).json["tickets"]
    assert [(each["status"], each["voidReason"]) for each in found] == [("void", REASON)]


@pytest.mark.parametrize("reason, code", [
    ("", "empty"), ("   ", "empty"), ("x" * 201, "too-long"), ("a\x00b", "control-characters"),
    ("two\nlines", "control-characters"), (42, "not-a-string"), (None, "null")])
def test_a_bad_reason_is_refused_naming_it_and_voids_nothing(client, reason, code):
    sold = sell_today(client)
    refused = client.delete(f"{TICKETS}/{sold['ticketId']}", json.dumps({"reason": reason}),
                            headers=DESK, content_type="application/json", status=400)
    assert assert_problem(refused, 400, "reason")["errors"][0]["code"] == code
    assert client.get(f"{TICKETS}/{sold['ticketId']}", headers=DESK,
                      status=200).json["status"] == "valid"


def test_a_reason_of_200_characters_is_kept_and_other_fields_refused(client):
    sold = sell_today(client)
    refused = client.delete(f"{TICKETS}/{sold['ticketId']}", json.dumps({"why": "x"}),
                            headers=DESK, content_type="application/json", status=400)
    assert_problem(refused, 400, "why")
    client.delete(f"{TICKETS}/{sold['ticketId']}", "reason", headers=DESK,
                  content_type="text/plain", status=415)
    void(client, f"{TICKETS}/{sold['ticketId']}", "é" * 200)
    assert client.get(f"{TICKETS}/{sold['ticketId']}", headers=DESK,
                      status=200).json["voidReason"] == "é" * 200


def test_an_admins_order_void_keeps_its_reason_which_only_the_staff_read(client, store):
    made = sell_order(store, ["adult", "child"])
    void(client, f"{ORDERS}/{made['orderId']}", "Booked twice", headers=ADMIN)
    for staff in (GATE, DESK, ADMIN):
        read = client.get(f"{ORDERS}/{made['orderId']}", headers=staff, status=200).json
        assert read["status"] == "voided" and read["voidReason"] == "Booked twice"
        assert {each["voidReason"] for each in read["tickets"]} == {"Booked twice"}
    # Its creator, a buyer's account, reads the void and not the staff's words.
    mine = client.get(f"{ORDERS}/{made['orderId']}", headers=VISITOR, status=200).text
    assert "voidReason" not in mine and "Booked twice" not in mine


def test_the_desk_voids_an_order_of_today_and_no_other(client, store):
    today = sell_order(store, ["adult", "child"])
    void(client, f"{ORDERS}/{today['orderId']}", "Left before the visit")
    read = client.get(f"{ORDERS}/{today['orderId']}", headers=DESK, status=200).json
    assert (read["status"], read["voidReason"]) == ("voided", "Left before the visit")
    assert {each["status"] for each in read["tickets"]} == {"void"}
    # One ticket on another day is enough: that order is an admin's, and stays whole.
    later = sell_order(store, ["adult", ("child", OPEN_DAY)])
    refused = void(client, f"{ORDERS}/{later['orderId']}", "Booked twice", status=403)
    assert "orders whose tickets all are" in assert_problem(refused, 403)["detail"]
    read = client.get(f"{ORDERS}/{later['orderId']}", headers=DESK, status=200).json
    assert read["status"] == "confirmed" and "voidReason" not in read
    void(client, f"{ORDERS}/{later['orderId']}", "Booked twice", headers=ADMIN)


def test_a_cancel_keeps_no_reason_and_refuses_one(client):
    held_order = client.post_json(ORDERS, {"items": [{"ticketType": "general",
                                                      "ticketDate": OPEN_DAY}],
                                           "email": "ada@example.org", "hold": True},
                                  headers=VISITOR, status=201).json
    path = f"{ORDERS}/{held_order['orderId']}"
    refused = void(client, path, "Changed my mind", headers=VISITOR, status=400)
    assert assert_problem(refused, 400, "reason")["errors"][0]["code"] == "not-allowed"
    assert client.get(path, headers=VISITOR, status=200).json["status"] == "pending"
    void(client, path, headers=VISITOR)
    assert client.get(path, headers=ADMIN, status=200).json["status"] == "cancelled"


# -- the API: a payment due marked paid ------------------------------------------------------

def pay(client, order_id, payment="cash", headers=DESK, status=200):
    return client.post_json(f"{ORDERS}/{order_id}/payment", {"payment": payment},
                            headers=headers, status=status)


def test_the_desk_marks_a_payment_due_paid_and_a_retry_answers_the_same(client, store):
    due = sell_order(store, ["adult", "child"], payment="due", created_by="anyone")
    report = client.get("/v1.1/reports/sales", {"breakdown": "true"}, headers=ADMIN,
                        status=200).json
    paid = pay(client, due["orderId"]).json
    assert (paid["payment"], paid["status"], paid["total"], paid["currency"]) == (
        "cash", "confirmed", 20, "EUR")
    assert paid["paidAt"] == "2026-11-22T12:00:00Z"
    assert pay(client, due["orderId"]).json == paid
    assert client.get(f"{ORDERS}/{due['orderId']}", headers=GATE, status=200).json == paid
    assert client.get("/v1.1/reports/sales", {"breakdown": "true"}, headers=ADMIN,
                      status=200).json == report
    # An admin marks one paid by card as well.
    other = sell_order(store, ["adult"], payment="due", created_by="anyone")
    assert pay(client, other["orderId"], "card", headers=ADMIN).json["payment"] == "card"


def not_due_detail(client, order_id):
    return assert_problem(pay(client, order_id, status=409), 409)


def test_an_order_without_a_payment_due_is_409_not_due(client, store):
    paid_cash = sell_order(store, ["adult"], payment="due", created_by="anyone")
    pay(client, paid_cash["orderId"])
    voided = sell_order(store, ["adult"], payment="due", created_by="anyone")
    void(client, f"{ORDERS}/{voided['orderId']}", headers=ADMIN)
    cases = {
        paid_cash["orderId"]: ("card", "The order has no payment due: its payment is cash."),
        sell_order(store, ["adult"])["orderId"]: (
            "cash", "The order has no payment due: it was not booked to be paid at the "
                    "desk."),
        sell_order(store, ["adult"], channel="desk", payment="card", created_by="desk")[
            "orderId"]: ("card", "The order has no payment due: its payment is card."),
        sell_order(store, ["adult"], status="pending", expires_at="2026-11-22T12:15:00Z",
                   payment="due")["orderId"]: (
            "cash", "The order has no payment due: it is pending."),
        ended_hold(store): ("cash", "The order has no payment due: it is expired."),
        voided["orderId"]: ("cash", "The order has no payment due: it is voided.")}
    for order_id, (payment, detail) in cases.items():
        refused = assert_problem(pay(client, order_id, payment, status=409), 409)
        assert (refused["reason"], refused["detail"]) == ("not-due", detail)
    assert client.get(f"{ORDERS}/{paid_cash['orderId']}", headers=ADMIN,
                      status=200).json["payment"] == "cash"


@pytest.mark.parametrize("body, field, code", [
    ({"payment": "free"}, "payment", "not-one-of"), ({}, "payment", "required"),
    ({"payment": "cash", "paidAt": "now"}, "paidAt", "unknown-field")])
def test_a_bad_payment_body_is_400_naming_the_field(client, store, body, field, code):
    due = sell_order(store, ["adult"], payment="due", created_by="anyone")
    refused = client.post_json(f"{ORDERS}/{due['orderId']}/payment", body, headers=DESK,
                               status=400)
    assert {"field": field, "code": code} in [
        {"field": error["field"], "code": error["code"]}
        for error in assert_problem(refused, 400, field)["errors"]]
    assert client.get(f"{ORDERS}/{due['orderId']}", headers=DESK,
                      status=200).json["payment"] == "due"


def test_only_the_desk_and_admins_mark_paid_and_an_unknown_order_is_404(client, store):
    due = sell_order(store, ["adult"], payment="due", created_by="visitor")
    for role in (VISITOR, GATE):
        assert_problem(pay(client, due["orderId"], headers=role, status=403), 403)
    assert_problem(client.post_json(f"{ORDERS}/{due['orderId']}/payment",
                                    {"payment": "cash"}, status=401), 401)
    assert_problem(pay(client, "3fa85f64-5717-4562-b3fc-2c963f66afa6", status=404), 404)
    assert_problem(pay(client, "not-an-id", status=400), 400)
    assert client.get(f"{ORDERS}/{due['orderId']}", headers=ADMIN,
                      status=200).json["payment"] == "due"

"""The door's "collect": an order booked on the shop to be paid at the desk (`"payment":
"due"`) is admitted as any order, and the admission says what to collect, the whole order's
price, once per order and day: with the first of its tickets admitted that day, whether the
order's code admits them all or each ticket comes alone. A paid or free order says nothing
of money. The day's list carries the same for the page to say it offline. Orders are made
through the shop without credentials, or straight through the store (`ticketing.sell_order`);
today is conftest's NOW, Sunday 2026-11-22 12:00 UTC."""

import pytest
import webtest

import museum
from conftest import ADMIN, DESK, GATE, TODAY, assert_problem
from described import schema_errors
from ticketing import OPEN_DAY, sell_order

ADMISSIONS = "/v1.1/admissions"
LIST = "/v1.1/admissions/list"
# Adults pay 12.50 at the desk, children nothing: a family of four owes 25.00.
SHOP = ("[categories]\nadult = Adult | 12.50\nchild = Child | 0 | note: under 14: check age\n"
        "[shop]\nenabled = true\npay_at_desk = true\n")
FAMILY_OWES = {"amount": "25.00", "currency": "EUR"}


@pytest.fixture
def client(config_text, store, clock):
    return webtest.TestApp(museum.create_app(museum.parse_config(config_text + SHOP),
                                             store=store, clock=clock), lint=True)


def book_on_the_shop(client, adults=2, children=2, day=TODAY):
    """An order made as the booking page makes it, without credentials."""
    items = [{"ticketType": "general", "ticketDate": day, "category": category,
              "quantity": quantity}
             for category, quantity in (("adult", adults), ("child", children)) if quantity]
    return client.post_json("/v1.1/orders", {"items": items, "email": "family@example.org"},
                            status=201).json


def admit_code(client, code, status=201, **headers):
    return client.post_json(ADMISSIONS, {"confirmationCode": code}, headers={**GATE, **headers},
                            status=status).json


def test_the_first_ticket_of_an_order_due_says_collect_the_whole_order_once(client):
    order = book_on_the_shop(client)
    assert order["payment"] == "due"
    first, second, *_ = order["tickets"]
    admitted = admit_code(client, first["confirmationCode"])
    assert admitted["result"] == "admitted" and admitted["collect"] == FAMILY_OWES
    assert schema_errors({"$ref": "#/components/schemas/Admission"}, admitted) == []
    # The family's second ticket, scanned alone (in the same second): the money was asked
    # for with the first.
    again = admit_code(client, second["confirmationCode"])
    assert again["result"] == "admitted" and "collect" not in again
    # Scanned twice, the first ticket is refused as always, with nothing to collect.
    refused = assert_problem(client.post_json(ADMISSIONS, {
        "confirmationCode": first["confirmationCode"]}, headers=GATE, status=409), 409)
    assert refused["sameDevice"] is True and "collect" not in refused


def test_the_orders_code_admits_the_family_and_says_collect(client):
    order = book_on_the_shop(client)
    admitted = admit_code(client, order["orderCode"])
    assert (admitted["admitted"], admitted["collect"]) == (4, FAMILY_OWES)
    assert all("collect" not in ticket for ticket in admitted["tickets"])
    assert schema_errors({"$ref": "#/components/schemas/Admission"}, admitted) == []


def test_the_orders_code_after_one_ticket_admits_the_rest_without_collect(client, clock):
    order = book_on_the_shop(client)
    assert admit_code(client, order["tickets"][0]["confirmationCode"])["collect"] == \
        FAMILY_OWES
    clock.advance(seconds=30)
    rest = admit_code(client, order["orderCode"])
    assert rest["admitted"] == 3 and "collect" not in rest


def test_a_replayed_scan_answers_its_collect_again(client):
    order = book_on_the_shop(client)
    key = {"Idempotency-Key": "scan-1"}
    first = admit_code(client, order["tickets"][0]["confirmationCode"], **key)
    assert admit_code(client, order["tickets"][0]["confirmationCode"], **key) == first
    assert first["collect"] == FAMILY_OWES


def test_a_voided_ticket_is_not_collected(client, store):
    order = book_on_the_shop(client)
    adult = next(ticket for ticket in order["tickets"] if ticket["category"] == "adult")
    client.delete(f"/v1.1/tickets/{adult['ticketId']}", headers=ADMIN, status=204)
    child = next(ticket for ticket in order["tickets"] if ticket["category"] == "child")
    assert admit_code(client, child["confirmationCode"])["collect"] == {
        "amount": "12.50", "currency": "EUR"}


def test_an_order_of_two_days_is_collected_on_each_while_it_is_still_due(client, store,
                                                                         clock):
    """Not marked paid after the first day, it is asked for again on the next: the door
    says what the store says, once a day."""
    order = sell_order(store, ["adult", ("child", OPEN_DAY)], payment="due")
    owed = {"amount": "20.00", "currency": "EUR"}
    assert admit_code(client, order["tickets"][0]["confirmationCode"])["collect"] == owed
    clock.advance(days=2)  # OPEN_DAY
    assert admit_code(client, order["tickets"][1]["confirmationCode"])["collect"] == owed


@pytest.mark.parametrize("changes", [
    {"channel": "desk", "payment": "cash"},  # paid at the desk when sold
    {"payment": None},  # a partner's shop took the payment
], ids=["paid", "paid-online"])
def test_a_paid_order_says_nothing_of_money(client, store, changes):
    order = sell_order(store, ["adult", "adult"], **changes)
    assert "collect" not in admit_code(client, order["tickets"][0]["confirmationCode"])
    assert "collect" not in admit_code(client, order["orderCode"])
    listed = client.get(LIST, headers=GATE, status=200).json
    assert all(len(row) <= listed["columns"].index("orderId") for row in listed["tickets"])


def test_an_order_the_desk_marked_paid_says_nothing_of_money_online_or_in_the_list(client):
    order = book_on_the_shop(client)
    listed = client.get(LIST, headers=GATE, status=200).json
    assert all(len(row) == len(listed["columns"]) for row in listed["tickets"])
    client.post_json(f"/v1.1/orders/{order['orderId']}/payment", {"payment": "cash"},
                     headers=DESK, status=200)
    # The list's rows of its tickets change: the page no longer asks for it offline.
    changes = client.get(LIST, params={"since": listed["cursor"]}, headers=GATE,
                         status=200).json
    assert {row[0] for row in changes["tickets"]} == {
        ticket["ticketId"] for ticket in order["tickets"]}
    assert all(len(row) <= changes["columns"].index("orderId") for row in changes["tickets"])
    assert "collect" not in admit_code(client, order["orderCode"])


def test_a_free_order_says_nothing_of_money(client):
    order = book_on_the_shop(client, adults=0, children=3)
    assert "payment" not in order
    admitted = admit_code(client, order["orderCode"])
    assert admitted["admitted"] == 3 and "collect" not in admitted


def test_a_ticket_sold_alone_says_nothing_of_money(client):
    ticket = client.post_json("/v1.1/tickets", {
        "ticketType": "general", "ticketDate": TODAY, "email": "ada@example.org",
        "category": "adult"}, headers=ADMIN, status=201).json
    assert "collect" not in admit_code(client, ticket["confirmationCode"])


def test_the_list_carries_the_order_and_what_to_collect_for_the_page_offline(client):
    order = book_on_the_shop(client)
    paid_alone = client.post_json("/v1.1/tickets", {
        "ticketType": "general", "ticketDate": TODAY, "email": "ada@example.org"},
        headers=ADMIN, status=201).json
    admit_code(client, order["tickets"][0]["confirmationCode"])
    listed = client.get(LIST, headers=GATE, status=200).json
    column = {name: listed["columns"].index(name) for name in listed["columns"]}
    rows = {row[0]: row for row in listed["tickets"]}
    for ticket in order["tickets"]:
        row = rows[ticket["ticketId"]]
        assert row[column["orderId"]] == order["orderId"]
        assert row[column["collect"]] == FAMILY_OWES
    admitted = rows[order["tickets"][0]["ticketId"]]
    assert admitted[column["status"]] == "admitted" and admitted[column["admittedBy"]] == "gate"
    waiting = rows[order["tickets"][1]["ticketId"]]
    assert waiting[column["status"]] == "valid"
    assert waiting[column["admittedAt"]] is None and waiting[column["admittedBy"]] is None
    assert len(rows[paid_alone["ticketId"]]) == column["admittedAt"]  # as before: no order
    assert schema_errors({"$ref": "#/components/schemas/AdmissionList"}, listed) == []

"""Orders at the door: an order's code, typed or as its QR, admits all its tickets valid
today in one scan; a ticket of an order not paid yet is refused as `unpaid`, alone or by its
order; an order cancelled, voided or whose hold ended is void. Orders are sold through the
store (`ticketing.sell_order`); today is conftest's NOW, Sunday 2026-11-22 12:00 UTC."""

from concurrent.futures import ThreadPoolExecutor

import pytest

import museum
import museum_door
from conftest import ADMIN, GATE, NOW, TODAY, assert_problem
from described import schema_errors
from test_storage import backend, store as contract_store  # noqa: F401 (fixtures)
from ticketing import OPEN_DAY, sell_order

ADMISSIONS = "/v1.1/admissions"
LOOKUP = f"{ADMISSIONS}/lookup"
LIST = "/v1.1/admissions/list"
CATEGORIES = ("[categories]\nadult = Adult\nchild = Child | 0 | note: under 14: check age\n"
              "reduced = Reduced | 8.50 | note: check student or senior ID\n")
HOLD_LASTS = "2026-11-22T12:10:00Z"  # a hold still on at NOW
HOLD_ENDED = "2026-11-22T11:59:00Z"
ADMITTED_AT = "2026-11-22T12:00:00Z"


@pytest.fixture
def client(make_client, config_text):
    return make_client(museum.parse_config(config_text + CATEGORIES))


def family(store, **changes):
    return sell_order(store, ["adult", "adult", "child", "child"], **changes)


def order_qr(store, order):
    return museum_door.qr_text(store.setting("qr_secret"), order["orderId"], order["orderCode"])


def type_code(client, code, status, **more):
    return client.post_json(ADMISSIONS, {"confirmationCode": code, **more}, headers=GATE,
                            status=status)


def results(answer):
    return sorted(ticket["result"] for ticket in answer["tickets"])


def test_an_orders_code_admits_the_family_with_each_category_and_its_note(client, store):
    order = family(store)
    answer = type_code(client, order["orderCode"].upper(), 201).json
    assert answer["result"] == "admitted" and answer["admitted"] == 4
    assert answer["orderCode"] == order["orderCode"]
    assert "email" not in str(answer)
    by_id = {ticket["ticketId"]: ticket for ticket in answer["tickets"]}
    assert set(by_id) == {ticket["ticketId"] for ticket in order["tickets"]}
    child = next(ticket for ticket in answer["tickets"] if ticket["category"] == "child")
    assert child == {**child, "result": "admitted", "categoryLabel": "Child",
                     "doorNote": "under 14: check age", "admittedAt": ADMITTED_AT,
                     "admittedBy": "gate"}
    adult = next(ticket for ticket in answer["tickets"] if ticket["category"] == "adult")
    assert adult["categoryLabel"] == "Adult" and "doorNote" not in adult
    for ticket in order["tickets"]:
        assert store.get_ticket(ticket["ticketId"])["admittedBy"] == "gate"


def test_an_order_scanned_again_is_refused_with_each_ticket_already_admitted(client, store):
    order = family(store)
    type_code(client, order["orderCode"], 201)
    again = assert_problem(client.post_json(ADMISSIONS, {"code": order_qr(store, order)},
                                            headers=ADMIN, status=409), 409)
    assert again["result"] == "already-admitted" and again["admitted"] == 0
    assert results(again) == ["already-admitted"] * 4
    assert "admitted before" in again["detail"]


def test_the_orders_qr_and_its_random_part_admit_it_too(client, store):
    by_qr, by_digits = family(store), family(store)
    assert client.post_json(ADMISSIONS, {"code": order_qr(store, by_qr)}, headers=GATE,
                            status=201).json["admitted"] == 4
    digits = by_digits["orderCode"].removeprefix("order-")
    assert type_code(client, f"  {digits} ", 201).json["admitted"] == 4


def test_a_forged_orders_qr_is_refused(client, store):
    order, other = family(store), family(store)
    forged = museum_door.qr_text("another secret", order["orderId"], order["orderCode"])
    assert assert_problem(client.post_json(ADMISSIONS, {"code": forged}, headers=GATE,
                                           status=422), 422)["result"] == "forged"
    # A genuine tag over another order's id and this order's code cannot be made; a
    # genuine QR of one order never admits another.
    swapped = museum_door.qr_text(store.setting("qr_secret"), other["orderId"],
                                  order["orderCode"])
    assert assert_problem(client.post_json(ADMISSIONS, {"code": swapped}, headers=GATE,
                                           status=422), 422)["result"] == "forged"


def test_only_todays_tickets_of_an_order_are_admitted_and_the_others_say_why(client, store):
    order = sell_order(store, ["adult", ("child", OPEN_DAY)])
    answer = type_code(client, order["orderCode"], 201).json
    assert answer["admitted"] == 1
    assert results(answer) == ["admitted", "wrong-date"]
    again = assert_problem(type_code(client, order["orderCode"], 409), 409)
    assert results(again) == ["already-admitted", "wrong-date"]
    later = sell_order(store, [("adult", OPEN_DAY)])
    refused = assert_problem(type_code(client, later["orderCode"], 409), 409)
    assert refused["result"] == "wrong-date" and refused["detail"] == \
        "No ticket of this order is for today."


def test_a_ticket_scanned_alone_then_its_order_admits_the_rest(client, store):
    order = family(store)
    first = order["tickets"][0]
    type_code(client, first["confirmationCode"], 201)
    answer = type_code(client, order["orderCode"], 201).json
    assert answer["admitted"] == 3
    assert results(answer) == ["admitted"] * 3 + ["already-admitted"]


def test_an_unpaid_order_is_refused_whole_and_ticket_by_ticket_until_confirmed(client, store):
    order = family(store, status="pending", expires_at=HOLD_LASTS)
    refused = assert_problem(type_code(client, order["orderCode"], 409), 409)
    assert refused["result"] == "unpaid" and "not paid" in refused["detail"]
    assert results(refused) == ["unpaid"] * 4
    alone = assert_problem(type_code(client, order["tickets"][0]["confirmationCode"], 409),
                           409)
    assert alone["result"] == "unpaid" and alone["category"] == "adult"
    assert store.get_ticket(order["tickets"][0]["ticketId"])["admittedAt"] is None
    store.confirm_order(order["orderId"], ADMITTED_AT)
    assert type_code(client, order["orderCode"], 201).json["admitted"] == 4


@pytest.mark.parametrize("end", ["expired", "cancelled", "voided"])
def test_an_order_expired_cancelled_or_voided_is_void_at_the_door(client, store, end):
    order = family(store, status="pending",
                   expires_at=HOLD_ENDED if end == "expired" else HOLD_LASTS)
    if end == "cancelled":
        store.cancel_order(order["orderId"], "visitor", ADMITTED_AT)
    elif end == "voided":
        store.void_order(order["orderId"], ADMITTED_AT)
    refused = assert_problem(type_code(client, order["orderCode"], 410), 410)
    assert refused["result"] == "void"
    alone = assert_problem(client.post_json(ADMISSIONS, {"code": museum_door.qr_text(
        store.setting("qr_secret"), order["tickets"][1]["ticketId"],
        order["tickets"][1]["confirmationCode"])}, headers=GATE, status=410), 410)
    assert alone["result"] == "void"


def test_an_orders_scan_replayed_with_its_key_answers_what_it_did(client, store):
    order = family(store)
    key = {**GATE, "Idempotency-Key": "scan-order-1"}
    first = client.post_json(ADMISSIONS, {"confirmationCode": order["orderCode"]},
                             headers=key, status=201).json
    again = client.post_json(ADMISSIONS, {"confirmationCode": order["orderCode"]},
                             headers=key, status=201).json
    assert again == first
    history = client.get(f"{ADMISSIONS}/{order['tickets'][0]['ticketId']}", headers=GATE,
                         status=200).json["history"]
    assert [entry["action"] for entry in history] == ["admitted"]


def test_an_orders_queued_scan_is_admitted_at_its_scan_time(client, store):
    order = family(store)
    answer = type_code(client, order["orderCode"], 201,
                       scannedAt="2026-11-22T11:58:00Z").json
    assert {ticket["admittedAt"] for ticket in answer["tickets"]} == {"2026-11-22T11:58:00Z"}


def test_an_unknown_order_code_is_unknown_and_counts_as_a_guess(client, store):
    refused = assert_problem(type_code(client, museum_door.new_order_code(), 404), 404)
    assert refused["result"] == "unknown"
    assert store.guesses("gate")[0] == 1


def test_lookup_lists_an_orders_tickets_with_its_code_to_admit_them_all(client, store):
    order = sell_order(store, ["adult", "child", ("child", OPEN_DAY)])
    found = client.post_json(LOOKUP, {"code": order["orderCode"]}, headers=GATE,
                             status=200).json["tickets"]
    assert len(found) == 2
    assert {ticket["orderCode"] for ticket in found} == {order["orderCode"]}
    assert {ticket["categoryLabel"] for ticket in found} == {"Adult", "Child"}
    by_email = client.post_json(LOOKUP, {"email": "family@example.org"}, headers=GATE,
                                status=200).json["tickets"]
    assert {ticket["orderCode"] for ticket in by_email} == {order["orderCode"]}
    held = sell_order(store, ["adult"], status="pending", expires_at=HOLD_LASTS)
    [unpaid] = client.post_json(LOOKUP, {"code": held["orderCode"]}, headers=GATE,
                                status=200).json["tickets"]
    assert unpaid["status"] == "unpaid"


def test_the_door_list_marks_an_unpaid_ticket_until_its_order_is_paid(client, store):
    order = sell_order(store, ["adult"], status="pending", expires_at=HOLD_LASTS)
    listed = client.get(LIST, headers=GATE, status=200).json
    status = listed["columns"].index("status")
    assert [row[status] for row in listed["tickets"]] == ["unpaid"]
    store.confirm_order(order["orderId"], ADMITTED_AT)
    changes = client.get(LIST, params={"since": listed["cursor"]}, headers=GATE,
                         status=200).json
    assert [row[status] for row in changes["tickets"]] == ["valid"]


def test_verify_ticket_tells_an_orders_verdict(client, store):
    order = sell_order(store, ["adult", ("child", OPEN_DAY)])
    entry_times = museum_door.EntryTimes(0, lambda: NOW)
    verdict = museum_door.verify_ticket(order["orderCode"], store.setting("qr_secret"), store,
                                        NOW.date(), entry_times)
    assert verdict == f"order {order['orderCode']}: 1 of 2 tickets admittable today"


def test_gates_admitting_one_order_at_once_admit_each_ticket_once(contract_store):
    order = family(contract_store)
    ids = [ticket["ticketId"] for ticket in order["tickets"]]
    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda gate: contract_store.admit_tickets(
            ids, gate, ADMITTED_AT), ["gate-1", "gate-2", "gate-3", "gate-4"]))
    for ticket_id in ids:
        made = [answer[ticket_id] for answer in answers if answer[ticket_id][1]]
        assert len(made) == 1
        assert all(answer[ticket_id][0] == made[0][0] for answer in answers)
    assert contract_store.door_summary(TODAY)["admitted"]["general"] == 4


def test_an_order_key_replayed_in_the_store_answers_the_admissions_it_made(contract_store):
    order = family(contract_store)
    ids = [ticket["ticketId"] for ticket in order["tickets"]]
    key = ("gate", "k1", "fingerprint")
    first = contract_store.admit_tickets(ids, "gate", ADMITTED_AT, key)
    assert contract_store.admit_tickets(ids, "gate", "2026-11-22T12:01:00Z", key) == first
    assert contract_store.door_summary(TODAY)["admitted"]["general"] == 4


def test_an_orders_answers_are_as_the_description_says(client, store):
    order = sell_order(store, ["adult", ("child", OPEN_DAY)])
    admitted = type_code(client, order["orderCode"], 201).json
    assert schema_errors({"$ref": "#/components/schemas/Admission"}, admitted) == []
    refused = type_code(client, order["orderCode"], 409).json
    assert schema_errors({"$ref": "#/components/schemas/DoorProblem"}, refused) == []
    found = client.post_json(LOOKUP, {"code": order["orderCode"]}, headers=GATE,
                             status=200).json
    assert schema_errors({"$ref": "#/components/schemas/LookupResult"}, found) == []

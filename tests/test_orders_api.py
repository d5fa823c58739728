"""Orders over HTTP (issue 30): several tickets in price categories bought all or nothing,
quoted, held while the visitor pays and confirmed or expired (an injected clock), read,
cancelled and voided by the right accounts only, and the old single sale unchanged."""

import pytest
import webtest

import museum
from conftest import ADMIN, DESK, GATE, PASSWORDS, VISITOR, assert_problem, basic
from ticketing import OPEN_DAY, PNG, TICKETS

ORDERS = "/v1.1/orders"
OTHER = basic("other", PASSWORDS["visitor"])  # a second visitor account: another shop
SETTINGS = ("[categories]\nadult = Adult | 12\nchild = Child | 0\n"
            "family = Family | 30 | persons: 4\n"
            "[capacity]\ngeneral_per_day = 10\n")
CLOSED_DAY = "2026-11-23"  # a Monday: closed by the default hours


@pytest.fixture
def make_shop(config_text, password_hashes, store, clock):
    """A client over the app with `settings` beside the categories and capacity."""
    def make(settings=""):
        text = (config_text + f"other = visitor:{password_hashes['visitor']}\n" + SETTINGS
                + settings)
        return webtest.TestApp(museum.create_app(museum.parse_config(text, "test.ini"),
                                                 store=store, clock=clock), lint=True)
    return make


@pytest.fixture
def shop(make_shop):
    return make_shop()


def item(category="adult", quantity=1, **fields):
    return {"ticketType": "general", "ticketDate": OPEN_DAY, "category": category,
            "quantity": quantity, **fields}


def order(*items, **fields):
    return {"items": list(items) or [item()], "email": "family@example.org", **fields}


def make_order(shop, body, headers=VISITOR, status=201, query=""):
    return shop.post_json(ORDERS + query, body, headers=headers, status=status)


def general_sold(shop, day=OPEN_DAY):
    (entry,) = shop.get("/v1.1/availability", params={"startDate": day, "endDate": day},
                        headers=VISITOR, status=200).json
    return entry["general"]["sold"]


# -- an order, its categories and its prices -------------------------------------------------

def test_a_familys_order_is_priced_by_category_and_reads_back_as_made(shop):
    res = make_order(shop, order(item("adult", 2), item("child", 2), phone="+1 555-0100"))
    made = res.json
    assert res.location.endswith(f"{ORDERS}/{made['orderId']}")
    assert made["status"] == "confirmed" and made["channel"] == "web"
    assert made["total"] == 24 and made["currency"] == "EUR"
    assert made["email"] == "family@example.org" and made["phone"] == "+1 555-0100"
    assert "expiresAt" not in made
    assert sorted((t["category"], t["price"]) for t in made["tickets"]) == [
        ("adult", 12), ("adult", 12), ("child", 0), ("child", 0)]
    assert shop.get(f"{ORDERS}/{made['orderId']}", headers=VISITOR, status=200).json == made
    # Each ticket exactly as the ticket's own read gives it.
    for ticket in made["tickets"]:
        assert shop.get(f"{TICKETS}/{ticket['ticketId']}", headers=GATE,
                        status=200).json == ticket
    assert general_sold(shop) == 4


def test_a_category_takes_its_persons_in_places(shop):
    make_order(shop, order(item("family"), item("adult", 2)))
    assert general_sold(shop) == 6


def test_an_order_short_of_one_place_writes_nothing_and_names_what_is_full(shop):
    make_order(shop, order(item("family", 2)))  # 8 of 10 places
    refused = assert_problem(make_order(shop, order(item("adult"), item("child", 2)),
                                        status=409), 409)
    assert refused["reason"] == "sold-out" and refused["date"] == OPEN_DAY
    assert general_sold(shop) == 8
    assert make_order(shop, order(item("adult", 2))).json["total"] == 24


def test_an_event_order_takes_the_events_price_of_each_category(shop):
    event = shop.post_json("/v1.1/special-events", {
        "name": "Night Tour", "location": "Hall", "eventDescription": "Torches.",
        "dates": ["2026-12-05"], "price": 20, "prices": {"child": 5}, "capacity": 7},
        headers=ADMIN, status=201).json
    tickets = [item(category, ticketType="event", ticketDate="2026-12-05",
                    eventId=event["eventId"]) for category in ("adult", "child")]
    quote = make_order(shop, order(*tickets), status=200, query="?simulate=true").json
    made = make_order(shop, order(*tickets)).json
    assert quote["total"] == made["total"] == 25
    assert sorted(t["price"] for t in made["tickets"]) == [5, 20]
    assert {t["eventName"] for t in made["tickets"]} == {"Night Tour"}
    wrong_date = make_order(shop, order(tickets[0], {**tickets[0], "ticketDate": OPEN_DAY}),
                            status=400)
    assert assert_problem(wrong_date, 400)["errors"] == [{
        "field": "items[1].ticketDate", "code": "not-an-event-date",
        "message": "must be one of 2026-12-05"}]
    unknown = {**tickets[0], "eventId": "3fa85f64-5717-4562-b3fc-2c963f66afa6"}
    assert_problem(make_order(shop, order(unknown), status=404), 404)


def test_a_quote_prices_the_order_and_writes_nothing(shop, store):
    res = make_order(shop, order(item("adult", 2), item("family")), status=200,
                     query="?simulate=true")
    assert res.json == {"channel": "web", "total": 54, "currency": "EUR", "tickets": [
        {"ticketType": "general", "ticketDate": OPEN_DAY, "price": price, "currency": "EUR",
         "category": category} for category, price in
        (("adult", 12), ("adult", 12), ("family", 30))]}
    assert general_sold(shop) == 0
    assert store.totals()["tickets"] == 0
    assert_problem(make_order(shop, order(), status=400, query="?simulate=maybe"), 400,
                   "simulate")


# -- holds --------------------------------------------------------------------------------

def test_a_hold_keeps_its_places_until_it_ends_to_the_second(shop, clock):
    held = make_order(shop, order(item("family", 2), hold=True)).json
    assert held["status"] == "pending" and held["expiresAt"] == "2026-11-22T12:15:00Z"
    assert general_sold(shop) == 8
    make_order(shop, order(item("adult", 3)), status=409)
    clock.advance(minutes=14, seconds=59)
    assert general_sold(shop) == 8
    clock.advance(seconds=1)
    assert general_sold(shop) == 0
    expired = shop.get(f"{ORDERS}/{held['orderId']}", headers=VISITOR, status=200).json
    assert expired["status"] == "expired"
    assert {t["status"] for t in expired["tickets"]} == {"void"}
    refused = shop.post(f"{ORDERS}/{held['orderId']}/confirm", headers=VISITOR, status=409)
    assert assert_problem(refused, 409)["reason"] == "expired"
    make_order(shop, order(item("adult", 10)))  # the places are free again


def test_confirming_a_hold_keeps_it_and_is_idempotent(shop, clock):
    held = make_order(shop, order(item("adult", 2), hold=True)).json
    path = f"{ORDERS}/{held['orderId']}/confirm"
    confirmed = shop.post(path, headers=VISITOR, status=200).json
    assert confirmed["status"] == "confirmed" and "expiresAt" not in confirmed
    assert shop.post(path, headers=VISITOR, status=200).json == confirmed
    clock.advance(hours=1)
    assert shop.get(f"{ORDERS}/{held['orderId']}", headers=VISITOR,
                    status=200).json == confirmed
    assert general_sold(shop) == 2


def test_the_hold_lasts_as_configured(make_shop):
    shop = make_shop("[orders]\nhold_minutes = 5\n")
    held = make_order(shop, order(hold=True)).json
    assert held["expiresAt"] == "2026-11-22T12:05:00Z"


# -- who may do what ---------------------------------------------------------------------

def test_another_account_finds_no_such_order(shop):
    made = make_order(shop, order(hold=True)).json
    path = f"{ORDERS}/{made['orderId']}"
    for res in (shop.get(path, headers=OTHER, status=404),
                shop.delete(path, headers=OTHER, status=404),
                shop.post(f"{path}/confirm", headers=OTHER, status=404),
                shop.get(f"{path}/qr", headers=OTHER, status=404)):
        assert_problem(res, 404)
    assert shop.get(path, headers=VISITOR, status=200).json["status"] == "pending"


def test_a_gate_reads_an_order_without_its_buyers_contacts(shop):
    made = make_order(shop, order(phone="+1 555-0100")).json
    path = f"{ORDERS}/{made['orderId']}"
    read = shop.get(path, headers=GATE, status=200).json
    assert "email" not in read and "phone" not in read
    assert read == {name: value for name, value in made.items()
                    if name not in ("email", "phone")}
    assert shop.get(path, headers=ADMIN, status=200).json == made


def test_the_creator_cancels_its_pending_order_and_the_places_are_free(shop):
    held = make_order(shop, order(item("adult", 3), hold=True)).json
    shop.delete(f"{ORDERS}/{held['orderId']}", headers=VISITOR, status=204)
    cancelled = shop.get(f"{ORDERS}/{held['orderId']}", headers=VISITOR, status=200).json
    assert cancelled["status"] == "cancelled"
    assert {t["status"] for t in cancelled["tickets"]} == {"void"}
    assert general_sold(shop) == 0
    refused = shop.post(f"{ORDERS}/{held['orderId']}/confirm", headers=VISITOR, status=409)
    assert assert_problem(refused, 409)["reason"] == "not-pending"


def test_a_confirmed_order_is_the_admins_to_void(shop):
    made = make_order(shop, order(item("adult", 2))).json
    path = f"{ORDERS}/{made['orderId']}"
    refused = shop.delete(path, headers=VISITOR, status=409)
    assert assert_problem(refused, 409)["reason"] == "not-pending"
    shop.delete(path, headers=ADMIN, status=204)
    shop.delete(path, headers=ADMIN, status=204)  # void already: as asked
    voided = shop.get(path, headers=ADMIN, status=200).json
    assert voided["status"] == "voided"
    assert {t["status"] for t in voided["tickets"]} == {"void"}
    assert general_sold(shop) == 0
    (row,) = shop.get("/v1.1/reports/sales", params={"startDate": OPEN_DAY,
                                                     "endDate": OPEN_DAY},
                      headers=ADMIN, status=200).json
    assert (row["sold"], row["void"], row["revenue"]) == (2, 2, 0)


def test_the_desk_sells_without_email_and_only_to_its_roles(shop):
    desk = order(channel="desk", payment="cash")
    del desk["email"]
    made = make_order(shop, desk, headers=ADMIN).json
    assert made["channel"] == "desk" and made["payment"] == "cash"
    assert "email" not in made
    assert make_order(shop, desk, headers=DESK).json["channel"] == "desk"
    for role in (VISITOR, GATE):
        refused = make_order(shop, desk, headers=role, status=403)
        assert assert_problem(refused, 403)["detail"] == \
            "The desk channel needs the desk or admin role."
    assert general_sold(shop) == 2


def test_the_order_code_image_is_a_png_until_the_order_admits_nobody(shop):
    made = make_order(shop, order(item("adult", 2), hold=True)).json
    path = f"{ORDERS}/{made['orderId']}/qr"
    image = shop.get(path, headers=VISITOR, status=200)
    assert image.content_type == "image/png" and image.body.startswith(PNG)
    shop.get(path, headers={**VISITOR, "If-None-Match": image.headers["ETag"]}, status=304)
    shop.get(path, headers=GATE, status=200)
    shop.delete(f"{ORDERS}/{made['orderId']}", headers=VISITOR, status=204)
    assert_problem(shop.get(path, headers=VISITOR, status=410), 410)


# -- what is refused, with its code -------------------------------------------------------

@pytest.mark.parametrize("body, field, code", [
    (order(item(price=5)), "items[0].price", "assigned-by-service"),
    (order(total=24), "total", "assigned-by-service"),
    ({"items": [], "email": "a@example.org"}, "items", "not-a-list"),
    (order(["adult"]), "items", "not-a-list"),
    (order(item(quantity=0)), "items[0].quantity", "out-of-range"),
    (order(item(quantity=True)), "items[0].quantity", "out-of-range"),
    (order(item(quantity=30), item(quantity=21)), "items", "out-of-range"),
    (order(item("senior")), "items[0].category", "unknown-category"),
    (order(item(), item(ticketDate="2026-11-21")), "items[1].ticketDate", "past"),
    (order(item(ticketDate=CLOSED_DAY)), "items[0].ticketDate", "closed"),
    (order(item(ticketType="event")), "items[0].eventId", "required"),
    (order(item(seats=2)), "items[0].seats", "unknown-field"),
    ({"items": [item()]}, "email", "required"),
    (order(payment="card"), "payment", "not-allowed"),
    (order(channel="phone"), "channel", "not-one-of"),
    (order(hold="yes"), "hold", "not-a-boolean"),
])
def test_a_wrong_order_is_refused_naming_the_field_and_its_code(shop, body, field, code):
    refused = assert_problem(make_order(shop, body, status=400), 400, field)
    assert {"field": field, "code": code} in [
        {"field": error["field"], "code": error["code"]} for error in refused["errors"]]
    assert general_sold(shop) == 0


def test_a_retried_order_is_answered_once(shop, store):
    keyed = {**VISITOR, "Idempotency-Key": "cart-41"}
    first = make_order(shop, order(item("adult", 2)), headers=keyed).json
    assert make_order(shop, order(item("adult", 2)), headers=keyed).json == first
    assert general_sold(shop) == 2
    refused = make_order(shop, order(item("adult", 3)), headers=keyed, status=409)
    assert assert_problem(refused, 409)["reason"] == "key-reused"
    ticket_key = {**VISITOR, "Idempotency-Key": "ticket-7"}
    shop.post_json(TICKETS, {"ticketType": "general", "ticketDate": OPEN_DAY,
                             "email": "ada@example.org"}, headers=ticket_key, status=201)
    make_order(shop, order(), headers=ticket_key, status=409)


def test_a_visitors_hourly_limit_counts_every_ticket_of_an_order(make_shop):
    shop = make_shop("[auth]\nvisitor_tickets_per_hour = 3\n")
    refused = make_order(shop, order(item("adult", 4)), status=429)
    assert assert_problem(refused, 429)["detail"].startswith("This credential bought")
    assert refused.headers["Retry-After"] == "3600"
    make_order(shop, order(item("adult", 3)))
    make_order(shop, order(), status=429)


def test_the_single_ticket_sale_is_answered_as_before(shop):
    sold = shop.post_json(TICKETS, {"ticketType": "general", "ticketDate": OPEN_DAY,
                                    "email": "ada@example.org"}, headers=VISITOR,
                          status=201).json
    assert set(sold) == {"message", "ticketId", "ticketType", "ticketDate",
                         "confirmationCode", "price", "currency"}
    assert sold["message"] == "Museum general entry ticket purchased"
    assert sold["price"] == 12

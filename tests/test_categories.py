"""Price categories: [categories] in museum.ini, `GET /price-categories`, a ticket's
category and price, an event's prices by category, `GET /museum`, and the availability's
ended entry slots, as a web shop reads them."""

import pytest
import webtest

import museum
import museum_config
from conftest import ADMIN, GATE, NOW, TODAY, VISITOR, assert_problem
from ticketing import EVENTS, OPEN_DAY, TICKETS, body, buy, create_event
from test_config import SHIPPED

CATEGORIES = ("[tickets]\ngeneral_price = 12\n[categories]\nadult = Adult\n"
              "reduced = Reduced | 8.50 | note: check student or senior ID\n"
              "child = Child under 14 | 0\nfamily = Family | 30 | persons: 4\n")
EUR = {"currency": "EUR"}
LISTED = [
    {"name": "adult", "label": "Adult", "price": 12, **EUR, "persons": 1, "note": ""},
    {"name": "reduced", "label": "Reduced", "price": 8.5, **EUR, "persons": 1,
     "note": "check student or senior ID"},
    {"name": "child", "label": "Child under 14", "price": 0, **EUR, "persons": 1, "note": ""},
    {"name": "family", "label": "Family", "price": 30, **EUR, "persons": 4, "note": ""}]


@pytest.fixture
def shop(make_client, config_text):
    """A client of a museum with four price categories, adult first."""
    return make_client(museum.parse_config(config_text + CATEGORIES))


def errors_of(res):
    return [(error["field"], error["code"]) for error in assert_problem(res, 400)["errors"]]


# -- the config ------------------------------------------------------------------------------

def test_a_config_without_categories_has_one_adult_at_the_general_price():
    config = museum.parse_config("[tickets]\ngeneral_price = 9.5\n")
    assert [(each.name, each.label, each.price, each.persons, each.note)
            for each in config.categories] == [("adult", "Adult", 950, 1, "")]


def test_the_shipped_config_sells_adult_at_the_general_price_reduced_and_child():
    config = museum.load_config(str(SHIPPED), environ={})
    prices = {each.name: each.price for each in config.categories}
    assert list(prices) == ["adult", "reduced", "child"]
    assert prices["adult"] == config["tickets"]["general_price"]
    assert prices["child"] == 0


@pytest.mark.parametrize("line, says", [
    ("Adult = Adult", "[categories] Adult: the name must be 1 to 32 lowercase letters"),
    ("adult =", "[categories] adult: the label must be 1 to 60"),
    ("adult = Adult | 9.999", "[categories] adult: must be a price from 0 to 1000000 with "
     "at most 2 decimals, not '9.999'"),
    ("adult = Adult | 5 | persons: 0", "[categories] adult: persons must be a whole number "
     "from 1 to 50, not '0'"),
    ("adult = Adult | 5 | persons: 2 | persons: 3", "[categories] adult: 'persons: 3' is not"),
    ("adult = Adult | colour: red", "[categories] adult: 'colour: red' is not a price"),
    ("adult = Adult | note:", "[categories] adult: the note must be 1 to 120 characters"),
    ("adult = Adult | 5 | 6", "[categories] adult: '6' is not a price, persons: N or note"),
])
def test_a_wrong_category_line_is_a_config_error_naming_it(line, says):
    with pytest.raises(museum_config.ConfigError) as raised:
        museum.parse_config(f"[categories]\n{line}\n", "museum.ini")
    assert str(raised.value).startswith(f"museum.ini: {says}")
    assert "LABEL | PRICE | persons: N | note: TEXT" in str(raised.value)


# -- GET /price-categories and GET /museum -----------------------------------------------------

@pytest.mark.parametrize("role", [VISITOR, GATE, ADMIN])
def test_every_role_lists_the_categories_in_the_configs_order(shop, role):
    assert shop.get("/v1.1/price-categories", headers=role, status=200).json == LISTED


def test_the_categories_need_credentials(shop):
    assert_problem(shop.get("/v1.1/price-categories", status=401), 401)
    assert_problem(shop.get("/v1.1/museum", status=401), 401)


def test_the_museum_says_what_a_shop_shows(make_client, config_text):
    named = config_text.replace("[museum]\n", "[museum]\nname = City Museum\ncurrency = CHF\n")
    client = make_client(museum.parse_config(
        named + CATEGORIES + "[hours]\nslot_minutes = 30\n[door]\nearly_minutes = 10\n"))
    answer = client.get("/v1.1/museum", headers=VISITOR, status=200).json
    assert answer == {"name": "City Museum", "timeZone": "UTC", "now": NOW.isoformat(),
                      "currency": "CHF", "earlyMinutes": 10, "slotMinutes": 30,
                      "categories": [{**each, "currency": "CHF"} for each in LISTED]}


def test_the_museum_without_timed_entry_has_no_slot_length(client):
    answer = client.get("/v1.1/museum", headers=GATE, status=200).json
    assert (answer["name"], answer["slotMinutes"], answer["earlyMinutes"]) == ("Museum", None, 15)
    assert [each["name"] for each in answer["categories"]] == ["adult"]


def test_a_reload_serves_the_new_categories_at_once(store, config_text):
    live = museum_config.LiveConfig(museum.parse_config(config_text))
    client = webtest.TestApp(museum.create_app(live, store=store, clock=lambda: NOW), lint=True)
    named = config_text.replace("[museum]\n", "[museum]\nname = City Museum\n")
    assert live.replace(museum.parse_config(named + CATEGORIES), None) == []
    assert client.get("/v1.1/price-categories", headers=VISITOR, status=200).json == LISTED
    assert client.get("/v1.1/museum", headers=VISITOR, status=200).json["name"] == "City Museum"
    assert buy(client, body(category="reduced")).json["price"] == 8.5


# -- a ticket's category ---------------------------------------------------------------------

def test_a_sale_without_a_category_is_the_first_and_its_answer_is_as_before(shop):
    sold = buy(shop, body(), headers=VISITOR).json
    assert sold["price"] == 12
    assert set(sold) == {"message", "ticketId", "ticketType", "ticketDate",
                         "confirmationCode", "price", "currency", "qrText", "ticketPage"}
    read = shop.get(f"{TICKETS}/{sold['ticketId']}", headers=GATE, status=200).json
    assert (read["category"], read["price"], read["currency"]) == ("adult", 12, "EUR")


@pytest.mark.parametrize("category, price", [("reduced", 8.5), ("child", 0), ("family", 30)])
def test_a_general_ticket_costs_its_categorys_price(shop, category, price):
    sold = buy(shop, body(category=category), headers=VISITOR).json
    assert sold["price"] == price
    read = shop.get(f"{TICKETS}/{sold['ticketId']}", headers=ADMIN, status=200).json
    assert (read["category"], read["price"]) == (category, price)


def test_a_ticket_takes_as_many_places_as_its_category_has_persons(shop):
    buy(shop, body(category="family"), headers=VISITOR)
    buy(shop, body(category="child"), headers=VISITOR)
    (day,) = shop.get("/v1.1/availability", params={"startDate": OPEN_DAY, "endDate": OPEN_DAY},
                      headers=VISITOR, status=200).json
    assert day["general"]["sold"] == 5


@pytest.mark.parametrize("category", ["student", "Adult", 7, "", "a" * 40])
def test_a_category_that_is_not_configured_is_refused_with_its_code(shop, category):
    res = buy(shop, body(category=category), status=400)
    assert errors_of(res) == [("category", "unknown-category")]


def test_a_configured_category_is_named_in_the_message(shop):
    res = buy(shop, body(category="student"), status=400)
    assert assert_problem(res, 400)["errors"][0]["message"] == (
        "must be one of the price categories: adult, reduced, child, family")


# -- an event's prices -----------------------------------------------------------------------

def event_with_prices(client, prices, name="Night at the Museum"):
    event = create_event(client, name)
    return client.patch_json(f"{EVENTS}/{event['eventId']}", {"prices": prices},
                             headers=ADMIN, status=200).json


def test_an_event_keeps_its_prices_in_create_change_and_reads(shop):
    created = shop.post_json(EVENTS, {
        "name": "Night", "location": "Hall", "eventDescription": "Torches.",
        "dates": ["2026-12-05"], "price": 20, "prices": {"child": 5, "reduced": 12.5}},
        headers=ADMIN, status=201).json
    assert created["prices"] == {"child": 5, "reduced": 12.5}
    path = f"{EVENTS}/{created['eventId']}"
    assert shop.get(path, headers=VISITOR, status=200).json["prices"] == created["prices"]
    listed = shop.get(EVENTS, params={"startDate": "2026-12-01"}, headers=VISITOR).json
    assert listed[0]["prices"] == created["prices"]
    changed = shop.patch_json(path, {"prices": {"child": 4}}, headers=ADMIN, status=200).json
    assert changed["prices"] == {"child": 4}  # replaced whole
    for removed in (None, {}):
        assert "prices" not in shop.patch_json(path, {"prices": removed}, headers=ADMIN,
                                               status=200).json
        assert "prices" not in shop.get(path, headers=VISITOR, status=200).json


def test_an_event_ticket_costs_its_categorys_price_or_the_events(shop):
    event = event_with_prices(shop, {"child": 5, "family": 40})
    sale = body("event", eventId=event["eventId"])
    assert buy(shop, {**sale, "category": "child"}).json["price"] == 5
    assert buy(shop, {**sale, "category": "family"}).json["price"] == 40
    assert buy(shop, {**sale, "category": "reduced"}).json["price"] == 12.5  # not named
    assert buy(shop, sale).json["price"] == 12.5  # adult, the default


@pytest.mark.parametrize("prices, errors", [
    ({"student": 5}, [("prices.student", "unknown-category")]),
    ({"child": 5.555}, [("prices.child", "too-many-decimals")]),
    ({"child": -1, "Child": 1}, [("prices.child", "not-a-price"),
                                 ("prices.Child", "unknown-category")]),
    ({"child": "5"}, [("prices.child", "not-a-price")]),
    ([5], [("prices", "not-a-price-list")]),
])
def test_wrong_event_prices_are_refused_naming_each(shop, prices, errors):
    event = create_event(shop)
    res = shop.patch_json(f"{EVENTS}/{event['eventId']}", {"prices": prices}, headers=ADMIN,
                          status=400)
    assert errors_of(res) == errors
    res = shop.post_json(EVENTS, {**{k: event[k] for k in (
        "name", "location", "eventDescription", "dates", "price")}, "prices": prices},
        headers=ADMIN, status=400)
    assert errors_of(res) == errors
    assert "prices" not in shop.get(f"{EVENTS}/{event['eventId']}", headers=ADMIN).json


# -- the availability's ended slots ------------------------------------------------------------

def test_todays_ended_slots_are_marked_with_none_available(make_client, config_text):
    timed = make_client(museum.parse_config(
        config_text + "[hours]\nslot_minutes = 30\n[capacity]\ngeneral_per_slot = 2\n"))
    days = timed.get("/v1.1/availability", params={"startDate": TODAY, "endDate": OPEN_DAY},
                     headers=VISITOR, status=200).json
    today = {slot["time"]: slot for slot in days[0]["slots"]}
    assert today["11:30"] == {"time": "11:30", "capacity": 2, "sold": 0, "available": 0,
                              "ended": True}  # it is 12:00: the 11:30 slot has ended
    assert today["12:00"] == {"time": "12:00", "capacity": 2, "sold": 0, "available": 2}
    assert sum("ended" in slot for slot in days[0]["slots"]) == 6  # 09:00 to 11:30
    assert not any("ended" in slot for day in days[1:] for slot in day.get("slots") or [])


def test_an_ended_unlimited_slot_has_none_available_either(make_client, config_text):
    timed = make_client(museum.parse_config(config_text + "[hours]\nslot_minutes = 60\n"))
    day = timed.get("/v1.1/availability", params={"startDate": TODAY, "endDate": TODAY},
                    headers=VISITOR, status=200).json[0]
    assert day["slots"][0] == {"time": "09:00", "capacity": None, "sold": 0, "available": 0,
                               "ended": True}
    assert day["slots"][-1] == {"time": "17:00", "capacity": None, "sold": 0,
                                "available": None}

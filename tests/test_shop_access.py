"""Public access, off by default (docs/security.md, "The shop"): with `[shop] enabled` the
operations marked `x-shop` answer requests without credentials and every other one still
needs its role; the origins of `[shop] allowed_origins`, and only they, get CORS headers,
preflights included; a script's 401 has no Basic challenge, shop on or off; orders made
without credentials meet the shop's limits (429 with Retry-After, on an injected clock)."""

import re
import uuid

import pytest
import webtest

import museum
from conftest import ADMIN, VISITOR, assert_problem, basic
from described import SERVER, operations
from ticketing import OPEN_DAY

SHOP = "https://www.museum.example.org"
ELSEWHERE = "https://evil.example.net"
SHOP_ON = f"[shop]\nenabled = true\nallowed_origins = {SHOP}, http://127.0.0.1:8000\n"
# A value for each path parameter: well formed, naming nothing stored.
PATH_VALUES = {"eventId": str(uuid.uuid4()), "ticketId": str(uuid.uuid4()),
               "orderId": str(uuid.uuid4()), "messageId": str(uuid.uuid4()),
               "date": OPEN_DAY}
CHALLENGE = 'Basic realm="museum", charset="UTF-8"'
CORS_HEADERS = ("Access-Control-Allow-Origin", "Access-Control-Allow-Methods",
                "Access-Control-Allow-Headers", "Access-Control-Expose-Headers",
                "Access-Control-Allow-Credentials", "Access-Control-Max-Age")


def url(path):
    return SERVER + re.sub(r"\{(\w+)\}", lambda match: PATH_VALUES[match.group(1)], path)


def shop_operations(opened):
    """(path, method) of every operation the shop opens (`opened`) or not, but those that
    need no credentials at all."""
    return [(path, method) for path, method, operation in operations().values()
            if operation.get("security") != [] and operation.get("x-shop", False) == opened]


@pytest.fixture
def shop(make_client, config_text):
    return make_client(museum.parse_config(config_text + SHOP_ON))


def no_cors(res):
    assert not [name for name in CORS_HEADERS if name in res.headers], res.headers


# -- the shop off: today's answers ----------------------------------------------------------

@pytest.mark.parametrize("path, method", shop_operations(True))
def test_with_the_shop_off_the_shops_operations_need_credentials(client, path, method):
    res = client.request(url(path), method=method.upper(), headers={"Origin": SHOP},
                         expect_errors=True)
    assert_problem(res, 401)
    assert res.headers["WWW-Authenticate"] == CHALLENGE
    no_cors(res)
    assert "Vary" not in res.headers


def test_with_the_shop_off_a_listed_origin_gets_no_cors_either(make_client, config_text):
    client = make_client(museum.parse_config(
        config_text + f"[shop]\nallowed_origins = {SHOP}\n"))
    res = client.get(url("/museum-hours"), headers={**VISITOR, "Origin": SHOP}, status=200)
    no_cors(res)
    preflight = client.options(url("/museum-hours"), headers={
        "Origin": SHOP, "Access-Control-Request-Method": "GET"}, status=401)
    no_cors(preflight)


# -- the shop on: what anyone may do ---------------------------------------------------------

@pytest.mark.parametrize("path, method", shop_operations(True))
def test_with_the_shop_on_anyone_may_call_its_operations(shop, path, method):
    res = shop.request(url(path), method=method.upper(), expect_errors=True)
    assert res.status_int not in (401, 403, 405), (path, res.status)


def test_the_shop_opens_what_a_booking_page_needs_and_no_more(shop):
    assert {operation["operationId"] for _, _, operation in operations().values()
            if operation.get("x-shop")} == {
        "getMuseumHours", "listSpecialEvents", "getSpecialEvent", "getAvailability",
        "listPriceCategories", "getMuseum", "createOrder"}
    assert shop.get(url("/museum"), status=200).json["name"] == "Museum"
    assert shop.head(url("/museum-hours"), status=200)
    assert shop.get(url("/availability"), status=200).json


@pytest.mark.parametrize("path, method", shop_operations(False))
def test_with_the_shop_on_every_other_operation_still_needs_credentials(shop, path, method):
    res = shop.request(url(path), method=method.upper(), headers={"Origin": SHOP},
                       expect_errors=True)
    assert_problem(res, 401)
    no_cors(res)


def test_credentials_sent_to_the_shop_are_checked_as_ever(shop):
    shop.get(url("/museum-hours"), headers=basic("visitor", "wrong"), status=401)
    shop.get(url("/museum-hours"), headers=VISITOR, status=200)


# -- CORS -------------------------------------------------------------------------------

def test_a_listed_origin_may_read_the_answers(shop):
    res = shop.get(url("/special-events"), headers={"Origin": SHOP}, status=200)
    assert res.headers["Access-Control-Allow-Origin"] == SHOP
    assert "Retry-After" in res.headers["Access-Control-Expose-Headers"]
    assert "Origin" in res.headers["Vary"]
    assert "Access-Control-Allow-Credentials" not in res.headers
    # An error of a shop's operation too: the page must read why.
    bad = shop.get(url("/museum-hours?limit=0"), headers={"Origin": SHOP}, status=400)
    assert bad.headers["Access-Control-Allow-Origin"] == SHOP


def test_an_origin_written_with_a_port_is_matched_as_browsers_send_it(shop):
    res = shop.get(url("/museum"), headers={"Origin": "http://127.0.0.1:8000"}, status=200)
    assert res.headers["Access-Control-Allow-Origin"] == "http://127.0.0.1:8000"


@pytest.mark.parametrize("origin", [ELSEWHERE, "null", SHOP + ".evil.example.net",
                                    SHOP.replace("https", "http")])
def test_any_other_origin_gets_no_cors_header(shop, origin):
    res = shop.get(url("/special-events"), headers={"Origin": origin}, status=200)
    no_cors(res)
    assert "Origin" in res.headers["Vary"]  # a cache keeps the origins' answers apart
    preflight = shop.options(url("/special-events"), headers={
        "Origin": origin, "Access-Control-Request-Method": "GET"}, status=401)
    no_cors(preflight)


def test_a_preflight_from_a_listed_origin_is_answered_without_credentials(shop):
    res = shop.options(url("/availability"), headers={
        "Origin": SHOP, "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "x-requested-with"}, status=204)
    assert res.headers["Access-Control-Allow-Origin"] == SHOP
    assert res.headers["Access-Control-Allow-Methods"] == "GET, HEAD"
    assert "X-Requested-With" in res.headers["Access-Control-Allow-Headers"]
    assert "Authorization" not in res.headers["Access-Control-Allow-Headers"]
    assert int(res.headers["Access-Control-Max-Age"]) > 0
    assert res.headers["Vary"].startswith("Origin")


@pytest.mark.parametrize("path, method", [("/special-events", "POST"),
                                          ("/special-events/{eventId}", "DELETE"),
                                          ("/tickets", "POST"), ("/reports/sales", "GET")])
def test_a_preflight_for_an_operation_the_shop_does_not_open_gets_no_cors(shop, path, method):
    res = shop.options(url(path), headers={
        "Origin": SHOP, "Access-Control-Request-Method": method}, status=401)
    no_cors(res)


# -- a script's 401: no login box ------------------------------------------------------------

SCRIPTS = [{"Sec-Fetch-Mode": "cors"}, {"Sec-Fetch-Mode": "same-origin"},
           {"X-Requested-With": "XMLHttpRequest"}]


@pytest.mark.parametrize("shop_on", [False, True])
@pytest.mark.parametrize("script", SCRIPTS)
def test_a_scripts_401_has_no_challenge(make_client, config_text, shop_on, script):
    client = make_client(museum.parse_config(config_text + (SHOP_ON if shop_on else "")))
    for headers in [script, {**script, **basic("admin", "wrong")}]:
        res = client.get(url("/reports/sales"), headers=headers, status=401)
        assert "WWW-Authenticate" not in res.headers
        assert_problem(res, 401)


@pytest.mark.parametrize("navigation", [{}, {"Sec-Fetch-Mode": "navigate"},
                                        {"Sec-Fetch-Mode": "no-cors"}])
def test_a_persons_401_keeps_the_challenge(client, navigation):
    res = client.get(url("/reports/sales"), headers=navigation, status=401)
    assert res.headers["WWW-Authenticate"] == CHALLENGE


# -- the limits on orders made without credentials -------------------------------------------

ORDERS = f"{SERVER}/orders"


def shop_app(config_text, store, clock, settings="", more=""):
    """A client of the app with the shop on, its `settings` beside, and `more` sections."""
    config = museum.parse_config(config_text + SHOP_ON + settings + more)
    return webtest.TestApp(museum.create_app(config, store=store, clock=clock), lint=True)


@pytest.fixture
def orders(config_text, store, clock):
    return shop_app(config_text, store, clock)


def order(client, email="family@example.org", tickets=2, address="192.0.2.10", status=201,
          headers=None):
    """An order of `tickets` general tickets for OPEN_DAY from a client at `address`."""
    return client.post_json(ORDERS, {"email": email, "items": [
        {"ticketType": "general", "ticketDate": OPEN_DAY, "quantity": tickets}]},
        headers=headers or {}, status=status, extra_environ={"REMOTE_ADDR": address})


def test_anyone_orders_on_the_web_channel_only(orders):
    made = order(orders).json
    assert (made["channel"], made["status"], len(made["tickets"])) == ("web", "confirmed", 2)
    desk = orders.post_json(ORDERS, {"channel": "desk", "payment": "cash", "items": [
        {"ticketType": "general", "ticketDate": OPEN_DAY}]}, status=403)
    assert assert_problem(desk, 403)["detail"] == "The desk channel needs the desk or admin role."
    # What anyone made, only the staff read: the order's other operations need credentials.
    orders.get(f"{ORDERS}/{made['orderId']}", status=401)
    orders.get(f"{ORDERS}/{made['orderId']}", headers=ADMIN, status=200)


def test_an_address_makes_orders_per_hour_then_waits(orders, clock):
    for number in range(10):
        order(orders, email=f"visitor.{number}@example.org")
    refused = order(orders, email="new@example.org", status=429)
    assert_problem(refused, 429)
    assert refused.headers["Retry-After"] == "3600"
    clock.advance(minutes=30)
    assert order(orders, email="new@example.org", status=429).headers["Retry-After"] == "1800"
    order(orders, email="new@example.org", address="192.0.2.11")  # another address
    clock.advance(minutes=30)
    order(orders, email="new@example.org")


def test_an_ipv6_address_is_limited_by_its_64(orders):
    for number in range(10):
        order(orders, email=f"visitor.{number}@example.org", address=f"2001:db8::{number + 1}")
    order(orders, email="new@example.org", address="2001:db8::ffff:1", status=429)
    order(orders, email="new@example.org", address="2001:db8:0:1::1")


def test_an_order_refused_costs_its_address_nothing(config_text, store, clock):
    client = shop_app(config_text, store, clock, more="[capacity]\ngeneral_per_day = 3\n")
    for number in range(12):
        order(client, email=f"visitor.{number}@example.org", tickets=4, status=409)
    order(client, tickets=3)


def test_an_email_makes_orders_per_day_on_any_address_then_waits(orders, clock):
    for number in range(5):
        order(orders, address=f"192.0.2.{number + 1}")
        clock.advance(hours=1)
    refused = order(orders, email="Family@EXAMPLE.org", address="192.0.2.99", status=429)
    assert "orders_per_email_per_day" in assert_problem(refused, 429)["detail"]
    assert refused.headers["Retry-After"] == str(19 * 3600)  # the first leaves the 24 hours
    clock.advance(hours=19)
    order(orders, address="192.0.2.99")
    order(orders, email="other@example.org", address="192.0.2.98")


def test_the_email_limit_counts_every_instance_on_the_database(config_text, store, clock):
    first, second = (shop_app(config_text, store, clock) for _ in range(2))
    for number in range(3):
        order(first, address=f"192.0.2.{number + 1}")
        order(second, address=f"192.0.2.{number + 1}", status=201 if number < 2 else 429)


def test_an_order_holds_at_most_max_tickets(orders):
    problem = assert_problem(order(orders, tickets=11, status=400), 400, "items")
    assert problem["errors"][0]["code"] == "out-of-range"
    order(orders, tickets=10)


def test_the_limits_are_settings(config_text, store, clock):
    client = shop_app(config_text, store, clock, "orders_per_hour = 1\n"
                      "orders_per_email_per_day = 1\nmax_tickets = 2\n")
    order(client, tickets=3, status=400)
    order(client, tickets=2)
    order(client, email="other@example.org", status=429)
    order(client, address="192.0.2.77", status=429)


def test_orders_with_credentials_meet_no_shop_limit(orders):
    for _ in range(12):
        order(orders, tickets=20, headers=VISITOR)
    order(orders, headers=ADMIN)


def test_an_order_from_a_listed_origin_gets_cors(orders):
    res = orders.post_json(ORDERS, {"email": "a@example.org", "items": [
        {"ticketType": "general", "ticketDate": OPEN_DAY}]}, headers={"Origin": SHOP},
        status=201)
    assert res.headers["Access-Control-Allow-Origin"] == SHOP
    assert "Location" in res.headers["Access-Control-Expose-Headers"]
    preflight = orders.options(ORDERS, headers={"Origin": SHOP,
                                                "Access-Control-Request-Method": "POST"},
                               status=204)
    assert preflight.headers["Access-Control-Allow-Methods"] == "POST"
    assert "Content-Type" in preflight.headers["Access-Control-Allow-Headers"]


def test_the_shop_off_takes_no_order_without_credentials(client):
    res = client.post_json(ORDERS, {"email": "a@example.org", "items": [
        {"ticketType": "general", "ticketDate": OPEN_DAY}]}, status=401)
    assert res.headers["WWW-Authenticate"] == CHALLENGE


# -- the setting -----------------------------------------------------------------------------

@pytest.mark.parametrize("written, read", [
    ("", ()),
    ("https://WWW.Museum.example.org:443/", ("https://www.museum.example.org",)),
    ("http://127.0.0.1:8000, https://a.example.org https://a.example.org",
     ("http://127.0.0.1:8000", "https://a.example.org")),
    ("http://[::1]:8080", ("http://[::1]:8080",)),
])
def test_allowed_origins_are_read_as_browsers_write_them(written, read):
    config = museum.parse_config(f"[shop]\nallowed_origins = {written}\n")
    assert config["shop"]["allowed_origins"] == read


@pytest.mark.parametrize("written", ["*", "https://a.example.org/shop", "ftp://a.example.org",
                                     "https://user@a.example.org", "https://a.example.org:99999",
                                     "a.example.org", "https://a.example.org?x=1"])
def test_an_allowed_origin_is_an_origin_and_no_wildcard(written):
    with pytest.raises(museum.ConfigError, match=r"\[shop\] allowed_origins: .*not a web origin"):
        museum.parse_config(f"[shop]\nallowed_origins = {written}\n")

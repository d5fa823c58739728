"""The booking page's files over WebTest: absent (404) while the shop is off, served with
their policy while it is on; framed only by the museum's listed sites; the shop's settings
written into the page for its script. The page as a visitor uses it is tested in Chromium
(test_shop_page_browser.py)."""

import re

import pytest

import museum
from conftest import ADMIN, VISITOR, assert_problem

SHOP_PATHS = ("/shop", "/shop/shop.js", "/shop/shop.css", "/shop/qr.js")


def shop_config(config_text, shop_lines):
    return museum.parse_config(f"{config_text}[shop]\n{shop_lines}", "test.ini")


@pytest.mark.parametrize("path", SHOP_PATHS)
def test_the_page_is_not_there_while_the_shop_is_off(client, path):
    assert_problem(client.get(path, status=404), 404)


@pytest.mark.parametrize("path", SHOP_PATHS)
def test_the_page_is_there_when_the_shop_is_on_without_credentials(make_client, config_text,
                                                                    path):
    client = make_client(shop_config(config_text, "enabled = true\n"))
    res = client.get(path, status=200)
    assert res.headers["Cache-Control"] == "no-cache"
    policy = res.headers["Content-Security-Policy"]
    assert "default-src 'self'" in policy and "frame-ancestors 'self'" in policy
    assert "'unsafe-inline'" not in policy and "http" not in policy
    assert res.headers["X-Content-Type-Options"] == "nosniff"
    assert "WWW-Authenticate" not in res.headers


def test_only_the_museums_own_sites_may_frame_it(make_client, config_text):
    client = make_client(shop_config(
        config_text, "enabled = true\n"
        "allowed_origins = https://www.museum.example https://shop.museum.example\n"))
    for path in SHOP_PATHS:
        policy = client.get(path, status=200).headers["Content-Security-Policy"]
        assert re.search(r"frame-ancestors 'self' https://www\.museum\.example "
                         r"https://shop\.museum\.example(;|$)", policy), policy


def test_the_page_loads_nothing_from_elsewhere(make_client, config_text):
    client = make_client(shop_config(config_text, "enabled = true\n"))
    page = client.get("/shop", status=200)
    assert page.content_type == "text/html"
    sources = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    # "data:," is the empty icon, so the browser asks for no /favicon.ico either.
    assert sources and all(source.startswith("/shop/") or source == "data:,"
                           for source in sources), sources
    assert not re.search(r"<script(?![^>]*\bsrc=)", page.text)  # no inline script
    assert not re.search(r"\son[a-z]+=", page.text)  # no inline handler


@pytest.mark.parametrize("lines, settings", [
    ("enabled = true\n", {"pay-at-desk": "false", "max-tickets": "10"}),
    ("enabled = true\npay_at_desk = true\nmax_tickets = 6\n",
     {"pay-at-desk": "true", "max-tickets": "6"}),
])
def test_the_page_carries_the_shops_settings(make_client, config_text, lines, settings):
    client = make_client(shop_config(config_text, lines))
    body = re.search(r"<body([^>]*)>", client.get("/shop", status=200).text).group(1)
    found = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', body))
    assert {name: found[name] for name in settings} == settings


# -- what the page asks of the API --------------------------------------------------------

def test_a_quote_needs_no_email_but_an_order_on_the_web_does(client):
    """The page shows the total as soon as tickets are chosen, before the email is typed."""
    items = [{"ticketType": "general", "ticketDate": "2026-11-24", "category": "adult",
              "quantity": 2}]
    quote = client.post_json("/v1.1/orders?simulate=true", {"items": items}, headers=VISITOR,
                             status=200).json
    assert (quote["total"], len(quote["tickets"])) == (0, 2)
    assert_problem(client.post_json("/v1.1/orders", {"items": items}, headers=VISITOR,
                                    status=400), 400, "email")


PRICED = "[categories]\nadult = Adult | 12\nchild = Child | 0\n"


def family(adults=2, children=2, email="family@example.org"):
    items = [{"ticketType": "general", "ticketDate": "2026-11-24", "category": category,
              "quantity": quantity}
             for category, quantity in (("adult", adults), ("child", children)) if quantity]
    return {"items": items, "email": email}


def test_without_credentials_free_tickets_are_booked_with_their_qr_text_and_page(
        make_client, config_text):
    client = make_client(shop_config(config_text + PRICED, "enabled = true\n"))
    order = client.post_json("/v1.1/orders", family(adults=0, children=4), status=201).json
    assert (order["channel"], order["total"], "payment" in order) == ("web", 0, False)
    assert len(order["tickets"]) == 4
    for ticket in order["tickets"]:
        assert ticket["qrText"].startswith(f"MUSEUM1:{ticket['ticketId']}:")
        assert ticket["ticketPage"].startswith("/t/")


def test_without_credentials_a_priced_ticket_needs_pay_at_desk(make_client, config_text):
    client = make_client(shop_config(config_text + PRICED, "enabled = true\n"))
    for query in ("", "?simulate=true"):
        refused = client.post_json(f"/v1.1/orders{query}", family(), status=400)
        assert assert_problem(refused, 400, "items")["errors"][0]["code"] == "not-allowed"
    # With credentials (a partner's shop that takes the payment itself), as before.
    assert "payment" not in client.post_json("/v1.1/orders", family(), headers=VISITOR,
                                             status=201).json


def test_with_pay_at_desk_a_priced_order_is_due(make_client, config_text):
    client = make_client(shop_config(config_text + PRICED,
                                     "enabled = true\npay_at_desk = true\n"))
    quote = client.post_json("/v1.1/orders?simulate=true", family(), status=200).json
    assert (quote["total"], quote["payment"]) == (24, "due")
    order = client.post_json("/v1.1/orders", family(), status=201).json
    assert (order["total"], order["payment"], order["status"]) == (24, "due", "confirmed")
    assert client.get(f"/v1.1/orders/{order['orderId']}", headers=ADMIN,
                      status=200).json["payment"] == "due"

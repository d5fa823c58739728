"""The ticket page (/t/<token>) through WebTest, and its tokens in the store on both backends:
a link made with each sale and order, shown with no credentials, its QR code scanning to the
`qrText` the sale answered, strict headers and nothing from elsewhere; a void (of the ticket
or its order) answers 410, a token no one was given 404, found by its digest only. Dates
follow conftest's NOW (Sunday 2026-11-22). The page in a real browser (phone size, offline,
print) is tests/test_ticket_page_browser.py's."""

import hashlib
import re
import uuid
from html.parser import HTMLParser

import pytest
import webtest

import museum
import museum_door
import museum_ticket_page
import storage
from conftest import ADMIN, GATE, NOW, VISITOR, basic
from qr import read_svg_qr
from storage.sql import pages_for_earlier_sales
from test_order_storage import AFTER_HOLD, START, general, held, order
from test_storage import backend, first_step_mentioning, store, ticket  # noqa: F401 (fixtures)
from ticketing import OPEN_DAY, body, buy, cancel_event, create_event

TOKEN_PAGE = re.compile(r"/t/[A-Za-z0-9_-]{22}")
SVG = re.compile(r"<svg .*?</svg>", re.DOTALL)


@pytest.fixture
def page_config_text(config_text):
    """conftest's config with a museum's name, timed entry and a category of another label."""
    return (config_text.replace("[museum]\n", "[museum]\nname = City Museum\n")
            + "[hours]\nslot_minutes = 30\n"
            + "[categories]\nadult = Adult\nreduced = Student or senior | 4\n")


@pytest.fixture
def web(page_config_text, db_path, clock):
    """The app on a fresh sqlite store, with its clock and that store."""
    config = museum.parse_config(page_config_text, "test.ini")
    opened = storage.open_store(db_path)
    app = webtest.TestApp(museum.create_app(config, store=opened, clock=clock), lint=True)
    yield app, opened
    opened.close()


def sold(app, **fields):
    return buy(app, body(entryTime="10:30", **fields), headers=VISITOR).json


def qr_codes(page):
    return [read_svg_qr(svg) for svg in SVG.findall(page.text)]


class Resources(HTMLParser):
    """Every address the page loads something from (src, href)."""

    def __init__(self):
        super().__init__()
        self.addresses = []

    def handle_starttag(self, tag, attrs):
        self.addresses += [value for name, value in attrs if name in ("src", "href")]


def test_a_sale_answers_its_page_whose_qr_code_scans_to_its_qr_text(web):
    app, _ = web
    receipt = sold(app, category="reduced")
    assert TOKEN_PAGE.fullmatch(receipt["ticketPage"])
    page = app.get(receipt["ticketPage"], status=200)  # no credentials
    assert page.content_type == "text/html"
    assert qr_codes(page) == [receipt["qrText"]]
    for shown in ("City Museum", "General entry", "Tuesday 24 November 2026", "10:30",
                  "Student or senior", receipt["confirmationCode"]):
        assert shown in page.text
    assert "ada@example.org" not in page.text  # no contact on a page anyone with the link sees


def test_the_qr_text_is_the_one_the_door_admits(web, clock):
    app, _ = web
    receipt = buy(app, body(ticketDate="2026-11-22", entryTime="12:00"), headers=VISITOR).json
    admitted = app.post_json("/v1.1/admissions", {"code": receipt["qrText"]}, headers=GATE,
                             status=201).json
    assert admitted["ticketId"] == receipt["ticketId"]
    page = app.get(receipt["ticketPage"], status=200)
    assert "Admitted at the entrance." in page.text and qr_codes(page) == [receipt["qrText"]]


def test_the_ticket_read_shows_the_same_link_and_text_on_the_public_url(
        page_config_text, store):
    config = museum.parse_config(page_config_text.replace(
        "[hours]\n", "[server]\npublic_url = https://museum.example.org/\n[hours]\n"), "t.ini")
    app = webtest.TestApp(museum.create_app(config, store=store, clock=lambda: NOW), lint=True)
    receipt = sold(app)
    assert receipt["ticketPage"].startswith("https://museum.example.org/t/")
    read = app.get(f"/v1.1/tickets/{receipt['ticketId']}", headers=GATE, status=200).json
    assert (read["qrText"], read["ticketPage"]) == (receipt["qrText"], receipt["ticketPage"])
    path = receipt["ticketPage"].removeprefix("https://museum.example.org")
    assert qr_codes(app.get(path, status=200)) == [receipt["qrText"]]


def test_every_sale_has_its_own_token_and_a_replay_the_same(web):
    app, _ = web
    first = buy(app, body(entryTime="10:30"), key="k1").json
    assert buy(app, body(entryTime="10:30"), key="k1").json["ticketPage"] == first["ticketPage"]
    assert sold(app)["ticketPage"] != first["ticketPage"]


def test_the_page_sets_strict_headers_and_loads_nothing_from_elsewhere(web):
    app, _ = web
    page = app.get(sold(app)["ticketPage"], status=200)
    policy = page.headers["Content-Security-Policy"]
    assert policy.startswith("default-src 'none'; script-src 'self'; style-src 'self';")
    assert "frame-ancestors 'none'" in policy and "unsafe" not in policy
    assert page.headers["Referrer-Policy"] == "no-referrer"
    assert page.headers["X-Robots-Tag"] == "noindex, nofollow"
    assert page.headers["Cache-Control"] == "private, no-cache"
    assert page.headers["X-Content-Type-Options"] == "nosniff"
    parser = Resources()
    parser.feed(page.text)
    assert parser.addresses == ["/t/ticket.css", "/t/ticket.js"]
    assert "<script>" not in page.text and " style=" not in page.text and " on" not in \
        re.sub(r'"[^"]*"', "", page.text)  # no inline script, style or handler
    for name in ("ticket.css", "ticket.js", "ticket-sw.js"):
        served = app.get(f"/t/{name}", status=200)
        assert served.headers["Content-Security-Policy"] == policy
    assert "http" not in app.get("/t/ticket.css").text  # nothing fetched from elsewhere


def test_credentials_are_neither_needed_nor_looked_at(web):
    app, _ = web
    link = sold(app)["ticketPage"]
    assert app.get(link, headers=basic("visitor", "wrong"), status=200).text == \
        app.get(link, status=200).text


@pytest.mark.parametrize("guess", [
    "AAAAAAAAAAAAAAAAAAAAAA", "short", "A" * 23, "with.a.dot.in.it.12345", "%00" * 8])
def test_a_guessed_token_is_answered_404_as_a_plain_page(web, guess):
    app, _ = web
    sold(app)
    page = app.get(f"/t/{guess}", status=404)
    assert page.content_type == "text/html" and "No ticket here" in page.text
    assert page.headers["Cache-Control"] == "no-store"
    assert page.headers["Referrer-Policy"] == "no-referrer"


def test_a_real_token_but_its_last_character_finds_nothing(web):
    """The tokens are found by their digest: a guess sharing all but one character with a
    real token is as unknown as any other."""
    app, _ = web
    link = sold(app)["ticketPage"]
    near = link[:-1] + ("A" if link[-1] != "A" else "B")
    assert "No ticket here" in app.get(near, status=404).text


def test_the_page_is_found_by_the_tokens_digest_on_its_index_never_by_the_token(web, db_path):
    """The lookup compares the digest of a guess, so its time says nothing of a real
    token's characters; the token itself is on no index."""
    app, _ = web
    link = sold(app)["ticketPage"]
    token = link.removeprefix("/t/")
    import sqlite3

    conn = sqlite3.connect(db_path)
    try:
        assert conn.execute("SELECT page_digest FROM tickets WHERE page_token = ?",
                            (token,)).fetchone() == (hashlib.sha256(token.encode()).hexdigest(),)
        plan = " ".join(row[-1] for row in conn.execute(
            "EXPLAIN QUERY PLAN SELECT id FROM tickets WHERE page_digest = ?", ("x",)))
        assert "USING INDEX tickets_by_page" in plan
        indexed = {column[2] for table in ("tickets", "orders")
                   for index in conn.execute(f"PRAGMA index_list({table})").fetchall()
                   for column in conn.execute(f"PRAGMA index_info('{index[1]}')").fetchall()}
        assert "page_token" not in indexed and "page_digest" in indexed
    finally:
        conn.close()


def test_a_voided_ticket_answers_410_and_its_place_is_not_shown(web):
    app, _ = web
    receipt = sold(app)
    app.delete(f"/v1.1/tickets/{receipt['ticketId']}", headers=ADMIN, status=204)
    page = app.get(receipt["ticketPage"], status=410)
    assert "This ticket was voided" in page.text and not SVG.search(page.text)
    assert page.headers["Cache-Control"] == "no-store"
    assert receipt["confirmationCode"] not in page.text


def test_a_cancelled_events_ticket_answers_410(web):
    app, _ = web
    event = create_event(app)
    receipt = buy(app, body("event", eventId=event["eventId"])).json
    assert event["name"] in app.get(receipt["ticketPage"], status=200).text
    cancel_event(app, event["eventId"])
    assert "This event was cancelled" in app.get(receipt["ticketPage"], status=410).text


def test_names_are_shown_as_text_never_as_markup(web):
    app, _ = web
    event = create_event(app, name="<script>Night</script> & <b>day</b>")
    page = app.get(buy(app, body("event", eventId=event["eventId"])).json["ticketPage"],
                   status=200)
    assert "&lt;script&gt;Night&lt;/script&gt; &amp; &lt;b&gt;day&lt;/b&gt;" in page.text
    assert "<script>Night" not in page.text


# -- an order's page -------------------------------------------------------------------------

def page_of(made):
    return f"/t/{made['pageToken']}"


def test_an_orders_page_shows_each_of_its_tickets(web):
    app, opened = web
    made = opened.create_order(order(), [general(), general(category="reduced")], START)
    page = app.get(page_of(made), status=200)
    secret = opened.setting("qr_secret")
    assert qr_codes(page) == [museum_door.qr_text(secret, each["ticketId"],
                                                  each["confirmationCode"])
                              for each in made["tickets"]]
    assert page.text.count('<article class="ticket">') == 2
    assert made["orderCode"] in page.text


def test_an_orders_voided_ticket_is_shown_void_and_the_voided_order_answers_410(web):
    app, opened = web
    made = opened.create_order(order(), [general(), general()], START)
    opened.void_ticket(made["tickets"][0]["ticketId"], START)
    page = app.get(page_of(made), status=200)
    assert len(qr_codes(page)) == 1 and "Voided: this ticket no longer admits" in page.text
    opened.void_order(made["orderId"], START)
    assert "This order was voided" in app.get(page_of(made), status=410).text


def test_a_held_order_shows_no_code_until_confirmed_and_an_ended_hold_answers_410(web, clock):
    app, opened = web
    made = opened.create_order(held(), [general()], START)
    page = app.get(page_of(made), status=200)
    assert "Awaiting confirmation" in page.text and qr_codes(page) == []
    opened.confirm_order(made["orderId"], START)
    assert len(qr_codes(app.get(page_of(made), status=200))) == 1
    ended = opened.create_order(held(), [general()], START)
    clock.now = clock.now.fromisoformat(AFTER_HOLD.replace("Z", "+00:00"))
    assert "not completed" in app.get(page_of(ended), status=410).text


# -- the tokens in the store ------------------------------------------------------------------

def test_each_ticket_and_order_is_found_by_its_own_token(store):
    alone, _ = store.create_ticket(ticket())
    made = store.create_order(order(), [general(), general()], START)
    tokens = [alone["pageToken"], made["pageToken"],
              *(each["pageToken"] for each in made["tickets"])]
    assert len(set(tokens)) == 4 and all(museum_ticket_page.TOKEN.fullmatch(t) for t in tokens)
    assert store.page(alone["pageToken"], START) == ("ticket", store.get_ticket(
        alone["ticketId"]))
    assert store.page(made["pageToken"], START) == ("order", store.get_order(
        made["orderId"], START))
    assert store.page(made["tickets"][1]["pageToken"], START)[1]["ticketId"] == \
        made["tickets"][1]["ticketId"]
    with pytest.raises(storage.NotFound):
        store.page("A" * 22, START)


def test_tickets_and_orders_sold_before_the_step_get_their_tokens_in_it(backend, monkeypatch):
    every_step = backend.store_class.MIGRATIONS
    before = first_step_mentioning(every_step, "page_token")
    assert pages_for_earlier_sales in every_step[before]
    monkeypatch.setattr(backend.store_class, "MIGRATIONS", every_step[:before])
    backend.open()
    ticket_id, order_id = str(uuid.uuid4()), str(uuid.uuid4())
    backend.rows(f"INSERT INTO orders (id, code, status, channel, created_at) VALUES "
                 f"('{order_id}', 'order-0a1b2c-3d4e5', 'confirmed', 'web', '{START}')")
    backend.rows(f"INSERT INTO tickets (id, type, date, confirmation_code, email, order_id) "
                 f"VALUES ('{ticket_id}', 'general', '{OPEN_DAY}', "
                 f"'ticket-general-0a1b2c-3d4e5', 'ada@example.org', '{order_id}')")
    monkeypatch.setattr(backend.store_class, "MIGRATIONS", every_step)
    migrated = backend.open()
    old_ticket = migrated.get_ticket(ticket_id)
    old_order = migrated.get_order(order_id, START)
    assert museum_ticket_page.TOKEN.fullmatch(old_ticket["pageToken"])
    assert museum_ticket_page.TOKEN.fullmatch(old_order["pageToken"])
    assert migrated.page(old_ticket["pageToken"], START)[1]["ticketId"] == ticket_id
    assert migrated.page(old_order["pageToken"], START)[1]["orderId"] == order_id

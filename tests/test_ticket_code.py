"""The ticket's image and its signed QR code: GET /v1.1/tickets/{ticketId}/qr, and the check
at the door, both as `museum_door.verify_ticket` and as the `museum verify-ticket` command.

The QR text is `MUSEUM1:{ticketId}:{confirmationCode}:{tag}`, the tag an HMAC under a server
secret that comes from `[tickets] qr_secret` or is generated once and kept in the database.
"""

import re
import threading
from datetime import date, datetime, timedelta, timezone

import pytest
import webtest

import museum
import museum_door
import storage
import museum_ticket_image
from conftest import ADMIN, ENTRY_TIMES, NOW, TODAY, VISITOR, assert_problem
from qr import read_qr
from serving import wait_until
from commands import verify_command
from ticketing import EVENTS, UNKNOWN_ID, body, buy, cancel_event, create_event, qr_path, query

SECRET = "door-secret-7f3a9c1e5b2d4f6a8c0e"
HEX = "0123456789abcdef"


@pytest.fixture
def secret_client(make_client, config_text):
    """A client whose config sets `[tickets] qr_secret = SECRET`."""
    return make_client(museum.parse_config(config_text + f"[tickets]\nqr_secret = {SECRET}\n"))


@pytest.fixture(params=["configured-secret", "generated-secret"])
def signing(request, db_path):
    """(client, secret): the secret set in the config, or the one generated at the first
    start and kept in the database's settings."""
    if request.param == "configured-secret":
        return request.getfixturevalue("secret_client"), SECRET
    return request.getfixturevalue("client"), stored_secret(db_path)


@pytest.fixture
def renders(monkeypatch):
    """Every call of `museum_ticket_image.render_ticket` as (title, fields, qr_text); it still
    draws."""
    calls = []
    real = museum_ticket_image.render_ticket

    def counting(title, fields, qr_text):
        calls.append((title, fields, qr_text))
        return real(title, fields, qr_text)

    monkeypatch.setattr(museum_ticket_image, "render_ticket", counting)
    return calls


def stored_secret(db_path):
    rows = query(db_path, "SELECT value FROM settings WHERE name = 'qr_secret'")
    assert len(rows) == 1
    return rows[0][0]


def fetch(client, ticket_id, status=200, if_none_match=None):
    """GET the ticket's image as the visitor, revalidating when `if_none_match` is given."""
    headers = dict(VISITOR)
    if if_none_match is not None:
        headers["If-None-Match"] = if_none_match
    return client.get(qr_path(ticket_id), headers=headers, status=status)


def flip(text, part, offset):
    """`text` with one hex digit changed: the one at `offset` in `:`-separated `part`."""
    parts = text.split(":")
    chars = list(parts[part])
    chars[offset] = HEX[(HEX.index(chars[offset]) + 1) % 16]
    parts[part] = "".join(chars)
    return ":".join(parts)


# -- the image ----------------------------------------------------------------------------

def test_the_qr_code_carries_the_ticket_signed_with_the_secret(signing):
    client, secret = signing
    receipt = buy(client, body(), headers=VISITOR)
    res = client.get(receipt.headers["Location"], headers=VISITOR, status=200)
    assert res.content_type == "image/png"
    text = read_qr(res.body)
    prefix, ticket_id, code, tag = text.split(":")
    assert (prefix, ticket_id, code) == (
        "MUSEUM1", receipt.json["ticketId"], receipt.json["confirmationCode"])
    assert museum_door.read_qr_text(secret, text) == (ticket_id, code)
    assert museum_door.read_qr_text(secret + "x", text) is None
    assert secret not in text


@pytest.mark.parametrize("part, offset", [
    pytest.param(1, 0, id="ticket-id-first"),
    pytest.param(1, -1, id="ticket-id-last"),
    pytest.param(2, -1, id="code-last"),
    pytest.param(3, 0, id="tag-first"),
    pytest.param(3, -1, id="tag-last"),
])
def test_changing_one_character_of_the_text_breaks_the_tag(secret_client, part, offset):
    ticket_id = buy(secret_client, body()).json["ticketId"]
    text = read_qr(fetch(secret_client, ticket_id).body)
    assert museum_door.read_qr_text(SECRET, text) is not None
    forged = flip(text, part, offset)
    assert forged != text
    assert museum_door.read_qr_text(SECRET, forged) is None


def test_a_generated_secret_is_kept_in_the_database(make_client, config, db_path):
    ticket_id = buy(make_client(config), body()).json["ticketId"]
    first = read_qr(fetch(make_client(config), ticket_id).body)
    secret = stored_secret(db_path)
    assert len(secret) >= 32
    reopened = storage.open_store(db_path)  # as after a restart
    try:
        restarted = webtest.TestApp(museum.create_app(config, store=reopened, clock=lambda: NOW))
        assert read_qr(fetch(restarted, ticket_id).body) == first
    finally:
        reopened.close()
    assert stored_secret(db_path) == secret


def test_the_secret_never_appears_in_a_response(signing):
    client, secret = signing
    sale = buy(client, body())
    ticket_id = sale.json["ticketId"]
    image = fetch(client, ticket_id)
    responses = [
        sale, image, fetch(client, ticket_id, 304, if_none_match=image.headers["ETag"]),
        fetch(client, UNKNOWN_ID, 404), fetch(client, "nope", 400),
        client.get("/v1.1/museum-hours", headers=VISITOR, status=200),
        client.get("/healthz", status=200),
    ]
    for res in responses:
        assert secret.encode() not in res.body
        assert all(secret not in value for _, value in res.headerlist)
    assert secret not in read_qr(image.body)


@pytest.mark.parametrize("with_event", [False, True], ids=["general", "event"])
def test_the_image_shows_the_tickets_details(client, renders, with_event):
    payload = body()
    if with_event:
        event = create_event(client, name="Dinosaurs After Dark")
        payload = body("event", eventId=event["eventId"])
    receipt = buy(client, payload).json
    image = fetch(client, receipt["ticketId"])
    [(title, fields, text)] = renders
    assert title.strip()
    values = [value for _, value in fields]
    assert receipt["ticketDate"] in values
    assert receipt["confirmationCode"] in values
    kind = "event" if with_event else "general"
    assert any(kind in value.lower() for value in values)
    assert ("Dinosaurs After Dark" in values) == with_event
    assert read_qr(image.body) == text


# -- caching --------------------------------------------------------------------------------

def test_the_image_is_privately_cacheable_for_a_day(client):
    ticket_id = buy(client, body()).json["ticketId"]
    res = fetch(client, ticket_id)
    assert res.headers["Cache-Control"] == "private, max-age=86400"
    assert re.fullmatch(r'"[^"]+"', res.headers["ETag"])


@pytest.mark.parametrize("if_none_match, status", [
    pytest.param("{etag}", 304, id="same-etag"),
    pytest.param("W/{etag}", 304, id="weak-same-etag"),
    pytest.param('"elsewhere", {etag}', 304, id="listed-among-others"),
    pytest.param("*", 304, id="star"),
    pytest.param('"elsewhere"', 200, id="other-etag"),
])
def test_if_none_match_revalidates_the_image(client, if_none_match, status):
    ticket_id = buy(client, body()).json["ticketId"]
    first = fetch(client, ticket_id)
    etag = first.headers["ETag"]
    res = fetch(client, ticket_id, status, if_none_match=if_none_match.format(etag=etag))
    assert res.headers["ETag"] == etag
    assert res.headers["Cache-Control"] == "private, max-age=86400"
    assert res.body == (b"" if status == 304 else first.body)


def test_each_ticket_is_drawn_once_per_process(client, renders):
    first, second = (buy(client, body()).json["ticketId"] for _ in range(2))
    images = [fetch(client, first).body for _ in range(3)]
    etag = fetch(client, first).headers["ETag"]
    fetch(client, first, 304, if_none_match=etag)
    fetch(client, second)
    fetch(client, second)
    assert images[0] == images[1] == images[2]
    assert [text.split(":")[1] for _, _, text in renders] == [first, second]


def test_concurrent_first_requests_draw_the_ticket_once(client, store, renders, monkeypatch):
    ticket_id = buy(client, body()).json["ticketId"]
    drawing, reading = museum_ticket_image.render_ticket, store.get_ticket
    read, all_read = [], threading.Event()

    def read_ticket(*args):
        ticket = reading(*args)
        read.append(ticket)
        return ticket

    def held(*args):
        # The first drawing waits until all six requests have read the ticket and want
        # its image: each that did not wait for this drawing would draw one of its own.
        all_read.wait(timeout=30)
        return drawing(*args)

    monkeypatch.setattr(store, "get_ticket", read_ticket)
    monkeypatch.setattr(museum_ticket_image, "render_ticket", held)
    client.get("/v1.1/museum-hours", headers=VISITOR, status=200)  # signed in before they start
    bodies = []
    threads = [threading.Thread(target=lambda: bodies.append(fetch(client, ticket_id).body))
               for _ in range(6)]
    for thread in threads:
        thread.start()
    wait_until(lambda: len(read) == 6, 30, what="six requests reading the ticket")
    all_read.set()
    for thread in threads:
        thread.join(timeout=30)
    assert len(bodies) == 6 and len(set(bodies)) == 1
    assert len(renders) == 1


def test_renaming_the_event_draws_a_new_image(client, renders):
    event = create_event(client, name="Night at the Museum")
    ticket_id = buy(client, body("event", eventId=event["eventId"])).json["ticketId"]
    before = fetch(client, ticket_id)
    client.patch_json(f"{EVENTS}/{event['eventId']}", {"name": "Night of the Owls"},
                      headers=ADMIN, status=200)
    after = fetch(client, ticket_id, 200, if_none_match=before.headers["ETag"])
    assert after.headers["ETag"] != before.headers["ETag"]
    assert after.body != before.body
    assert "Night of the Owls" in [value for _, value in renders[-1][1]]
    assert read_qr(after.body) == read_qr(before.body), "the signed text does not change"
    fetch(client, ticket_id, 304, if_none_match=after.headers["ETag"])
    assert len(renders) == 2


# -- errors ---------------------------------------------------------------------------------

@pytest.mark.parametrize("ticket_id", [
    "nope", "3fa85f64-5717-4562-b3fc-2c963f66afa", "3fa85f64_5717_4562_b3fc_2c963f66afa6",
    "3fa85f64-5717-4562-b3fc-2c963f66afa6-0", "g" * 36,
])
def test_a_malformed_ticket_id_is_refused(client, ticket_id):
    assert_problem(fetch(client, ticket_id, 400), 400, "ticketId")


def test_an_unknown_ticket_is_not_found(client):
    assert_problem(fetch(client, UNKNOWN_ID, 404), 404)


@pytest.mark.parametrize("seen_before", [False, True], ids=["never-drawn", "drawn-before"])
def test_a_ticket_of_a_cancelled_event_is_gone(client, seen_before):
    event = create_event(client)
    ticket_id = buy(client, body("event", eventId=event["eventId"])).json["ticketId"]
    etag = fetch(client, ticket_id).headers["ETag"] if seen_before else "*"
    cancel_event(client, event["eventId"])
    assert_problem(fetch(client, ticket_id, 410), 410)
    assert_problem(fetch(client, ticket_id, 410, if_none_match=etag), 410)


# -- at the door ----------------------------------------------------------------------------

class Door:
    """Tickets in a store and the QR texts a scanner could read for them on `today`."""

    def __init__(self, store, secret, day):
        self.store = store
        today, tomorrow = day.isoformat(), (day + timedelta(days=1)).isoformat()
        store.create_event(event("e1", "Night at the Museum", [today, tomorrow]))
        store.create_event(event("e2", "Cancelled Concert", [today]))
        general = self.ticket(1, "general", today)
        special = self.ticket(2, "event", today, event_id("e1"))
        cancelled = self.ticket(3, "event", today, event_id("e2"))
        store.cancel_event(event_id("e2"))
        tomorrows = self.ticket(4, "general", tomorrow)
        genuine = museum_door.qr_text(secret, *general)
        self.texts = {
            "general": genuine,
            "event": museum_door.qr_text(secret, *special),
            "tag-changed": flip(genuine, 3, 5),
            "id-changed": flip(genuine, 1, 0),
            "other-secret": museum_door.qr_text(secret + "!", *general),
            "code-not-the-tickets": museum_door.qr_text(secret, general[0], code(9, "general")),
            "garbage": "https://example.org/not-a-ticket",
            "empty": "",
            "too-few-parts": genuine.rpartition(":")[0],
            "other-version": "MUSEUM2" + genuine.removeprefix("MUSEUM1"),
            "non-ascii-tag": genuine[:-1] + "\u00e9",
            # What Python makes of bytes that are not UTF-8 on a command line.
            "not-utf8-bytes": genuine.replace(general[0], "\udcff\udcfe"),
            "unknown": museum_door.qr_text(secret, UNKNOWN_ID, code(1, "general")),
            "cancelled": museum_door.qr_text(secret, *cancelled),
            "tomorrow": museum_door.qr_text(secret, *tomorrows),
        }
        self.dates = {"today": today, "tomorrow": tomorrow}

    def ticket(self, number, kind, day, event=None):
        ticket_id = f"00000000-0000-4000-8000-{number:012d}"
        self.store.create_ticket({
            "ticketId": ticket_id, "ticketType": kind, "ticketDate": day, "eventId": event,
            "confirmationCode": code(number, kind), "email": "door@example.org",
            "price": 0, "currency": "EUR"})
        return ticket_id, code(number, kind)


def event_id(name):
    return f"00000000-0000-4000-9000-{name.encode().hex():0>12}"


def event(name, title, dates):
    return {"eventId": event_id(name), "name": title, "location": "Hall",
            "eventDescription": "", "dates": dates, "price": 0.0}


def code(number, kind):
    return f"ticket-{kind}-{number:06x}-{number:05x}"


# (scanned text, first word of the verdict, what else the verdict must mention)
VERDICTS = [
    pytest.param("general", "valid", ["general", "{today}"], id="valid-general"),
    pytest.param("event", "valid", ["Night at the Museum", "{today}"], id="valid-event"),
    pytest.param("tag-changed", "forged", [], id="tag-changed"),
    pytest.param("id-changed", "forged", [], id="id-changed"),
    pytest.param("other-secret", "forged", [], id="other-secret"),
    pytest.param("code-not-the-tickets", "forged", [], id="code-not-the-tickets"),
    pytest.param("garbage", "unreadable", [], id="garbage"),
    pytest.param("empty", "unreadable", [], id="empty"),
    pytest.param("too-few-parts", "unreadable", [], id="too-few-parts"),
    pytest.param("other-version", "unreadable", [], id="other-version"),
    pytest.param("non-ascii-tag", "unreadable", [], id="non-ascii-tag"),
    pytest.param("not-utf8-bytes", "unreadable", [], id="not-utf8-bytes"),
    pytest.param("unknown", "unknown", [], id="unknown"),
    pytest.param("cancelled", "cancelled", [], id="cancelled"),
    pytest.param("tomorrow", "wrong date", ["{tomorrow}"], id="wrong-date"),
]


def assert_verdict(verdict, door, word, mentions):
    if mentions:
        assert verdict.startswith(word), verdict
        for mention in mentions:
            assert mention.format(**door.dates).lower() in verdict.lower(), verdict
    else:
        assert verdict == word


@pytest.mark.parametrize("scanned, word, mentions", VERDICTS)
def test_verify_ticket_gives_the_doors_verdict(store, scanned, word, mentions):
    today = date.fromisoformat(TODAY)
    door = Door(store, SECRET, today)
    verdict = museum_door.verify_ticket(door.texts[scanned], SECRET, store, today,
                                        ENTRY_TIMES)
    assert_verdict(verdict, door, word, mentions)


@pytest.mark.parametrize("scanned, word, mentions", VERDICTS)
def test_the_verify_ticket_command_prints_the_verdict(tmp_path, store, db_path, scanned, word,
                                                      mentions):
    door = Door(store, SECRET, datetime.now(timezone.utc).date())  # the command's today is real
    status, out, err = verify_command(
        tmp_path, door.texts[scanned], db_path,
        f"[museum]\ntimezone = UTC\n[tickets]\nqr_secret = {SECRET}\n")
    assert_verdict(out.strip(), door, word, mentions)
    assert (status == 0) == (word == "valid"), (status, err)
    assert err == ""


def test_the_verify_ticket_command_reads_a_generated_secret_from_the_database(
        tmp_path, store, db_path):
    secret = store.setting("qr_secret", "generated-at-first-start-0123456789abcdef")
    door = Door(store, secret, datetime.now(timezone.utc).date())
    status, out, _ = verify_command(tmp_path, door.texts["general"], db_path)
    assert (status, out.split(":")[0]) == (0, "valid")

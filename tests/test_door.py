"""The door: admitting tickets at the entrance, the day's counters, undoing an admission,
and the two rules that keep a sold ticket valid (no sold date removed from its event, and
an Idempotency-Key retry answered before the rules are checked again).

Today is conftest's NOW, Sunday 2026-11-22 (UTC), an open day; tickets are bought for it
through the API, and their QR texts are made with the secret the service keeps.
"""

import json
import sqlite3
import uuid
from datetime import datetime, timezone

import pytest
import webtest

import museum
import museum_door
import storage
from storage.sqlite import SQLiteStore
from conftest import ADMIN, GATE, TODAY, VISITOR, assert_problem
from commands import verify_command
from ticketing import OPEN_DAY, buy, cancel_event, create_event, query

ADMISSIONS = "/v1.1/admissions"
SUMMARY = f"{ADMISSIONS}/summary"
EVENTS = "/v1.1/special-events"
ADMITTED_AT = "2026-11-22T12:00:00Z"  # NOW as RFC 3339
DOOR_FIELDS = {"result", "ticketId", "ticketType", "ticketDate", "confirmationCode"}


@pytest.fixture
def door(client, store):
    """Buys tickets through the API and presents them at the door as a scanner would."""

    class Door:
        def sell(self, day=TODAY, event=None):
            payload = {"ticketType": "general", "ticketDate": day, "email": "ada@example.org",
                       "phone": "+44 20 7946 0958"}
            if event:
                payload.update(ticketType="event", eventId=event["eventId"])
            return buy(client, payload, headers=VISITOR).json

        def qr(self, ticket):
            return museum_door.qr_text(store.setting("qr_secret"), ticket["ticketId"],
                                       ticket["confirmationCode"])

        def scan(self, text, status, headers=GATE):
            return client.post_json(ADMISSIONS, {"code": text}, headers=headers, status=status)

        def type_code(self, code, status, headers=GATE):
            return client.post_json(ADMISSIONS, {"confirmationCode": code}, headers=headers,
                                    status=status)

    return Door()


def assert_outcome(res, status, result, ticket=None):
    """A door answer: `result` with `status`; problem+json unless admitted; the ticket's
    details where it is known, and never the buyer's email or phone."""
    body = res.json if status == 201 else assert_problem(res, status)
    assert body["result"] == result
    assert "email" not in body and "phone" not in body
    if ticket is None:
        assert not DOOR_FIELDS - {"result"} & set(body), body
    else:
        assert {name: body[name] for name in DOOR_FIELDS - {"result"}} == {
            name: ticket[name] for name in DOOR_FIELDS - {"result"}}
    return body


# -- the outcomes --------------------------------------------------------------------------

def test_a_ticket_for_today_is_admitted_once(door, db_path):
    ticket = door.sell()
    admitted = assert_outcome(door.scan(door.qr(ticket), 201), 201, "admitted", ticket)
    assert admitted["admittedAt"] == ADMITTED_AT and admitted["admittedBy"] == "gate"
    assert "eventName" not in admitted
    again = assert_outcome(door.scan(door.qr(ticket), 409, headers=ADMIN), 409,
                           "already-admitted", ticket)
    assert (again["admittedAt"], again["admittedBy"]) == (ADMITTED_AT, "gate")
    assert query(db_path, "SELECT count(*) FROM admissions") == [(1,)]


def test_an_event_ticket_is_admitted_with_its_event_name(client, door):
    event = create_event(client, name="Night at the Museum", dates=[TODAY, "2026-12-05"])
    admitted = door.scan(door.qr(door.sell(event=event)), 201).json
    assert admitted["eventName"] == "Night at the Museum"
    assert admitted["ticketType"] == "event"


def test_a_typed_confirmation_code_admits_like_the_qr_code(door):
    ticket = door.sell()
    typed = f"  {ticket['confirmationCode'].upper()} "  # as a person might type it
    assert_outcome(door.type_code(typed, 201), 201, "admitted", ticket)
    assert_outcome(door.scan(door.qr(ticket), 409), 409, "already-admitted", ticket)


def test_a_ticket_for_another_day_is_the_wrong_date(door, db_path):
    ticket = door.sell(day=OPEN_DAY)
    body = assert_outcome(door.scan(door.qr(ticket), 409), 409, "wrong-date", ticket)
    assert body["ticketDate"] == OPEN_DAY and "admittedAt" not in body
    assert query(db_path, "SELECT count(*) FROM admissions") == [(0,)]


def test_the_wrong_date_says_whether_the_ticket_is_early_or_past(door, store):
    ticket = door.sell(day=OPEN_DAY)
    early = assert_outcome(door.scan(door.qr(ticket), 409), 409, "wrong-date", ticket)
    assert early["when"] == "early"
    assert early["detail"] == f"early: ticket for {OPEN_DAY} (in 2 days)"
    past = store.create_ticket({
        "ticketId": str(uuid.uuid4()), "ticketType": "general", "ticketDate": "2026-11-20",
        "eventId": None, "confirmationCode": "ticket-general-abcdef-12345",
        "email": "ada@example.org", "price": 0, "currency": "EUR"})[0]
    body = assert_outcome(door.type_code(past["confirmationCode"], 409), 409, "wrong-date",
                          past)
    assert (body["when"], body["detail"]) == ("past", "past: ticket was for 2026-11-20")


def test_the_wrong_date_counts_one_day_in_the_singular(door, store):
    store.create_ticket({
        "ticketId": str(uuid.uuid4()), "ticketType": "general", "ticketDate": "2026-11-23",
        "eventId": None, "confirmationCode": "ticket-general-abcdef-12345",
        "email": "ada@example.org", "price": 0, "currency": "EUR"})
    body = assert_problem(door.type_code("ticket-general-abcdef-12345", 409), 409)
    assert body["detail"] == "early: ticket for 2026-11-23 (in 1 day)"


@pytest.mark.parametrize("typed", [lambda code: code[-12:], lambda code: code[-12:].upper()])
def test_the_random_part_of_a_code_typed_alone_admits(client, door, typed):
    event = create_event(client, dates=[TODAY])
    for ticket in (door.sell(), door.sell(event=event)):
        assert_outcome(door.type_code(typed(ticket["confirmationCode"]), 201), 201, "admitted",
                       ticket)
    assert_outcome(door.type_code("abcdef-12345", 404), 404, "unknown")


def test_a_ticket_of_a_cancelled_event_is_refused(client, door):
    event = create_event(client, dates=[TODAY])
    ticket = door.sell(event=event)
    cancel_event(client, event["eventId"])
    assert_outcome(door.scan(door.qr(ticket), 410), 410, "cancelled", ticket)


@pytest.mark.parametrize("tamper", [
    lambda text: text[:-1] + ("0" if text[-1] != "0" else "1"),  # one character of the tag
    lambda text: text.replace("ticket-general-", "ticket-event-"),  # the code
])
def test_a_forged_code_shows_no_ticket(door, db_path, tamper):
    ticket = door.sell()
    assert_outcome(door.scan(tamper(door.qr(ticket)), 422), 422, "forged")
    assert query(db_path, "SELECT count(*) FROM admissions") == [(0,)]


@pytest.mark.parametrize("misread", [
    lambda text: "hello, world",  # not a ticket at all
    lambda text: "MUSEUM1:" + "é" * 40,  # not ASCII
    lambda text: text[:-3],  # a truncated read
    lambda text: text.upper(),  # a scanner typing with caps lock
    lambda text: "https://museum.example.org/visit",
    lambda text: "WIFI:S:Museum guests;T:WPA;P:welcome;;",
])
def test_a_misread_is_unreadable_not_forged(door, db_path, misread):
    ticket = door.sell()
    body = assert_outcome(door.scan(misread(door.qr(ticket)), 422), 422, "unreadable")
    assert body["detail"] == "This is not a museum ticket's QR code; scan again."
    assert query(db_path, "SELECT count(*) FROM admissions") == [(0,)]


def test_a_genuine_code_of_a_ticket_never_sold_is_unknown(door, store):
    made_up = museum_door.qr_text(store.setting("qr_secret"), str(uuid.uuid4()),
                                  "ticket-general-abcdef-12345")
    assert_outcome(door.scan(made_up, 404), 404, "unknown")
    assert_outcome(door.type_code("ticket-general-abcdef-12345", 404), 404, "unknown")


@pytest.mark.parametrize("body, field", [
    ({}, "code"),
    ({"code": "MUSEUM1:x", "confirmationCode": "ticket-general-abcdef-12345"},
     "confirmationCode"),
    ({"code": "MUSEUM1:x", "ticketId": "3fa85f64-5717-4562-b3fc-2c963f66afa6"}, "ticketId"),
    ({"code": 42}, "code"),
    ({"confirmationCode": ""}, "confirmationCode"),
    ({"code": "M" * 513}, "code"),
    ({"code": None}, "code"),
])
def test_a_malformed_body_is_400_naming_the_field(client, body, field):
    res = client.post_json(ADMISSIONS, body, headers=GATE, status=400)
    assert_problem(res, 400, field)


# -- who may use the door ------------------------------------------------------------------

def test_visitors_may_not_scan_or_read_the_counters(client, door):
    ticket = door.sell()
    res = door.scan(door.qr(ticket), 403, headers=VISITOR)
    assert assert_problem(res, 403)["detail"] == "This needs the gate role."
    assert_problem(client.get(SUMMARY, headers=VISITOR, status=403), 403)
    assert_problem(client.post_json(ADMISSIONS, {"code": "x"}, status=401), 401)


def test_gates_may_not_manage_events_or_undo_another_users_admissions(client, door):
    ticket = door.sell()
    door.scan(door.qr(ticket), 201, headers=ADMIN)
    res = client.delete(f"{ADMISSIONS}/{ticket['ticketId']}", headers=GATE, status=403)
    assert "only its own admissions" in assert_problem(res, 403)["detail"]
    res = client.post_json(EVENTS, {}, headers=GATE, status=403)
    assert assert_problem(res, 403)["detail"] == "This needs the admin role."


def test_gates_may_do_what_visitors_may(client):
    assert client.get("/v1.1/museum-hours", headers=GATE, status=200).json
    res = buy(client, {"ticketType": "general", "ticketDate": TODAY, "email": "a@b.org"},
              headers=GATE)
    assert res.status_int == 201


# -- undoing an admission ------------------------------------------------------------------

def test_an_admin_undoes_an_admission_and_the_ticket_admits_again(client, door):
    ticket = door.sell()
    door.scan(door.qr(ticket), 201)
    client.delete(f"{ADMISSIONS}/{ticket['ticketId']}", headers=ADMIN, status=204)
    res = client.delete(f"{ADMISSIONS}/{ticket['ticketId']}", headers=ADMIN, status=404)
    assert_problem(res, 404)
    assert door.scan(door.qr(ticket), 201, headers=ADMIN).json["admittedBy"] == "admin"


def test_undoing_needs_a_ticket_id(client):
    assert_problem(client.delete(f"{ADMISSIONS}/not-a-uuid", headers=ADMIN, status=400),
                   400)
    assert_problem(client.delete(f"{ADMISSIONS}/{uuid.uuid4()}", headers=ADMIN, status=404),
                   404)


# -- the day's counters --------------------------------------------------------------------

def test_the_summary_counts_sold_and_admitted_per_kind_and_event(client, door):
    zoo = create_event(client, name="Zoology night", dates=[TODAY])
    art = create_event(client, name="Art walk", dates=[TODAY, "2026-12-05"])
    gone = create_event(client, name="Cancelled talk", dates=[TODAY])
    generals = [door.sell() for _ in range(3)]
    door.sell(day=OPEN_DAY)  # another day: not counted today
    art_tickets = [door.sell(event=art) for _ in range(2)]
    door.sell(event=zoo)
    door.sell(event=gone)
    cancel_event(client, gone["eventId"])
    door.scan(door.qr(generals[0]), 201, headers=ADMIN)
    for ticket in (generals[1], art_tickets[0]):
        door.scan(door.qr(ticket), 201)

    summary = client.get(SUMMARY, headers=GATE, status=200).json
    assert summary == {
        "date": TODAY,
        "sold": {"general": 3, "event": 3},
        "admitted": {"general": 2, "event": 1},
        "events": [
            {"eventId": art["eventId"], "name": "Art walk", "sold": 2, "admitted": 1},
            {"eventId": zoo["eventId"], "name": "Zoology night", "sold": 1, "admitted": 0},
        ],
        # Each entrance by the user (device) that admitted, sorted by name.
        "devices": [{"name": "admin", "admitted": 1}, {"name": "gate", "admitted": 2}],
        "doubleEntries": 0,
    }
    other_day = client.get(SUMMARY, {"date": OPEN_DAY}, headers=ADMIN, status=200).json
    assert other_day["sold"] == {"general": 1, "event": 0} and other_day["events"] == []
    assert other_day["devices"] == []


@pytest.mark.parametrize("query_string", ["date=2026-02-30", "date=today", "date="])
def test_a_malformed_summary_date_is_400(client, query_string):
    assert_problem(client.get(f"{SUMMARY}?{query_string}", headers=GATE, status=400), 400,
                   "date")


# -- the scanner page ----------------------------------------------------------------------

@pytest.mark.parametrize("path, media_type", [
    ("/scan", "text/html"), ("/scan/scan.js", "text/javascript"), ("/scan/scan.css", "text/css")])
def test_the_scanner_page_is_served_without_credentials_under_a_strict_policy(client, path,
                                                                             media_type):
    res = client.get(path, status=200)
    assert res.content_type == media_type
    policy = res.headers["Content-Security-Policy"]
    assert "default-src 'self'" in policy and "unsafe-inline" not in policy
    assert "frame-ancestors 'none'" in policy


def test_the_scanner_page_loads_nothing_from_elsewhere(client):
    page = client.get("/scan", status=200).text
    assert "http://" not in page and "https://" not in page and "<script>" not in page


def test_loading_the_scanner_page_costs_no_failed_login(client):
    """The page signs in by itself: its files never answer 401, so gates behind one address
    loading it again and again count no failure towards that address's lock-out."""
    for _ in range(20):
        for path in ("/scan", "/scan/scan.js", "/scan/scan.css"):
            client.get(path, status=200)
    client.get(SUMMARY, headers=GATE, status=200)


# -- keeping a sold ticket valid -----------------------------------------------------------

def test_a_change_removing_sold_dates_is_409_and_changes_nothing(client, door):
    event = create_event(client, dates=["2026-12-05", "2026-12-06", "2026-12-07"])
    for _ in range(2):
        door.sell(day="2026-12-05", event=event)
    door.sell(day="2026-12-06", event=event)
    path = f"{EVENTS}/{event['eventId']}"
    res = client.patch_json(path, {"dates": ["2026-12-07", "2026-12-08"], "price": 1},
                            headers=ADMIN, status=409)
    problem = assert_problem(res, 409, "dates")
    assert "2026-12-05 (2 sold)" in problem["detail"] and "2026-12-06 (1 sold)" in problem[
        "detail"]
    assert client.get(path, headers=VISITOR, status=200).json == event
    # Removing an unsold date and adding one work as before.
    changed = client.patch_json(path, {"dates": ["2026-12-05", "2026-12-06", "2026-12-20"]},
                                headers=ADMIN, status=200).json
    assert changed["dates"] == ["2026-12-05", "2026-12-06", "2026-12-20"]
    client.delete(path, headers=ADMIN, status=204)  # cancelling stays allowed


def test_an_idempotent_retry_after_midnight_gets_the_ticket_sold_before_it(config, store):
    moment = [datetime(2026, 11, 22, 23, 59, 30, tzinfo=timezone.utc)]
    client = webtest.TestApp(museum.create_app(config, store=store, clock=lambda: moment[0]),
                             lint=True)
    payload = {"ticketType": "general", "ticketDate": "2026-11-22", "email": "ada@example.org"}
    sold = buy(client, payload, headers=VISITOR, key="order-4711").json
    moment[0] = datetime(2026, 11, 23, 0, 0, 30, tzinfo=timezone.utc)  # Monday: closed
    retried = buy(client, payload, headers=VISITOR, key="order-4711").json
    assert retried == sold
    # A new sale for that day is refused, so the rules still hold for anything new.
    assert_problem(buy(client, payload, headers=VISITOR, status=400), 400, "ticketDate")
    # The same key with another body is still a conflict, whatever the day.
    assert_problem(buy(client, {**payload, "email": "bob@example.org"}, headers=VISITOR,
                       key="order-4711", status=409), 409)


def test_the_door_answers_are_json_without_personal_data(door):
    ticket = door.sell()
    raw = door.scan(door.qr(ticket), 201).body
    assert b"ada@example.org" not in raw and b"7946" not in raw
    assert json.loads(raw)["confirmationCode"] == ticket["confirmationCode"]


# -- verify-ticket: the door's verdict on the server, reading only -------------------------

def test_verify_ticket_tells_an_admitted_ticket_and_writes_nothing(tmp_path, store, door):
    today = datetime.now(timezone.utc).date().isoformat()  # the command's today is real
    ticket = store.create_ticket({
        "ticketId": str(uuid.uuid4()), "ticketType": "general", "ticketDate": today,
        "eventId": None, "confirmationCode": "ticket-general-abcdef-12345",
        "email": "ada@example.org", "price": 0, "currency": "EUR"})[0]
    text = door.qr(ticket)
    database = tmp_path / "museum.sqlite3"
    store.close()
    before = database.read_bytes()
    status, out, err = verify_command(tmp_path, text, database)
    assert (status, out, err) == (0, f"valid: general entry, {today}, not admitted yet", "")
    # A reader of a WAL database may leave an empty log beside it, never a change.
    assert database.read_bytes() == before
    assert not (tmp_path / "museum.sqlite3-wal").exists() or \
        (tmp_path / "museum.sqlite3-wal").stat().st_size == 0
    reopened = storage.open_store(str(database))
    reopened.admit(ticket["ticketId"], "gate2", "2026-11-22T10:32:00Z")
    reopened.close()
    status, out, _ = verify_command(tmp_path, text, database)
    assert (status, out) == (1, "already admitted at 2026-11-22T10:32:00Z by gate2")
    assert storage.open_store(str(database)).door_summary(today)["admitted"]["general"] == 1


def test_verify_ticket_takes_a_typed_code_whole_or_its_random_part(tmp_path, store, door):
    today = datetime.now(timezone.utc).date().isoformat()  # the command's today is real
    store.create_ticket({
        "ticketId": str(uuid.uuid4()), "ticketType": "general", "ticketDate": today,
        "eventId": None, "confirmationCode": "ticket-general-13c93e-c9b85",
        "email": "ada@example.org", "price": 0, "currency": "EUR"})
    store.create_ticket({
        "ticketId": str(uuid.uuid4()), "ticketType": "general", "ticketDate": "2026-01-02",
        "eventId": None, "confirmationCode": "ticket-general-0000aa-00001",
        "email": "ada@example.org", "price": 0, "currency": "EUR"})
    store.setting("qr_secret", "a secret")  # as once a ticket was sold through the API
    database = tmp_path / "museum.sqlite3"
    store.close()
    valid = f"valid: general entry, {today}, not admitted yet"
    assert verify_command(tmp_path, "ticket-general-13c93e-c9b85", database)[:2] == (0, valid)
    assert verify_command(tmp_path, "13C93E-C9B85", database)[:2] == (0, valid)
    assert verify_command(tmp_path, "13c93e-c9b86", database)[:2] == (1, "unknown")
    assert verify_command(tmp_path, "0000aa-00001", database)[:2] == (
        1, "wrong date, past: ticket was for 2026-01-02")


def test_verify_ticket_generates_no_secret(tmp_path):
    database = tmp_path / "museum.sqlite3"
    storage.open_store(str(database)).close()  # a database where nothing was sold yet
    status, out, err = verify_command(tmp_path, "MUSEUM1:x:y:z", database)
    assert (status, out) == (1, "")
    assert err == "museum: no QR secret in the database yet: no ticket was sold"
    assert storage.open_store(str(database)).setting("qr_secret") is None


def test_verify_ticket_never_creates_or_migrates_a_database(tmp_path, monkeypatch):
    status, _, err = verify_command(tmp_path, "MUSEUM1:x:y:z", tmp_path / "none.sqlite3")
    assert status == 1 and len(err.splitlines()) == 1 and "none.sqlite3" in err
    assert not (tmp_path / "none.sqlite3").exists()
    old = tmp_path / "old.sqlite3"
    current = len(SQLiteStore.MIGRATIONS)
    monkeypatch.setattr(SQLiteStore, "MIGRATIONS", SQLiteStore.MIGRATIONS[:1])
    storage.open_store(str(old)).close()
    status, _, err = verify_command(tmp_path, "MUSEUM1:x:y:z", old)
    assert status == 1
    assert err == (f"museum: {old}: database schema version 1, this service uses "
                   f"{current}; migrate it with 'museum migrate' or 'museum serve --migrate'")
    assert sqlite3.connect(old).execute("PRAGMA user_version").fetchone() == (1,)

"""The door that never loses a visitor and that junk cannot stop: a
scan's Idempotency-Key replayed, `sameDevice`, scans admitted offline (`scannedAt`) and the
double entries they find, `unreadable` input that counts toward no limit, and the day's
list for deciding without the service (`GET /v1.1/admissions/list`).

The clock is conftest's NOW (Sunday 2026-11-22, noon UTC) unless a test moves it.
"""

import hashlib
import json
from datetime import timedelta

import pytest
import webtest

import museum
import museum_door
import storage
from conftest import ADMIN, GATE, NOW, TODAY, VISITOR, assert_problem
from ticketing import buy, create_event

ADMISSIONS = "/v1.1/admissions"
LIST = f"{ADMISSIONS}/list"
SUMMARY = f"{ADMISSIONS}/summary"
REPORT = "/v1.1/reports/sales"
TOMORROW = "2026-11-23"  # a Monday: closed, but a gate may read its list
OPEN_DAY = "2026-11-24"
ADMITTED_AT = "2026-11-22T12:00:00Z"



@pytest.fixture
def door(config, store, clock):
    app = webtest.TestApp(museum.create_app(config, store=store, clock=clock), lint=True)
    return Door(app, store)


class Door:
    """Sells tickets through the API and presents them as the door's page does."""

    def __init__(self, app, store):
        self.app = app
        self.store = store

    def sell(self, day=TODAY, **fields):
        payload = {"ticketType": "general", "ticketDate": day, "email": "ada@example.org",
                   "phone": "+44 20 7946 0958", **fields}
        return buy(self.app, payload, headers=VISITOR).json

    def qr(self, ticket):
        return museum_door.qr_text(self.store.setting("qr_secret"), ticket["ticketId"],
                                   ticket["confirmationCode"])

    def scan(self, text, status, headers=GATE, key=None, **body):
        if key is not None:
            headers = {**headers, "Idempotency-Key": key}
        return self.app.post_json(ADMISSIONS, {"code": text, **body}, headers=headers,
                                  status=status)

    def type_code(self, code, status, headers=GATE):
        return self.app.post_json(ADMISSIONS, {"confirmationCode": code}, headers=headers,
                                  status=status)

    def list(self, status=200, headers=GATE, **params):
        return self.app.get(LIST, params, headers=headers, status=status)


# -- a scan's id ----------------------------------------------------------------------------

def test_a_replayed_scan_answers_the_admission_it_made(door, clock):
    ticket = door.sell()
    first = door.scan(door.qr(ticket), 201, key="scan-1")
    clock.now += timedelta(minutes=5)  # the page retried long after: still its admission
    again = door.scan(door.qr(ticket), 201, key="scan-1")
    assert again.json == first.json
    assert first.json["admittedAt"] == ADMITTED_AT
    history = door.app.get(f"{ADMISSIONS}/{ticket['ticketId']}", headers=GATE).json["history"]
    assert [entry["action"] for entry in history] == ["admitted"]


def test_a_scans_key_outlives_a_restart(door, config, db_path, clock):
    ticket = door.sell()
    first = door.scan(door.qr(ticket), 201, key="scan-1").json
    door.store.close()
    reopened = storage.open_store(db_path)
    try:
        app = webtest.TestApp(museum.create_app(config, store=reopened, clock=clock), lint=True)
        again = app.post_json(ADMISSIONS, {"code": door.qr(ticket)},
                              headers={**GATE, "Idempotency-Key": "scan-1"}, status=201)
        assert again.json == first
    finally:
        reopened.close()


def test_a_key_is_the_users_own(door):
    ticket = door.sell()
    door.scan(door.qr(ticket), 201, key="scan-1")
    other = door.scan(door.qr(ticket), 409, headers=ADMIN, key="scan-1")
    assert other.json["result"] == "already-admitted" and "sameDevice" not in other.json


def test_the_same_key_with_another_body_is_refused_and_admits_nothing(door, db_path):
    first, second = door.sell(), door.sell()
    door.scan(door.qr(first), 201, key="scan-1")
    body = assert_problem(door.scan(door.qr(second), 422, key="scan-1"), 422)
    assert body["detail"] == "This Idempotency-Key was already used with a different request."
    assert "result" not in body
    door.scan(door.qr(second), 201, key="scan-2")


def test_a_refusal_is_decided_afresh_under_its_key(door, clock):
    ticket = door.sell(day=OPEN_DAY)
    assert door.scan(door.qr(ticket), 409, key="scan-1").json["result"] == "wrong-date"
    clock.now += timedelta(days=2)
    assert door.scan(door.qr(ticket), 201, key="scan-1").json["result"] == "admitted"


def test_a_malformed_key_is_a_bad_request(door):
    assert_problem(door.scan(door.qr(door.sell()), 400, key="with space"), 400,
                   "Idempotency-Key")


# -- the same device ------------------------------------------------------------------------

def test_a_second_scan_by_the_same_user_within_two_minutes_is_same_device(door, clock):
    ticket = door.sell()
    door.scan(door.qr(ticket), 201, key="scan-1")
    clock.now += timedelta(minutes=2)
    again = door.scan(door.qr(ticket), 409, key="scan-2").json
    assert (again["result"], again["sameDevice"]) == ("already-admitted", True)
    assert (again["admittedAt"], again["admittedBy"]) == (ADMITTED_AT, "gate")
    other_user = door.scan(door.qr(ticket), 409, headers=ADMIN).json
    assert "sameDevice" not in other_user


def test_after_two_minutes_the_same_user_is_refused_as_anyone(door, clock):
    ticket = door.sell()
    door.scan(door.qr(ticket), 201)
    clock.now += timedelta(minutes=2, seconds=1)
    again = door.scan(door.qr(ticket), 409).json
    assert again["result"] == "already-admitted" and "sameDevice" not in again


# -- scans admitted offline -----------------------------------------------------------------

def test_an_offline_scan_is_admitted_at_its_scan_time(door, clock):
    ticket = door.sell()
    clock.now += timedelta(minutes=30)  # sent when the network came back
    admitted = door.scan(door.qr(ticket), 201, key="offline-1",
                         scannedAt="2026-11-22T13:00:00+01:00").json
    assert admitted["admittedAt"] == ADMITTED_AT
    assert door.app.get(SUMMARY, headers=GATE).json["doubleEntries"] == 0


def test_an_offline_scan_of_a_ticket_admitted_elsewhere_is_a_double_entry(door, clock):
    ticket = door.sell()
    door.scan(door.qr(ticket), 201, headers=ADMIN)  # the online gate, at noon
    clock.now += timedelta(minutes=20)
    scanned = {"scannedAt": "2026-11-22T12:05:00Z"}
    answer = assert_problem(door.scan(door.qr(ticket), 409, key="offline-1", **scanned), 409)
    assert (answer["result"], answer["doubleEntry"]) == ("already-admitted", True)
    assert (answer["admittedAt"], answer["admittedBy"]) == (ADMITTED_AT, "admin")
    # The resent scan records nothing more.
    assert door.scan(door.qr(ticket), 409, key="offline-1", **scanned).json["doubleEntry"]
    history = door.app.get(f"{ADMISSIONS}/{ticket['ticketId']}", headers=GATE).json
    assert history["history"] == [
        {"action": "admitted", "at": ADMITTED_AT, "by": "admin"},
        {"action": "double-entry", "at": "2026-11-22T12:05:00Z", "by": "gate"}]
    assert history["admittedBy"] == "admin"
    assert door.app.get(SUMMARY, headers=GATE).json["doubleEntries"] == 1
    report = door.app.get(REPORT, headers=ADMIN).json
    assert [(row["admitted"], row["doubleEntries"]) for row in report] == [(1, 1)]
    csv_lines = door.app.get(REPORT, headers={**ADMIN, "Accept": "text/csv"}).text.splitlines()
    assert csv_lines[0].endswith(",doubleEntries") and csv_lines[1].endswith(",1")


def test_an_offline_scan_of_a_ticket_the_same_device_admitted_is_no_double_entry(door, clock):
    ticket = door.sell()
    door.scan(door.qr(ticket), 201)  # online at noon; then offline, a second look
    clock.now += timedelta(minutes=10)
    answer = door.scan(door.qr(ticket), 409, scannedAt="2026-11-22T12:01:00Z").json
    assert answer["sameDevice"] is True and "doubleEntry" not in answer
    assert door.app.get(SUMMARY, headers=GATE).json["doubleEntries"] == 0


def test_an_offline_scan_is_judged_at_its_scan_time(door, clock):
    ticket, other = door.sell(), door.sell()
    clock.now = NOW.replace(hour=0, minute=30) + timedelta(days=1)  # synced after midnight
    admitted = door.scan(door.qr(ticket), 201, scannedAt="2026-11-22T23:50:00Z").json
    assert admitted["admittedAt"] == "2026-11-22T23:50:00Z"
    assert door.scan(door.qr(other), 409).json["result"] == "wrong-date"  # scanned now


@pytest.mark.parametrize("scanned_at", [
    "2026-11-22T12:01:01Z",  # more than a minute ahead
    "2026-11-21T11:59:59Z",  # more than a day behind
    "2026-11-22T12:00:00",  # no offset
    "yesterday",
])
def test_a_scan_time_out_of_bounds_is_a_bad_request(door, db_path, scanned_at):
    ticket = door.sell()
    assert_problem(door.scan(door.qr(ticket), 400, scannedAt=scanned_at), 400, "scannedAt")
    assert door.list().json["tickets"][0][5] == "valid"


# -- misreads -------------------------------------------------------------------------------

JUNK = ["https://example.org/", "WIFI:S:guests;T:WPA;P:secret;;", "MUSEUM1:truncated",
        "hello", "4006381333931", "ticket-general", "ticket-general-zzzzzz-zzzzz"]


def test_junk_scans_never_lock_the_gate_out(door, clock):
    """31 and more junk scans, typed junk too, in a few seconds: never 429, and a genuine QR
    and a genuine typed code are admitted right after."""
    for number in range(40):
        junk = JUNK[number % len(JUNK)] + ("" if number < len(JUNK) else str(number))
        body = (door.scan(junk, 422) if number % 2 else door.type_code(junk, 422)).json
        assert body["result"] == "unreadable"
    genuine, typed = door.sell(), door.sell()
    assert door.scan(door.qr(genuine), 201).json["result"] == "admitted"
    assert door.type_code(typed["confirmationCode"], 201).json["result"] == "admitted"


def test_a_qr_text_is_decided_while_the_typed_code_limit_holds(door):
    limit = museum_door.TypedCodeLimit.LIMIT
    for number in range(limit):
        door.type_code(f"ticket-general-{number:06x}-00000", 404)
    refused = door.type_code("ticket-general-ffffff-00000", 429)
    assert int(refused.headers["Retry-After"]) > 0
    door.type_code(door.sell()["confirmationCode"], 429)  # typed: still refused
    assert door.scan(door.qr(door.sell()), 201).json["result"] == "admitted"
    assert door.scan("not a ticket", 422).json["result"] == "unreadable"
    forged = museum_door.qr_text("another secret", door.sell()["ticketId"],
                                 "ticket-general-abcdef-12345")
    assert door.scan(forged, 422).json["result"] == "forged"


# -- what the answers show ------------------------------------------------------------------

def test_admitted_and_refused_answers_carry_the_entry_time(config_text, store):
    config = museum.parse_config(config_text.replace("[log]", "[hours]\nslot_minutes = 30\n"
                                                     "[log]"), "timed.ini")
    door = Door(webtest.TestApp(museum.create_app(config, store=store, clock=lambda: NOW),
                                lint=True), store)
    ticket = door.sell(entryTime="12:00")
    assert door.scan(door.qr(ticket), 201).json["entryTime"] == "12:00"
    assert door.scan(door.qr(ticket), 409).json["entryTime"] == "12:00"
    assert door.list().json["tickets"][0][3] == "12:00"


# -- the day's list -------------------------------------------------------------------------

def test_the_list_shows_the_days_tickets_and_no_personal_data(door, clock):
    event = create_event(door.app, name="Owl night", dates=[TODAY])
    general, admitted = door.sell(), door.sell()
    for_event = door.sell(ticketType="event", eventId=event["eventId"])
    door.sell(day=OPEN_DAY)
    door.scan(door.qr(admitted), 201)
    res = door.list()
    assert res.headers["Cache-Control"] == "no-store" and res.headers["ETag"]
    assert "ada@example.org" not in res.text and "7946" not in res.text
    listed = res.json
    assert (listed["date"], listed["timeZone"], listed["now"], listed["complete"]) == (
        TODAY, "UTC", "2026-11-22T12:00:00+00:00", True)
    assert listed["columns"] == ["ticketId", "codeDigest", "event", "entryTime", "category",
                                 "status", "admittedAt", "admittedBy", "orderId", "collect"]
    assert listed["events"] == [{"eventId": event["eventId"], "eventName": "Owl night"}]

    def digest(ticket):
        return hashlib.sha256(ticket["confirmationCode"].encode()).hexdigest()[:16]

    assert sorted(listed["tickets"]) == sorted([
        [general["ticketId"], digest(general), None, None, None, "valid"],
        [admitted["ticketId"], digest(admitted), None, None, None, "admitted",
         "2026-11-22T12:00:00+00:00", "gate"],
        [for_event["ticketId"], digest(for_event), 0, None, None, "valid"]])


def test_the_list_is_for_gates_and_admins(door):
    assert_problem(door.list(403, headers=VISITOR), 403)
    door.list(401, headers={})
    door.list(headers=ADMIN)


def test_a_gate_reads_today_and_tomorrow_only_an_admin_any_day(door):
    assert door.list(date=TOMORROW).json["date"] == TOMORROW
    for day in ("2026-11-21", "2026-11-24"):
        assert_problem(door.list(400, date=day), 400, "date")
        assert door.list(headers=ADMIN, date=day).json["date"] == day


def test_an_unchanged_list_is_not_sent_again(door):
    door.sell()
    first = door.list()
    etag = first.headers["ETag"]
    again = door.list(304, headers={**GATE, "If-None-Match": etag})
    assert again.headers["ETag"] == etag and again.body == b""
    door.sell()
    assert door.list(headers={**GATE, "If-None-Match": etag}).headers["ETag"] != etag


def test_since_a_cursor_only_what_changed(door, clock):
    valid, admitted, voided, undone = (door.sell() for _ in range(4))
    door.scan(door.qr(undone), 201)
    cursor = door.list().json["cursor"]

    def changes():
        nonlocal cursor
        answer = door.list(since=cursor).json
        assert answer["complete"] is False
        cursor = answer["cursor"]
        return {row[0]: row[5] for row in answer["tickets"]}

    assert changes() == {}
    door.scan(door.qr(admitted), 201)
    assert changes() == {admitted["ticketId"]: "admitted"}
    door.app.delete(f"{ADMISSIONS}/{undone['ticketId']}", headers=GATE, status=204)
    door.app.delete(f"/v1.1/tickets/{voided['ticketId']}", headers=ADMIN, status=204)
    sold = door.sell()
    assert changes() == {undone["ticketId"]: "valid", voided["ticketId"]: "void",
                         sold["ticketId"]: "valid"}
    assert changes() == {}
    assert valid["ticketId"] in {row[0] for row in door.list().json["tickets"]}


def test_a_cancelled_event_changes_its_tickets_rows(door):
    event = create_event(door.app, name="Owl night", dates=[TODAY])
    ticket = door.sell(ticketType="event", eventId=event["eventId"])
    cursor = door.list().json["cursor"]
    door.app.delete(f"/v1.1/special-events/{event['eventId']}", headers=ADMIN, status=204)
    rows = door.list(since=cursor).json["tickets"]
    assert [(row[0], row[5]) for row in rows] == [(ticket["ticketId"], "cancelled")]


@pytest.mark.parametrize("since", ["x", "2026-11-23.1", "2026-11-22.", "2026-11-22.-1"])
def test_a_cursor_of_another_day_or_malformed_is_a_bad_request(door, since):
    assert_problem(door.list(400, since=since), 400, "since")


def test_the_list_names_the_museums_zone_and_clock(config_text, store):
    config = museum.parse_config(config_text.replace("timezone = UTC",
                                                     "timezone = Europe/Berlin"), "zone.ini")
    door = Door(webtest.TestApp(museum.create_app(config, store=store, clock=lambda: NOW),
                                lint=True), store)
    door.scan(door.qr(door.sell()), 201)
    listed = door.list().json
    assert (listed["timeZone"], listed["now"]) == ("Europe/Berlin", "2026-11-22T13:00:00+01:00")
    assert listed["tickets"][0][6:] == ["2026-11-22T13:00:00+01:00", "gate"]
    assert json.loads(json.dumps(listed)) == listed

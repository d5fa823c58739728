"""Timed entry: with `[hours] slot_minutes`, a general ticket names its entry slot
(`entryTime`), each slot sells at most `[capacity] general_per_slot` places, the
availability lists each day's slots, and the door admits a ticket from `[door]
early_minutes` before its slot. Dates follow conftest's NOW (Sunday 2026-11-22, 12:00 UTC):
open 09:00-18:00, Monday 23 closed, Friday 27 open 10:00-16:00. And an event's capacity
removed by PATCH with null.
"""

from datetime import datetime, timezone

import pytest
import webtest

import museum
import museum_config
import museum_door
import museum_mock
import museum_services
import museum_ticket_image
from commands import verify_command
from conftest import ADMIN, GATE, TODAY, VISITOR, assert_problem, zone_at_noon
from ticketing import EVENTS, OPEN_DAY, body, buy, create_event, query, ticket_count

AVAILABILITY = "/v1.1/availability"
TIMED = "[hours]\nslot_minutes = 30\n[capacity]\ngeneral_per_slot = 2\n"


@pytest.fixture
def timed(make_client, config_text):
    """A client of a museum with entry slots of 30 minutes, 2 places each."""
    return make_client(museum.parse_config(config_text + TIMED))


def test_places_per_slot_without_slots_is_a_config_error(config_text):
    with pytest.raises(museum.ConfigError, match=r"general_per_slot: set \[hours\] slot_minutes"):
        museum.parse_config(config_text + "[capacity]\ngeneral_per_slot = 2\n")


# -- buying a timed ticket ------------------------------------------------------------------

def test_a_timed_ticket_carries_its_entry_time_in_the_answer_and_when_read(timed):
    sold = buy(timed, body(entryTime="10:30"), headers=VISITOR).json
    assert sold["entryTime"] == "10:30"
    read = timed.get(f"/v1.1/tickets/{sold['ticketId']}", headers=GATE, status=200).json
    assert read["entryTime"] == "10:30"


def test_the_ticket_image_shows_the_entry_time(timed, store):
    sold = buy(timed, body(entryTime="10:30"), headers=VISITOR).json
    image = timed.get(f"/v1.1/tickets/{sold['ticketId']}/qr", headers=VISITOR, status=200)
    assert image.body == museum_ticket_image.render_ticket(
        "MUSEUM TICKET", [("Type", "General entry"), ("Date", OPEN_DAY), ("Entry", "10:30"),
                          ("Code", sold["confirmationCode"])],
        museum_door.qr_text(store.setting("qr_secret"), sold["ticketId"], sold["confirmationCode"]))


def test_without_timed_entry_tickets_name_no_entry_time(client):
    sold = buy(client, body()).json
    assert "entryTime" not in sold
    assert "entryTime" not in client.get(f"/v1.1/tickets/{sold['ticketId']}", headers=ADMIN,
                                         status=200).json


@pytest.mark.parametrize("case, fields, message", [
    ("missing", {}, "is required: general entry is by entry time, one of the day's slots "
                    "(see the availability)"),
    ("null", {"entryTime": None}, "must not be null"),
    ("no leading zero", {"entryTime": "9:30"}, "must be a time of day HH:MM, such as 10:30"),
    ("with seconds", {"entryTime": "09:30:00"}, "must be a time of day HH:MM, such as 10:30"),
    ("not a time", {"entryTime": "24:00"}, "must be a time of day HH:MM, such as 10:30"),
    ("a number", {"entryTime": 930}, "must be a time of day HH:MM, such as 10:30"),
    ("between slots", {"entryTime": "09:15"}, "must be one of the entry times of 2026-11-24"),
    ("at closing", {"entryTime": "18:00"}, "must be one of the entry times of 2026-11-24"),
    ("before opening", {"entryTime": "08:30"}, "must be one of the entry times of 2026-11-24"),
    ("short day's slot", {"entryTime": "16:00", "ticketDate": "2026-11-27"},
     "must be one of the entry times of 2026-11-27: 10:00, 10:30"),
])
def test_an_entry_time_that_is_not_one_of_the_days_slots_is_refused(timed, db_path, case,
                                                                    fields, message):
    problem = assert_problem(buy(timed, body(**fields), status=400), 400, "entryTime")
    assert [error["message"] for error in problem["errors"]
            if error["field"] == "entryTime"][0].startswith(message), case
    assert ticket_count(db_path) == 0


@pytest.mark.parametrize("entry_time, ended", [("09:00", True), ("11:30", True),
                                               ("12:00", False), ("17:30", False)])
def test_a_slot_of_today_that_has_ended_is_not_sold(timed, db_path, entry_time, ended):
    """At 12:00 the 11:30 slot of 30 minutes has just ended; the 12:00 one has begun."""
    sale = body(ticketDate=TODAY, entryTime=entry_time)
    if ended:
        problem = assert_problem(buy(timed, sale, status=400), 400, "entryTime")
        assert problem["errors"] == [{"field": "entryTime", "code": "slot-ended", "message":
                                      f"the entry slot {entry_time} of today has ended"}]
        assert ticket_count(db_path) == 0
    else:
        assert buy(timed, sale).json["entryTime"] == entry_time


def test_an_event_ticket_names_no_entry_time(timed):
    event = create_event(timed)
    problem = assert_problem(buy(timed, body("event", eventId=event["eventId"],
                                             entryTime="10:00"), status=400), 400, "entryTime")
    assert problem["errors"] == [{"field": "entryTime", "code": "not-allowed",
                                  "message": "must not be given for an event ticket"}]
    assert "entryTime" not in buy(timed, body("event", eventId=event["eventId"])).json


def test_an_entry_time_is_refused_when_timed_entry_is_off(client, db_path):
    problem = assert_problem(buy(client, body(entryTime="10:00"), status=400), 400,
                             "entryTime")
    assert problem["errors"][0]["message"] == \
        "must not be given: this museum has no timed entry"
    assert ticket_count(db_path) == 0


def test_a_full_slot_is_sold_out_naming_the_date_and_entry_time(timed, db_path):
    for _ in range(2):
        buy(timed, body(entryTime="10:00"))
    problem = assert_problem(buy(timed, body(entryTime="10:00"), status=409), 409)
    assert (problem["reason"], problem["date"], problem["entryTime"]) == (
        "sold-out", OPEN_DAY, "10:00")
    assert "eventId" not in problem and "10:00" in problem["detail"]
    assert ticket_count(db_path) == 2
    buy(timed, body(entryTime="10:30"))  # the next slot has its own places


def test_a_voided_timed_ticket_frees_its_slot_place(timed):
    sold = [buy(timed, body(entryTime="10:00")).json for _ in range(2)]
    timed.delete(f"/v1.1/tickets/{sold[0]['ticketId']}", headers=ADMIN, status=204)
    buy(timed, body(entryTime="10:00"))
    assert_problem(buy(timed, body(entryTime="10:00"), status=409), 409)


# -- the availability ----------------------------------------------------------------------

def slots_of(client, day):
    answer = client.get(AVAILABILITY, params={"startDate": day, "endDate": day},
                        headers=VISITOR, status=200).json
    return answer[0].get("slots")


def test_the_availability_lists_each_slot_with_its_places(timed):
    buy(timed, body(entryTime="10:00", ticketDate="2026-11-27"))
    sold = buy(timed, body(entryTime="10:30", ticketDate="2026-11-27")).json
    buy(timed, body(entryTime="10:30", ticketDate="2026-11-27"))
    timed.delete(f"/v1.1/tickets/{sold['ticketId']}", headers=ADMIN, status=204)
    slots = slots_of(timed, "2026-11-27")
    assert [slot["time"] for slot in slots] == [f"{hour}:{minute}" for hour in range(10, 16)
                                                for minute in ("00", "30")]
    assert slots[:3] == [
        {"time": "10:00", "capacity": 2, "sold": 1, "available": 1},
        {"time": "10:30", "capacity": 2, "sold": 1, "available": 1},
        {"time": "11:00", "capacity": 2, "sold": 0, "available": 2}]
    assert slots_of(timed, "2026-11-23") == []  # closed


def test_slots_without_a_capacity_are_unlimited(make_client, config_text):
    unlimited = make_client(museum.parse_config(config_text + "[hours]\nslot_minutes = 240\n"))
    buy(unlimited, body(entryTime="13:00"))
    assert slots_of(unlimited, OPEN_DAY) == [
        {"time": "09:00", "capacity": None, "sold": 0, "available": None},
        {"time": "13:00", "capacity": None, "sold": 1, "available": None},
        {"time": "17:00", "capacity": None, "sold": 0, "available": None}]


def test_without_timed_entry_the_availability_has_no_slots(client):
    assert slots_of(client, OPEN_DAY) is None


def test_the_mock_serves_the_slots_of_its_config(config_text):
    mock = webtest.TestApp(museum_mock.create_mock_app(museum.parse_config(
        config_text + TIMED)))
    days = mock.get(AVAILABILITY, headers=VISITOR, status=200).json
    day = next(day for day in days[1:] if day["open"])  # after today: no slot has ended
    assert day["slots"][0] == {"time": day["slots"][0]["time"], "capacity": 2, "sold": 0,
                               "available": 2}


# -- the door --------------------------------------------------------------------------------

class Clock:
    """A clock the test sets: the door's "now"."""

    def __init__(self):
        self.now = datetime(2026, 11, 22, 12, 0, tzinfo=timezone.utc)

    def __call__(self):
        return self.now

    def set(self, hours, minutes, seconds=0):
        self.now = self.now.replace(hour=hours, minute=minutes, second=seconds)


@pytest.fixture
def door(store, config_text):
    clock = Clock()
    app = webtest.TestApp(museum.create_app(museum.parse_config(config_text + TIMED),
                                            store=store, clock=clock), lint=True)
    return app, clock


def present(app, ticket, status):
    return app.post_json("/v1.1/admissions", {"confirmationCode": ticket["confirmationCode"]},
                         headers=GATE, status=status)


def test_a_timed_ticket_is_too_early_until_15_minutes_before_its_slot(door, db_path):
    app, clock = door
    ticket = buy(app, body(ticketDate=TODAY, entryTime="12:30")).json
    clock.set(12, 14, 59)
    problem = assert_problem(present(app, ticket, 409), 409)
    assert (problem["result"], problem["entryTime"]) == ("too-early", "12:30")
    assert problem["detail"] == "too early: entry at 12:30, admitted from 12:15"
    assert problem["ticketId"] == ticket["ticketId"] and "email" not in problem
    assert query(db_path, "SELECT count(*) FROM admissions") == [(0,)]
    clock.set(12, 15)
    assert present(app, ticket, 201).json["result"] == "admitted"


def test_a_timed_ticket_is_admitted_after_its_slot_began(door):
    app, clock = door
    clock.set(9, 0)  # bought before its slot
    ticket = buy(app, body(ticketDate=TODAY, entryTime="09:30")).json
    clock.set(17, 55)
    assert present(app, ticket, 201).json["result"] == "admitted"


def test_verify_ticket_says_too_early_before_the_entry_time(tmp_path, store, db_path,
                                                            config_text):
    """`museum verify-ticket` gives the door's verdict on the real clock, in a zone where
    it is noon, open all day: a ticket for 23:30 is too early (exit 1), admitting nobody."""
    every_day = "".join(f"{day} = 00:00-23:59\n" for day in museum_config.WEEKDAYS)
    timed = config_text.replace("timezone = UTC", f"timezone = {zone_at_noon()}") + \
        f"[hours]\nslot_minutes = 30\n{every_day}"
    app = webtest.TestApp(museum.create_app(museum.parse_config(timed), store=store))
    today = museum_services.museum_today(museum.parse_config(timed))()
    ticket = buy(app, body(ticketDate=today.isoformat(), entryTime="23:30")).json
    status, out, _ = verify_command(tmp_path, ticket["confirmationCode"], db_path, timed)
    assert (status, out) == (1, "too early: entry at 23:30, admitted from 23:15")
    assert query(db_path, "SELECT count(*) FROM admissions") == [(0,)]


def test_how_early_the_door_admits_is_configured(store, config_text):
    clock = Clock()
    app = webtest.TestApp(museum.create_app(museum.parse_config(
        config_text + TIMED + "[door]\nearly_minutes = 0\n"), store=store, clock=clock))
    ticket = buy(app, body(ticketDate=TODAY, entryTime="12:30")).json
    clock.set(12, 29)
    assert present(app, ticket, 409).json["detail"] == \
        "too early: entry at 12:30, admitted from 12:30"
    clock.set(12, 30)
    present(app, ticket, 201)


# -- an event's capacity removed -------------------------------------------------------------

def test_an_events_capacity_is_removed_with_null(client):
    event = client.post_json(EVENTS, {"name": "Tour", "location": "Hall",
                                      "eventDescription": "Small.", "dates": ["2026-12-05"],
                                      "price": 10, "capacity": 1}, headers=ADMIN,
                             status=201).json
    path = f"{EVENTS}/{event['eventId']}"
    buy(client, body("event", eventId=event["eventId"]))
    assert_problem(buy(client, body("event", eventId=event["eventId"]), status=409), 409)
    patched = client.patch_json(path, {"capacity": None, "price": 12}, headers=ADMIN,
                                status=200).json
    assert "capacity" not in patched and patched["price"] == 12
    assert "capacity" not in client.get(path, headers=VISITOR, status=200).json
    for _ in range(3):
        buy(client, body("event", eventId=event["eventId"]))
    assert client.patch_json(path, {"capacity": None}, headers=ADMIN, status=200).json == \
        client.get(path, headers=VISITOR, status=200).json


@pytest.mark.parametrize("field", ["name", "location", "eventDescription", "dates", "price"])
def test_null_stays_refused_for_every_other_event_field(client, field):
    path = f"{EVENTS}/{create_event(client)['eventId']}"
    res = client.patch_json(path, {field: None, "capacity": None}, headers=ADMIN, status=400)
    problem = assert_problem(res, 400, field)
    assert [error["field"] for error in problem["errors"]] == [field]


def test_a_body_that_is_not_an_object_is_still_refused(client):
    path = f"{EVENTS}/{create_event(client)['eventId']}"
    assert_problem(client.patch_json(path, [None], headers=ADMIN, status=400), 400)


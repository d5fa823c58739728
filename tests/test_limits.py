"""Limits that fit each role, through the API: the door's typed-code limit per
user and shared by every instance (counted in the database), a visitor credential's
purchases per hour (`[auth] visitor_tickets_per_hour`), a gate's email lookups for today
and tomorrow only, a gate's undos of one ticket at most 3 a day, and paged admission
histories.

The clock is conftest's NOW (Sunday 2026-11-22, noon UTC) unless a test moves it.
"""

from datetime import timedelta

import pytest
import webtest
import museum
import museum_door
import storage
from conftest import ADMIN, GATE, NOW, TODAY, VISITOR, assert_problem
from ticketing import OPEN_DAY, body, buy

ADMISSIONS = "/v1.1/admissions"
LOOKUP = f"{ADMISSIONS}/lookup"
TOMORROW = "2026-11-23"
LIMIT = museum_door.TypedCodeLimit.LIMIT



@pytest.fixture
def app_for(config_text, db_path, clock):
    """A factory of apps, each an instance on its own store over the one database, with
    `auth` lines added to [auth]."""
    stores = []

    def make(auth=""):
        config = museum.parse_config(f"{config_text}[auth]\n{auth}", "limits.ini")
        stores.append(storage.open_store(db_path))
        return webtest.TestApp(museum.create_app(config, store=stores[-1], clock=clock),
                               lint=True)

    yield make
    for opened in stores:
        opened.close()


def type_code(app, code, status, headers=GATE):
    return app.post_json(ADMISSIONS, {"confirmationCode": code}, headers=headers,
                         status=status)


def unknown(number):
    return f"ticket-general-{number:06x}-00000"


def sell(app, day=TODAY, headers=ADMIN):
    return buy(app, body(ticketDate=day), headers=headers).json


# -- the door's typed codes: per user, shared by every instance ------------------------------

def test_the_typed_code_limit_is_shared_by_two_instances_and_ends_with_its_window(app_for,
                                                                                  clock):
    first, second = app_for(), app_for()
    for number in range(LIMIT):
        type_code((first, second)[number % 2], unknown(number), 404)
    refused = type_code(second, unknown(LIMIT), 429)  # the one too many, on either
    assert_problem(refused, 429)
    assert refused.headers["Retry-After"] == "60"
    ticket = sell(first)
    type_code(first, ticket["confirmationCode"], 429)  # the other instance refuses too
    clock.now += timedelta(seconds=59)
    assert type_code(second, ticket["confirmationCode"], 429).headers["Retry-After"] == "1"
    clock.now += timedelta(seconds=1)  # the window has ended: a fresh one
    assert type_code(first, ticket["confirmationCode"], 201).json["result"] == "admitted"


def test_the_typed_code_limit_is_each_users_own(app_for):
    door = app_for()
    for number in range(LIMIT + 1):
        type_code(door, unknown(number), 404 if number < LIMIT else 429)
    assert type_code(door, sell(door)["confirmationCode"], 201, ADMIN).json["result"] == \
        "admitted"


def test_a_known_typed_code_and_a_qr_text_count_no_guess(app_for, store):
    door = app_for()
    for _ in range(LIMIT + 5):
        ticket = sell(door)
        type_code(door, ticket["confirmationCode"], 201)
        type_code(door, ticket["confirmationCode"], 409)  # known: admitted before
    assert store.guesses("gate") == (0, None)
    type_code(door, unknown(1), 404)
    assert store.guesses("gate")[0] == 1


# -- a visitor credential's purchases per hour -----------------------------------------------

def test_a_visitor_credential_buys_at_most_its_tickets_per_hour(app_for, clock):
    shop, other_instance = app_for("visitor_tickets_per_hour = 3\n"), \
        app_for("visitor_tickets_per_hour = 3\n")
    for minute in range(3):
        sell((shop, other_instance)[minute % 2], OPEN_DAY, VISITOR)
        clock.now += timedelta(minutes=10)
    refused = buy(other_instance, body(), headers=VISITOR, status=429)
    assert_problem(refused, 429)
    # The first was bought at 12:00, it is 12:30: it leaves the hour at 13:00.
    assert refused.headers["Retry-After"] == str(30 * 60)
    sell(shop, OPEN_DAY, ADMIN)  # an admin (the desk) has no limit
    clock.now += timedelta(minutes=30)
    sell(shop, OPEN_DAY, VISITOR)  # the first one left the hour
    buy(shop, body(), headers=VISITOR, status=429)


def test_a_replayed_purchase_is_answered_at_the_limit(app_for):
    shop = app_for("visitor_tickets_per_hour = 1\n")
    first = buy(shop, body(), headers=VISITOR, key="order-1").json
    assert buy(shop, body(), headers=VISITOR, key="order-1").json == first
    assert_problem(buy(shop, body(), headers=VISITOR, key="order-2", status=429), 429)


def test_without_the_option_a_visitor_buys_without_limit(app_for):
    shop = app_for()
    for _ in range(5):
        sell(shop, OPEN_DAY, VISITOR)


@pytest.mark.parametrize("value", ["0", "-1", "ten", "100001"])
def test_a_bad_purchase_limit_is_a_config_error(config_text, value):
    with pytest.raises(museum.ConfigError, match="visitor_tickets_per_hour"):
        museum.parse_config(f"{config_text}[auth]\nvisitor_tickets_per_hour = {value}\n",
                            "limits.ini")


# -- a gate's email lookups: today and tomorrow ----------------------------------------------

@pytest.mark.parametrize("day, status", [(TODAY, 200), (TOMORROW, 200), (OPEN_DAY, 400),
                                         ("2026-11-21", 400)])
def test_a_gate_looks_emails_up_for_today_and_tomorrow_only(app_for, day, status):
    res = app_for().post_json(LOOKUP, {"email": "ada@example.org", "date": day},
                              headers=GATE, status=status)
    if status == 400:
        assert_problem(res, 400, "date")


def test_an_admin_looks_emails_up_and_a_gate_codes_up_on_any_day(app_for):
    desk = app_for()
    ticket = sell(desk, OPEN_DAY)
    found = desk.post_json(LOOKUP, {"email": "ada@example.org", "date": OPEN_DAY},
                           headers=ADMIN, status=200).json
    assert [each["ticketId"] for each in found["tickets"]] == [ticket["ticketId"]]
    found = desk.post_json(LOOKUP, {"code": ticket["confirmationCode"], "date": OPEN_DAY},
                           headers=GATE, status=200).json
    assert [each["ticketId"] for each in found["tickets"]] == [ticket["ticketId"]]


# -- a gate's undos of one ticket: 3 a day ---------------------------------------------------

def admit_and_undo(door, ticket, headers=GATE, undo_status=204):
    type_code(door, ticket["confirmationCode"], 201, headers)
    return door.delete(f"{ADMISSIONS}/{ticket['ticketId']}", headers=headers,
                       status=undo_status)


def test_a_gate_undoes_one_ticket_at_most_3_times_a_day(app_for, clock):
    door = app_for()
    ticket, other = sell(door), sell(door)
    for _ in range(museum_door.UndoLimit.MOST):
        admit_and_undo(door, ticket)
    refused = admit_and_undo(door, ticket, undo_status=429)
    assert_problem(refused, 429)
    assert refused.json["detail"] == museum_door.UndoLimit.RULE
    assert refused.headers["Retry-After"] == str(12 * 3600)  # noon: midnight is 12 h away
    history = door.get(f"{ADMISSIONS}/{ticket['ticketId']}", headers=GATE).json
    assert history["admitted"] and history["history"][-1]["action"] == "admitted"
    admit_and_undo(door, other)  # another ticket counts apart
    door.delete(f"{ADMISSIONS}/{ticket['ticketId']}", headers=ADMIN, status=204)
    for _ in range(5):  # an admin has no limit
        admit_and_undo(door, ticket, ADMIN)


def test_the_undo_limit_lasts_until_the_museums_day_ends(app_for, clock):
    door = app_for()
    ticket = sell(door, OPEN_DAY)
    clock.now = NOW.replace(day=24, hour=23, minute=50)  # its day, 10 minutes before midnight
    for _ in range(museum_door.UndoLimit.MOST):
        admit_and_undo(door, ticket)
    assert admit_and_undo(door, ticket, undo_status=429).headers["Retry-After"] == "600"


# -- paged admission histories ---------------------------------------------------------------

def test_an_admission_history_is_paged_as_the_listings_are(app_for):
    door = app_for()
    ticket = sell(door)
    for _ in range(3):
        admit_and_undo(door, ticket, ADMIN)
    path = f"{ADMISSIONS}/{ticket['ticketId']}"
    whole = door.get(path, headers=GATE).json["history"]
    assert [entry["action"] for entry in whole] == ["admitted", "undone"] * 3
    page = door.get(path, {"page": "2", "limit": "4"}, headers=GATE)
    assert page.json["history"] == whole[4:]
    assert page.headers["X-Total-Count"] == "6"
    assert 'rel="prev"' in page.headers["Link"] and 'rel="next"' not in page.headers["Link"]
    first = door.get(path, {"limit": "4"}, headers=GATE)
    assert first.json["history"] == whole[:4] and "page=2" in first.headers["Link"]
    assert_problem(door.get(path, {"limit": "0"}, headers=GATE, status=400), 400, "limit")

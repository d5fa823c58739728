"""The storage contract, run against every backend, then what is particular to each.

The `backend` fixture is parametrized over sqlite (a file per test) and PostgreSQL (a fresh
database per test on the server of tests/postgres.py); `store` is a store opened on it.
Two stores opened on one backend behave like two instances of the service.
"""

import logging
import os
import re
import sqlite3
import stat
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing, contextmanager

import pytest

import storage
from serving import ROOT, wait_until
from storage.sql import (
    DEVICE_IN_USE,
    EXPIRED_HOLDS_HELD,
    LAST_DATES_FROM_THE_LISTING_INDEX,
    LIST_QUERY,
    OPEN_COUNT_QUERY,
)
from storage.sqlite import SQLiteStore
from ticketing import fresh_code, write_locked

DEAD_SERVER = "postgresql://museum@127.0.0.1:1/museum"  # nothing listens on port 1


def event(**changes):
    return {"eventId": str(uuid.uuid4()), "name": "Night tour", "location": "Main hall",
            "eventDescription": "By torchlight.", "dates": ["2026-12-01", "2026-12-05"],
            "price": 12.5, **changes}


def ticket(**changes):
    return {"ticketId": str(uuid.uuid4()), "ticketType": "general", "ticketDate": "2026-12-01",
            "eventId": None, "confirmationCode": fresh_code("general"),
            "email": "visitor@example.org", "phone": None, "price": 0, "currency": "EUR",
            **changes}


def event_ticket(event_id, **changes):
    return ticket(ticketType="event", eventId=event_id,
                  confirmationCode=fresh_code("event"), **changes)


# -- the backends --------------------------------------------------------------------------

class Backend:
    """One database of one backend: opens stores on it (closed after the test) and runs
    raw SQL for what the interface does not show."""

    def __init__(self, url):
        self.url = url
        self.stores = []

    def open(self):
        opened = storage.open_store(self.url)
        self.stores.append(opened)
        return opened

    def close_all(self):
        for opened in self.stores:
            opened.close()


class SQLiteBackend(Backend):
    store_class = SQLiteStore
    integrity_error = sqlite3.IntegrityError
    version_statement = "PRAGMA user_version = {}"

    def rows(self, query):
        conn = sqlite3.connect(self.url, isolation_level=None)
        try:
            return conn.execute(query).fetchall()
        finally:
            conn.close()


class PostgresBackend(Backend):
    version_statement = "INSERT INTO schema_migrations (version) VALUES ({})"

    def __init__(self, url):
        super().__init__(url)
        import psycopg

        from storage import postgres

        self.store_class = postgres.PostgresStore
        self.integrity_error = psycopg.IntegrityError

    def rows(self, query, params=None):
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            cursor = conn.execute(query, params)
            return cursor.fetchall() if cursor.description else []


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request, tmp_path):
    if request.param == "sqlite":
        opened = SQLiteBackend(str(tmp_path / "museum.sqlite3"))
    else:
        opened = PostgresBackend(request.getfixturevalue("postgres_url"))
    yield opened
    opened.close_all()


@pytest.fixture
def store(backend):
    return backend.open()


# -- migrations ------------------------------------------------------------------------------

def test_a_fresh_database_runs_every_migration(store, backend):
    assert store.schema_version() == len(backend.store_class.MIGRATIONS)


def test_opening_twice_does_not_migrate_again(backend):
    backend.open().create_event(event(name="kept"))
    reopened = backend.open()
    assert reopened.schema_version() == len(backend.store_class.MIGRATIONS)
    assert reopened.list_events("2026-01-01", None, 0, 10)[0][0]["name"] == "kept"


def test_a_database_from_a_newer_version_is_refused(backend):
    backend.open()
    backend.rows(backend.version_statement.format(len(backend.store_class.MIGRATIONS) + 1))
    with pytest.raises(storage.SchemaTooNew, match="newer than this service supports"):
        backend.open()


def test_instances_starting_together_migrate_once(backend):
    barrier = threading.Barrier(4)

    def start(_):
        barrier.wait()
        return backend.open().schema_version()

    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(start, range(4))) == [len(backend.store_class.MIGRATIONS)] * 4


def test_the_backends_share_one_schema_version_ladder(backend):
    assert len(backend.store_class.MIGRATIONS) == len(SQLiteStore.MIGRATIONS)


@pytest.mark.parametrize("old_version", range(1, len(SQLiteStore.MIGRATIONS)))
def test_a_database_at_each_old_version_is_migrated_keeping_its_data(
        backend, old_version, monkeypatch):
    every_step = backend.store_class.MIGRATIONS
    monkeypatch.setattr(backend.store_class, "MIGRATIONS", every_step[:old_version])
    assert backend.open().schema_version() == old_version
    backend.rows("INSERT INTO settings (name, value) VALUES ('kept', 'yes')")
    monkeypatch.setattr(backend.store_class, "MIGRATIONS", every_step)
    migrated = backend.open()
    assert migrated.schema_version() == len(every_step)
    assert migrated.setting("kept", "no") == "yes"
    migrated.create_event(event())
    assert migrated.events_version() == 1


def first_step_mentioning(steps, text):
    """The index of the first migration step with a statement containing `text` (a step's
    function entries state nothing to search)."""
    return next(index for index, step in enumerate(steps)
                if any(isinstance(statement, str) and text in statement for statement in step))


def test_prices_stored_as_floats_are_migrated_to_hundredths(backend, monkeypatch):
    every_step = backend.store_class.MIGRATIONS
    before = first_step_mentioning(every_step, "price_minor")
    monkeypatch.setattr(backend.store_class, "MIGRATIONS", every_step[:before])
    backend.open()
    event_id = str(uuid.uuid4())
    backend.rows(f"INSERT INTO events (id, name, location, description, dates, price) VALUES "
                 f"('{event_id}', 'Old', 'Hall', 'Sold before', '[\"2026-12-01\"]', 9.99)")
    monkeypatch.setattr(backend.store_class, "MIGRATIONS", every_step)
    assert backend.open().get_event(event_id)["price"] == 9.99
    assert backend.rows("SELECT price_minor FROM events") == [(999,)]


def test_an_older_database_is_left_as_it_is_unless_migrating(backend, monkeypatch):
    every_step = backend.store_class.MIGRATIONS
    monkeypatch.setattr(backend.store_class, "MIGRATIONS", every_step[:2])
    backend.open()
    monkeypatch.setattr(backend.store_class, "MIGRATIONS", every_step)
    with pytest.raises(storage.SchemaBehind, match=f"database schema version 2, this service "
                       f"uses {len(every_step)}; migrate it with 'museum migrate'") as raised:
        storage.open_store(backend.url, migrate=False)
    assert raised.value.version == 2
    assert backend.open().schema_version() == len(every_step)


def test_a_new_database_is_set_up_without_being_told_to_migrate(backend):
    opened = storage.open_store(backend.url, migrate=False)
    try:
        assert opened.schema_version() == len(backend.store_class.MIGRATIONS)
    finally:
        opened.close()


# -- events ----------------------------------------------------------------------------------

def test_the_events_version_counts_event_changes_and_nothing_else(store):
    before = store.events_version()
    created = store.create_event(event())
    after_create = store.events_version()
    store.update_event(created["eventId"], {"price": 3.0})
    after_update = store.events_version()
    store.create_ticket(event_ticket(created["eventId"]))
    store.list_events("2026-01-01", None, 0, 10)
    assert store.events_version() == after_update
    store.cancel_event(created["eventId"])
    assert before < after_create < after_update < store.events_version()
    with pytest.raises(storage.NotFound):
        store.update_event(created["eventId"], {"price": 4.0})
    assert store.events_version() == after_update + 1


def test_events_round_trip(store):
    created = store.create_event(event())
    assert store.get_event(created["eventId"]) == created
    with pytest.raises(storage.NotFound):
        store.get_event(str(uuid.uuid4()))


def test_updates_change_the_fields_and_the_listing(store):
    created = store.create_event(event())
    updated = store.update_event(created["eventId"], {"price": 20.0, "dates": ["2027-03-01"]})
    assert updated == {**created, "price": 20.0, "dates": ["2027-03-01"]}
    assert store.get_event(created["eventId"]) == updated
    assert store.list_events("2026-12-01", "2026-12-31", 0, 10) == ([], 0)
    assert store.list_events("2027-03-01", "2027-03-01", 0, 10) == ([updated], 1)


def test_a_failed_update_leaves_the_event_unchanged(store, backend):
    created = store.create_event(event())
    with pytest.raises(backend.integrity_error):  # NOT NULL: a bug upstream, rolled back
        store.update_event(created["eventId"], {"name": None, "dates": ["2027-01-01"]})
    assert store.get_event(created["eventId"]) == created
    assert store.list_events("2027-01-01", None, 0, 10) == ([], 0)


def test_cancelled_events_keep_their_row_but_leave_reads(store, backend):
    created = store.create_event(event())
    store.cancel_event(created["eventId"])
    with pytest.raises(storage.NotFound):
        store.get_event(created["eventId"])
    with pytest.raises(storage.NotFound):
        store.cancel_event(created["eventId"])
    with pytest.raises(storage.NotFound):
        store.update_event(created["eventId"], {"price": 1.0})
    assert store.list_events("2026-01-01", None, 0, 10) == ([], 0)
    assert backend.rows("SELECT name, cancelled FROM events") == [("Night tour", 1)]


def test_a_cancelled_event_is_read_as_it_was_when_asked_for(store):
    created = store.create_event(event())
    store.update_event(created["eventId"], {"price": 3.0})
    store.cancel_event(created["eventId"])
    assert store.get_event(created["eventId"], cancelled_too=True) == {
        **created, "price": 3.0, "cancelled": True}
    with pytest.raises(storage.NotFound):
        store.get_event(str(uuid.uuid4()), cancelled_too=True)


def test_changes_are_listed_since_a_moment_in_their_order_cancelled_ones_marked(store):
    # Each change a few milliseconds after the last: changes of one millisecond are listed
    # by id, so only distinct moments have one order to check.
    first = store.create_event(event(name="first"))
    time.sleep(0.005)
    second = store.create_event(event(name="second"))
    time.sleep(0.005)
    third = store.create_event(event(name="third"))
    time.sleep(0.005)
    store.update_event(first["eventId"], {"name": "first, renamed"})
    time.sleep(0.005)
    store.cancel_event(second["eventId"])
    changes, total = store.list_changed_events("2000-01-01T00:00:00.000Z", 0, 10)
    assert [change["name"] for change in changes] == ["third", "first, renamed", "second"]
    assert total == 3
    assert changes[2] == {**second, "cancelled": True, "updatedAt": changes[2]["updatedAt"]}
    moments = [change["updatedAt"] for change in changes]
    assert moments == sorted(moments) and all(
        re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", moment) for moment in moments)
    # From the last change on: that change again (the moment is included), nothing older.
    assert store.list_changed_events(moments[-1], 0, 10)[0][-1]["name"] == "second"
    assert [change["name"] for change in store.list_changed_events(moments[0], 1, 1)[0]] == [
        "first, renamed"]
    assert store.list_changed_events("9999-12-31T23:59:59.999Z", 0, 10) == ([], 0)
    assert "updatedAt" not in store.get_event(third["eventId"])


def test_events_stored_before_their_changes_were_timed_count_as_changed_at_the_upgrade(
        backend):
    """The step that adds `events.changed_at` times the events it finds at the migration: a
    shop asking for the changes since any earlier moment learns of them all."""
    opened = backend.open()
    kept = opened.create_event(event(name="kept"))
    backend.rows("UPDATE events SET changed_at = ''")  # as the column's default leaves them
    timing = next(statement for step in backend.store_class.MIGRATIONS for statement in step
                  if isinstance(statement, str) and "UPDATE events SET changed_at" in statement)
    backend.rows(timing)
    changes, _ = opened.list_changed_events("2000-01-01T00:00:00.000Z", 0, 10)
    assert [change["eventId"] for change in changes] == [kept["eventId"]]


def test_listing_order_window_paging_and_total(store):
    def add(name, dates):
        return store.create_event(event(name=name, dates=dates))["eventId"]

    late = add("Early name", ["2026-12-20"])
    # First date inside the window decides, not the event's first date overall.
    straddling = add("Straddling", ["2026-11-01", "2026-12-10"])
    # Same first date: names by code point (capitals first), then ids.
    lower = add("apple", ["2026-12-05"])
    upper = add("Zebra", ["2026-12-05"])
    twins = sorted([add("Twin", ["2026-12-05"]), add("Twin", ["2026-12-05"])])
    add("Outside", ["2027-02-01"])
    store.cancel_event(add("Cancelled", ["2026-12-06"]))

    expected = [*twins, upper, lower, straddling, late]
    ids = [found["eventId"] for found in store.list_events("2026-12-01", "2026-12-31", 0, 10)[0]]
    assert ids == expected
    page, total = store.list_events("2026-12-01", "2026-12-31", 2, 2)
    assert [found["eventId"] for found in page] == expected[2:4] and total == 6
    assert store.list_events("2026-12-01", "2026-12-31", 10, 2) == ([], 6)
    assert store.list_events("2026-12-01", None, 0, 10)[1] == 7  # open-ended: "Outside" too
    assert store.list_events("2026-12-20", "2026-12-20", 0, 10)[0][0]["eventId"] == late


# -- tickets ---------------------------------------------------------------------------------

def test_tickets_round_trip_with_their_event(store):
    created = store.create_event(event())
    general, sold = store.create_ticket(ticket(phone="+44 20 7946 0958"))
    assert sold and store.get_ticket(general["ticketId"]) == general
    assert general["eventName"] is None and general["cancelled"] is False
    entry, _ = store.create_ticket(event_ticket(created["eventId"], ticketDate="2026-12-05"))
    assert entry["eventName"] == "Night tour" and entry["ticketDate"] == "2026-12-05"
    store.cancel_event(created["eventId"])
    assert store.get_ticket(entry["ticketId"]) == {**entry, "cancelled": True}
    with pytest.raises(storage.NotFound):
        store.get_ticket(str(uuid.uuid4()))


def test_event_tickets_check_the_event_in_the_same_transaction(store):
    created = store.create_event(event())
    with pytest.raises(storage.DateNotOffered) as raised:
        store.create_ticket(event_ticket(created["eventId"], ticketDate="2026-12-02"))
    assert raised.value.dates == ["2026-12-01", "2026-12-05"]
    store.cancel_event(created["eventId"])
    with pytest.raises(storage.NotFound):
        store.create_ticket(event_ticket(created["eventId"]))


def test_confirmation_codes_are_unique_by_constraint(store):
    first = ticket()
    store.create_ticket(first)
    with pytest.raises(storage.DuplicateCode):
        store.create_ticket(ticket(confirmationCode=first["confirmationCode"]))


def test_idempotency_keys_replay_or_conflict_per_user(store):
    sold, created = store.create_ticket(ticket(), ("visitor", "key-1", "body-a"))
    replayed, again = store.create_ticket(ticket(), ("visitor", "key-1", "body-a"))
    assert created and not again and replayed == sold
    with pytest.raises(storage.IdempotencyConflict):
        store.create_ticket(ticket(), ("visitor", "key-1", "body-b"))
    other, created_for_other = store.create_ticket(ticket(), ("admin", "key-1", "body-a"))
    assert created_for_other and other["ticketId"] != sold["ticketId"]


def test_a_failed_sale_leaves_its_idempotency_key_free(store):
    created = store.create_event(event())
    with pytest.raises(storage.DateNotOffered):
        store.create_ticket(event_ticket(created["eventId"], ticketDate="2026-12-02"),
                            ("visitor", "key-1", "body-a"))
    _, sold = store.create_ticket(event_ticket(created["eventId"]), ("visitor", "key-1", "body-a"))
    assert sold


def test_settings_keep_their_first_value(store, backend):
    assert store.setting("qr_secret", "first") == "first"
    assert backend.open().setting("qr_secret", "second") == "first"


# -- the door ---------------------------------------------------------------------------------

def test_a_ticket_is_admitted_once_and_read_back_with_its_admission(store):
    sold, _ = store.create_ticket(ticket())
    assert (sold["admittedAt"], sold["admittedBy"]) == (None, None)
    first = {"admittedAt": "2026-12-01T10:32:00Z", "admittedBy": "gate"}
    assert store.admit(sold["ticketId"], "gate", "2026-12-01T10:32:00Z") == (first, True)
    assert store.admit(sold["ticketId"], "gate2", "2026-12-01T10:40:00Z") == (first, False)
    assert store.get_ticket(sold["ticketId"]) == {**sold, **first}
    assert store.get_ticket_by_code(sold["confirmationCode"]) == {**sold, **first}
    with pytest.raises(storage.NotFound):
        store.get_ticket_by_code("ticket-general-000000-00000")


def test_an_undone_admission_can_be_made_again(store):
    sold, _ = store.create_ticket(ticket())
    store.admit(sold["ticketId"], "gate", "2026-12-01T10:32:00Z")
    store.undo_admission(sold["ticketId"], "admin", "2026-12-01T10:35:00Z")
    with pytest.raises(storage.NotFound):
        store.undo_admission(sold["ticketId"], "admin", "2026-12-01T10:36:00Z")
    assert store.get_ticket(sold["ticketId"])["admittedAt"] is None
    assert store.admit(sold["ticketId"], "admin", "2026-12-01T11:00:00Z")[1]


def test_an_undo_refused_by_the_callers_rule_changes_nothing(store):
    sold, _ = store.create_ticket(ticket())
    store.admit(sold["ticketId"], "gate", "2026-12-01T10:32:00Z")
    judged = []

    def refuse(admission):
        judged.append(admission)
        return False

    with pytest.raises(storage.NotAllowed):
        store.undo_admission(sold["ticketId"], "gate2", "2026-12-01T10:33:00Z", refuse)
    assert judged == [{"admittedAt": "2026-12-01T10:32:00Z", "admittedBy": "gate"}]
    assert store.get_ticket(sold["ticketId"])["admittedBy"] == "gate"
    store.undo_admission(sold["ticketId"], "gate", "2026-12-01T10:34:00Z", lambda _: True)
    assert store.get_ticket(sold["ticketId"])["admittedAt"] is None


def test_the_admission_history_keeps_each_admission_and_undo_in_order(store):
    sold, _ = store.create_ticket(ticket())
    other, _ = store.create_ticket(ticket())
    assert store.admission_history(sold["ticketId"]) == ([], 0)
    store.admit(sold["ticketId"], "gate", "2026-12-01T10:32:00Z")
    store.admit(sold["ticketId"], "gate2", "2026-12-01T10:33:00Z")  # not admitted again
    store.admit(other["ticketId"], "gate2", "2026-12-01T10:33:00Z")
    store.undo_admission(sold["ticketId"], "admin", "2026-12-01T10:40:00Z")
    store.admit(sold["ticketId"], "gate2", "2026-12-01T10:41:00Z")
    history = [{"action": "admitted", "at": "2026-12-01T10:32:00Z", "by": "gate"},
               {"action": "undone", "at": "2026-12-01T10:40:00Z", "by": "admin"},
               {"action": "admitted", "at": "2026-12-01T10:41:00Z", "by": "gate2"}]
    assert store.admission_history(sold["ticketId"]) == (history, 3)
    assert store.admission_history(sold["ticketId"], 1, 1) == (history[1:2], 3)
    assert store.admission_history(sold["ticketId"], 2, 5) == (history[2:], 3)
    assert store.admission_history(sold["ticketId"], 3, 5) == ([], 3)
    assert store.admission_history(other["ticketId"]) == ([
        {"action": "admitted", "at": "2026-12-01T10:33:00Z", "by": "gate2"}], 1)


def test_a_gates_undos_of_one_ticket_stop_at_the_limit_from_its_moment_on(store):
    sold, _ = store.create_ticket(ticket())
    other, _ = store.create_ticket(ticket())
    limit = (2, "2026-12-01T00:00:00Z")
    store.admit(sold["ticketId"], "gate", "2026-11-30T23:00:00Z")
    store.undo_admission(sold["ticketId"], "gate", "2026-11-30T23:01:00Z", None, limit)
    for minute in (10, 12):  # yesterday's undo counts for nothing today
        store.admit(sold["ticketId"], "gate", f"2026-12-01T10:{minute}:00Z")
        store.undo_admission(sold["ticketId"], "gate", f"2026-12-01T10:{minute + 1}:00Z",
                             None, limit)
    store.admit(sold["ticketId"], "gate", "2026-12-01T10:20:00Z")
    with pytest.raises(storage.LimitReached) as reached:
        store.undo_admission(sold["ticketId"], "gate", "2026-12-01T10:21:00Z", None, limit)
    assert reached.value.first == "2026-12-01T10:11:00Z"
    assert store.get_ticket(sold["ticketId"])["admittedBy"] == "gate"  # nothing changed
    assert store.admission_history(sold["ticketId"])[1] == 7
    # Another undoer, another ticket and no limit are each counted apart.
    store.undo_admission(sold["ticketId"], "gate2", "2026-12-01T10:22:00Z", None, limit)
    store.admit(other["ticketId"], "gate", "2026-12-01T10:23:00Z")
    store.undo_admission(other["ticketId"], "gate", "2026-12-01T10:24:00Z", None, limit)
    store.admit(sold["ticketId"], "gate", "2026-12-01T10:25:00Z")
    store.undo_admission(sold["ticketId"], "gate", "2026-12-01T10:26:00Z")


def test_a_buyers_purchases_stop_at_the_limit_within_the_window(store):
    bought = [store.create_ticket(ticket(soldBy="shop", soldAt=f"2026-12-01T10:0{n}:00Z"),
                                  purchase_limit=(2, "2026-12-01T09:30:00Z"))[0]
              for n in range(2)]
    with pytest.raises(storage.LimitReached) as reached:
        store.create_ticket(ticket(soldBy="shop", soldAt="2026-12-01T10:05:00Z"),
                            purchase_limit=(2, "2026-12-01T09:30:00Z"))
    assert reached.value.first == "2026-12-01T10:00:00Z"
    assert store.totals()["tickets"] == 2
    assert store.places_taken("2026-12-01", "2026-12-01")["general"] == {"2026-12-01": 2}
    # An hour on, the first has left the window; another buyer counts apart; and a replay
    # of a key sells nothing new, so it is answered whatever the limit.
    store.create_ticket(ticket(soldBy="shop", soldAt="2026-12-01T11:00:30Z"),
                        purchase_limit=(2, "2026-12-01T10:00:30Z"))
    store.create_ticket(ticket(soldBy="kiosk", soldAt="2026-12-01T10:06:00Z"),
                        ("kiosk", "order-1", "body"), purchase_limit=(1, "2026-12-01T09:30:00Z"))
    replayed, created = store.create_ticket(
        ticket(soldBy="kiosk", soldAt="2026-12-01T10:07:00Z"), ("kiosk", "order-1", "body"),
        purchase_limit=(1, "2026-12-01T09:30:00Z"))
    assert not created and replayed["ticketId"] != bought[0]["ticketId"]


def test_purchases_of_one_buyer_at_once_on_two_instances_stop_at_the_limit(backend):
    stores = [backend.open() for _ in range(2)]
    limit = (5, "2026-12-01T09:00:00Z")

    def buy(number):
        try:
            stores[number % 2].create_ticket(
                ticket(soldBy="shop", soldAt="2026-12-01T10:00:00Z"), purchase_limit=limit)
            return "sold"
        except storage.LimitReached:
            return "refused"

    with ThreadPoolExecutor(8) as pool:
        outcomes = list(pool.map(buy, range(16)))
    assert outcomes.count("sold") == 5 and outcomes.count("refused") == 11


def test_guesses_are_counted_in_windows_shared_by_every_instance(backend):
    first, second = backend.open(), backend.open()
    assert first.guesses("gate") == (0, None)
    assert first.count_guess("gate", 1000.0, 60) == (1, 1000.0)
    assert second.count_guess("gate", 1010.5, 60) == (2, 1000.0)
    assert first.guesses("gate") == (2, 1000.0)
    assert second.count_guess("gate2", 1011.0, 60) == (1, 1011.0)  # each user its own
    assert first.count_guess("gate", 1060.0, 60) == (1, 1060.0)  # the window ended


def test_guesses_at_once_on_two_instances_are_all_counted(backend):
    stores = [backend.open() for _ in range(2)]
    with ThreadPoolExecutor(8) as pool:
        counted = list(pool.map(lambda n: stores[n % 2].count_guess("gate", 1000.0,
                                                                    60)[0], range(40)))
    assert sorted(counted) == list(range(1, 41))
    assert stores[0].guesses("gate") == (40, 1000.0)


def test_a_lost_ticket_is_found_by_the_whole_email_or_its_codes_on_its_day(store):
    mine = [store.create_ticket(ticket(email="Ada.Lovelace@Example.ORG"))[0] for _ in range(3)]
    store.create_ticket(ticket(email="ada.lovelace@example.org", ticketDate="2026-12-05"))
    store.create_ticket(ticket(email="lovelace@example.org"))
    store.admit(mine[0]["ticketId"], "gate", "2026-12-01T10:32:00Z")
    found = store.lookup_tickets("2026-12-01", email="ADA.LOVELACE@example.org")
    assert [t["ticketId"] for t in found] == [
        t["ticketId"] for t in sorted(mine, key=lambda t: t["confirmationCode"])]
    assert {t["ticketId"]: t["admittedBy"] for t in found}[mine[0]["ticketId"]] == "gate"
    assert store.lookup_tickets("2026-12-01", email="ada.lovelace@example") == []
    assert len(store.lookup_tickets("2026-12-01", email="ada.lovelace@example.org",
                                    limit=2)) == 2
    code = mine[1]["confirmationCode"]
    random_part = code.removeprefix("ticket-general-")
    assert store.lookup_tickets("2026-12-01", codes=[code]) == [store.get_ticket(
        mine[1]["ticketId"])]
    both = [f"ticket-general-{random_part}", f"ticket-event-{random_part}"]
    assert [t["ticketId"] for t in store.lookup_tickets("2026-12-01", codes=both)] == [
        mine[1]["ticketId"]]
    assert store.lookup_tickets("2026-12-05", codes=both) == []  # another day


def test_a_scans_key_replays_the_admission_it_made_and_never_a_refusal(store):
    sold, other = store.create_ticket(ticket())[0], store.create_ticket(ticket())[0]
    key = ("gate", "scan-1", "body-1")
    assert store.replayed_scan(*key) is None
    first = {"admittedAt": "2026-12-01T10:32:00Z", "admittedBy": "gate"}
    assert store.admit(sold["ticketId"], "gate", "2026-12-01T10:32:00Z", key) == (first, True)
    assert store.replayed_scan(*key) == {"ticketId": sold["ticketId"], "outcome": "admitted",
                                         "at": "2026-12-01T10:32:00Z"}
    # Undone and admitted by another gate: the key still answers its own admission.
    store.undo_admission(sold["ticketId"], "admin", "2026-12-01T10:33:00Z")
    store.admit(sold["ticketId"], "gate2", "2026-12-01T10:34:00Z")
    assert store.admit(sold["ticketId"], "gate", "2026-12-01T10:40:00Z", key) == (first, True)
    with pytest.raises(storage.IdempotencyConflict):
        store.replayed_scan("gate", "scan-1", "body-2")
    with pytest.raises(storage.IdempotencyConflict):
        store.admit(other["ticketId"], "gate", "2026-12-01T10:41:00Z", ("gate", "scan-1", "b"))
    assert store.get_ticket(other["ticketId"])["admittedAt"] is None
    # A refusal keeps no key: the same key may admit later.
    refused = ("gate", "scan-2", "body-3")
    assert store.admit(sold["ticketId"], "gate", "2026-12-01T10:42:00Z", refused)[1] is False
    assert store.replayed_scan(*refused) is None
    assert store.replayed_scan("gate2", "scan-1", "body-1") is None  # keys are per user


def test_a_double_entry_is_recorded_once_per_key_and_counted(store):
    sold, _ = store.create_ticket(ticket())
    never_admitted, _ = store.create_ticket(ticket())
    assert store.record_double_entry(never_admitted["ticketId"], "gate2",
                                     "2026-12-01T10:30:00Z") == (None, False)
    first = {"admittedAt": "2026-12-01T10:32:00Z", "admittedBy": "gate"}
    store.admit(sold["ticketId"], "gate", "2026-12-01T10:32:00Z")
    key = ("gate2", "offline-1", "body")
    assert store.record_double_entry(sold["ticketId"], "gate2", "2026-12-01T10:31:00Z",
                                     key) == (first, True)
    assert store.record_double_entry(sold["ticketId"], "gate2", "2026-12-01T10:31:00Z",
                                     key) == (first, False)
    assert store.replayed_scan(*key)["outcome"] == "double-entry"
    assert store.admission_history(sold["ticketId"])[0] == [
        {"action": "admitted", "at": "2026-12-01T10:32:00Z", "by": "gate"},
        {"action": "double-entry", "at": "2026-12-01T10:31:00Z", "by": "gate2"}]
    assert store.door_summary("2026-12-01")["doubleEntries"] == 1
    assert [row["doubleEntries"] for row in store.sales("2026-12-01", "2026-12-01")] == [1]


def listed_statuses(listed):
    return {t["ticketId"]: (t["voidedAt"] is not None, t["cancelled"], t["admittedBy"])
            for t in listed["tickets"]}


def test_the_door_list_is_the_days_tickets_and_since_a_version_their_changes(store):
    night = store.create_event(event(name="Night tour"))
    general, admitted, voided = (store.create_ticket(ticket())[0] for _ in range(3))
    at_night, _ = store.create_ticket(event_ticket(night["eventId"]))
    store.create_ticket(ticket(ticketDate="2026-12-05"))
    store.admit(admitted["ticketId"], "gate", "2026-12-01T10:00:00Z")
    whole = store.door_list("2026-12-01")
    assert whole["version"] == store.door_list_version("2026-12-01") > 0
    assert {t["ticketId"] for t in whole["tickets"]} == {
        general["ticketId"], admitted["ticketId"], voided["ticketId"], at_night["ticketId"]}
    row = {t["ticketId"]: t for t in whole["tickets"]}[at_night["ticketId"]]
    assert row == {"ticketId": at_night["ticketId"],
                   "confirmationCode": at_night["confirmationCode"],
                   "eventId": night["eventId"], "eventName": "Night tour", "entryTime": None,
                   "voidedAt": None, "cancelled": False, "admittedAt": None,
                   "admittedBy": None, "heldUntil": None, "orderId": None, "payment": None,
                   "orderDue": None, "currency": "EUR"}
    assert all("email" not in t and "phone" not in t for t in whole["tickets"])
    assert store.door_list("2026-12-01", whole["version"]) == {
        "version": whole["version"], "tickets": []}

    store.void_ticket(voided["ticketId"], "2026-12-01T10:01:00Z")
    store.undo_admission(admitted["ticketId"], "admin", "2026-12-01T10:02:00Z")
    store.cancel_event(night["eventId"])
    sold, _ = store.create_ticket(ticket())
    changed = store.door_list("2026-12-01", whole["version"])
    assert listed_statuses(changed) == {
        voided["ticketId"]: (True, False, None), admitted["ticketId"]: (False, False, None),
        at_night["ticketId"]: (False, True, None), sold["ticketId"]: (False, False, None)}
    assert changed["version"] > whole["version"]
    assert store.door_list("2026-12-05", None)["version"] == 1  # days are numbered apart
    assert store.door_list_version("2026-12-09") == 0


def test_the_door_list_since_a_version_misses_no_change_across_instances(backend):
    """Admissions on two instances while a reader follows `since`: every admission is in
    one of the answers, though transactions commit in another order than they began."""
    instances = [backend.open(), backend.open()]
    sold = [instances[0].create_ticket(ticket())[0] for _ in range(48)]
    seen, version = set(), instances[0].door_list_version("2026-12-01")
    done = threading.Event()

    def follow():
        nonlocal version
        while True:
            finished = done.is_set()
            changed = instances[1].door_list("2026-12-01", version)
            seen.update(t["ticketId"] for t in changed["tickets"] if t["admittedAt"])
            version = changed["version"]
            if finished:
                return

    reader = threading.Thread(target=follow)
    reader.start()
    try:
        at_once(16, lambda n: [instances[n % 2].admit(each["ticketId"], f"gate{n}",
                                                      "2026-12-01T10:00:00Z")
                               for each in sold[n::16]])
    finally:
        done.set()
        reader.join()
    assert seen == {each["ticketId"] for each in sold}


def test_the_door_summary_counts_one_day_without_cancelled_events(store):
    kept = store.create_event(event(name="Zoology night"))
    early = store.create_event(event(name="Art walk"))
    gone = store.create_event(event(name="Cancelled talk"))
    sold = [store.create_ticket(ticket())[0] for _ in range(2)]
    store.create_ticket(ticket(ticketDate="2026-12-05"))
    sold.append(store.create_ticket(event_ticket(early["eventId"]))[0])
    store.create_ticket(event_ticket(kept["eventId"]))
    store.create_ticket(event_ticket(gone["eventId"]))
    store.cancel_event(gone["eventId"])
    store.admit(sold[1]["ticketId"], "gate", "2026-12-01T10:00:00Z")
    store.admit(sold[2]["ticketId"], "Door-north", "2026-12-01T10:00:00Z")
    assert store.door_summary("2026-12-01") == {
        "sold": {"general": 2, "event": 2}, "admitted": {"general": 1, "event": 1},
        "events": [{"eventId": early["eventId"], "name": "Art walk", "sold": 1, "admitted": 1},
                   {"eventId": kept["eventId"], "name": "Zoology night", "sold": 1,
                    "admitted": 0}],
        "devices": [{"name": "Door-north", "admitted": 1}, {"name": "gate", "admitted": 1}],
        "doubleEntries": 0}
    assert store.door_summary("2026-12-02") == {
        "sold": {"general": 0, "event": 0}, "admitted": {"general": 0, "event": 0},
        "events": [], "devices": [], "doubleEntries": 0}


def test_a_change_may_not_remove_dates_with_tickets_sold(store):
    created = store.create_event(event(dates=["2026-12-01", "2026-12-05", "2026-12-09"]))
    for day in ("2026-12-01", "2026-12-05", "2026-12-05"):
        store.create_ticket(event_ticket(created["eventId"], ticketDate=day))
    before = store.events_version()
    with pytest.raises(storage.DatesSold) as raised:
        store.update_event(created["eventId"], {"dates": ["2026-12-09"], "price": 1.0})
    assert raised.value.sold == {"2026-12-01": 1, "2026-12-05": 2}
    assert store.get_event(created["eventId"]) == created
    assert store.events_version() == before
    kept = store.update_event(created["eventId"], {"dates": ["2026-12-01", "2026-12-05"]})
    assert kept["dates"] == ["2026-12-01", "2026-12-05"]


def test_a_replayed_ticket_is_read_without_writing(store):
    assert store.replayed_ticket("visitor", "key-1", "body-a") is None
    sold, _ = store.create_ticket(ticket(), ("visitor", "key-1", "body-a"))
    assert store.replayed_ticket("visitor", "key-1", "body-a") == sold
    assert store.replayed_ticket("admin", "key-1", "body-a") is None
    with pytest.raises(storage.IdempotencyConflict):
        store.replayed_ticket("visitor", "key-1", "body-b")


def test_settings_are_read_without_a_default_and_never_stored_then(store, backend):
    assert store.setting("qr_secret") is None
    assert backend.rows("SELECT count(*) FROM settings WHERE name = 'qr_secret'") == [(0,)]
    store.setting("qr_secret", "kept")
    assert store.setting("qr_secret") == "kept"


def test_a_read_only_store_reads_and_refuses_every_write(backend):
    backend.open().create_event(event(name="kept"))
    read_only = storage.open_store(backend.url, read_only=True)
    try:
        assert read_only.list_events("2026-01-01", None, 0, 10)[0][0]["name"] == "kept"
        with pytest.raises(storage.Unavailable):
            read_only.create_event(event())
        with pytest.raises(storage.Unavailable):
            read_only.setting("qr_secret", "new")
    finally:
        read_only.close()
    assert backend.rows("SELECT count(*) FROM events") == [(1,)]


def test_a_read_only_store_never_migrates(backend, monkeypatch):
    every_step = backend.store_class.MIGRATIONS
    monkeypatch.setattr(backend.store_class, "MIGRATIONS", every_step[:1])
    backend.open()
    monkeypatch.setattr(backend.store_class, "MIGRATIONS", every_step)
    with pytest.raises(storage.SchemaMismatch, match="schema version 1, this service uses"):
        storage.open_store(backend.url, read_only=True)
    assert backend.open().schema_version() == len(every_step)


# -- personal data that expires ---------------------------------------------------------------

def test_erasing_contacts_keeps_the_tickets_their_codes_and_admissions(store):
    old, _ = store.create_ticket(ticket(ticketDate="2026-10-22", phone="+44 20 7946 0001"))
    kept, _ = store.create_ticket(ticket(ticketDate="2026-10-23", phone="+44 20 7946 0002"))
    store.admit(old["ticketId"], "gate", "2026-10-22T10:00:00Z")
    assert store.erase_contacts("2026-10-23", 10) == 1
    assert store.get_ticket(old["ticketId"]) == {
        **old, "email": "", "phone": None, "admittedAt": "2026-10-22T10:00:00Z",
        "admittedBy": "gate"}
    assert store.get_ticket_by_code(old["confirmationCode"])["ticketId"] == old["ticketId"]
    assert store.get_ticket(kept["ticketId"]) == kept
    assert store.door_summary("2026-10-22")["admitted"] == {"general": 1, "event": 0}
    assert store.erase_contacts("2026-10-23", 10) == 0


def test_contacts_are_erased_at_most_a_limit_at_a_time(store):
    for day in range(1, 6):
        store.create_ticket(ticket(ticketDate=f"2026-01-0{day}"))
    assert [store.erase_contacts("2026-02-01", 2) for _ in range(4)] == [2, 2, 1, 0]


def test_erased_tickets_lose_their_idempotency_keys(store, backend):
    store.create_ticket(ticket(ticketDate="2026-01-01"), ("visitor", "old-key", "body"))
    store.create_ticket(ticket(ticketDate="2026-03-01"), ("visitor", "new-key", "body"))
    store.erase_contacts("2026-02-01", 10)
    assert store.replayed_ticket("visitor", "old-key", "body") is None
    assert store.replayed_ticket("visitor", "new-key", "body")["ticketDate"] == "2026-03-01"
    assert backend.rows("SELECT key FROM idempotency_keys") == [("new-key",)]


def test_instances_erasing_together_erase_each_ticket_once(backend):
    instances = [backend.open(), backend.open()]
    for day in range(1, 29):
        instances[0].create_ticket(ticket(ticketDate=f"2026-01-{day:02d}"))

    def erase_all(n):
        erased = 0
        while count := instances[n % 2].erase_contacts("2026-02-01", 3):
            erased += count
        return erased

    assert sum(at_once(4, erase_all)) == 28
    assert backend.rows("SELECT count(*) FROM tickets WHERE email = ''") == [(28,)]


# -- devices ---------------------------------------------------------------------------------

DIGEST = "key$" + "0" * 32 + "$" + "1" * 64


def test_a_device_added_signs_in_until_it_is_revoked(store):
    assert store.device("door-north") is None
    store.add_device("door-north", "gate", DIGEST, "2026-11-22T09:00:00Z")
    assert store.device("door-north") == {"name": "door-north", "role": "gate",
                                          "keyDigest": DIGEST}
    store.revoke_device("door-north", "2026-11-22T10:00:00Z")
    assert store.device("door-north") is None
    with pytest.raises(storage.NotFound):
        store.revoke_device("door-north", "2026-11-22T11:00:00Z")


def test_a_device_name_in_use_is_refused_and_a_revoked_ones_is_free_again(store):
    store.add_device("door-north", "gate", DIGEST, "2026-11-22T09:00:00Z")
    with pytest.raises(storage.DeviceExists):
        store.add_device("door-north", "visitor", DIGEST, "2026-11-22T09:30:00Z")
    store.revoke_device("door-north", "2026-11-22T10:00:00Z")
    renewed = DIGEST.replace("1", "2")
    store.add_device("door-north", "gate", renewed, "2026-11-22T11:00:00Z")
    assert store.device("door-north")["keyDigest"] == renewed
    with pytest.raises(storage.NotFound):
        store.revoke_device("door-south", "2026-11-22T11:00:00Z")


def test_the_device_list_holds_every_device_and_no_key(store):
    assert store.list_devices() == []
    store.add_device("web-shop", "visitor", DIGEST, "2026-11-22T08:00:00Z")
    store.add_device("door-north", "gate", DIGEST, "2026-11-22T09:00:00Z")
    store.revoke_device("door-north", "2026-11-22T10:00:00Z")
    store.add_device("door-north", "gate", DIGEST, "2026-11-22T11:00:00Z")
    store.add_device("Door-west", "gate", DIGEST, "2026-11-22T12:00:00Z")
    assert store.list_devices() == [
        {"name": "Door-west", "role": "gate", "createdAt": "2026-11-22T12:00:00Z",
         "revokedAt": None},
        {"name": "door-north", "role": "gate", "createdAt": "2026-11-22T09:00:00Z",
         "revokedAt": "2026-11-22T10:00:00Z"},
        {"name": "door-north", "role": "gate", "createdAt": "2026-11-22T11:00:00Z",
         "revokedAt": None},
        {"name": "web-shop", "role": "visitor", "createdAt": "2026-11-22T08:00:00Z",
         "revokedAt": None}]


def test_a_device_is_added_once_and_revoked_once_across_instances(backend):
    instances = [backend.open(), backend.open()]

    def add(n):
        try:
            instances[n % 2].add_device("door-north", "gate", DIGEST,
                                        f"2026-11-22T09:00:{n:02d}Z")
            return True
        except storage.DeviceExists:
            return False

    def revoke(n):
        try:
            instances[n % 2].revoke_device("door-north", f"2026-11-22T10:00:{n:02d}Z")
            return True
        except storage.NotFound:
            return False

    assert sorted(at_once(8, add)) == [False] * 7 + [True]
    assert instances[1].device("door-north")["role"] == "gate"  # seen by the other at once
    assert sorted(at_once(8, revoke)) == [False] * 7 + [True]
    assert instances[0].device("door-north") is None
    assert backend.rows("SELECT count(*) FROM devices") == [(1,)]


# -- two instances at the same moment --------------------------------------------------------

def at_once(count, action):
    """The results of `action(n)` for n in range(count), all released together."""
    barrier = threading.Barrier(count)

    def run(n):
        barrier.wait()
        return action(n)

    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(run, range(count)))


def test_one_ticket_per_idempotency_key_across_instances(backend):
    instances = [backend.open(), backend.open()]
    results = at_once(16, lambda n: instances[n % 2].create_ticket(
        ticket(), ("visitor", "shared-key", "body")))
    assert sum(created for _, created in results) == 1
    assert len({sold["ticketId"] for sold, _ in results}) == 1
    assert backend.rows("SELECT count(*) FROM tickets") == [(1,)]


def test_a_ticket_is_admitted_once_across_instances(backend):
    instances = [backend.open(), backend.open()]
    sold, _ = instances[0].create_ticket(ticket())
    results = at_once(16, lambda n: instances[n % 2].admit(
        sold["ticketId"], f"gate{n}", f"2026-12-01T10:00:{n:02d}Z"))
    assert sum(admitted for _, admitted in results) == 1
    assert len({(first["admittedAt"], first["admittedBy"]) for first, _ in results}) == 1
    assert backend.rows("SELECT count(*) FROM admissions") == [(1,)]


def test_a_scan_resent_to_two_instances_at_once_is_one_admission(backend):
    instances = [backend.open(), backend.open()]
    sold, _ = instances[0].create_ticket(ticket())
    results = at_once(16, lambda n: instances[n % 2].admit(
        sold["ticketId"], "gate", f"2026-12-01T10:00:{n:02d}Z", ("gate", "scan-1", "body")))
    # Every retry answers the one admission the key made, as made.
    assert {(first["admittedAt"], admitted) for first, admitted in results} == {
        (instances[0].get_ticket(sold["ticketId"])["admittedAt"], True)}
    assert backend.rows("SELECT count(*) FROM admission_events") == [(1,)]
    assert backend.rows("SELECT count(*) FROM door_keys") == [(1,)]


def test_a_confirmation_code_is_sold_once_across_instances(backend):
    instances = [backend.open(), backend.open()]

    def buy(n):
        try:
            return instances[n % 2].create_ticket(ticket(confirmationCode="ticket-x-1"))[1]
        except storage.DuplicateCode:
            return False

    assert sorted(at_once(8, buy)) == [False] * 7 + [True]


def test_no_ticket_is_sold_after_a_cancellation_on_another_instance_returned(backend):
    seller, canceller = backend.open(), backend.open()
    event_id = seller.create_event(event())["eventId"]
    acknowledged = []  # the moment cancel_event returned
    attempts = []  # (started, sold) of every purchase

    def sell(_):
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not late_attempts(5):
            started = time.monotonic()
            try:
                seller.create_ticket(event_ticket(event_id))
                attempts.append((started, True))
            except storage.NotFound:
                attempts.append((started, False))

    def late_attempts(count):
        return acknowledged and sum(started > acknowledged[0] for started, _ in attempts) >= count

    with ThreadPoolExecutor(6) as pool:
        sellers = [pool.submit(sell, n) for n in range(6)]
        wait_until(lambda: sum(sold for _, sold in attempts) >= 20, 30, 0.001, "20 sales")
        canceller.cancel_event(event_id)
        acknowledged.append(time.monotonic())
        for seller_thread in sellers:
            seller_thread.result()
    assert not [started for started, sold in attempts if sold and started > acknowledged[0]]
    sold = sum(sold for _, sold in attempts)
    assert backend.rows("SELECT count(*) FROM tickets") == [(sold,)]


def test_a_listing_reads_its_page_and_total_at_one_moment(backend):
    lister, writer = backend.open(), backend.open()

    def create_and_cancel():
        for _ in range(200):
            writer.cancel_event(writer.create_event(event())["eventId"])

    disagreements = []
    with ThreadPoolExecutor(1) as pool:
        writing = pool.submit(create_and_cancel)
        while not writing.done():
            for end in (None, "2026-12-31"):
                page, total = lister.list_events("2026-11-01", end, 0, 10)
                if len(page) != total:
                    disagreements.append((len(page), total))
        writing.result()
    assert disagreements == []


# -- the days an admin changed ------------------------------------------------------------

def day(date="2026-12-01", **changes):
    return {"date": date, "closed": False, "timeOpen": None, "timeClose": None,
            "capacity": None, "note": None, "changedAt": "2026-11-22T12:00:00Z",
            "changedBy": "admin", **changes}


def test_changed_days_are_read_back_by_window_in_date_order(store):
    later = day("2026-12-24", timeOpen="10:00", timeClose="14:00", capacity=50, note="Eve")
    store.set_day(later)
    store.set_day(day(closed=True, note="Storm"))
    assert store.changed_days("2026-12-01", "2026-12-24") == [
        day(closed=True, note="Storm"), later]
    assert store.changed_days("2026-12-02", "2026-12-23") == []


def test_setting_a_day_again_replaces_it_and_clearing_forgets_it(store):
    store.set_day(day(closed=True, note="Storm"))
    store.set_day(day(capacity=10, changedBy="other"))
    assert store.changed_days("2026-12-01", "2026-12-01") == [day(capacity=10, changedBy="other")]
    assert store.clear_day("2026-12-01") is True
    assert store.changed_days("2026-12-01", "2026-12-01") == []
    assert store.clear_day("2026-12-01") is False


def test_setting_a_day_answers_its_tickets_still_holding_a_place(store):
    night = store.create_event(event(dates=["2026-12-01"]))
    sold = [store.create_ticket(ticket())[0],
            store.create_ticket(event_ticket(night["eventId"]))[0],
            store.create_ticket(ticket())[0], store.create_ticket(ticket())[0]]
    store.create_ticket(ticket(ticketDate="2026-12-02"))
    store.void_ticket(sold[2]["ticketId"], "2026-11-22T12:00:00Z")
    tickets = store.set_day(day(closed=True))
    # In sale order, but tickets sold within one clock tick may come in either order.
    assert {each["ticketId"] for each in tickets} == {
        sold[0]["ticketId"], sold[1]["ticketId"], sold[3]["ticketId"]}
    assert {each["email"] for each in tickets} == {"visitor@example.org"}
    store.cancel_event(night["eventId"])
    assert len(store.set_day(day(closed=True))) == 2


def test_a_general_ticket_of_a_closed_day_is_refused_in_the_sale(store):
    store.set_day(day(closed=True))
    with pytest.raises(storage.DayClosed) as refused:
        store.create_ticket(ticket())
    assert refused.value.date == "2026-12-01"
    night = store.create_event(event(dates=["2026-12-01"]))
    store.create_ticket(event_ticket(night["eventId"]))  # an event follows its own dates
    store.set_day(day(timeOpen="12:00", timeClose="14:00"))
    store.create_ticket(ticket())
    assert store.places_taken("2026-12-01", "2026-12-01")["general"] == {"2026-12-01": 1}


def test_a_days_capacity_counts_instead_of_the_one_given(store):
    store.set_day(day(capacity=1))
    store.create_ticket(ticket(), general_capacity=100)
    with pytest.raises(storage.SoldOut):
        store.create_ticket(ticket(), general_capacity=100)
    store.clear_day("2026-12-01")
    store.create_ticket(ticket(), general_capacity=100)


def test_a_day_closed_on_one_instance_refuses_the_others_sales(backend):
    first, second = backend.open(), backend.open()
    second.create_ticket(ticket())
    assert len(first.set_day(day(closed=True))) == 1
    with pytest.raises(storage.DayClosed):
        second.create_ticket(ticket())
    assert second.changed_days("2026-12-01", "2026-12-01")[0]["closed"] is True


def test_closing_a_day_while_it_sells_lists_every_ticket_sold_and_refuses_the_rest(backend):
    """Sales on four threads while another instance closes the day: each sale either
    committed before the closing (and is in its answer) or was refused."""
    seller, closer = backend.open(), backend.open()
    started = threading.Barrier(5)

    def sell():
        started.wait()
        sold = []
        for _ in range(15):
            try:
                sold.append(seller.create_ticket(ticket())[0]["ticketId"])
            except storage.DayClosed:
                pass
        return sold

    with ThreadPoolExecutor(4) as pool:
        selling = [pool.submit(sell) for _ in range(4)]
        started.wait()
        time.sleep(0.02)
        listed = {each["ticketId"] for each in closer.set_day(day(closed=True))}
        sold = {ticket_id for future in selling for ticket_id in future.result()}
    assert listed == sold


# -- sqlite only -----------------------------------------------------------------------------

@pytest.fixture
def sqlite_store(db_path):
    opened = storage.open_store(db_path)
    yield opened
    opened.close()


@pytest.fixture
def connections(monkeypatch):
    """Every sqlite connection opened from now on, as `sqlite3.connect` returned it."""
    opened = []
    connect = sqlite3.connect

    def recorded(*args, **kwargs):
        opened.append(connect(*args, **kwargs))
        return opened[-1]

    monkeypatch.setattr(sqlite3, "connect", recorded)
    return opened


def pragma(conn, name):
    return conn.execute(f"PRAGMA {name}").fetchone()[0]


def test_connections_are_durable_wal_with_foreign_keys(db_path, connections):
    opened = storage.open_store(db_path)
    opened.list_events("2026-01-01", None, 0, 10)
    assert connections
    for conn in connections:
        assert pragma(conn, "journal_mode") == "wal"
        assert pragma(conn, "synchronous") == 2  # FULL
        assert pragma(conn, "foreign_keys") == 1
        assert pragma(conn, "busy_timeout") > 0
        assert pragma(conn, "secure_delete") == 1
    opened.close()


def test_each_thread_gets_its_own_connection(sqlite_store, connections):
    def read():
        sqlite_store.list_events("2026-01-01", None, 0, 10)

    threads = [threading.Thread(target=read) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    read()  # this thread's connection was opened with the store
    assert len(connections) == 3


def test_a_database_file_moved_away_refuses_writes_and_health_and_opens_nothing_new(tmp_path):
    """The file's identity is checked where losing it would cost something: before every
    write (it would be lost at the next start), by the health check, and before a new
    connection (sqlite would create an empty file). A read on an open connection skips the
    check, a syscall per request, and still reads what was committed."""
    volume = tmp_path / "volume"
    volume.mkdir()
    opened = storage.open_store(str(volume / "museum.sqlite3"))
    created = opened.create_event(event())
    volume.rename(tmp_path / "elsewhere")
    volume.mkdir()
    assert opened.get_event(created["eventId"]) == created  # on this thread's connection
    with pytest.raises(storage.Unavailable, match="missing or was replaced"):
        opened.create_event(event(name="Lost"))
    with pytest.raises(storage.Unavailable, match="missing or was replaced"):
        opened.check()
    with ThreadPoolExecutor(1) as new_thread:  # no connection yet
        with pytest.raises(storage.Unavailable, match="missing or was replaced"):
            new_thread.submit(opened.get_event, created["eventId"]).result()
    assert list(volume.iterdir()) == []
    volume.rmdir()
    (tmp_path / "elsewhere").rename(volume)
    assert opened.get_event(created["eventId"]) == created
    opened.check()
    assert opened.create_event(event(name="Kept"))["name"] == "Kept"
    opened.close()


def test_a_read_only_store_creates_no_file(tmp_path):
    missing = tmp_path / "missing.sqlite3"
    with pytest.raises(storage.Unavailable, match="missing.sqlite3: cannot open the database"):
        storage.open_store(str(missing), read_only=True)
    assert list(tmp_path.iterdir()) == []


def test_a_new_database_and_its_logs_are_readable_by_the_owner_only(tmp_path):
    previous = os.umask(0o022)  # the usual umask, which leaves new files world-readable
    try:
        opened = storage.open_store(str(tmp_path / "museum.sqlite3"))
        opened.create_event(event())
    finally:
        os.umask(previous)
    modes = {path.name: stat.S_IMODE(path.stat().st_mode) for path in tmp_path.iterdir()}
    assert modes == {"museum.sqlite3": 0o600, "museum.sqlite3-wal": 0o600,
                     "museum.sqlite3-shm": 0o600}
    opened.close()


def test_a_database_others_can_read_is_warned_about_at_opening(db_path, caplog):
    storage.open_store(db_path).close()
    os.chmod(db_path, 0o644)
    with caplog.at_level(logging.WARNING, logger="museum.storage"):
        storage.open_store(db_path).close()
    assert f"{db_path} can be read by other users (mode 0644)" in caplog.text
    assert f"chmod 600 {db_path}" in caplog.text


def test_opening_an_up_to_date_database_takes_no_write_lock(db_path, monkeypatch):
    storage.open_store(db_path).close()
    monkeypatch.setattr("storage.sqlite.BUSY_TIMEOUT_MS", 100)
    with write_locked(db_path):
        opened = storage.open_store(db_path)
        assert opened.schema_version() == len(SQLiteStore.MIGRATIONS)
        opened.close()


def test_an_empty_version_0_file_is_migrated(db_path):
    sqlite3.connect(db_path).close()
    opened = storage.open_store(db_path)
    assert opened.schema_version() == len(SQLiteStore.MIGRATIONS)
    opened.create_event(event())


def test_sqlite_urls_name_the_same_file(tmp_path):
    path = tmp_path / "by-url.sqlite3"
    storage.open_store(f"sqlite:///{path}").create_event(event(name="via url"))
    assert storage.open_store(str(path)).list_events("2026-01-01", None, 0, 1)[1] == 1


def test_in_memory_stores_are_private():
    one, two = storage.open_store(":memory:"), storage.open_store(":memory:")
    one.create_event(event())
    assert one.list_events("2026-01-01", None, 0, 10)[1] == 1
    assert two.list_events("2026-01-01", None, 0, 10)[1] == 0


def test_sqlite_listings_are_served_by_the_index(sqlite_store, db_path):
    with closing(sqlite3.connect(db_path)) as conn:
        plan = [row[3] for row in conn.execute(
            "EXPLAIN QUERY PLAN " + LIST_QUERY,
            ("2026-12-01", "2026-12-07", "2026-12-01", 10, 0))]
    # The index is read in the listing's order: no sort, no scan, a page read is a page.
    assert "SEARCH d USING COVERING INDEX event_dates_in_order (date>? AND date<?)" in plan
    assert not [step for step in plan if step.startswith(("SCAN", "USE TEMP B-TREE"))]


def test_a_device_is_read_on_the_index_of_the_devices_in_use(sqlite_store, db_path):
    with closing(sqlite3.connect(db_path)) as conn:
        plan = [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + DEVICE_IN_USE,
                                                ("door-north",))]
    assert plan == ["SEARCH devices USING INDEX devices_in_use (name=?)"]


def test_the_expired_holds_of_a_window_are_found_from_the_pending_orders(sqlite_store,
                                                                         db_path):
    with closing(sqlite3.connect(db_path)) as conn:
        plan = [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + EXPIRED_HOLDS_HELD,
                                                ("2026-12-01T10:00:00Z", "2026-12-01",
                                                 "2026-12-31"))]
    # Not every ticket of the 31 days, which each availability read would otherwise visit.
    assert plan[:2] == ["SEARCH o USING INDEX orders_held (expires_at<?)",
                        "SEARCH t USING INDEX tickets_by_order (order_id=?)"]


def test_other_url_schemes_are_refused():
    with pytest.raises(storage.StorageError,
                       match=r"unsupported storage url 'mysql://u:\*\*\*@h/museum'"):
        storage.open_store("mysql://u:secret@h/museum")


# -- PostgreSQL only -------------------------------------------------------------------------

def test_postgres_urls_open_the_postgres_backend(postgres_url):
    from storage.postgres import PostgresStore

    for url in (postgres_url, postgres_url.replace("postgresql://", "postgres://", 1)):
        opened = storage.open_store(url)
        assert isinstance(opened, PostgresStore)
        opened.close()


def test_postgres_listings_are_served_by_the_index(postgres_url):
    backend = PostgresBackend(postgres_url)
    backend.open()
    # A long history, 20,000 events over 20 years, so the planner weighs real tables: a
    # week's listing must walk the listing index in its order and read its events by key,
    # and an open-ended total must sum the counts by last date.
    backend.rows("""
        WITH made AS (
            INSERT INTO events (id, name, location, description, dates, price_minor)
            SELECT gen_random_uuid(), 'event ' || n, 'hall', 'text',
                   json_build_array(DATE '2016-01-01' + n % 7300)::text, 1
            FROM generate_series(1, 20000) AS n
            RETURNING id, name, (dates::json->>0)::date AS day)
        INSERT INTO event_dates (date, name, event_id) SELECT day, name, id FROM made""")
    backend.rows(LAST_DATES_FROM_THE_LISTING_INDEX)
    backend.rows("VACUUM ANALYZE")
    plan = "\n".join(row[0] for row in backend.rows(
        "EXPLAIN " + LIST_QUERY.replace("?", "%s"),
        ("2026-06-01", "2026-06-07", "2026-06-01", 10, 0)))
    count_plan = "\n".join(row[0] for row in backend.rows(
        "EXPLAIN " + OPEN_COUNT_QUERY.replace("?", "%s"), ("2035-06-01",)))
    backend.close_all()
    assert "event_dates_in_order" in plan and "events_pkey" in plan, plan
    assert "Seq Scan" not in plan and "Sort" not in plan, plan
    # The total sums a row per day: it reads neither the events nor their dates.
    assert "listed_last_dates" in count_plan and "event" not in count_plan.replace(
        "listed_last_dates", ""), count_plan


@contextmanager
def in_flight(url, *statements):
    """Another instance's transaction that ran `statements` and has not committed yet;
    it commits when the block ends."""
    import psycopg

    with psycopg.connect(url) as conn:
        for statement, params in statements:
            conn.execute(statement, params)
        yield
        conn.commit()


def blocked(url, action):
    """Start `action` in a thread; return its future once the server shows its connection
    waiting for a lock the other transaction holds."""
    runner = ThreadPoolExecutor(1)
    future = runner.submit(action)
    runner.shutdown(wait=False)
    waiting = ("SELECT count(*) FROM pg_stat_activity "
               "WHERE datname = current_database() AND wait_event_type = 'Lock'")
    wait_until(lambda: PostgresBackend(url).rows(waiting) == [(1,)] or future.done(), 30,
               what="a wait for the other transaction")
    assert not future.done(), "did not wait for the other transaction"
    return future


def test_a_sale_waits_for_a_cancellation_in_flight_then_is_refused(postgres_url):
    backend = PostgresBackend(postgres_url)
    opened = backend.open()
    event_id = opened.create_event(event())["eventId"]
    with in_flight(postgres_url, ("UPDATE events SET cancelled = true WHERE id = %s",
                                  (event_id,))):
        sale = blocked(postgres_url, lambda: opened.create_ticket(event_ticket(event_id)))
    with pytest.raises(storage.NotFound):
        sale.result(timeout=30)
    assert backend.rows("SELECT count(*) FROM tickets") == [(0,)]
    backend.close_all()


@pytest.mark.parametrize("server_default", ["read committed", "repeatable read"])
def test_a_retry_waits_for_its_key_in_flight_then_replays(postgres_url, server_default):
    backend = PostgresBackend(postgres_url)
    database = postgres_url.rsplit("/", 1)[1]
    # The store must not depend on it: its transactions read committed all the same.
    backend.rows(f"ALTER DATABASE \"{database}\" "
                 f"SET default_transaction_isolation = '{server_default}'")
    opened = backend.open()
    first = ticket()
    with in_flight(postgres_url,
                   ("INSERT INTO tickets (id, type, date, confirmation_code, email) "
                    "VALUES (%s, 'general', %s, %s, %s)",
                    (first["ticketId"], first["ticketDate"], first["confirmationCode"],
                     first["email"])),
                   ("INSERT INTO idempotency_keys (user_name, key, fingerprint, ticket_id) "
                    "VALUES ('visitor', 'key-1', 'body-a', %s)", (first["ticketId"],))):
        retry = blocked(postgres_url, lambda: opened.create_ticket(ticket(), ("visitor", "key-1", "body-a")))
    replayed, created = retry.result(timeout=30)
    assert not created and replayed["ticketId"] == first["ticketId"]
    assert backend.rows("SELECT count(*) FROM tickets") == [(1,)]
    backend.close_all()


def test_an_unreachable_server_is_unavailable_with_a_clear_message():
    pytest.importorskip("psycopg", reason="psycopg is not installed: pip install -e '.[postgres]'")
    with pytest.raises(storage.Unavailable) as raised:
        storage.open_store(DEAD_SERVER.replace("museum@", "museum:s3cret@"))
    message = str(raised.value)
    assert message.startswith("PostgreSQL at postgresql://museum:***@127.0.0.1:1/museum is "
                              "unavailable: connection failed")
    assert "s3cret" not in message and "\n" not in message


def test_a_read_only_database_is_unavailable(postgres_url):
    backend = PostgresBackend(postgres_url)
    backend.open().close()
    database = postgres_url.rsplit("/", 1)[1]
    backend.rows(f'ALTER DATABASE "{database}" SET default_transaction_read_only = on')
    read_only = backend.open()
    assert read_only.list_events("2026-01-01", None, 0, 10) == ([], 0)
    with pytest.raises(storage.Unavailable, match="read-only transaction"):
        read_only.create_event(event())
    backend.close_all()


def test_a_lost_server_is_unavailable_until_it_is_back(postgres_url, postgres_server):
    backend = PostgresBackend(postgres_url)
    opened = backend.open()
    database = postgres_url.rsplit("/", 1)[1]
    admin = PostgresBackend(postgres_server)
    admin.rows(f'ALTER DATABASE "{database}" ALLOW_CONNECTIONS false')
    admin.rows(f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
               f"WHERE datname = '{database}'")
    with pytest.raises(storage.Unavailable):
        opened.check()
    admin.rows(f'ALTER DATABASE "{database}" ALLOW_CONNECTIONS true')

    def answers():
        try:
            opened.check()
            return True
        except storage.Unavailable:
            return False

    wait_until(answers, 30, 0.2, "the store reconnecting")
    backend.close_all()


def run_museum(code):
    """Run `code` in a fresh interpreter where psycopg cannot be imported."""
    return subprocess.run(
        [sys.executable, "-c", "import sys; sys.modules['psycopg'] = None\n" + code],
        cwd=ROOT, capture_output=True, text=True, timeout=60)


def test_without_the_extra_museum_imports_and_names_the_missing_install(tmp_path):
    database = str(tmp_path / "museum.sqlite3")
    sqlite_works = run_museum(f"import museum, storage; storage.open_store({database!r})")
    assert sqlite_works.returncode == 0, sqlite_works.stderr
    config = tmp_path / "museum.ini"
    config.write_text("[museum]\ntimezone = UTC\n")
    served = run_museum(f"import museum_cli; sys.exit(museum_cli.main(['serve', '--config', "
                        f"{str(config)!r}, '--db', {DEAD_SERVER!r}]))")
    assert served.returncode == 1
    assert served.stderr.strip().splitlines()[-1].startswith(
        "museum: PostgreSQL support needs: pip install 'museum-service[postgres]'")


def test_serve_stops_with_one_line_when_the_server_cannot_be_reached(tmp_path):
    pytest.importorskip("psycopg", reason="psycopg is not installed: pip install -e '.[postgres]'")
    config = tmp_path / "museum.ini"
    config.write_text("[museum]\ntimezone = UTC\n")
    served = subprocess.run(
        [sys.executable, "-m", "museum_cli", "serve", "--config", str(config), "--db", DEAD_SERVER],
        cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert served.returncode == 1
    last = served.stderr.strip().splitlines()[-1]
    assert last.startswith(f"museum: PostgreSQL at {DEAD_SERVER} is unavailable: "), served.stderr


def test_postgres_reads_only_real_placeholders(postgres_url):
    """The shared SQL's `?` are parameters on PostgreSQL too; a `?` or a `%` in a string
    literal or a comment stays text, and a `%` is no placeholder."""
    from storage.postgres import QmarkConnection

    with QmarkConnection.connect(postgres_url, autocommit=True) as conn:
        row = conn.execute("SELECT 'why?', '100%', CAST(? AS text) || '%', ? /* who? */ -- 5%?\n",
                           ("half", 2)).fetchone()
        unbound = conn.execute("SELECT '50%?'").fetchone()
    assert row == ("why?", "100%", "half%", 2)
    assert unbound == ("50%?",)


# -- price categories ----------------------------------------------------------------------

def test_an_event_keeps_its_prices_by_category_exactly_and_a_change_replaces_them(store):
    created = store.create_event(event(prices={"child": 6.5, "reduced": 10}))
    assert store.get_event(created["eventId"])["prices"] == {"child": 6.5, "reduced": 10}
    listed = store.list_events("2026-01-01", None, 0, 10)[0][0]
    assert listed["prices"] == {"child": 6.5, "reduced": 10}
    changed = store.update_event(created["eventId"], {"prices": {"child": 0.1}})
    assert changed["prices"] == store.get_event(created["eventId"])["prices"] == {"child": 0.1}
    for cleared in (None, {}):
        assert "prices" not in store.update_event(created["eventId"], {"prices": cleared})
        assert "prices" not in store.get_event(created["eventId"])


def test_an_event_ticket_costs_its_categorys_price_or_the_events(store):
    night = store.create_event(event(prices={"child": 6.5}))
    child, _ = store.create_ticket(event_ticket(night["eventId"], category="child"))
    adult, _ = store.create_ticket(event_ticket(night["eventId"], category="adult"))
    assert (child["price"], child["category"]) == (6.5, "child")
    assert (adult["price"], adult["category"]) == (12.5, "adult")
    store.update_event(night["eventId"], {"prices": {"child": 3}})
    assert store.get_ticket(child["ticketId"])["price"] == 6.5  # as sold
    assert store.get_ticket(adult["ticketId"])["category"] == "adult"


def test_a_general_ticket_keeps_its_category_and_price(store):
    sold, _ = store.create_ticket(ticket(category="reduced", price=8.5))
    assert (sold["category"], sold["price"]) == ("reduced", 8.5)
    read = store.get_ticket(sold["ticketId"])
    assert (read["category"], read["price"]) == ("reduced", 8.5)
    assert store.get_ticket_by_code(sold["confirmationCode"])["category"] == "reduced"


def test_events_and_tickets_from_before_categories_read_without_them(backend, monkeypatch):
    every_step = backend.store_class.MIGRATIONS
    monkeypatch.setattr(backend.store_class, "MIGRATIONS", every_step[:-1])
    backend.open()
    night, old = event(), ticket()
    backend.rows(f"INSERT INTO events (id, name, location, description, dates, price_minor) "
                 f"VALUES ('{night['eventId']}', 'Old', 'Hall', 'Sold before', "
                 f"'[\"2026-12-01\"]', 1250)")
    backend.rows(f"INSERT INTO tickets (id, type, date, confirmation_code, email, price_minor, "
                 f"currency) VALUES ('{old['ticketId']}', 'general', '2026-12-01', "
                 f"'{old['confirmationCode']}', 'ada@example.org', 0, 'EUR')")
    monkeypatch.setattr(backend.store_class, "MIGRATIONS", every_step)
    after = backend.open()
    assert "prices" not in after.get_event(night["eventId"])
    assert after.get_ticket(old["ticketId"])["category"] is None
    after.update_event(night["eventId"], {"prices": {"child": 5}})
    child, _ = after.create_ticket(event_ticket(night["eventId"], category="child",
                                                ticketDate="2026-12-01"))
    assert child["price"] == 5


def test_arrivals_are_counted_per_quarter_hour_of_their_utc_time(store):
    """The window's admissions by the quarter of an hour they fell in, in UTC; a void
    ticket's, a cancelled event's and another day's are left out."""
    cancelled = store.create_event(event(dates=["2026-12-01"]))
    times = {"09:00:00": ticket(), "09:14:59": ticket(), "09:15:00": ticket(),
             "13:59:00": ticket(), "13:01:00": ticket(ticketDate="2026-12-02"),
             "10:00:00": event_ticket(cancelled["eventId"]), "11:00:00": ticket()}
    for time, sold in times.items():
        store.create_ticket(sold)
        store.admit(sold["ticketId"], "gate", f"2026-12-01T{time}Z")
    store.void_ticket(times["11:00:00"]["ticketId"], "2026-12-01T11:30:00Z")
    store.cancel_event(cancelled["eventId"])
    assert store.arrivals("2026-12-01", "2026-12-01") == [
        {"at": "2026-12-01T09:00:00Z", "admitted": 2},
        {"at": "2026-12-01T09:15:00Z", "admitted": 1},
        {"at": "2026-12-01T13:45:00Z", "admitted": 1}]
    assert {"at": "2026-12-01T13:00:00Z", "admitted": 1} in store.arrivals(
        "2026-12-01", "2026-12-02")  # 2026-12-02's ticket, admitted early
    assert store.arrivals("2026-12-03", "2026-12-31") == []

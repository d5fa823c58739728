"""The event listing stays an index search with 100,000 events stored.

The events are written straight into `events` and `event_dates` in one transaction, after
`storage.open_store` has created the schema; the store then answers from that file. The
plans come from the store's own queries (`LIST_QUERY`, `COUNT_QUERY`), so a change to them
or to the schema that drops the index makes this fail.
"""

import json
import random
import re
import sqlite3
import uuid
from datetime import date, timedelta

import pytest

import storage
from storage.sql import COUNT_QUERY, LIST_QUERY

EVENT_COUNT = 100_000
FIRST_DAY = date(2026, 1, 1)
DAYS = 730
PAGE = 30
INDEX_SEARCH = "SEARCH event_dates USING PRIMARY KEY (date>? AND date<?)"
EVENT_BY_ID = re.compile(r"SEARCH e USING (PRIMARY KEY|(COVERING )?INDEX \S+) \(id=\?\)")
TABLE_SCAN = re.compile(r"SCAN (event_dates|events|e)\b")  # `e` is the alias of events
WINDOWS = [("2026-12-01", "2026-12-07"), ("2026-11-22", "9999-12-31")]  # as list_events binds


def seed_events(count, seed=2026):
    """`count` events with one to three random dates each over two years; ties on the first
    date and on the name are common, so the order's every key is exercised."""
    rng = random.Random(seed)
    events = []
    for number in range(count):
        dates = sorted({(FIRST_DAY + timedelta(days=rng.randrange(DAYS))).isoformat()
                        for _ in range(rng.randint(1, 3))})
        events.append({"eventId": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                       "name": f"Event {number % 500:03d}", "location": "Main hall",
                       "eventDescription": "Seeded.", "dates": dates, "price": 10.0})
    return events


def bulk_insert(path, events):
    with sqlite3.connect(path) as conn:  # one transaction, committed on exit
        conn.executemany(
            "INSERT INTO events (id, name, location, description, dates, price) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [(e["eventId"], e["name"], e["location"], e["eventDescription"],
              json.dumps(e["dates"]), e["price"]) for e in events])
        conn.executemany("INSERT INTO event_dates (date, event_id) VALUES (?, ?)",
                         [(day, e["eventId"]) for e in events for day in e["dates"]])
    conn.close()


def expected_listing(events, start, end):
    """The listing by the issue's rule, computed in Python: matching events, in order."""
    keyed = []
    for event in events:
        inside = [day for day in event["dates"] if start <= day <= end]
        if inside:
            keyed.append(((inside[0], event["name"], event["eventId"]), event))
    return [event for _, event in sorted(keyed, key=lambda pair: pair[0])]


def query_plan(conn, sql, parameters):
    return [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", parameters)]


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    """(path, store, events): a sqlite file holding EVENT_COUNT events."""
    path = str(tmp_path_factory.mktemp("index") / "museum.sqlite3")
    store = storage.open_store(path)
    events = seed_events(EVENT_COUNT)
    bulk_insert(path, events)
    yield path, store, events
    store.close()


@pytest.fixture
def conn(seeded):
    connection = sqlite3.connect(seeded[0])
    yield connection
    connection.close()


def test_the_seed_is_stored(conn):
    assert conn.execute("SELECT count(*) FROM events").fetchone() == (EVENT_COUNT,)


@pytest.mark.parametrize("start, end", WINDOWS)
def test_listing_query_searches_the_date_index(conn, start, end):
    plan = query_plan(conn, LIST_QUERY, (start, end, 10, 0))
    assert any(step.startswith(INDEX_SEARCH) for step in plan), plan
    assert any(EVENT_BY_ID.fullmatch(step) for step in plan), plan
    assert not [step for step in plan if TABLE_SCAN.match(step)], plan


@pytest.mark.parametrize("start, end", WINDOWS)
def test_count_query_searches_the_date_index(conn, start, end):
    plan = query_plan(conn, COUNT_QUERY, (start, end))
    assert any(step.startswith(INDEX_SEARCH) for step in plan), plan
    assert not [step for step in plan if step.startswith("SCAN")], plan


@pytest.mark.parametrize("start, end, where", [
    ("2026-12-01", "2026-12-07", "first"), ("2026-12-01", "2026-12-07", "middle"),
    ("2026-12-01", "2026-12-07", "last"), ("2026-12-01", "2026-12-07", "past-end"),
    ("2027-12-20", None, "first"), ("2027-12-20", None, "last"),
])
def test_list_events_returns_the_right_page(seeded, start, end, where):
    _, store, events = seeded
    expected = expected_listing(events, start, end or "9999-12-31")
    offset = {"first": 0, "middle": len(expected) // 2, "last": len(expected) - 7,
              "past-end": len(expected)}[where]
    page, total = store.list_events(start, end, offset, PAGE)
    assert total == len(expected) > 1000
    assert page == expected[offset:offset + PAGE]
    assert len(page) == {"first": PAGE, "middle": PAGE, "last": 7, "past-end": 0}[where]

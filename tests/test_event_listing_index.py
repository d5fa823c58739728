"""The event listing stays an index walk with 100,000 events stored, and answers what a
brute-force reading of the listing rule answers, at that size and on random small sets.

The 100,000 events are stored in one transaction by `create_events`. The
plans come from the store's own queries (`LIST_QUERY`, `COUNT_QUERY`, `OPEN_COUNT_QUERY`),
so a change to them or to the schema that drops an index makes this fail.
"""

import random
import re
import sqlite3
import uuid
from datetime import date, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import storage
from storage.sql import COUNT_QUERY, LIST_QUERY, OPEN_COUNT_QUERY

EVENT_COUNT = 100_000
FIRST_DAY = date(2026, 1, 1)
DAYS = 730
PAGE = 30
INDEX_WALK = "SEARCH d USING COVERING INDEX event_dates_in_order (date>? AND date<?)"
EVENT_BY_ID = re.compile(r"SEARCH e USING (PRIMARY KEY|(COVERING )?INDEX \S+) \(id=\?\)")
TABLE_SCAN = re.compile(r"SCAN (event_dates|events|d|e)\b")  # `d`, `e`: the query's aliases
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
    store.create_events(events)
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
def test_listing_query_walks_the_index_in_the_listings_order(conn, start, end):
    plan = query_plan(conn, LIST_QUERY, (start, end, start, 10, 0))
    assert any(step.startswith(INDEX_WALK) for step in plan), plan
    assert any(EVENT_BY_ID.fullmatch(step) for step in plan), plan
    assert not [step for step in plan if TABLE_SCAN.match(step) or "TEMP B-TREE" in step], plan


def test_closed_window_count_searches_the_date_index(conn):
    plan = query_plan(conn, COUNT_QUERY, WINDOWS[0])
    assert any("(date>? AND date<?)" in step for step in plan), plan
    assert not [step for step in plan if step.startswith("SCAN")], plan


def test_open_window_count_sums_the_counts_by_last_date(conn):
    plan = query_plan(conn, OPEN_COUNT_QUERY, (WINDOWS[1][0],))
    assert plan == ["SEARCH listed_last_dates USING PRIMARY KEY (date>?)"]


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


# -- the same rule on random small sets ----------------------------------------------------

DAY_STRINGS = st.integers(0, 20).map(lambda n: (FIRST_DAY + timedelta(days=n)).isoformat())
EVENTS = st.lists(st.tuples(
    st.sampled_from(["Art", "art", "Zoo", "Ärt", "A"]),  # ties and code-point order
    st.lists(DAY_STRINGS, min_size=1, max_size=4, unique=True).map(sorted),
    st.booleans(),  # cancelled
    st.one_of(st.none(), st.sampled_from(["Bats", "art"])),  # renamed to
    st.one_of(st.none(), st.lists(DAY_STRINGS, min_size=1, max_size=4, unique=True).map(
        sorted))), max_size=25)  # moved to


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(EVENTS, DAY_STRINGS, st.one_of(st.none(), DAY_STRINGS), st.integers(0, 12),
       st.integers(1, 8))
def test_listing_matches_the_rule_on_random_events(events, start, end, offset, limit):
    store = storage.open_store(":memory:")
    listed = []
    for number, (name, dates, cancelled, renamed, moved) in enumerate(events):
        event = {"eventId": str(uuid.UUID(int=number + 1, version=4)), "name": name,
                 "location": "Hall", "eventDescription": "Random.", "dates": dates,
                 "price": 1.0}
        store.create_event(event)
        if renamed:
            event = store.update_event(event["eventId"], {"name": renamed})
        if moved:
            event = store.update_event(event["eventId"], {"dates": moved})
        if cancelled:
            store.cancel_event(event["eventId"])
        else:
            listed.append(event)
    expected = expected_listing(listed, start, end or "9999-12-31")
    page, total = store.list_events(start, end, offset, limit)
    assert total == len(expected)
    assert page == expected[offset:offset + limit]

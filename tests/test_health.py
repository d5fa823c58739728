"""`GET /healthz` tells the truth: 503 saying why while the database cannot take a write (a
full disk, a write lock another process holds beyond the busy timeout, a read-only
PostgreSQL database, a PostgreSQL server that is down), 200 again once it can, with no sale needed to notice either; and the log
says each outage once, when it begins and when it ends.

The faults are real, on real `museum serve` processes: a 2 MiB tmpfs filled to the last
byte (needs root, skips otherwise), a sqlite connection of this process holding the write
lock, and a throwaway PostgreSQL cluster of the test's own, stopped and started again.
"""

import json
import re
import sqlite3
import tempfile
import time

import pytest
import webtest

import museum
import pg_cluster
import storage
from conftest import ADMIN, NOW, VISITOR
from postgres import maintenance
from serving import problem, running_server, wait_until
from test_faults import fill, tiny_disk  # noqa: F401 (a fixture)
from ticketing import EVENTS, TICKETS, event_body, open_days, ticket_body

DEADLINE = 20  # seconds allowed for health to notice a fault or its end (a bound, not a goal)
BOUND = 5  # seconds without a byte of an answer while PostgreSQL is down: a hang


def health(server):
    status, headers, data = server.request("GET", "/healthz", timeout=DEADLINE)
    return status, headers, data


def health_is(server, status):
    """Poll until /healthz answers `status`; return the answer."""
    return wait_until(lambda: (answer := health(server))[0] == status and answer, DEADLINE,
                      0.2, f"/healthz {status}")


def unavailable_detail(status, headers, data):
    """The detail of a 503 problem with Retry-After."""
    assert status == 503, (status, data)
    assert int(headers["Retry-After"]) > 0
    return problem(status, headers, data)["detail"]


def logged_once(server):
    """The server's log says the outage began once and ended once."""
    log = server.log()
    assert log.count("database unavailable: ") == 1, log
    assert log.count("database available again: ") == 1, log
    assert "Traceback" not in log


def test_health_writes_at_most_once_every_few_seconds(tmp_path, config):
    """The normal case costs /healthz one read; a write of its own now and then."""
    db_path = str(tmp_path / "museum.sqlite3")
    store = storage.open_store(db_path)
    client = webtest.TestApp(museum.create_app(config, store=store, clock=lambda: NOW),
                             lint=True)
    observer = sqlite3.connect(db_path, isolation_level=None)
    client.get("/healthz", status=200)  # the first check writes
    changes = observer.execute("PRAGMA data_version").fetchone()[0]
    for _ in range(20):
        client.get("/healthz", status=200)
    assert observer.execute("PRAGMA data_version").fetchone()[0] == changes
    written = observer.execute("SELECT value FROM settings WHERE name = 'write_checked_at'")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", written.fetchone()[0])
    observer.close()
    store.close()


def test_health_is_503_on_a_read_only_postgresql_database_saying_so(postgres_url):
    storage.open_store(postgres_url).close()  # the schema, while it may still be written
    name = postgres_url.rsplit("/", 1)[1]
    maintenance(postgres_url, f'ALTER DATABASE "{name}" SET default_transaction_read_only = on')
    store = storage.open_store(postgres_url)
    try:
        assert store.list_events("2026-01-01", None, 0, 10) == ([], 0)  # reads work
        with pytest.raises(storage.Unavailable, match="read-only transaction"):
            store.health()
    finally:
        store.close()


@pytest.mark.slow
def test_health_is_503_on_a_full_disk_without_a_sale_and_200_once_there_is_room(
        tmp_path, tiny_disk, config_text):  # noqa: F811 (the fixture)
    day = open_days(config_text, 1)[0]
    with running_server(tmp_path, config_text, db=str(tiny_disk / "museum.sqlite3")) as server:
        assert server.request("POST", TICKETS, ticket_body(1, day), VISITOR)[0] == 201
        assert health(server)[0] == 200
        filler = fill(tiny_disk)
        detail = unavailable_detail(*health_is(server, 503))  # nobody buys meanwhile
        assert "full" in detail, detail
        assert server.request("POST", TICKETS, ticket_body(2, day), VISITOR)[0] == 503
        filler.unlink()
        health_is(server, 200)  # nobody buys meanwhile either
        assert server.request("POST", TICKETS, ticket_body(3, day), VISITOR)[0] == 201
        logged_once(server)


@pytest.mark.slow
def test_health_is_503_while_another_process_holds_the_write_lock_beyond_the_busy_timeout(
        tmp_path, config_text):
    db_path = str(tmp_path / "museum.sqlite3")
    day = open_days(config_text, 1)[0]
    config = config_text + "[storage]\nbusy_timeout = 0.5\n"
    with running_server(tmp_path, config) as server:
        assert health(server)[0] == 200
        holder = sqlite3.connect(db_path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # as a long script or a stuck process would
        try:
            detail = unavailable_detail(*health_is(server, 503))
            assert "database is locked" in detail, detail
            assert server.request("POST", TICKETS, ticket_body(1, day), VISITOR)[0] == 503
            assert health(server)[0] == 503
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        health_is(server, 200)
        assert server.request("POST", TICKETS, ticket_body(2, day), VISITOR)[0] == 201
        logged_once(server)


@pytest.fixture
def own_cluster():
    """A PostgreSQL cluster of this test's own, to stop and start: (directory, url)."""
    pytest.importorskip("psycopg", reason="psycopg is not installed: pip install -e '.[postgres]'")
    directory = tempfile.mkdtemp(prefix="museum-pg-outage-")
    try:
        url = pg_cluster.start(directory)
    except pg_cluster.ClusterError as error:
        pg_cluster.stop(directory)
        pytest.skip(f"no throwaway PostgreSQL cluster here: {error}")
    try:
        yield directory, url
    finally:
        pg_cluster.stop(directory)


def answered_within_bound(server, method, path, body=None, headers=None):
    """The answer to a request; the test fails if the server sends nothing for BOUND
    seconds."""
    return server.request(method, path, body, headers, timeout=BOUND)


@pytest.mark.slow
def test_while_postgresql_is_down_requests_get_503_at_once_and_health_recovers_with_it(
        tmp_path, config_text, own_cluster):
    directory, url = own_cluster
    day = open_days(config_text, 3)
    with running_server(tmp_path, config_text, db=url) as server:
        status, _, data = server.request("POST", EVENTS, event_body(1, day), ADMIN)
        assert status == 201, data
        event_id = json.loads(data)["eventId"]
        assert health(server)[0] == 200

        pg_cluster.pause(directory)
        for _ in range(3):
            for method, path, body, headers in [
                    ("GET", "/healthz", None, None),
                    ("GET", f"{EVENTS}/{event_id}", None, VISITOR),
                    ("GET", f"{EVENTS}?startDate={day[0]}", None, VISITOR),
                    ("POST", TICKETS, ticket_body(1, day[0], event_id), VISITOR),
                    ("PATCH", f"{EVENTS}/{event_id}", {"price": 2}, ADMIN)]:
                answer = answered_within_bound(server, method, path, body, headers)
                unavailable_detail(*answer)

        pg_cluster.resume(directory)
        back = time.monotonic()
        health_is(server, 200)
        print(f"health 200 again {time.monotonic() - back:.1f} s after PostgreSQL was back")
        status, _, data = server.request("POST", TICKETS, ticket_body(2, day[0], event_id),
                                         VISITOR)
        assert status == 201, data
        logged_once(server)
        log = server.log()
        assert "psycopg.pool" not in log and "error connecting" not in log, log

"""Migrations: released steps are append-only, and every database a released version wrote
upgrades to exactly the schema of a new one, then works through the API.

storage/migrations.lock holds the fingerprint of every released step; a step that differs
from its line fails here. A new step gets its line once it is final; this prints the lines
of the steps not yet in the lock:

    python tests/test_migrations.py >> storage/migrations.lock

tests/schema_history/ holds a database written by the code of every released schema
version (see make_fixtures.py there), as SQL text: each is loaded, opened by this version
(which migrates it), compared object by object with a new database, and driven through the
API.
"""

import re
import sqlite3
import subprocess
import sys
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

import pytest
import webtest

import museum
import museum_credentials
import museum_door
import storage
from schema_history import FIXTURES, load_postgres_fixture, load_sqlite_fixture
from storage.sql import step_fingerprint

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "storage" / "migrations.lock"
LOCK_COMMAND = "python tests/test_migrations.py >> storage/migrations.lock"


def released_steps():
    """{backend: its migration steps}."""
    from storage import postgres, sqlite

    return {"sqlite": sqlite.MIGRATIONS, "postgres": postgres.MIGRATIONS}


def locked(lock_text):
    """{(backend, step number): fingerprint} from the lock's lines (# starts a comment)."""
    lines = (line.split() for line in lock_text.splitlines())
    return {(backend, int(number)): digest
            for backend, number, digest in (line for line in lines if line and line[0] != "#")}


def lock_problems(lock_text, steps):
    """How `steps` ({backend: steps}) break the lock, one message each; [] when they keep it."""
    fingerprints = locked(lock_text)
    problems = []
    for backend, backend_steps in steps.items():
        for number, step in enumerate(backend_steps, start=1):
            digest = fingerprints.pop((backend, number), None)
            if digest is None:
                problems.append(f"{backend} step {number} is not in storage/migrations.lock: "
                                f"once it is final, add its line with: {LOCK_COMMAND}")
            elif digest != step_fingerprint(step):
                problems.append(f"{backend}: released migration steps are append-only: add a "
                                f"new step instead of editing step {number}")
    problems += [f"{backend}: released migration steps are append-only: step {number} is gone"
                 for backend, number in fingerprints]
    return problems


def new_lock_lines(lock_text, steps):
    """The lock's lines for the steps it does not hold yet."""
    fingerprints = locked(lock_text)
    return [f"{backend} {number} {step_fingerprint(step)}"
            for backend, backend_steps in steps.items()
            for number, step in enumerate(backend_steps, start=1)
            if (backend, number) not in fingerprints]


# -- append-only ------------------------------------------------------------------------

def test_every_released_step_is_as_its_lock_line_says():
    assert lock_problems(LOCK.read_text(encoding="utf-8"), released_steps()) == []


def lock_of(steps):
    return "".join(f"{line}\n" for line in new_lock_lines("", steps))


def test_an_edited_step_fails_with_a_message_saying_to_add_a_step_instead():
    steps = released_steps()
    edited = [*steps["sqlite"][:4], [*steps["sqlite"][4], "DROP INDEX tickets_by_date"],
              *steps["sqlite"][5:]]
    assert lock_problems(lock_of(steps), {**steps, "sqlite": edited}) == [(
        "sqlite: released migration steps are append-only: add a new step instead of "
        "editing step 5")]


def test_a_step_function_is_fingerprinted_by_its_source():
    def one(conn):
        conn.execute("SELECT 1")

    def other(conn):
        conn.execute("SELECT 2")

    assert step_fingerprint([one]) != step_fingerprint([other])


def test_a_removed_step_fails_too():
    steps = released_steps()
    assert lock_problems(lock_of(steps), {**steps, "postgres": steps["postgres"][:-1]}) == [(
        f"postgres: released migration steps are append-only: step {len(steps['postgres'])} "
        f"is gone")]


def test_a_new_step_must_be_locked_and_the_command_prints_only_its_line():
    steps = released_steps()
    new_step = ["CREATE INDEX tickets_by_code ON tickets (confirmation_code, date)"]
    grown = {**steps, "sqlite": [*steps["sqlite"], new_step]}
    number = len(grown["sqlite"])
    lock_text = lock_of(steps)
    assert lock_problems(lock_text, grown) == [(
        f"sqlite step {number} is not in storage/migrations.lock: once it is final, add its "
        f"line with: {LOCK_COMMAND}")]
    line = new_lock_lines(lock_text, grown)
    assert line == [f"sqlite {number} {step_fingerprint(new_step)}"]
    assert lock_problems(f"{lock_text}{line[0]}\n", grown) == []


def test_the_lock_command_prints_nothing_while_every_step_is_locked():
    done = subprocess.run([sys.executable, "tests/test_migrations.py"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


# -- every released database upgrades -----------------------------------------------------

def sqlite_schema(path):
    """Every object of the sqlite file: its sqlite_master row with the SQL's spacing
    normalized, each table's columns and each table's indexes as sqlite describes them."""
    with closing(sqlite3.connect(path)) as conn:
        objects = {}
        for kind, name, table, sql in conn.execute(
                "SELECT type, name, tbl_name, sql FROM sqlite_master"):
            objects[kind, name] = (table, sql and re.sub(r"\s*([(),])\s*|\s+", r"\1 ", sql))
            if kind == "table":
                objects["columns", name] = conn.execute(
                    f"SELECT * FROM pragma_table_info('{name}')").fetchall()
                objects["indexes", name] = sorted(conn.execute(
                    f"SELECT * FROM pragma_index_list('{name}')").fetchall())
    return objects


POSTGRES_CATALOG = {
    "tables": """SELECT table_name, table_type FROM information_schema.tables
                 WHERE table_schema = current_schema() ORDER BY 1""",
    "columns": """SELECT table_name, column_name, data_type, is_nullable, column_default,
                         collation_name
                  FROM information_schema.columns WHERE table_schema = current_schema()
                  ORDER BY table_name, ordinal_position""",
    "indexes": """SELECT tablename, indexname, indexdef FROM pg_indexes
                  WHERE schemaname = current_schema() ORDER BY 2""",
    "constraints": """SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid),
                             condeferrable, condeferred
                      FROM pg_constraint WHERE connamespace = current_schema()::regnamespace
                      ORDER BY 1, 2""",
}


def postgres_schema(url):
    import psycopg

    with psycopg.connect(url) as conn:
        return {what: conn.execute(query).fetchall() for what, query in POSTGRES_CATALOG.items()}


@pytest.fixture
def fresh_postgres_url(postgres_server):
    """A second fresh database on the test server, given this version's schema."""
    import urllib.parse
    import uuid

    from postgres import maintenance

    name = f"museum_fresh_{uuid.uuid4().hex[:16]}"
    maintenance(postgres_server, f'CREATE DATABASE "{name}"')
    url = urllib.parse.urlsplit(postgres_server)._replace(path=f"/{name}").geturl()
    storage.open_store(url).close()
    yield url
    maintenance(postgres_server, f'DROP DATABASE "{name}" WITH (FORCE)')


@pytest.mark.parametrize("name", FIXTURES)
def test_every_released_sqlite_database_upgrades_to_a_new_ones_schema_and_works(
        tmp_path, name, config):
    old, fresh = str(tmp_path / "old.sqlite3"), str(tmp_path / "fresh.sqlite3")
    load_sqlite_fixture(name, old)
    storage.open_store(fresh).close()
    upgraded = storage.open_store(old)
    try:
        assert sqlite_schema(old) == sqlite_schema(fresh)
        assert upgraded.schema_findings() == []
        drive_the_api(upgraded, config, fixture_version(name))
    finally:
        upgraded.close()


@pytest.mark.parametrize("name", FIXTURES)
def test_every_released_postgres_database_upgrades_to_a_new_ones_schema_and_works(
        postgres_url, fresh_postgres_url, name, config):
    load_postgres_fixture(name, postgres_url)
    upgraded = storage.open_store(postgres_url)
    try:
        assert postgres_schema(postgres_url) == postgres_schema(fresh_postgres_url)
        assert upgraded.schema_findings() == []
        drive_the_api(upgraded, config, fixture_version(name))
    finally:
        upgraded.close()


DEVICES_STEP = 15  # the step that keeps devices in the database


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_database_before_the_devices_step_gains_them_and_keys_of_users_still_sign_in(
        request, tmp_path, monkeypatch, config_text, backend):
    """A database of schema 13 (1.3.0) upgrades to the same schema as a new one; then a
    device of [users] and one added to the database both sign in."""
    from conftest import basic
    from storage.postgres import PostgresStore
    from storage.sqlite import SQLiteStore

    store_class = SQLiteStore if backend == "sqlite" else PostgresStore
    url = str(tmp_path / "old.sqlite3") if backend == "sqlite" \
        else request.getfixturevalue("postgres_url")
    fresh = str(tmp_path / "fresh.sqlite3") if backend == "sqlite" \
        else request.getfixturevalue("fresh_postgres_url")
    with monkeypatch.context() as before:
        before.setattr(store_class, "MIGRATIONS", store_class.MIGRATIONS[:13])
        # Empty: today's sale writes tables of later steps (the fixtures of tests/schema_history
        # carry data through every step).
        storage.open_store(url).close()
    if backend == "sqlite":
        storage.open_store(fresh).close()
    upgraded = storage.open_store(url)
    try:
        assert upgraded.schema_version() == len(store_class.MIGRATIONS) >= DEVICES_STEP
        schema = sqlite_schema if backend == "sqlite" else postgres_schema
        assert schema(url) == schema(fresh)
        assert upgraded.list_devices() == []
        stored_key, west_key = museum_credentials.new_device_key(), museum_credentials.new_device_key()
        upgraded.add_device("door-north", "gate", museum_credentials.hash_key(stored_key),
                            "2026-11-22T09:00:00Z")
        config = museum.parse_config(
            f"{config_text}door-west = gate:{museum_credentials.hash_key(west_key)}\n")
        client = webtest.TestApp(museum.create_app(config, store=upgraded), lint=True)
        for name, key in [("door-north", stored_key), ("door-west", west_key)]:
            client.get(f"{ADMISSIONS}/summary", headers=basic(name, key), status=200)
    finally:
        upgraded.close()


def fixture_version(name):
    return int(re.match(r"v(\d+)", name)[1])


# What every fixture holds (make_fixtures.py's WRITER).
NIGHT, PRINTS, RESTORERS, LECTURES = (f"00000000-0000-4000-8000-00000000000{n}"
                                      for n in range(1, 5))
GENERAL_TICKET, PRINTS_TICKET, RESTORERS_TICKET, NIGHT_TICKET = (
    f"00000000-0000-4000-9000-00000000000{n}" for n in range(1, 5))
FIXTURE_SECRET = "fake-secret-of-a-test-fixture"
EVENTS, TICKETS, ADMISSIONS = "/v1.1/special-events", "/v1.1/tickets", "/v1.1/admissions"


def drive_the_api(store, config, version):
    """What the old version wrote reads back whole; then list, create, patch, cancel, buy
    and admit through the API on the upgraded database."""
    from conftest import ADMIN, GATE, VISITOR

    def on(day):
        clock = datetime.fromisoformat(f"{day}T12:00:00").replace(tzinfo=UTC)
        return webtest.TestApp(museum.create_app(config, store=store, clock=lambda: clock),
                               lint=True)

    def listing(**params):
        res = office.get(EVENTS, params, headers=VISITOR, status=200)
        return [event["name"] for event in res.json], int(res.headers["X-Total-Count"])

    office = on("2026-11-22")
    assert listing() == (["Winter lectures", "Night at the museum", "Printmaking workshop"], 3)
    assert listing(startDate="2026-12-06") == (["Printmaking workshop", "Winter lectures"], 2)
    assert listing(endDate="2026-12-31") == (
        ["Winter lectures", "Night at the museum", "Printmaking workshop"], 3)
    assert store.get_ticket(PRINTS_TICKET)["eventName"] == "Printmaking workshop"
    assert store.get_ticket(RESTORERS_TICKET)["cancelled"] is True
    assert store.get_ticket(NIGHT_TICKET)["email"] == "visitor4@example.org"
    replayed = store.replayed_ticket("visitor", "key-1", "fingerprint-1")
    assert replayed["ticketId"] == GENERAL_TICKET
    assert store.setting("qr_secret") == FIXTURE_SECRET

    spring = office.post_json(EVENTS, {
        "name": "Spring fair", "location": "Courtyard", "eventDescription": "Stalls.",
        "dates": ["2027-03-01", "2027-03-02"], "price": 4.0}, headers=ADMIN, status=201).json
    office.patch_json(f"{EVENTS}/{spring['eventId']}", {"dates": ["2027-03-01", "2027-03-09"]},
                      headers=ADMIN, status=200)
    office.patch_json(f"{EVENTS}/{PRINTS}", {"price": 15.0}, headers=ADMIN, status=200)
    office.delete(f"{EVENTS}/{NIGHT}", headers=ADMIN, status=204)
    assert listing() == (["Winter lectures", "Printmaking workshop", "Spring fair"], 3)
    assert listing(startDate="2027-03-03") == (["Spring fair"], 1)
    general = office.post_json(TICKETS, {"ticketType": "general", "ticketDate": "2026-12-01",
                                         "email": "ada@example.org"},
                               headers=VISITOR, status=201).json
    printing = office.post_json(TICKETS, {"ticketType": "event", "eventId": PRINTS,
                                          "ticketDate": "2026-12-17", "email": "bo@example.org"},
                                headers=VISITOR, status=201).json

    door = on("2026-12-17")
    old_qr = museum_door.qr_text(FIXTURE_SECRET, PRINTS_TICKET, "ticket-event-000002-00002")
    assert door.post_json(ADMISSIONS, {"code": old_qr}, headers=GATE,
                          status=201).json["result"] == "admitted"
    door.post_json(ADMISSIONS, {"confirmationCode": printing["confirmationCode"]},
                   headers=GATE, status=201)
    summary = door.get(f"{ADMISSIONS}/summary", headers=GATE, status=200).json
    assert (summary["sold"], summary["admitted"]) == ({"general": 0, "event": 2},
                                                      {"general": 0, "event": 2})
    first_day = on("2026-12-01")
    admitted_before = version >= 4  # the door came with schema 4
    answer = first_day.post_json(ADMISSIONS, {"confirmationCode": "ticket-general-000001-00001"},
                                 headers=GATE, status=409 if admitted_before else 201).json
    assert answer["result"] == ("already-admitted" if admitted_before else "admitted")
    first_day.post_json(ADMISSIONS, {"confirmationCode": general["confirmationCode"]},
                        headers=GATE, status=201)
    # The audit trail was rebuilt by step 14 with what it held, and takes double entries.
    history, _ = store.admission_history(GENERAL_TICKET)
    assert history[0] == ({"action": "admitted", "at": "2026-12-01T09:30:00Z", "by": "gate"}
                          if admitted_before else {**history[0], "action": "admitted"})
    first_day.post_json(ADMISSIONS, {"confirmationCode": "ticket-general-000001-00001",
                                     "scannedAt": "2026-12-01T11:00:00Z"},
                        headers=ADMIN, status=409)
    assert store.admission_history(GENERAL_TICKET)[0][-1]["action"] == "double-entry"
    assert first_day.get(f"{ADMISSIONS}/summary", headers=GATE).json["doubleEntries"] == 1
    listed = first_day.get(f"{ADMISSIONS}/list", headers=GATE, status=200).json
    assert {row[0]: row[5] for row in listed["tickets"]} == {
        GENERAL_TICKET: "admitted", general["ticketId"]: "admitted"}
    assert first_day.get(f"{ADMISSIONS}/list", {"since": listed["cursor"]}, headers=GATE,
                         status=200).json["tickets"] == []


if __name__ == "__main__":
    for new_line in new_lock_lines(LOCK.read_text(encoding="utf-8"), released_steps()):
        print(new_line)

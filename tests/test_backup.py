"""Keeping the database: `museum backup` while a real service writes, the restore drill of
docs/backup-and-upgrades.md, and `museum check` on sound, damaged and outdated databases."""

import json
import os
import sqlite3
import stat
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

import storage
from commands import museum_command
from conftest import VISITOR
from serving import running_server, wait_until
from storage.sqlite import SQLiteStore
from ticketing import TICKETS, check_store, fresh_code, open_days, qr_path, stored_tickets, ticket_body

CLIENTS = 8


@pytest.fixture
def ops(tmp_path):
    """The operator's directory, apart from the server's."""
    directory = tmp_path / "ops"
    directory.mkdir()
    return directory


def buy(server, number, day):
    status, _, data = server.request("POST", TICKETS, ticket_body(number, day), VISITOR)
    assert status == 201, data
    return json.loads(data)["ticketId"]


def image_status(server, ticket_id):
    return server.request("GET", qr_path(ticket_id), headers=VISITOR)[0]


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def damage(path):
    """Rewrite a key in the root page of the index of tickets by date, so that the index no
    longer matches its table: damage sqlite's integrity check finds, in a file that still
    opens."""
    with sqlite3.connect(path) as conn:
        root = conn.execute("SELECT rootpage FROM sqlite_master "
                            "WHERE name = 'tickets_by_date'").fetchone()[0]
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    with open(path, "r+b") as file:
        file.seek((root - 1) * page_size)
        page = file.read(page_size)
        file.seek((root - 1) * page_size + page.rindex(b"20"))
        file.write(b"19")


def sold_tickets(path, count, day="2026-12-01"):
    """A closed database at `path` with `count` general tickets for `day`."""
    store = storage.open_store(str(path))
    for number in range(count):
        store.create_ticket({"ticketId": str(uuid.uuid4()), "ticketType": "general",
                             "ticketDate": day, "eventId": None,
                             "confirmationCode": fresh_code("general"),
                             "email": f"visitor.{number}@example.org", "phone": None,
                             "price": 0, "currency": "EUR"})
    store.close()


# -- backup ------------------------------------------------------------------------------

def test_a_backup_taken_while_eight_clients_write_holds_every_acknowledged_ticket(
        tmp_path, ops, config_text):
    db, copy = tmp_path / "museum.sqlite3", tmp_path / "backup.sqlite3"
    days = open_days(config_text, 5)
    acknowledged = []  # (ticketId, moment its 201 arrived)
    stop = threading.Event()

    with running_server(tmp_path, config_text, db=str(db)) as server:
        server.log_in(VISITOR)

        def client(number):
            while not stop.is_set():
                acknowledged.append((buy(server, number, days[number % 5]), time.monotonic()))
                number += CLIENTS

        with ThreadPoolExecutor(CLIENTS) as pool:
            clients = [pool.submit(client, n) for n in range(CLIENTS)]
            wait_until(lambda: len(acknowledged) >= 100, 60, what="100 sales")
            started = time.monotonic()
            done = museum_command(ops, config_text, "backup", str(copy), "--db", str(db))
            finished = len(acknowledged)
            wait_until(lambda: len(acknowledged) >= finished + 50, 60, what="50 more sales")
            stop.set()
            for each in clients:
                each.result()

    assert (done.status, done.out) == (0, f"backed up {db} to {copy} (checked)"), done.err
    _, copied = check_store(str(copy))
    live = stored_tickets(str(db))
    assert {ticket_id for ticket_id, moment in acknowledged if moment < started} <= set(copied)
    assert {ticket_id: live[ticket_id] for ticket_id in copied} == copied
    assert len(copied) < len(live) == len(acknowledged)  # the writes went on after the copy
    assert mode(copy) == 0o600
    checked = museum_command(ops, config_text, "check", "--db", str(copy))
    assert (checked.status, checked.out) == (0, f"{copy}: ok")
    assert sorted(path.name for path in tmp_path.glob("backup*")) == ["backup.sqlite3"]


def test_a_backup_replaces_an_older_one_only_once_it_is_checked(tmp_path, ops, config_text):
    db, copy = tmp_path / "museum.sqlite3", tmp_path / "backup.sqlite3"
    sold_tickets(db, 3)
    assert museum_command(ops, config_text, "backup", str(copy), "--db", str(db)).status == 0
    sold_tickets(db, 2, day="2026-12-02")
    assert museum_command(ops, config_text, "backup", str(copy), "--db", str(db)).status == 0
    assert len(stored_tickets(str(copy))) == 5
    damage(db)
    failed = museum_command(ops, config_text, "backup", str(copy), "--db", str(db))
    assert failed.status == 1
    assert failed.err.startswith("museum: the copy failed sqlite's checks: row ")
    assert len(stored_tickets(str(copy))) == 5  # the last good backup stays
    assert sorted(path.name for path in tmp_path.glob("backup*")) == ["backup.sqlite3"]


# -- restore -----------------------------------------------------------------------------

def test_restore_drill(tmp_path, ops, config_text):
    db, copy = tmp_path / "museum.sqlite3", tmp_path / "backup.sqlite3"
    day = open_days(config_text, 1)[0]
    with running_server(tmp_path, config_text, db=str(db)) as server:
        kept = buy(server, 1, day)
        assert museum_command(ops, config_text, "backup", str(copy), "--db", str(db)).status == 0
        lost = buy(server, 2, day)

        refused = museum_command(ops, config_text, "restore", str(copy), "--db", str(db))
        assert (refused.status, refused.out) == (1, "")
        assert refused.err == (f"museum: {db} is in use by another process: stop the service "
                               f"before restoring")
        assert image_status(server, lost) == 200  # the service went on, untouched
        assert server.stop() == 0

    restored = museum_command(ops, config_text, "restore", str(copy), "--db", str(db))
    assert restored.status == 0, restored.err
    assert restored.out.splitlines() == [
        f"restored {db} from {copy}; the database it replaced is kept as {db}.before-restore",
        f"{db}: ok"]
    assert set(stored_tickets(str(db))) == {kept}
    assert set(stored_tickets(f"{db}.before-restore")) == {kept, lost}
    assert mode(db) == 0o600
    wal = tmp_path / "museum.sqlite3-wal"
    assert not wal.exists() or wal.stat().st_size == 0  # nothing of the old log came back

    with running_server(tmp_path, config_text, db=str(db)) as server:
        assert (image_status(server, kept), image_status(server, lost)) == (200, 404)


def test_restore_replaces_a_damaged_database(tmp_path, ops, config_text):
    db, copy = tmp_path / "museum.sqlite3", tmp_path / "backup.sqlite3"
    sold_tickets(db, 3)
    assert museum_command(ops, config_text, "backup", str(copy), "--db", str(db)).status == 0
    damage(db)
    restored = museum_command(ops, config_text, "restore", str(copy), "--db", str(db))
    assert restored.status == 0, restored.err
    assert restored.out.endswith(f"{db}: ok")
    check_store(str(db))


@pytest.mark.parametrize("backup, reason", [
    (b"not a database at all" * 100, "not restored, it failed sqlite's checks: {copy}: "
                                     "file is not a database"),
    (None, "no backup there; nothing was restored"),
])
def test_restore_refuses_a_bad_backup_and_leaves_the_database_alone(
        tmp_path, ops, config_text, backup, reason):
    db, copy = tmp_path / "museum.sqlite3", tmp_path / "backup.sqlite3"
    sold_tickets(db, 3)
    if backup is not None:
        copy.write_bytes(backup)
    refused = museum_command(ops, config_text, "restore", str(copy), "--db", str(db))
    assert refused.status == 1
    assert refused.err == f"museum: {copy}: {reason.format(copy=copy)}"
    assert len(check_store(str(db))[1]) == 3
    assert not (tmp_path / "museum.sqlite3.before-restore").exists()


def test_restore_refuses_a_backup_from_a_newer_version(tmp_path, ops, config_text):
    db, copy = tmp_path / "museum.sqlite3", tmp_path / "backup.sqlite3"
    sold_tickets(copy, 1)
    with sqlite3.connect(copy) as conn:
        conn.execute(f"PRAGMA user_version = {len(SQLiteStore.MIGRATIONS) + 1}")
    conn.close()
    refused = museum_command(ops, config_text, "restore", str(copy), "--db", str(db))
    assert refused.status == 1
    assert refused.err == (f"museum: {copy}: not restored: its schema version "
                           f"{len(SQLiteStore.MIGRATIONS) + 1} is not one this service can use "
                           f"(1 to {len(SQLiteStore.MIGRATIONS)})")
    assert not db.exists()


# -- check -------------------------------------------------------------------------------

def test_check_passes_a_sound_database_reading_only(tmp_path, ops, config_text):
    db = tmp_path / "museum.sqlite3"
    sold_tickets(db, 3)
    before = db.read_bytes()
    done = museum_command(ops, config_text, "check", "--db", str(db))
    assert (done.status, done.out, done.err) == (0, f"{db}: ok", "")
    assert db.read_bytes() == before


def test_check_reports_a_damaged_database_one_line_per_finding(tmp_path, ops, config_text):
    db = tmp_path / "museum.sqlite3"
    sold_tickets(db, 300)
    damage(db)
    done = museum_command(ops, config_text, "check", "--db", str(db))
    assert done.status == 1
    assert done.out.splitlines()[0] == "row 1 missing from index tickets_by_date"
    assert all(line.startswith(("row ", "wrong # of entries in index"))
               for line in done.out.splitlines())


def test_check_reports_a_missing_reference(tmp_path, ops, config_text):
    db = tmp_path / "museum.sqlite3"
    sold_tickets(db, 1)
    with sqlite3.connect(db) as conn:  # foreign keys are off on a plain connection
        conn.execute("INSERT INTO admissions VALUES ('no-such-ticket', '2026-12-01T10:00:00Z', "
                     "'gate')")
    conn.close()
    done = museum_command(ops, config_text, "check", "--db", str(db))
    assert (done.status, done.out) == (1, "a row of admissions refers to a row of tickets that "
                                          "does not exist")


def test_check_reports_a_missing_file_or_an_outdated_schema(tmp_path, ops, config_text,
                                                            monkeypatch):
    missing = tmp_path / "missing.sqlite3"
    done = museum_command(ops, config_text, "check", "--db", str(missing))
    assert (done.status, done.err) == (
        1, f"museum: {missing}: no database there (nothing was created; a new one is made by "
           f"'museum init' or the first 'museum serve')")
    assert not missing.exists()
    old = tmp_path / "old.sqlite3"
    monkeypatch.setattr(SQLiteStore, "MIGRATIONS", SQLiteStore.MIGRATIONS[:2])
    storage.open_store(str(old)).close()
    monkeypatch.undo()
    done = museum_command(ops, config_text, "check", "--db", str(old))
    assert (done.status, done.out) == (
        1, f"{old}: database schema version 2, this service uses "
           f"{len(SQLiteStore.MIGRATIONS)}; migrate it with 'museum migrate' or 'museum serve "
           f"--migrate'")


def test_check_on_postgres_asks_the_server_and_checks_the_schema(ops, config_text,
                                                                 postgres_url):
    storage.open_store(postgres_url).close()
    done = museum_command(ops, config_text, "check", "--db", postgres_url)
    assert (done.status, done.out) == (0, f"{storage.display_url(postgres_url)}: ok")


def test_a_clean_stop_leaves_the_database_whole_in_its_one_file(tmp_path, config_text):
    """After SIGTERM the write-ahead log is folded into the file: a plain `cp` of the file
    alone has every ticket sold."""
    db = tmp_path / "museum.sqlite3"
    day = open_days(config_text, 1)[0]
    with running_server(tmp_path, config_text, db=str(db)) as server:
        sold = [buy(server, number, day) for number in range(5)]
        assert server.stop() == 0
    assert not os.path.exists(f"{db}-wal")
    alone = tmp_path / "copied.sqlite3"
    alone.write_bytes(db.read_bytes())
    assert sorted(stored_tickets(str(alone))) == sorted(sold)

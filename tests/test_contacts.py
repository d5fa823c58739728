"""Personal data that expires: the email and phone of a ticket are erased once its date is
more than [privacy] keep_contact_days past, from the database file itself, by the running
service and by `museum purge-contacts`."""

import logging
import sqlite3
import uuid
from datetime import date, datetime, timedelta, timezone

import museum_privacy
import storage
from commands import museum_command
from conftest import VISITOR
from serving import running_server, wait_until
from ticketing import fresh_code, query

TODAY = date(2026, 11, 22)  # the injected clock's day


def sell(store, day, number):
    """A general ticket for `day` with an email and phone of its own; return the email."""
    email = f"buyer.{number}.{uuid.uuid4().hex[:8]}@example.org"
    store.create_ticket({"ticketId": str(uuid.uuid4()), "ticketType": "general",
                         "ticketDate": day.isoformat(), "eventId": None,
                         "confirmationCode": fresh_code("general"),
                         "email": email, "phone": f"+44 20 7946 {number:04d}",
                          "price": 0, "currency": "EUR"},
                        ("visitor", f"key-{number}", "fingerprint"))
    return email


def file_bytes(db_path):
    """The database file and its write-ahead log, as bytes on disk."""
    wal = f"{db_path}-wal"
    try:
        with open(wal, "rb") as file:
            log_bytes = file.read()
    except FileNotFoundError:
        log_bytes = b""
    with open(db_path, "rb") as file:
        return file.read() + log_bytes


def test_contacts_beyond_the_window_are_erased_from_the_file_itself(store, db_path, caplog):
    # 30 days kept: a ticket 30 days past keeps its contacts, one 31 days past loses them.
    erased = [sell(store, TODAY - timedelta(days=days), number)
              for number, days in enumerate((31, 45, 400))]
    kept = [sell(store, TODAY - timedelta(days=days), number)
            for number, days in enumerate((30, 1, 0, -7), start=10)]
    with sqlite3.connect(db_path) as conn:  # the emails reach the file as well as its log
        conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
    conn.close()
    assert all(email.encode() in file_bytes(db_path) for email in erased + kept)

    with caplog.at_level(logging.INFO, logger="museum"):
        assert museum_privacy.erase_old_contacts(store, TODAY, 30) == 3
    assert "erased the contacts of 3 tickets dated before 2026-10-23" in caplog.text

    on_disk = file_bytes(db_path)
    assert [email for email in erased if email.encode() in on_disk] == []
    assert [phone for phone in (b"7946 0000", b"7946 0001", b"7946 0002") if phone in on_disk] == []
    assert query(db_path, "SELECT email FROM tickets WHERE email <> '' ORDER BY date") == [
        (email,) for email in kept]
    assert query(db_path, "SELECT count(*) FROM tickets") == [(7,)]
    assert query(db_path, "SELECT key FROM idempotency_keys ORDER BY key") == [
        ("key-10",), ("key-11",), ("key-12",), ("key-13",)]
    assert museum_privacy.erase_old_contacts(store, TODAY, 30) == 0


def test_a_large_backlog_is_erased_in_batches(store, monkeypatch):
    monkeypatch.setattr(museum_privacy, "CONTACT_BATCH", 4)
    for number in range(10):
        sell(store, TODAY - timedelta(days=100 + number), number)
    batches = []
    erase = store.erase_contacts
    monkeypatch.setattr(store, "erase_contacts",
                        lambda before, limit: batches.append(erase(before, limit)) or batches[-1])
    assert museum_privacy.erase_old_contacts(store, TODAY, 30) == 10
    assert batches == [4, 4, 2]


def test_purge_contacts_erases_by_the_config_and_logs_the_count(tmp_path, db_path):
    today = datetime.now(timezone.utc).date()  # the command's clock is the real one
    store = storage.open_store(db_path)
    old = sell(store, today - timedelta(days=8), 1)
    recent = sell(store, today - timedelta(days=7), 2)
    store.close()
    done = museum_command(tmp_path, "[museum]\ntimezone = UTC\n[privacy]\nkeep_contact_days = 7\n",
                          "purge-contacts", "--db", db_path)
    assert done.status == 0, done.err
    cutoff = (today - timedelta(days=7)).isoformat()
    assert f"erased the contacts of 1 tickets dated before {cutoff}" in done.err
    assert old.encode() not in file_bytes(db_path)
    assert query(db_path, "SELECT email FROM tickets WHERE email <> ''") == [(recent,)]


def test_the_running_service_erases_old_contacts_while_requests_go_on(
        tmp_path, db_path, config_text):
    today = datetime.now(timezone.utc).date()
    store = storage.open_store(db_path)
    first = sell(store, today - timedelta(days=31), 0)
    store.close()
    # A backlog of a few seconds' erasing, as after the first start of this version.
    backlog = 20 * museum_privacy.CONTACT_BATCH
    with sqlite3.connect(db_path) as conn:
        conn.executemany(
            "INSERT INTO tickets (id, type, date, confirmation_code, email) "
            "VALUES (?, 'general', ?, ?, ?)",
            [(str(uuid.uuid4()), (today - timedelta(days=40 + n % 300)).isoformat(),
              f"ticket-general-{n:06x}-11111", f"old.{n}@example.org") for n in range(backlog)])
    conn.close()
    with running_server(tmp_path, config_text, db=db_path) as server:
        answered = []

        def erased_while_answering():
            status, _, _ = server.request("GET", "/v1.1/museum-hours?limit=1", headers=VISITOR)
            answered.append(status)
            return "erased the contacts of" in server.log()

        wait_until(erased_while_answering, 60, what="the erasure")
    assert f"erased the contacts of {backlog + 1} tickets" in server.log()
    assert set(answered) == {200}
    assert first.encode() not in file_bytes(db_path)
    assert query(db_path, "SELECT count(*) FROM tickets WHERE email <> ''") == [(0,)]

"""Make the text dumps of databases written by every released schema version.

Each fixture is written by the code of the commit that released its schema, taken into a
temporary directory with `git archive`, through that version's own store API: four
events (one cancelled, two with several dates), general and event tickets, an admission
where the version has the door, an idempotency key and a QR secret that is plainly fake.
The dumps are committed beside this script as SQL text: `NAME.sqlite.sql` (sqlite's
`iterdump()` and its `PRAGMA user_version`) and `NAME.postgres.sql` (`pg_dump`'s plain SQL
without psql's meta-commands). Run from the repository root, after adding a new schema
version's commit to FIXTURES:

    python tests/schema_history/make_fixtures.py postgresql://SUPERUSER@HOST:PORT/postgres
"""

import sqlite3
import subprocess
import sys
import tempfile
import urllib.parse
import uuid
from pathlib import Path

import psycopg

HERE = Path(__file__).resolve().parent

# Fixture name: the commit whose code wrote it, per backend.
FIXTURES = {
    # PostgreSQL arrived at schema 1, with 04cac00; sqlite's schema 1 is 4f0f827's.
    "v1": {"sqlite": "4f0f827", "postgres": "04cac00"},
    "v2": {"sqlite": "f1c7460", "postgres": "f1c7460"},
    "v3": {"sqlite": "bb17529", "postgres": "bb17529"},
    "v4": {"sqlite": "a0531ec", "postgres": "a0531ec"},
    # Step 5 as first released, with events.last_date (d9739f4 has the same schema).
    "v5": {"sqlite": "c5d9fbb", "postgres": "c5d9fbb"},
    # Step 6 on top of that first step 5, until 9e0685d rewrote step 5 in place.
    "v6-first-step-5": {"sqlite": "28a85f4", "postgres": "28a85f4"},
    "v6": {"sqlite": "9e0685d", "postgres": "9e0685d"},
}

# Run inside the old code's directory: fill the database at argv[1] through its store.
WRITER = """
import os
import sys
import storage

assert storage.__file__.startswith(os.getcwd()), "not the old code's store"

store = storage.open_store(sys.argv[1])

def event(number, name, dates):
    store.create_event({"eventId": f"00000000-0000-4000-8000-00000000000{number}",
                        "name": name, "location": "East wing",
                        "eventDescription": f"{name}, as the museum's programme says.",
                        "dates": dates, "price": 12.5})
    return f"00000000-0000-4000-8000-00000000000{number}"

def ticket(number, kind, date, event_id=None, idempotency=None):
    ticket_id = f"00000000-0000-4000-9000-00000000000{number}"
    store.create_ticket({"ticketId": ticket_id, "ticketType": kind, "ticketDate": date,
                         "eventId": event_id, "email": f"visitor{number}@example.org",
                         "phone": "+44 20 7946 0000" if number % 2 else None,
                         "confirmationCode": f"ticket-{kind}-00000{number}-0000{number}"},
                        idempotency)
    return ticket_id

store.setting("qr_secret", "fake-secret-of-a-test-fixture")
night = event(1, "Night at the museum", ["2026-12-05"])
prints = event(2, "Printmaking workshop", ["2026-12-10", "2026-12-17", "2027-01-07"])
restorers = event(3, "Restorers at work", ["2026-12-12", "2026-12-13"])
event(4, "Winter lectures", ["2026-11-30", "2027-02-01"])
general = ticket(1, "general", "2026-12-01", idempotency=("visitor", "key-1", "fingerprint-1"))
ticket(2, "event", "2026-12-17", prints)
ticket(3, "event", "2026-12-12", restorers)
ticket(4, "event", "2026-12-05", night)
store.cancel_event(restorers)
if hasattr(store, "admit"):  # the door came with schema 4
    store.admit(general, "gate", "2026-12-01T09:30:00Z")
store.close()
"""


def main(server_url):
    for name, commits in FIXTURES.items():
        for backend, commit in commits.items():
            with tempfile.TemporaryDirectory() as directory:
                checkout(commit, directory)
                dump = (sqlite_dump if backend == "sqlite" else postgres_dump)(directory,
                                                                                server_url)
            (HERE / f"{name}.{backend}.sql").write_text(dump, encoding="utf-8")
            print(f"{name}.{backend}.sql from {commit}")


def checkout(commit, directory):
    archive = subprocess.run(["git", "archive", commit], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", directory], input=archive.stdout, check=True)


def write(directory, url):
    # The old code alone on the path, and none of this shell's MUSEUM_* or PG* settings.
    subprocess.run([sys.executable, "-c", WRITER, url], cwd=directory, check=True,
                   env={"PYTHONPATH": directory, "PATH": "/usr/bin:/bin"})


def sqlite_dump(directory, _):
    path = f"{directory}/fixture.sqlite3"
    write(directory, path)
    conn = sqlite3.connect(path)
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        return "\n".join([*conn.iterdump(), f"PRAGMA user_version = {version};", ""])
    finally:
        conn.close()


def postgres_dump(directory, server_url):
    name = f"museum_fixture_{uuid.uuid4().hex[:12]}"
    url = urllib.parse.urlsplit(server_url)._replace(path=f"/{name}").geturl()
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        write(directory, url)
        dump = subprocess.run(["pg_dump", "--no-owner", "--no-privileges", "--inserts", url],
                              check=True, capture_output=True, text=True).stdout
    finally:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
    # psql's meta-commands (\\restrict) are not SQL: the tests load the dump with psycopg.
    return "".join(line for line in dump.splitlines(keepends=True)
                   if not line.startswith("\\"))


if __name__ == "__main__":
    main(sys.argv[1])

"""The embedded sqlite backend: one file, WAL, every acknowledged write fsynced.

One connection per thread; every write is one `BEGIN IMMEDIATE … COMMIT` transaction,
so writers queue on the busy timeout instead of failing when a read upgrades to a write.
`:memory:` gives a private database shared by all threads through one locked connection.
"""

import functools
import json
import os
import sqlite3
import threading
from contextlib import contextmanager

from storage import (
    DateNotOffered,
    DuplicateCode,
    IdempotencyConflict,
    NotFound,
    SchemaTooNew,
    Store,
    Unavailable,
)
from storage.common import (
    LAST_DATE,
    count_event_change,
    event_record,
    listing_page,
    one_line,
    read_events_version,
    ticket_record,
)

BUSY_TIMEOUT_MS = 5000

# Each step runs in one transaction together with its `user_version` bump. Append only:
# a released step is never edited, a change of schema is a new step.
MIGRATIONS = [
    [
        """CREATE TABLE events (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            location TEXT NOT NULL,
            description TEXT NOT NULL,
            dates TEXT NOT NULL,
            price REAL NOT NULL,
            cancelled INTEGER NOT NULL DEFAULT 0
        )""",
        # The listing index: one row per date of every event that is not cancelled.
        """CREATE TABLE event_dates (
            date TEXT NOT NULL,
            event_id TEXT NOT NULL REFERENCES events (id),
            PRIMARY KEY (date, event_id)
        ) WITHOUT ROWID""",
        """CREATE TABLE tickets (
            id TEXT PRIMARY KEY,
            type TEXT NOT NULL CHECK (type IN ('general', 'event')),
            date TEXT NOT NULL,
            event_id TEXT REFERENCES events (id),
            confirmation_code TEXT NOT NULL UNIQUE,
            email TEXT NOT NULL,
            phone TEXT,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        )""",
        "CREATE INDEX tickets_by_event ON tickets (event_id)",
        """CREATE TABLE idempotency_keys (
            user TEXT NOT NULL,
            key TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            ticket_id TEXT NOT NULL REFERENCES tickets (id),
            PRIMARY KEY (user, key)
        ) WITHOUT ROWID""",
        "CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID",
    ],
    [
        # One row counting event changes, so cached listings know when they are stale.
        """CREATE TABLE event_changes (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            version INTEGER NOT NULL
        )""",
        "INSERT INTO event_changes (id, version) VALUES (1, 0)",
    ],
]

EVENT_COLUMNS = "e.id, e.name, e.location, e.description, e.dates, e.price"

TICKET_QUERY = """
    SELECT t.id, t.type, t.date, t.event_id, t.confirmation_code, t.email, t.phone,
           e.name, coalesce(e.cancelled, 0)
    FROM tickets t LEFT JOIN events e ON e.id = t.event_id
    WHERE t.id = ?"""

# The window's first date per event comes from the listing index; `count(*) OVER ()` gives
# the window's total with the page, in the same query.
LIST_QUERY = f"""
    SELECT {EVENT_COLUMNS}, count(*) OVER () AS total
    FROM (SELECT event_id, min(date) AS first FROM event_dates
          WHERE date >= ? AND date <= ? GROUP BY event_id) AS w
    JOIN events e ON e.id = w.event_id
    ORDER BY w.first, e.name, e.id
    LIMIT ? OFFSET ?"""

COUNT_QUERY = "SELECT count(DISTINCT event_id) FROM event_dates WHERE date >= ? AND date <= ?"


def _unavailable_on_error(method):
    """Every failure of the database itself becomes `Unavailable`: locked, read-only, disk
    full, I/O errors (OperationalError) and a damaged or foreign file (DatabaseError proper).
    The thread's connection is dropped, so the next call opens a fresh one once the cause is
    gone. Constraint and binding errors are the service's bugs and stay as they are (500)."""

    @functools.wraps(method)
    def guarded(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except (sqlite3.IntegrityError, sqlite3.InterfaceError):
            raise
        except sqlite3.DatabaseError as error:
            self._drop_connection()
            raise Unavailable(one_line(error)) from error
        except Unavailable:
            self._drop_connection()
            raise

    return guarded


def _event(row):
    event_id, name, location, description, dates, price = row[:6]
    return event_record(event_id, name, location, description, json.loads(dates), price)


class SQLiteStore(Store):
    def __init__(self, path):
        self.path = path
        self._local = threading.local()
        self._connections = []
        self._lock = threading.Lock()
        # Writers of this process queue here rather than in sqlite's busy handler, which
        # sleeps in growing steps; other processes still wait on the busy timeout.
        self._write_lock = threading.Lock()
        self._shared = self._connect() if path == ":memory:" else None
        self._identity = None
        self._migrate()
        if self._shared is None:
            self._identity = self._file_identity()

    # -- connections and transactions ------------------------------------------------

    def _connect(self):
        conn = sqlite3.connect(
            self.path, isolation_level=None, check_same_thread=False,
            timeout=BUSY_TIMEOUT_MS / 1000,
        )
        try:
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if mode != "wal" and self.path != ":memory:":
                raise Unavailable(f"{self.path}: sqlite could not switch to WAL mode "
                                  f"(got {mode})")
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        except BaseException:
            conn.close()
            raise
        with self._lock:
            self._connections.append(conn)
        return conn

    @contextmanager
    def _connection(self):
        if self._shared is not None:
            with self._lock:
                yield self._shared
            return
        if self._identity is not None and self._file_identity() != self._identity:
            # Gone, moved or replaced under us: a write now would be lost at the next start.
            raise Unavailable(f"{self.path}: the database file is missing or was replaced")
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._connect()
            # sqlite silently opens a file it cannot write read-only; such a connection
            # still reads, and is replaced before its thread's next write.
            self._local.read_only = not os.access(self.path, os.W_OK)
        yield conn

    def _file_identity(self):
        try:
            stat = os.stat(self.path)
        except OSError:
            return None
        return stat.st_dev, stat.st_ino

    def _drop_connection(self):
        """Close this thread's connection after a failure (a shared one stays)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            return
        self._local.conn = None
        with self._lock:
            if conn in self._connections:
                self._connections.remove(conn)
        conn.close()

    @contextmanager
    def _write(self):
        if getattr(self._local, "read_only", False):
            self._drop_connection()
        with self._write_lock, self._connection() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")  # a failed COMMIT is rolled back too, not left open
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def _migrate(self):
        """Apply the missing steps. Each reads the version under the write lock, so
        processes opening a new file together apply every step once."""
        while self._apply_next_step():
            pass

    def _apply_next_step(self):
        with self._write() as conn:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > len(MIGRATIONS):
                raise SchemaTooNew(
                    f"{self.path}: database schema version {version} is newer than this "
                    f"service supports ({len(MIGRATIONS)}); upgrade the service")
            if version == len(MIGRATIONS):
                return False
            for statement in MIGRATIONS[version]:
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {version + 1}")
            return True

    def schema_version(self):
        with self._connection() as conn:
            return conn.execute("PRAGMA user_version").fetchone()[0]

    # -- the Store interface -----------------------------------------------------------

    @_unavailable_on_error
    def check(self):
        with self._connection() as conn:
            conn.execute("SELECT count(*) FROM settings").fetchone()

    @_unavailable_on_error
    def create_event(self, event):
        with self._write() as conn:
            count_event_change(conn)
            conn.execute(
                "INSERT INTO events (id, name, location, description, dates, price) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (event["eventId"], event["name"], event["location"],
                 event["eventDescription"], json.dumps(event["dates"]), event["price"]),
            )
            self._index_dates(conn, event["eventId"], event["dates"])
        return event

    @staticmethod
    def _index_dates(conn, event_id, dates):
        conn.executemany(
            "INSERT INTO event_dates (date, event_id) VALUES (?, ?)",
            [(date, event_id) for date in dates],
        )

    @staticmethod
    def _unindex_dates(conn, event_id, dates):
        conn.executemany(
            "DELETE FROM event_dates WHERE date = ? AND event_id = ?",
            [(date, event_id) for date in dates],
        )

    @staticmethod
    def _listed_event(conn, event_id):
        row = conn.execute(
            f"SELECT {EVENT_COLUMNS} FROM events e WHERE e.id = ? AND NOT e.cancelled",
            (event_id,),
        ).fetchone()
        if row is None:
            raise NotFound(event_id)
        return _event(row)

    @_unavailable_on_error
    def get_event(self, event_id):
        with self._connection() as conn:
            return self._listed_event(conn, event_id)

    @_unavailable_on_error
    def list_events(self, start, end, offset, limit):
        window = (start, end or LAST_DATE)
        with self._connection() as conn:
            return listing_page(conn, LIST_QUERY, COUNT_QUERY, window, offset, limit, _event)

    @_unavailable_on_error
    def events_version(self):
        with self._connection() as conn:
            return read_events_version(conn)

    @_unavailable_on_error
    def update_event(self, event_id, changes):
        with self._write() as conn:
            count_event_change(conn)
            event = self._listed_event(conn, event_id)
            if "dates" in changes:
                self._unindex_dates(conn, event_id, event["dates"])
                self._index_dates(conn, event_id, changes["dates"])
            event.update(changes)
            conn.execute(
                "UPDATE events SET name = ?, location = ?, description = ?, dates = ?, "
                "price = ? WHERE id = ?",
                (event["name"], event["location"], event["eventDescription"],
                 json.dumps(event["dates"]), event["price"], event_id),
            )
        return event

    @_unavailable_on_error
    def cancel_event(self, event_id):
        with self._write() as conn:
            count_event_change(conn)
            event = self._listed_event(conn, event_id)
            conn.execute("UPDATE events SET cancelled = 1 WHERE id = ?", (event_id,))
            self._unindex_dates(conn, event_id, event["dates"])

    @_unavailable_on_error
    def create_ticket(self, ticket, idempotency=None):
        with self._write() as conn:
            if idempotency is not None:
                replayed = self._replayed_ticket(conn, *idempotency)
                if replayed is not None:
                    return replayed, False
            if ticket["ticketType"] == "event":
                event = self._listed_event(conn, ticket["eventId"])
                if ticket["ticketDate"] not in event["dates"]:
                    raise DateNotOffered(event["dates"])
            try:
                conn.execute(
                    "INSERT INTO tickets (id, type, date, event_id, confirmation_code, email, "
                    "phone) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (ticket["ticketId"], ticket["ticketType"], ticket["ticketDate"],
                     ticket.get("eventId"), ticket["confirmationCode"], ticket["email"],
                     ticket.get("phone")),
                )
            except sqlite3.IntegrityError as error:
                raise DuplicateCode(ticket["confirmationCode"]) from error
            if idempotency is not None:
                conn.execute(
                    "INSERT INTO idempotency_keys (user, key, fingerprint, ticket_id) "
                    "VALUES (?, ?, ?, ?)",
                    (*idempotency, ticket["ticketId"]),
                )
            stored = conn.execute(TICKET_QUERY, (ticket["ticketId"],)).fetchone()
            return ticket_record(*stored), True

    @staticmethod
    def _replayed_ticket(conn, user, key, fingerprint):
        row = conn.execute(
            "SELECT fingerprint, ticket_id FROM idempotency_keys WHERE user = ? AND key = ?",
            (user, key),
        ).fetchone()
        if row is None:
            return None
        if row[0] != fingerprint:
            raise IdempotencyConflict(key)
        return ticket_record(*conn.execute(TICKET_QUERY, (row[1],)).fetchone())

    @_unavailable_on_error
    def get_ticket(self, ticket_id):
        with self._connection() as conn:
            row = conn.execute(TICKET_QUERY, (ticket_id,)).fetchone()
        if row is None:
            raise NotFound(ticket_id)
        return ticket_record(*row)

    @_unavailable_on_error
    def setting(self, name, default):
        with self._write() as conn:
            conn.execute(
                "INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT DO NOTHING",
                (name, default),
            )
            return conn.execute("SELECT value FROM settings WHERE name = ?", (name,)).fetchone()[0]

    def close(self):
        """Close every connection; the next call opens fresh ones."""
        with self._lock:
            connections, self._connections = self._connections, []
            self._local = threading.local()
        for conn in connections:
            conn.close()

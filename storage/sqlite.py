"""The embedded sqlite backend: one file, WAL, every acknowledged write fsynced.

One connection per thread; every write is one `BEGIN IMMEDIATE … COMMIT` transaction,
so writers queue on the busy timeout instead of failing when a read upgrades to a write.
`:memory:` gives a private database shared by all threads through one locked connection.
The rules themselves are in storage/sql.py.
"""

import logging
import os
import sqlite3
import stat
import threading
import time
from contextlib import closing, contextmanager, nullcontext
from urllib.parse import quote

from storage import InUse, Limits, StorageError, Unavailable
from storage.sql import (
    ADMISSION_EVENTS_FROM_ADMISSIONS,
    DAILY_SALES_FROM_THE_TICKETS,
    LAST_DATES_FROM_THE_LISTING_INDEX,
    SQLStore,
    one_line,
    pages_for_earlier_sales,
)

BUSY_TIMEOUT_MS = 5000  # of the commands' own connections (backup, restore, check)
log = logging.getLogger("museum.storage")


def _drop_events_last_date(conn):
    """Step 7's removal of the column the first form of step 5 added, where it is: sqlite
    has no DROP COLUMN IF EXISTS."""
    if "last_date" in [column[1] for column in conn.execute("PRAGMA table_info(events)")]:
        conn.execute("ALTER TABLE events DROP COLUMN last_date")


# Each step runs in one transaction together with its `user_version` bump; an entry is a
# statement or a function of the connection (see `storage.sql.run_step`). Append only: a
# released step is never edited, a change of schema is a new step (storage/migrations.lock
# holds their fingerprints).
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
    [
        # The key is claimed before its ticket exists, as on PostgreSQL: the reference is
        # checked at commit. sqlite cannot alter a constraint, so the table is rebuilt.
        """CREATE TABLE claimed_keys (
            user_name TEXT NOT NULL,
            key TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            ticket_id TEXT NOT NULL REFERENCES tickets (id) DEFERRABLE INITIALLY DEFERRED,
            PRIMARY KEY (user_name, key)
        ) WITHOUT ROWID""",
        "INSERT INTO claimed_keys SELECT user, key, fingerprint, ticket_id FROM idempotency_keys",
        "DROP TABLE idempotency_keys",
        "ALTER TABLE claimed_keys RENAME TO idempotency_keys",
    ],
    [
        # The door: one admission per ticket, by primary key.
        """CREATE TABLE admissions (
            ticket_id TEXT PRIMARY KEY REFERENCES tickets (id),
            admitted_at TEXT NOT NULL,
            admitted_by TEXT NOT NULL
        ) WITHOUT ROWID""",
        # Tickets by day for the door's counts, by event and day for the dates sold.
        "CREATE INDEX tickets_by_date ON tickets (date, event_id)",
        "DROP INDEX tickets_by_event",
        "CREATE INDEX tickets_by_event ON tickets (event_id, date)",
    ],
    [
        # Listings that read no more than their page: the event's name beside each of its
        # dates, in the order of the listing, and how many listed events end on each day,
        # for the total of an open-ended listing.
        "ALTER TABLE event_dates ADD COLUMN name TEXT NOT NULL DEFAULT ''",
        "UPDATE event_dates SET name = (SELECT name FROM events WHERE events.id = event_id)",
        "CREATE INDEX event_dates_in_order ON event_dates (date, name, event_id)",
        "CREATE INDEX event_dates_by_event ON event_dates (event_id, date)",
        """CREATE TABLE listed_last_dates (
            date TEXT PRIMARY KEY,
            events INTEGER NOT NULL
        ) WITHOUT ROWID""",
        LAST_DATES_FROM_THE_LISTING_INDEX,
    ],
    [
        # Erasing the contacts of past tickets reads only what it erases: the tickets that
        # still have contacts by date, and the idempotency keys by ticket.
        "CREATE INDEX tickets_with_contacts ON tickets (date) WHERE email <> ''",
        "CREATE INDEX idempotency_keys_by_ticket ON idempotency_keys (ticket_id)",
    ],
    [
        # Step 5 was rewritten after its release: a database made by its first form has
        # events.last_date and its index, and no listed_last_dates. Bring it to the
        # current schema; on any other, the refill counts what is already there.
        "DROP INDEX IF EXISTS events_by_last_date",
        _drop_events_last_date,
        """CREATE TABLE IF NOT EXISTS listed_last_dates (
            date TEXT PRIMARY KEY,
            events INTEGER NOT NULL
        ) WITHOUT ROWID""",
        "DELETE FROM listed_last_dates",
        LAST_DATES_FROM_THE_LISTING_INDEX,
    ],
    [
        # The door's audit trail: every admission and undo, oldest first by id, starting
        # with the admissions already made.
        """CREATE TABLE admission_events (
            id INTEGER PRIMARY KEY,
            ticket_id TEXT NOT NULL REFERENCES tickets (id),
            action TEXT NOT NULL CHECK (action IN ('admitted', 'undone')),
            done_at TEXT NOT NULL,
            done_by TEXT NOT NULL
        )""",
        "CREATE INDEX admission_events_by_ticket ON admission_events (ticket_id, id)",
        ADMISSION_EVENTS_FROM_ADMISSIONS,
        # A lost ticket found by its buyer's email on a day.
        "CREATE INDEX tickets_by_date_and_email ON tickets (date, lower(email))",
    ],
    [
        # Prices kept exactly, in hundredths, never as floats; each ticket keeps the price
        # and currency it was sold at (NULL: sold before prices were kept).
        "ALTER TABLE events ADD COLUMN price_minor INTEGER NOT NULL DEFAULT 0",
        "UPDATE events SET price_minor = CAST(round(price * 100) AS INTEGER)",
        "ALTER TABLE events DROP COLUMN price",
        "ALTER TABLE tickets ADD COLUMN price_minor INTEGER",
        "ALTER TABLE tickets ADD COLUMN currency TEXT",
    ],
    [
        # Capacity: an event's places per date (NULL: unlimited), and the places taken,
        # counted in the transaction of each sale, so a sale past the capacity is refused
        # without counting tickets, and availability is read from the counts.
        "ALTER TABLE events ADD COLUMN capacity INTEGER",
        """CREATE TABLE general_places (
            date TEXT PRIMARY KEY,
            taken INTEGER NOT NULL
        ) WITHOUT ROWID""",
        """CREATE TABLE event_places (
            event_id TEXT NOT NULL REFERENCES events (id),
            date TEXT NOT NULL,
            taken INTEGER NOT NULL,
            PRIMARY KEY (event_id, date)
        ) WITHOUT ROWID""",
        "INSERT INTO general_places (date, taken) "
        "SELECT date, count(*) FROM tickets WHERE event_id IS NULL GROUP BY date",
        "INSERT INTO event_places (event_id, date, taken) SELECT event_id, date, count(*) "
        "FROM tickets WHERE event_id IS NOT NULL GROUP BY event_id, date",
    ],
    [
        # A ticket voided at the desk (a refund) keeps its row, for the sales report, and
        # gives its place back.
        "ALTER TABLE tickets ADD COLUMN voided_at TEXT",
    ],
    [
        # The sales report's counts, kept in the transaction of each sale, void and
        # admission, so a year's report reads a row per day and event, not every ticket.
        # '' stands for general entry, and for the currency of tickets sold before prices
        # were kept.
        """CREATE TABLE daily_sales (
            date TEXT NOT NULL,
            event_id TEXT NOT NULL,
            currency TEXT NOT NULL,
            sold INTEGER NOT NULL,
            voided INTEGER NOT NULL,
            admitted INTEGER NOT NULL,
            revenue INTEGER NOT NULL,
            PRIMARY KEY (date, event_id, currency)
        ) WITHOUT ROWID""",
        DAILY_SALES_FROM_THE_TICKETS,
    ],
    [
        # Timed entry: a general ticket's entry slot (NULL: none), and the places taken in
        # each slot of a day, counted in the transaction of each sale and void as the
        # day's are.
        "ALTER TABLE tickets ADD COLUMN entry_time TEXT",
        """CREATE TABLE slot_places (
            date TEXT NOT NULL,
            entry_time TEXT NOT NULL,
            taken INTEGER NOT NULL,
            PRIMARY KEY (date, entry_time)
        ) WITHOUT ROWID""",
    ],
    [
        # The door's offline list, scan keys and double entries. Each day's tickets carry
        # a change number for the door's offline list (`since`), counted per day in the transaction of each change (see
        # storage/sql.py, DAY_CHANGE); a scan's Idempotency-Key is kept with the admission
        # or double entry it made; a double entry (a ticket admitted offline after another
        # admission) is kept in the audit trail and counted in the sales report's rows.
        """CREATE TABLE day_versions (
            date TEXT PRIMARY KEY,
            version INTEGER NOT NULL
        ) WITHOUT ROWID""",
        """CREATE TABLE ticket_versions (
            ticket_id TEXT PRIMARY KEY REFERENCES tickets (id),
            date TEXT NOT NULL,
            version INTEGER NOT NULL
        ) WITHOUT ROWID""",
        "CREATE INDEX ticket_versions_by_day ON ticket_versions (date, version)",
        """CREATE TABLE door_keys (
            user_name TEXT NOT NULL,
            key TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            ticket_id TEXT NOT NULL REFERENCES tickets (id),
            outcome TEXT NOT NULL CHECK (outcome IN ('admitted', 'double-entry')),
            done_at TEXT NOT NULL,
            PRIMARY KEY (user_name, key)
        ) WITHOUT ROWID""",
        "CREATE INDEX door_keys_by_ticket ON door_keys (ticket_id)",
        "ALTER TABLE daily_sales ADD COLUMN double_entries INTEGER NOT NULL DEFAULT 0",
        # sqlite cannot alter a CHECK constraint: the audit trail is rebuilt to take
        # double entries.
        """CREATE TABLE door_events (
            id INTEGER PRIMARY KEY,
            ticket_id TEXT NOT NULL REFERENCES tickets (id),
            action TEXT NOT NULL CHECK (action IN ('admitted', 'undone', 'double-entry')),
            done_at TEXT NOT NULL,
            done_by TEXT NOT NULL
        )""",
        "INSERT INTO door_events SELECT id, ticket_id, action, done_at, done_by "
        "FROM admission_events",
        "DROP TABLE admission_events",
        "ALTER TABLE door_events RENAME TO admission_events",
        "CREATE INDEX admission_events_by_ticket ON admission_events (ticket_id, id)",
    ],
    [
        # Devices added and revoked while the service runs (museum add-device,
        # revoke-device): each request that names one reads it on the unique index of the
        # devices in use. A revoked device's row stays, with when; its name may be reused.
        """CREATE TABLE devices (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            role TEXT NOT NULL,
            key_digest TEXT NOT NULL,
            created_at TEXT NOT NULL,
            revoked_at TEXT
        )""",
        "CREATE UNIQUE INDEX devices_in_use ON devices (name) WHERE revoked_at IS NULL",
    ],
    [
        # The days an admin changed through the API (closed, other hours, another
        # capacity), overriding the config's rule for each; read by date range.
        """CREATE TABLE changed_days (
            date TEXT PRIMARY KEY,
            closed INTEGER NOT NULL,
            time_open TEXT,
            time_close TEXT,
            capacity INTEGER,
            note TEXT,
            changed_at TEXT NOT NULL,
            changed_by TEXT NOT NULL
        ) WITHOUT ROWID""",
    ],
    [
        # Limits every instance shares. The typed codes and lookups of each door user in
        # its current window, counted in one statement (a guess is rare: a scan is none);
        # and who sold each ticket, and when by the service's clock, so that a visitor
        # credential's purchases of the last hour are counted from its tickets.
        """CREATE TABLE guess_counts (
            user_name TEXT PRIMARY KEY,
            window_start REAL NOT NULL,
            guesses INTEGER NOT NULL
        ) WITHOUT ROWID""",
        "ALTER TABLE tickets ADD COLUMN sold_by TEXT",
        "ALTER TABLE tickets ADD COLUMN sold_at TEXT",
        "CREATE INDEX tickets_by_seller ON tickets (sold_by, sold_at)",
    ],
    [
        # One-time pairing codes of the devices (museum add-device): a digest of the code,
        # never the code; the device whose key it fetches once, until when, and when it
        # was used (NULL: not yet). A used or expired row stays, so that the page is told
        # which of the two its code is.
        """CREATE TABLE device_pairings (
            code_digest TEXT PRIMARY KEY,
            device_id INTEGER NOT NULL REFERENCES devices (id),
            expires_at TEXT NOT NULL,
            used_at TEXT
        ) WITHOUT ROWID""",
    ],
    [
        # Price categories: an event's prices by category (JSON of hundredths by name; NULL:
        # its `price` for every category), and the category each ticket was sold in (NULL
        # for tickets sold before).
        "ALTER TABLE events ADD COLUMN prices TEXT",
        "ALTER TABLE tickets ADD COLUMN category TEXT",
    ],
    [
        # Orders: several tickets bought together, all or nothing, and the hold of a pending
        # order until `expires_at` (status pending, confirmed, expired, cancelled or
        # voided); each ticket names its order (NULL: sold alone) and the places it takes
        # (`persons`: 1 for every ticket sold before). The partial index finds the holds
        # that ended, which a write gives back.
        """CREATE TABLE orders (
            id TEXT PRIMARY KEY,
            code TEXT NOT NULL UNIQUE,
            status TEXT NOT NULL,
            channel TEXT NOT NULL,
            payment TEXT,
            email TEXT,
            phone TEXT,
            created_at TEXT NOT NULL,
            expires_at TEXT,
            created_by TEXT
        ) WITHOUT ROWID""",
        "CREATE INDEX orders_held ON orders (expires_at) WHERE status = 'pending'",
        "ALTER TABLE tickets ADD COLUMN order_id TEXT REFERENCES orders (id)",
        "ALTER TABLE tickets ADD COLUMN persons INTEGER NOT NULL DEFAULT 1",
        "CREATE INDEX tickets_by_order ON tickets (order_id)",
    ],
    [
        # Changes without polling: each event's last change (created, changed, cancelled),
        # in UTC to the millisecond by the database's clock, read in the order of the
        # changes. The events stored before count as changed now, so that a shop asking
        # for the changes since any earlier moment misses none of them.
        "ALTER TABLE events ADD COLUMN changed_at TEXT NOT NULL DEFAULT ''",
        "UPDATE events SET changed_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
        "CREATE INDEX events_by_change ON events (changed_at, id)",
    ],
    [
        # The outbox: one row per message to send, written in the transaction of what
        # caused it. `kind` names how it is delivered (an email; a webhook delivery is
        # another kind), `target` where to (an address, a URL), `payload` (JSON) what the
        # sender composes it from. A row is queued, then sending (claimed until its lease
        # ends: a sender that died leaves it to be claimed again), then sent or failed.
        # `ticket_id` or `order_id` ties a mail to the ticket or the order whose contacts
        # it holds, so both are erased together. The sender reads the due rows in order.
        """CREATE TABLE outbox (
            id TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            target TEXT NOT NULL,
            payload TEXT NOT NULL,
            ticket_id TEXT,
            order_id TEXT,
            state TEXT NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_at TEXT NOT NULL,
            last_answer TEXT,
            created_at TEXT NOT NULL,
            sent_at TEXT
        ) WITHOUT ROWID""",
        "CREATE INDEX outbox_due ON outbox (state, next_attempt_at)",
        "CREATE INDEX outbox_by_ticket ON outbox (ticket_id)",
        "CREATE INDEX outbox_by_order ON outbox (order_id)",
    ],
    [
        # The ticket page (schema step 23): each ticket and order keeps the token of its
        # link /t/TOKEN and the digest the page finds it by (storage/sql.py,
        # TICKET_BY_PAGE, says why both); those sold before get theirs here.
        "ALTER TABLE tickets ADD COLUMN page_token TEXT",
        "ALTER TABLE tickets ADD COLUMN page_digest TEXT",
        "ALTER TABLE orders ADD COLUMN page_token TEXT",
        "ALTER TABLE orders ADD COLUMN page_digest TEXT",
        pages_for_earlier_sales,
        "CREATE UNIQUE INDEX tickets_by_page ON tickets (page_digest)",
        "CREATE UNIQUE INDEX orders_by_page ON orders (page_digest)",
    ],
    [
        # Webhooks: the receivers an admin registered (`museum add-webhook`), each with its
        # URL, its own signing secret and the types of events it wants (JSON list); one
        # that answered 410 Gone is disabled, with when and why, and gets nothing more.
        # Each delivery is an outbox row of kind "webhook" naming its receiver, so a
        # removed receiver's waiting deliveries go with it.
        """CREATE TABLE webhooks (
            id TEXT PRIMARY KEY,
            url TEXT NOT NULL,
            secret TEXT NOT NULL,
            events TEXT NOT NULL,
            created_at TEXT NOT NULL,
            disabled_at TEXT,
            disabled_why TEXT
        ) WITHOUT ROWID""",
        "ALTER TABLE outbox ADD COLUMN webhook_id TEXT",
        "CREATE INDEX outbox_by_webhook ON outbox (webhook_id)",
    ],
    [
        # A void's reason and a payment taken at the desk (schema step 25): the staff's
        # reason kept with a voided ticket and order (shown to staff, never sent out), and
        # when the desk marked an order's payment due paid.
        "ALTER TABLE tickets ADD COLUMN void_reason TEXT",
        "ALTER TABLE orders ADD COLUMN void_reason TEXT",
        "ALTER TABLE orders ADD COLUMN paid_at TEXT",
    ],
]


class SQLiteStore(SQLStore):
    MIGRATIONS = MIGRATIONS
    NO_LIMIT = -1  # sqlite's none: a negative LIMIT
    # UTC to the millisecond, as `events.changed_at` keeps it; 'now' holds for a statement.
    CHANGE_TIME = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"
    SCHEMA_OBJECTS = """
        SELECT 'table', name, name FROM sqlite_master
        WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
        UNION ALL
        SELECT 'column', m.name, m.name || '.' || c.name
        FROM sqlite_master m JOIN pragma_table_info(m.name) c WHERE m.type = 'table'
        UNION ALL
        SELECT 'index', tbl_name, name FROM sqlite_master WHERE type = 'index'"""
    # Locked, read-only, disk full, I/O errors (OperationalError) and a damaged or foreign
    # file (DatabaseError proper); constraint and binding errors are bugs (500).
    OUTAGE_ERRORS = (sqlite3.DatabaseError,)
    BUG_ERRORS = (sqlite3.IntegrityError, sqlite3.InterfaceError)

    def __init__(self, path, read_only=False, migrate=True, limits=Limits()):
        self.path = path
        self.read_only = read_only
        self._busy_timeout = limits.busy_timeout
        self._local = threading.local()
        self._connections = []
        self._lock = threading.Lock()
        # Writers of this process queue here rather than in sqlite's busy handler, which
        # sleeps in growing steps; other processes still wait on the busy timeout.
        self._write_lock = threading.Lock()
        self._identity = None
        try:
            if path == ":memory:":
                self._shared = self._connect()
            else:
                self._shared = None
                self._keep_private(read_only)
            self._open_schema(read_only, migrate)
        except (OSError, sqlite3.Error, Unavailable) as error:
            self.close()
            reason = error.strerror if isinstance(error, OSError) else one_line(error)
            raise Unavailable(f"{path}: cannot open the database: {reason}") from error
        if self._shared is None:
            self._identity = self._file_identity()

    def _describe(self):
        return self.path

    def _keep_private(self, read_only):
        """Create a new database file readable by its owner only (sqlite gives its -wal and
        -shm files the same mode): it holds emails, phones and the QR secret. Warn about an
        existing one that others may read."""
        if not read_only:
            try:
                os.close(os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
                _give_to_owner(self.path, _directory(self.path))
                return
            except FileExistsError:
                pass
        mode = stat.S_IMODE(os.stat(self.path).st_mode)
        if mode & 0o077:
            log.warning("%s can be read by other users (mode %04o): it holds personal data "
                        "and the QR secret; make it private with: chmod 600 %s", self.path,
                        mode, self.path)

    def _connect(self):
        # A read-only store opens the file as an URI in mode=ro: it never creates the file.
        target = f"file:{quote(self.path)}?mode=ro" if self.read_only else self.path
        conn = sqlite3.connect(target, isolation_level=None, check_same_thread=False,
                               timeout=self._busy_timeout, uri=self.read_only)
        try:
            # A read-only store reads a file in whichever mode it is, a backup's too.
            if not self.read_only:
                self._use_wal(conn)
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA foreign_keys = ON")
            # What is deleted or erased is overwritten with zeros, not left in free space
            # for anyone with the file to read: erased contacts must be gone.
            conn.execute("PRAGMA secure_delete = ON")
            conn.execute(f"PRAGMA busy_timeout = {round(self._busy_timeout * 1000)}")
        except BaseException:
            conn.close()
            raise
        with self._lock:
            self._connections.append(conn)
        return conn

    def _use_wal(self, conn):
        mode = self._switch_to_wal(conn)
        if mode != "wal" and self.path != ":memory:":
            raise Unavailable(f"sqlite could not switch to WAL mode (got {mode})")

    def _switch_to_wal(self, conn):
        """Switch to WAL (a no-op once the file is WAL) and return the mode. The switch of a
        new file needs it to itself, and sqlite refuses at once, without the busy timeout,
        while another process opening the same new file holds it: so it is tried again."""
        deadline = time.monotonic() + self._busy_timeout
        while True:
            try:
                return conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            except sqlite3.OperationalError as error:
                if error.sqlite_errorcode != sqlite3.SQLITE_BUSY or time.monotonic() > deadline:
                    raise
                time.sleep(0.01)

    def _connection(self):
        if self._shared is not None:
            return self._shared_connection()
        conn = getattr(self._local, "conn", None)
        if conn is None:
            self._refuse_if_file_changed()  # sqlite would create a new, empty file
            conn = self._local.conn = self._connect()
            # sqlite silently opens a file it cannot write read-only; such a connection
            # still reads, and is replaced before its thread's next write.
            self._local.read_only = not os.access(self.path, os.W_OK)
        return nullcontext(conn)

    @contextmanager
    def _shared_connection(self):
        with self._lock:
            yield self._shared

    @contextmanager
    def _transaction(self):
        if getattr(self._local, "read_only", False):
            self._forget_connection()
        with self._write_lock, self._connection() as conn:
            self._refuse_if_file_changed()
            with _inside_transaction(conn, "BEGIN IMMEDIATE"):
                yield conn

    @contextmanager
    def _snapshot(self):
        # Deferred: the first read fixes what the rest see, and no write lock is taken.
        with self._connection() as conn, _inside_transaction(conn, "BEGIN"):
            yield conn

    def _check_file(self):
        self._refuse_if_file_changed()

    def _refuse_if_file_changed(self):
        """`Unavailable` when the file is gone, moved or replaced under this store: a write
        now would be lost at the next start. Reads on open connections skip this check
        (a syscall per request): they still read what was committed."""
        if self._identity is not None and self._file_identity() != self._identity:
            self._forget_connection()
            raise Unavailable(f"{self.path}: the database file is missing or was replaced")

    def _file_identity(self):
        try:
            stat = os.stat(self.path)
        except OSError:
            return None
        return stat.st_dev, stat.st_ino

    def _forget_connection(self):
        """Close this thread's connection (a shared one stays)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            return
        self._local.conn = None
        with self._lock:
            if conn in self._connections:
                self._connections.remove(conn)
        conn.close()

    def _scrub_files(self):
        """Copy the write-ahead log into the database file and empty it: its older frames
        still hold what was erased since the last checkpoint."""
        with self._write_lock, self._connection() as conn:
            busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        return not busy

    def _scratch_database(self):
        return closing(sqlite3.connect(":memory:", isolation_level=None))

    def _read_schema_version(self, conn):
        return conn.execute("PRAGMA user_version").fetchone()[0]

    def _record_schema_version(self, conn, version):
        conn.execute(f"PRAGMA user_version = {version}")

    def close(self):
        """Close every connection; the next call opens fresh ones. Waits for a write under
        way on another thread (the daily erasure of contacts, say): sqlite must not have a
        connection closed under a running statement."""
        with self._write_lock, self._lock:
            connections, self._connections = self._connections, []
            self._local = threading.local()
        for conn in connections:
            conn.close()


@contextmanager
def _inside_transaction(conn, begin):
    """Run the block in a transaction `begin` opens on `conn`: committed when the block ends
    and rolled back if it raises (a failed COMMIT too, not left open)."""
    conn.execute(begin)
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:  # sqlite ends it itself after some failures
            conn.execute("ROLLBACK")
        raise


# -- the file: copies, checks and restores ------------------------------------------------

def file_findings(path):
    """What sqlite's integrity and foreign-key checks find wrong with the database file at
    `path`, one line each; [] when it is sound. Opens the file read-only."""
    try:
        with closing(_open_file(path, "ro")) as conn:
            return _findings(conn)
    except sqlite3.DatabaseError as error:
        return [f"{path}: {one_line(error)}"]


def is_museum_database(path):
    """See `storage.is_museum_database`: a schema version above 0 says so."""
    try:
        with closing(_open_file(path, "ro")) as conn:
            return conn.execute("PRAGMA user_version").fetchone()[0] > 0
    except sqlite3.DatabaseError:
        return False


def _findings(conn):
    findings = [row[0] for row in conn.execute("PRAGMA integrity_check") if row[0] != "ok"]
    findings += [f"a row of {table} refers to a row of {parent} that does not exist"
                 for table, _, parent, _ in conn.execute("PRAGMA foreign_key_check")]
    return findings


def _open_file(path, mode):
    """A connection to an existing file (URI mode ro or rw: never one that creates it)."""
    return sqlite3.connect(f"file:{quote(path)}?mode={mode}", uri=True, isolation_level=None,
                           timeout=BUSY_TIMEOUT_MS / 1000)


def backup_file(path, destination, erase_before=None):
    """See `storage.backup`. sqlite's backup API copies every page in one read transaction:
    one consistent moment, and in WAL mode writers go on meanwhile."""
    partial = f"{destination}.partial"
    try:
        with _failures_of("backup", path):
            with closing(_open_file(path, "rw")) as source:
                _copy(source, partial, "DELETE", owner_like=path, erase_before=erase_before)
            os.replace(partial, destination)
            _sync_directory(destination)
    finally:
        _remove(partial)


@contextmanager
def _failures_of(what, path):
    """sqlite's and the file system's failures during `what` as one line naming the file."""
    try:
        yield
    except sqlite3.Error as error:
        raise Unavailable(f"{path}: {what} failed: {one_line(error)}") from error
    except OSError as error:
        raise StorageError(f"{error.filename}: {what} failed: {error.strerror}") from error


def _copy(source, target, journal_mode, owner_like, erase_before=None):
    """Copy the database of connection `source` into a new owner-only file `target` of the
    owner of the file `owner_like`, in `journal_mode` (DELETE: whole in one file; WAL: as
    the service uses it; either way no log is left beside it), synced to disk, with the
    contacts of tickets dated before `erase_before` (an ISO date; None: none) erased;
    `StorageError` if the copy fails sqlite's checks."""
    _remove(target)
    os.close(os.open(target, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    _give_to_owner(target, owner_like)
    with closing(sqlite3.connect(target, isolation_level=None)) as copy:
        source.backup(copy)
        copy.execute(f"PRAGMA journal_mode = {journal_mode}")
        if erase_before:
            _erase_contacts(copy, erase_before)
        findings = _findings(copy)
    if findings:
        raise StorageError(f"the copy failed sqlite's checks: {findings[0]}")
    with open(target, "rb") as file:
        os.fsync(file.fileno())


def _erase_contacts(conn, before):
    """Erase, as the service does, the contacts of the tickets dated before `before` in a
    copy, then rebuild it so that no free page keeps them. Written for every schema version
    (these columns are in all), since the copy before a migration has an old one."""
    conn.execute("PRAGMA secure_delete = ON")
    conn.execute("BEGIN")
    conn.execute("UPDATE tickets SET email = '', phone = NULL WHERE date < ? AND email <> ''",
                 (before,))
    conn.execute("DELETE FROM idempotency_keys WHERE ticket_id IN "
                 "(SELECT id FROM tickets WHERE date < ?)", (before,))
    conn.execute("COMMIT")
    conn.execute("VACUUM")


def restore_file(path, source):
    """See `storage.restore`."""
    _check_restorable(source)
    partial, aside = f"{path}.partial", f"{path}.before-restore"
    try:
        with _failures_of("restore", path):
            with closing(_open_file(source, "ro")) as backup:
                _copy(backup, partial, "WAL",
                      owner_like=path if os.path.exists(path) else _directory(path))
            _refuse_if_in_use(path)
            kept = aside if os.path.exists(path) else None
            _set_aside(path, aside)
            os.replace(partial, path)
            _sync_directory(path)
            if kept:
                _fold_log(aside)
    finally:
        _remove(partial)
    findings = file_findings(path)
    if findings:
        raise StorageError(f"{path}: the restored database failed sqlite's checks: "
                           f"{findings[0]}")
    return kept


def _set_aside(path, aside):
    """Move the database and its log files to `aside`, the logs first: a log left beside
    the restored database would be replayed into it."""
    for suffix in ("-wal", "-shm", "-journal", ""):
        if os.path.exists(path + suffix):
            os.replace(path + suffix, aside + suffix)
        else:
            _remove(aside + suffix)  # an older one's log does not belong to this database


def _fold_log(path):
    """Write the database at `path`'s write-ahead log into it and remove the log and its
    index (-wal, -shm), so the database set aside is one file. A damaged one keeps them."""
    try:
        with closing(_open_file(path, "rw")) as conn:
            conn.execute("PRAGMA journal_mode = DELETE")
    except sqlite3.DatabaseError as error:
        log.warning("%s: kept with its log files: %s", path, one_line(error))


def _give_to_owner(path, like):
    """Give the new file `path` the owner and group of the file `like` (the database, or
    the directory of a new one). Run as root, a command would otherwise leave a database
    or backup the service's user cannot open."""
    if os.geteuid() == 0:
        owner = os.stat(like)
        os.chown(path, owner.st_uid, owner.st_gid)


def _directory(path):
    return os.path.dirname(os.path.abspath(path))


def _check_restorable(source):
    if not os.path.exists(source):
        raise StorageError(f"{os.path.abspath(source)}: no backup there; nothing was restored")
    findings = file_findings(source)
    if findings:
        raise StorageError(f"{source}: not restored, it failed sqlite's checks: {findings[0]}")
    with closing(_open_file(source, "ro")) as conn:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
    if not 0 < version <= len(MIGRATIONS):
        raise StorageError(f"{source}: not restored: its schema version {version} is not one "
                           f"this service can use (1 to {len(MIGRATIONS)})")


def _refuse_if_in_use(path):
    """`InUse` when another process has the database open. In WAL mode every open
    connection holds a shared lock on the file, idle or not, so an exclusive lock is
    refused exactly while a service (or any other reader) has it open."""
    if not os.path.exists(path):
        return
    conn = _open_file(path, "rw")
    try:
        conn.execute("PRAGMA busy_timeout = 0")
        conn.execute("PRAGMA locking_mode = EXCLUSIVE")
        conn.execute("BEGIN EXCLUSIVE")
        conn.execute("ROLLBACK")
    except sqlite3.DatabaseError as error:
        if error.sqlite_errorcode & 0xFF == sqlite3.SQLITE_BUSY:
            raise InUse(f"{path} is in use by another process: stop the service before "
                        f"restoring") from error
        # Any other failure is a damaged file, which is what a restore replaces. A service
        # still running on it notices the file was replaced and answers 503 until restarted.
    finally:
        conn.close()


def _sync_directory(path):
    """Make a rename in `path`'s directory durable."""
    descriptor = os.open(_directory(path), os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _remove(path):
    try:
        os.remove(path)
    except FileNotFoundError:
        pass

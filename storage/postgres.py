"""The PostgreSQL backend: several instances of the service, on several machines, share one
database server.

Each process keeps a pool of autocommit connections (psycopg 3, psycopg_pool); every write
is one explicit READ COMMITTED transaction, and where requests on two instances could
interleave, locks put them in order:

- an event ticket locks its event row FOR SHARE while it checks the event and inserts, and
  changing or cancelling an event locks that row for update: a ticket either commits before
  the cancellation or waits for it and is refused;
- the Idempotency-Key is claimed first, by `INSERT … ON CONFLICT DO NOTHING`: a retry on
  any instance waits on the first request's uncommitted key, then finds it taken and
  replays the stored ticket (or is refused for another body), and the key is free again
  if the first request fails;
- confirmation codes are unique by constraint.

The schema's migrations run at startup in one transaction under an advisory lock, so
instances that start together apply them once. This module needs the `postgres` extra.
"""

import os
from contextlib import contextmanager

import psycopg
from psycopg import errors
from psycopg.conninfo import conninfo_to_dict
from psycopg.types.string import TextLoader
from psycopg_pool import ConnectionPool

from storage import (
    DateNotOffered,
    DuplicateCode,
    IdempotencyConflict,
    NotFound,
    SchemaTooNew,
    StorageError,
    Store,
    Unavailable,
    display_url,
)
from storage.common import (
    LAST_DATE,
    count_event_change,
    event_record,
    listing_page,
    one_line,
    read_events_version,
    ticket_record,
    unavailable_on,
)

POOL_SIZE = 10  # connections per process at most (size max_connections for N instances)
POOL_TIMEOUT = 10  # seconds a request waits for a free connection before it gets a 503
CONNECT_TIMEOUT = 10  # seconds, unless the url or PGCONNECT_TIMEOUT says otherwise
MIGRATION_LOCK = 0x6D757365756D  # the advisory lock taken while migrating: "museum" in ASCII

# Each step runs in the startup transaction together with its schema_migrations row.
# Append only: a released step is never edited, a change of schema is a new step.
MIGRATIONS = [
    [
        """CREATE TABLE schema_migrations (
            version integer PRIMARY KEY,
            applied_at timestamptz NOT NULL DEFAULT now()
        )""",
        """CREATE TABLE events (
            id uuid PRIMARY KEY,
            name text NOT NULL,
            location text NOT NULL,
            description text NOT NULL,
            dates date[] NOT NULL,
            price double precision NOT NULL,
            cancelled boolean NOT NULL DEFAULT false
        )""",
        # The listing index: one row per date of every event that is not cancelled.
        """CREATE TABLE event_dates (
            date date NOT NULL,
            event_id uuid NOT NULL REFERENCES events (id),
            PRIMARY KEY (date, event_id)
        )""",
        """CREATE TABLE tickets (
            id uuid PRIMARY KEY,
            type text NOT NULL CHECK (type IN ('general', 'event')),
            date date NOT NULL,
            event_id uuid REFERENCES events (id),
            confirmation_code text NOT NULL CONSTRAINT unique_confirmation_code UNIQUE,
            email text NOT NULL,
            phone text,
            created_at timestamptz NOT NULL DEFAULT now()
        )""",
        "CREATE INDEX tickets_by_event ON tickets (event_id)",
        # The key is claimed before its ticket exists, so the reference is checked at commit.
        """CREATE TABLE idempotency_keys (
            user_name text NOT NULL,
            key text NOT NULL,
            fingerprint text NOT NULL,
            ticket_id uuid NOT NULL REFERENCES tickets (id) DEFERRABLE INITIALLY DEFERRED,
            PRIMARY KEY (user_name, key)
        )""",
        "CREATE TABLE settings (name text PRIMARY KEY, value text NOT NULL)",
    ],
    [
        # One row counting event changes, so cached listings know when they are stale.
        """CREATE TABLE event_changes (
            id integer PRIMARY KEY CHECK (id = 1),
            version bigint NOT NULL
        )""",
        "INSERT INTO event_changes (id, version) VALUES (1, 0)",
    ],
]

EVENT_COLUMNS = "e.id, e.name, e.location, e.description, e.dates, e.price"

TICKET_QUERY = """
    SELECT t.id, t.type, t.date, t.event_id, t.confirmation_code, t.email, t.phone,
           e.name, coalesce(e.cancelled, false)
    FROM tickets t LEFT JOIN events e ON e.id = t.event_id
    WHERE t.id = %s"""

# As in the sqlite backend: the window's first date per event from the listing index, the
# total beside the page. Names sort by code point, as sqlite's BINARY collation does.
LIST_QUERY = f"""
    SELECT {EVENT_COLUMNS}, count(*) OVER () AS total
    FROM (SELECT event_id, min(date) AS first FROM event_dates
          WHERE date >= %s AND date <= %s GROUP BY event_id) AS w
    JOIN events e ON e.id = w.event_id
    ORDER BY w.first, e.name COLLATE "C", e.id
    LIMIT %s OFFSET %s"""

COUNT_QUERY = "SELECT count(DISTINCT event_id) FROM event_dates WHERE date >= %s AND date <= %s"

# Connection lost, server shutting down, pool exhausted, lock deadlock, disk full, read-only.
_unavailable_on_error = unavailable_on(psycopg.OperationalError, errors.ReadOnlySqlTransaction)


def _event(row):
    event_id, name, location, description, dates, price = row[:6]
    return event_record(event_id, name, location, description,
                        [day.isoformat() for day in dates], price)


def _ticket(row):
    ticket_id, kind, date, *rest = row
    return ticket_record(ticket_id, kind, date.isoformat(), *rest)


def _configure(conn):
    """Ids cross the interface as UUID text. The locking above relies on each statement
    seeing what committed before it, whatever the server's default isolation is."""
    conn.adapters.register_loader("uuid", TextLoader)
    conn.isolation_level = psycopg.IsolationLevel.READ_COMMITTED


def _connection_options(url):
    """Options for every connection; the url and the PG* environment take precedence."""
    try:
        given = conninfo_to_dict(url)
    except psycopg.ProgrammingError as error:
        raise StorageError(f"{display_url(url)} is not a valid PostgreSQL url: "
                           f"{one_line(error)}") from error
    options = {"autocommit": True}
    if "connect_timeout" not in given and "PGCONNECT_TIMEOUT" not in os.environ:
        options["connect_timeout"] = CONNECT_TIMEOUT
    if "application_name" not in given and "PGAPPNAME" not in os.environ:
        options["application_name"] = "museum"
    return options


def _schema_version(conn):
    if conn.execute("SELECT to_regclass('schema_migrations')").fetchone()[0] is None:
        return 0
    return conn.execute("SELECT max(version) FROM schema_migrations").fetchone()[0] or 0


class PostgresStore(Store):
    def __init__(self, url):
        self.url = display_url(url)
        options = _connection_options(url)
        self._migrate(url, options)
        self._pool = ConnectionPool(
            url, kwargs=options, min_size=1, max_size=POOL_SIZE, open=False,
            configure=_configure, check=ConnectionPool.check_connection,
            timeout=POOL_TIMEOUT, name="museum")
        try:
            self._pool.open(wait=True, timeout=CONNECT_TIMEOUT)
        except psycopg.OperationalError as error:
            self._pool.close()
            raise Unavailable(f"PostgreSQL at {self.url} is unavailable: "
                              f"{one_line(error)}") from error

    # -- startup -----------------------------------------------------------------------

    def _migrate(self, url, options):
        """Bring the schema up to date: one transaction, one instance at a time."""
        try:
            with psycopg.connect(url, **options) as conn:
                self._apply_migrations(conn)
        except psycopg.OperationalError as error:
            raise Unavailable(f"PostgreSQL at {self.url} is unavailable: "
                              f"{one_line(error)}") from error
        except psycopg.Error as error:
            raise StorageError(f"PostgreSQL at {self.url}: migrating the schema failed: "
                               f"{one_line(error)}") from error

    def _apply_migrations(self, conn):
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            version = _schema_version(conn)
            if version > len(MIGRATIONS):
                raise SchemaTooNew(
                    f"PostgreSQL at {self.url}: database schema version {version} is newer "
                    f"than this service supports ({len(MIGRATIONS)}); upgrade the service")
            for number, step in enumerate(MIGRATIONS[version:], start=version + 1):
                for statement in step:
                    conn.execute(statement)
                conn.execute("INSERT INTO schema_migrations (version) VALUES (%s)", (number,))

    # -- connections and transactions ------------------------------------------------

    @contextmanager
    def _connection(self):
        with self._pool.connection() as conn:
            yield conn

    @contextmanager
    def _write(self):
        with self._pool.connection() as conn, conn.transaction():
            yield conn

    def schema_version(self):
        with self._connection() as conn:
            return _schema_version(conn)

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
                "VALUES (%s, %s, %s, %s, %s::date[], %s)",
                (event["eventId"], event["name"], event["location"],
                 event["eventDescription"], event["dates"], event["price"]),
            )
            self._index_dates(conn, event["eventId"], event["dates"])
        return event

    @staticmethod
    def _index_dates(conn, event_id, dates):
        conn.execute(
            "INSERT INTO event_dates (date, event_id) SELECT unnest(%s::date[]), %s",
            (dates, event_id),
        )

    @staticmethod
    def _unindex_dates(conn, event_id, dates):
        conn.execute(
            "DELETE FROM event_dates WHERE event_id = %s AND date = ANY (%s::date[])",
            (event_id, dates),
        )

    @staticmethod
    def _listed_event(conn, event_id, lock=""):
        row = conn.execute(
            f"SELECT {EVENT_COLUMNS} FROM events e WHERE e.id = %s AND NOT e.cancelled {lock}",
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
            # Concurrent changes of one event take turns; tickets wait until it commits.
            event = self._listed_event(conn, event_id, lock="FOR NO KEY UPDATE")
            if "dates" in changes:
                self._unindex_dates(conn, event_id, event["dates"])
                self._index_dates(conn, event_id, changes["dates"])
            event.update(changes)
            conn.execute(
                "UPDATE events SET name = %s, location = %s, description = %s, "
                "dates = %s::date[], price = %s WHERE id = %s",
                (event["name"], event["location"], event["eventDescription"],
                 event["dates"], event["price"], event_id),
            )
        return event

    @_unavailable_on_error
    def cancel_event(self, event_id):
        with self._write() as conn:
            count_event_change(conn)
            # The update waits for tickets holding the row FOR SHARE; a concurrent cancel
            # finds the row cancelled once it may look.
            row = conn.execute(
                "UPDATE events SET cancelled = true WHERE id = %s AND NOT cancelled "
                "RETURNING dates",
                (event_id,),
            ).fetchone()
            if row is None:
                raise NotFound(event_id)
            self._unindex_dates(conn, event_id, row[0])

    @_unavailable_on_error
    def create_ticket(self, ticket, idempotency=None):
        with self._write() as conn:
            if idempotency is not None and not self._claim(conn, *idempotency, ticket):
                return self._replayed_ticket(conn, *idempotency), False
            event_name = None
            if ticket["ticketType"] == "event":
                event = self._listed_event(conn, ticket["eventId"], lock="FOR SHARE")
                if ticket["ticketDate"] not in event["dates"]:
                    raise DateNotOffered(event["dates"])
                event_name = event["name"]
            try:
                conn.execute(
                    "INSERT INTO tickets (id, type, date, event_id, confirmation_code, email, "
                    "phone) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                    (ticket["ticketId"], ticket["ticketType"], ticket["ticketDate"],
                     ticket.get("eventId"), ticket["confirmationCode"], ticket["email"],
                     ticket.get("phone")),
                )
            except errors.UniqueViolation as error:
                if error.diag.constraint_name == "unique_confirmation_code":
                    raise DuplicateCode(ticket["confirmationCode"]) from error
                raise
        # What reading it back would give, without the round trip: the row as inserted,
        # and the name of an event that stayed locked until the commit.
        return ticket_record(ticket["ticketId"], ticket["ticketType"], ticket["ticketDate"],
                             ticket.get("eventId"), ticket["confirmationCode"], ticket["email"],
                             ticket.get("phone"), event_name, False), True

    @staticmethod
    def _claim(conn, user, key, fingerprint, ticket):
        """Take the key for this ticket; False when another request holds it. If that
        request is still in flight, this waits until it commits (or rolls back and leaves
        the key to us)."""
        claimed = conn.execute(
            "INSERT INTO idempotency_keys (user_name, key, fingerprint, ticket_id) "
            "VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
            (user, key, fingerprint, ticket["ticketId"]),
        )
        return claimed.rowcount == 1

    @staticmethod
    def _replayed_ticket(conn, user, key, fingerprint):
        stored_fingerprint, ticket_id = conn.execute(
            "SELECT fingerprint, ticket_id FROM idempotency_keys WHERE user_name = %s "
            "AND key = %s",
            (user, key),
        ).fetchone()
        if stored_fingerprint != fingerprint:
            raise IdempotencyConflict(key)
        return _ticket(conn.execute(TICKET_QUERY, (ticket_id,)).fetchone())

    @_unavailable_on_error
    def get_ticket(self, ticket_id):
        with self._connection() as conn:
            row = conn.execute(TICKET_QUERY, (ticket_id,)).fetchone()
        if row is None:
            raise NotFound(ticket_id)
        return _ticket(row)

    @_unavailable_on_error
    def setting(self, name, default):
        with self._write() as conn:
            # Two instances starting together: the second insert waits for the first to
            # commit, then the select (a statement of its own) reads the winner's value.
            conn.execute(
                "INSERT INTO settings (name, value) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                (name, default),
            )
            row = conn.execute("SELECT value FROM settings WHERE name = %s", (name,)).fetchone()
            return row[0]

    def close(self):
        """Close the pool's connections."""
        self._pool.close()

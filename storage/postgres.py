"""The PostgreSQL backend: several instances of the service, on several machines, share one
database server.

Each process keeps a pool of autocommit connections (psycopg 3, psycopg_pool); every write
is one explicit READ COMMITTED transaction, and where requests on two instances could
interleave, row locks put them in order: a ticket sale locks its event FOR SHARE, a change
of the event locks it for update, so a sale either commits before a cancellation or waits
for it and is refused. The rules themselves are in storage/sql.py, written with `?`
placeholders that the connections here translate.

The schema's migrations run at startup in one transaction under an advisory lock, so
instances that start together apply them once. This module needs the `postgres` extra.

While the server is down, a request waits at most `Limits.pool_timeout` for a connection,
then gets `Unavailable`; the pool tries to connect again at least every second or two, so
requests are served again within seconds of the server's return. The outage is logged
once (storage/sql.py), not the pool's warning per attempt.
"""

import functools
import logging
import os
import re
import secrets
from contextlib import contextmanager

import psycopg
from psycopg import errors
from psycopg.conninfo import conninfo_to_dict
from psycopg.types.string import TextLoader
from psycopg_pool import ConnectionPool

from storage import Limits, StorageError, Unavailable, display_url
from storage.sql import (
    ADMISSION_EVENTS_FROM_ADMISSIONS,
    DAILY_SALES_FROM_THE_TICKETS,
    LAST_DATES_FROM_THE_LISTING_INDEX,
    SQLStore,
    one_line,
    pages_for_earlier_sales,
)

# Seconds the pool goes on trying to replace a lost connection, with growing pauses (1 s,
# then 2 s, ...), before it gives up until a request asks for one again: short, so the
# pause before the attempt that finds the server back never grows past a second or two.
RECONNECT_FOR = 2
OPENING_WAIT = 10  # seconds the pool's first connection may take at start (no request waits)
MIGRATION_LOCK = 0x6D757365756D  # the advisory lock taken while migrating: "museum" in ASCII
# The class of the advisory locks a user's purchases take in turn (with the hash of its name):
# a two-key lock, a key space apart from MIGRATION_LOCK's.
BUYER_LOCKS = 0x62757900  # "buy" in ASCII
# The class of the advisory locks of events (with the hash of the event's id). A row lock
# FOR SHARE lets new sales join the ones holding it while a change of the event waits, so a
# steady stream of sales could hold off a cancellation for as long as it lasts; PostgreSQL
# queues heavyweight locks in order, so a change waits only for the sales already under way.
EVENT_LOCKS = 0x65766e00  # "evn" in ASCII
# The advisory lock the releases of expired holds take in turn: "hold" in ASCII.
HOLDS_LOCK = 0x686F6C64

# Each step runs in the startup transaction together with its schema_migrations row.
# Append only: a released step is never edited, a change of schema is a new step
# (storage/migrations.lock holds their fingerprints).
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
    [
        # The same shapes as on sqlite, so one implementation reads both: the event's dates
        # as a JSON list, and names compared by code point (sqlite's BINARY collation).
        "ALTER TABLE events ALTER COLUMN dates TYPE text USING array_to_json(dates)::text",
        'ALTER TABLE events ALTER COLUMN name TYPE text COLLATE "C"',
    ],
    [
        # The door: one admission per ticket, by primary key.
        """CREATE TABLE admissions (
            ticket_id uuid PRIMARY KEY REFERENCES tickets (id),
            admitted_at text NOT NULL,
            admitted_by text NOT NULL
        )""",
        # Tickets by day for the door's counts, by event and day for the dates sold.
        "CREATE INDEX tickets_by_date ON tickets (date, event_id)",
        "DROP INDEX tickets_by_event",
        "CREATE INDEX tickets_by_event ON tickets (event_id, date)",
    ],
    [
        # Listings that read no more than their page: the event's name beside each of its
        # dates, in the order of the listing, and how many listed events end on each day,
        # for the total of an open-ended listing.
        """ALTER TABLE event_dates ADD COLUMN name text COLLATE "C" NOT NULL DEFAULT ''""",
        "UPDATE event_dates d SET name = e.name FROM events e WHERE e.id = d.event_id",
        "CREATE INDEX event_dates_in_order ON event_dates (date, name, event_id)",
        "CREATE INDEX event_dates_by_event ON event_dates (event_id, date)",
        """CREATE TABLE listed_last_dates (
            date date PRIMARY KEY,
            events integer NOT NULL
        )""",
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
        "ALTER TABLE events DROP COLUMN IF EXISTS last_date",
        """CREATE TABLE IF NOT EXISTS listed_last_dates (
            date date PRIMARY KEY,
            events integer NOT NULL
        )""",
        "DELETE FROM listed_last_dates",
        LAST_DATES_FROM_THE_LISTING_INDEX,
    ],
    [
        # The door's audit trail: every admission and undo, oldest first by id, starting
        # with the admissions already made.
        """CREATE TABLE admission_events (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            ticket_id uuid NOT NULL REFERENCES tickets (id),
            action text NOT NULL CHECK (action IN ('admitted', 'undone')),
            done_at text NOT NULL,
            done_by text NOT NULL
        )""",
        "CREATE INDEX admission_events_by_ticket ON admission_events (ticket_id, id)",
        ADMISSION_EVENTS_FROM_ADMISSIONS,
        # A lost ticket found by its buyer's email on a day.
        "CREATE INDEX tickets_by_date_and_email ON tickets (date, lower(email))",
    ],
    [
        # Prices kept exactly, in hundredths, never as floats; each ticket keeps the price
        # and currency it was sold at (NULL: sold before prices were kept).
        "ALTER TABLE events ADD COLUMN price_minor bigint NOT NULL DEFAULT 0",
        "UPDATE events SET price_minor = round(price * 100)::bigint",
        "ALTER TABLE events DROP COLUMN price",
        "ALTER TABLE tickets ADD COLUMN price_minor bigint",
        "ALTER TABLE tickets ADD COLUMN currency text",
    ],
    [
        # Capacity: an event's places per date (NULL: unlimited), and the places taken,
        # counted in the transaction of each sale, so a sale past the capacity is refused
        # without counting tickets, and availability is read from the counts.
        "ALTER TABLE events ADD COLUMN capacity integer",
        """CREATE TABLE general_places (
            date date PRIMARY KEY,
            taken integer NOT NULL
        )""",
        """CREATE TABLE event_places (
            event_id uuid NOT NULL REFERENCES events (id),
            date date NOT NULL,
            taken integer NOT NULL,
            PRIMARY KEY (event_id, date)
        )""",
        "INSERT INTO general_places (date, taken) "
        "SELECT date, count(*) FROM tickets WHERE event_id IS NULL GROUP BY date",
        "INSERT INTO event_places (event_id, date, taken) SELECT event_id, date, count(*) "
        "FROM tickets WHERE event_id IS NOT NULL GROUP BY event_id, date",
    ],
    [
        # A ticket voided at the desk (a refund) keeps its row, for the sales report, and
        # gives its place back.
        "ALTER TABLE tickets ADD COLUMN voided_at text",
    ],
    [
        # The sales report's counts, kept in the transaction of each sale, void and
        # admission, so a year's report reads a row per day and event, not every ticket.
        # '' stands for general entry, and for the currency of tickets sold before prices
        # were kept.
        """CREATE TABLE daily_sales (
            date date NOT NULL,
            event_id text NOT NULL,
            currency text NOT NULL,
            sold bigint NOT NULL,
            voided bigint NOT NULL,
            admitted bigint NOT NULL,
            revenue bigint NOT NULL,
            PRIMARY KEY (date, event_id, currency)
        )""",
        DAILY_SALES_FROM_THE_TICKETS,
    ],
    [
        # Timed entry: a general ticket's entry slot (NULL: none), and the places taken in
        # each slot of a day, counted in the transaction of each sale and void as the
        # day's are.
        "ALTER TABLE tickets ADD COLUMN entry_time text",
        """CREATE TABLE slot_places (
            date date NOT NULL,
            entry_time text NOT NULL,
            taken integer NOT NULL,
            PRIMARY KEY (date, entry_time)
        )""",
    ],
    [
        # The door's offline list, scan keys and double entries: as sqlite's step 14 says.
        """CREATE TABLE day_versions (
            date date PRIMARY KEY,
            version bigint NOT NULL
        )""",
        """CREATE TABLE ticket_versions (
            ticket_id uuid PRIMARY KEY REFERENCES tickets (id),
            date date NOT NULL,
            version bigint NOT NULL
        )""",
        "CREATE INDEX ticket_versions_by_day ON ticket_versions (date, version)",
        """CREATE TABLE door_keys (
            user_name text NOT NULL,
            key text NOT NULL,
            fingerprint text NOT NULL,
            ticket_id uuid NOT NULL REFERENCES tickets (id),
            outcome text NOT NULL CHECK (outcome IN ('admitted', 'double-entry')),
            done_at text NOT NULL,
            PRIMARY KEY (user_name, key)
        )""",
        "CREATE INDEX door_keys_by_ticket ON door_keys (ticket_id)",
        "ALTER TABLE daily_sales ADD COLUMN double_entries bigint NOT NULL DEFAULT 0",
        "ALTER TABLE admission_events DROP CONSTRAINT admission_events_action_check",
        "ALTER TABLE admission_events ADD CONSTRAINT admission_events_action_check "
        "CHECK (action IN ('admitted', 'undone', 'double-entry'))",
    ],
    [
        # Devices added and revoked while the service runs (museum add-device,
        # revoke-device): each request that names one reads it on the unique index of the
        # devices in use. A revoked device's row stays, with when; its name may be reused.
        """CREATE TABLE devices (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            name text NOT NULL,
            role text NOT NULL,
            key_digest text NOT NULL,
            created_at text NOT NULL,
            revoked_at text
        )""",
        "CREATE UNIQUE INDEX devices_in_use ON devices (name) WHERE revoked_at IS NULL",
    ],
    [
        # The days an admin changed through the API (closed, other hours, another
        # capacity), overriding the config's rule for each; read by date range.
        """CREATE TABLE changed_days (
            date date PRIMARY KEY,
            closed boolean NOT NULL,
            time_open text,
            time_close text,
            capacity integer,
            note text,
            changed_at text NOT NULL,
            changed_by text NOT NULL
        )""",
    ],
    [
        # Limits every instance shares: as sqlite's step 17 says.
        """CREATE TABLE guess_counts (
            user_name text PRIMARY KEY,
            window_start double precision NOT NULL,
            guesses integer NOT NULL
        )""",
        "ALTER TABLE tickets ADD COLUMN sold_by text",
        "ALTER TABLE tickets ADD COLUMN sold_at text",
        "CREATE INDEX tickets_by_seller ON tickets (sold_by, sold_at)",
    ],
    [
        # One-time pairing codes of the devices: as sqlite's step 18 says.
        """CREATE TABLE device_pairings (
            code_digest text PRIMARY KEY,
            device_id bigint NOT NULL REFERENCES devices (id),
            expires_at text NOT NULL,
            used_at text
        )""",
    ],
    [
        # Price categories: as sqlite's step 19 says.
        "ALTER TABLE events ADD COLUMN prices text",
        "ALTER TABLE tickets ADD COLUMN category text",
    ],
    [
        # Orders: as sqlite's step 20 says.
        """CREATE TABLE orders (
            id text PRIMARY KEY,
            code text NOT NULL UNIQUE,
            status text NOT NULL,
            channel text NOT NULL,
            payment text,
            email text,
            phone text,
            created_at text NOT NULL,
            expires_at text,
            created_by text
        )""",
        "CREATE INDEX orders_held ON orders (expires_at) WHERE status = 'pending'",
        "ALTER TABLE tickets ADD COLUMN order_id text REFERENCES orders (id)",
        "ALTER TABLE tickets ADD COLUMN persons integer NOT NULL DEFAULT 1",
        "CREATE INDEX tickets_by_order ON tickets (order_id)",
    ],
    [
        # Changes without polling: as sqlite's step 21 says.
        "ALTER TABLE events ADD COLUMN changed_at text NOT NULL DEFAULT ''",
        "UPDATE events SET changed_at = to_char(clock_timestamp() AT TIME ZONE 'UTC', "
        "'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')",
        "CREATE INDEX events_by_change ON events (changed_at, id)",
    ],
    [
        # The outbox: as sqlite's step 22 says.
        """CREATE TABLE outbox (
            id uuid PRIMARY KEY,
            kind text NOT NULL,
            target text NOT NULL,
            payload text NOT NULL,
            ticket_id uuid,
            order_id text,
            state text NOT NULL,
            attempts integer NOT NULL DEFAULT 0,
            next_attempt_at text NOT NULL,
            last_answer text,
            created_at text NOT NULL,
            sent_at text
        )""",
        "CREATE INDEX outbox_due ON outbox (state, next_attempt_at)",
        "CREATE INDEX outbox_by_ticket ON outbox (ticket_id)",
        "CREATE INDEX outbox_by_order ON outbox (order_id)",
    ],
    [
        # The ticket page (schema step 23): as sqlite's step says.
        "ALTER TABLE tickets ADD COLUMN page_token text",
        "ALTER TABLE tickets ADD COLUMN page_digest text",
        "ALTER TABLE orders ADD COLUMN page_token text",
        "ALTER TABLE orders ADD COLUMN page_digest text",
        pages_for_earlier_sales,
        "CREATE UNIQUE INDEX tickets_by_page ON tickets (page_digest)",
        "CREATE UNIQUE INDEX orders_by_page ON orders (page_digest)",
    ],
    [
        # Webhooks: as sqlite's step 24 says.
        """CREATE TABLE webhooks (
            id uuid PRIMARY KEY,
            url text NOT NULL,
            secret text NOT NULL,
            events text NOT NULL,
            created_at text NOT NULL,
            disabled_at text,
            disabled_why text
        )""",
        "ALTER TABLE outbox ADD COLUMN webhook_id uuid",
        "CREATE INDEX outbox_by_webhook ON outbox (webhook_id)",
    ],
    [
        # A void's reason and a payment taken at the desk: as sqlite's step 25 says.
        "ALTER TABLE tickets ADD COLUMN void_reason text",
        "ALTER TABLE orders ADD COLUMN void_reason text",
        "ALTER TABLE orders ADD COLUMN paid_at text",
    ],
]


# What a query's text is made of, for placeholders: string literals, quoted names and
# comments (where a `?` is text), and the two characters that mean something to psycopg.
_SQL_PART = re.compile(r"""'(?:[^']|'')*'|"(?:[^"]|"")*"|--[^\n]*|/\*.*?\*/|[?%]""", re.S)


@functools.lru_cache(maxsize=1024)
def psycopg_query(query):
    """`query`, written with the shared SQL's `?` placeholders, as psycopg takes it with
    parameters: each `?` outside literals, quoted names and comments as `%s`, and every
    `%` as `%%`, which psycopg would otherwise read as a placeholder, inside literals too."""
    def translated(match):
        part = match.group()
        return "%s" if part == "?" else part.replace("%", "%%")

    return _SQL_PART.sub(translated, query)


class QmarkConnection(psycopg.Connection):
    """A connection that takes the shared SQL's `?` placeholders (psycopg's are `%s`).
    Without parameters psycopg reads no placeholders, and the query goes as written."""

    def execute(self, query, params=None, **options):
        if params is not None:
            query = psycopg_query(query)
        return super().execute(query, params, **options)

    def executemany(self, query, params_seq):
        with self.cursor() as cursor:
            cursor.executemany(psycopg_query(query), params_seq)


def _configure(conn):
    """Ids and dates cross the interface as text. The row locks rely on each statement
    seeing what committed before it, whatever the server's default isolation is."""
    for type_name in ("uuid", "date"):
        conn.adapters.register_loader(type_name, TextLoader)
    conn.isolation_level = psycopg.IsolationLevel.READ_COMMITTED


def _connection_options(url, read_only, connect_timeout):
    """Options for every connection; the url and the PG* environment take precedence,
    but not over `read_only`."""
    try:
        given = conninfo_to_dict(url)
    except psycopg.ProgrammingError as error:
        raise StorageError(f"{display_url(url)} is not a valid PostgreSQL url: "
                           f"{one_line(error)}") from error
    options = {"autocommit": True}
    if read_only:
        options["options"] = f"{given.get('options', '')} -c default_transaction_read_only=on"
    if "connect_timeout" not in given and "PGCONNECT_TIMEOUT" not in os.environ:
        options["connect_timeout"] = max(2, round(connect_timeout))  # libpq's minimum: 2
    if "application_name" not in given and "PGAPPNAME" not in os.environ:
        options["application_name"] = "museum"
    return options


class PostgresStore(SQLStore):
    MIGRATIONS = MIGRATIONS
    SCHEMA_OBJECTS = """
        SELECT 'table', table_name::text, table_name::text FROM information_schema.tables
        WHERE table_schema = current_schema()
        UNION ALL
        SELECT 'column', table_name::text, table_name || '.' || column_name
        FROM information_schema.columns WHERE table_schema = current_schema()
        UNION ALL
        SELECT 'index', tablename::text, indexname::text FROM pg_indexes
        WHERE schemaname = current_schema()"""
    SHARE_LOCK = "FOR SHARE"
    # The clock when the statement runs (now() would be the transaction's start, before it
    # waited for the events' change counter): changes are timed in the order they commit.
    CHANGE_TIME = ("to_char(clock_timestamp() AT TIME ZONE 'UTC', "
                   "'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')")
    UPDATE_LOCK = "FOR NO KEY UPDATE"
    CLAIM_LOCK = "FOR UPDATE SKIP LOCKED"
    # Connection lost, server shutting down, pool exhausted, deadlock, disk full, read-only.
    OUTAGE_ERRORS = (psycopg.OperationalError, errors.ReadOnlySqlTransaction)

    def __init__(self, url, read_only=False, migrate=True, limits=Limits()):
        self.url = display_url(url)
        options = _connection_options(url, read_only, limits.connect_timeout)
        self._connect_plainly = lambda: psycopg.connect(url, **options).close()
        # The pool warns of every failed attempt, in several lines; the store logs the
        # outage once instead.
        logging.getLogger("psycopg.pool").setLevel(logging.ERROR)
        self._pool = ConnectionPool(
            url, kwargs=options, min_size=1, max_size=limits.pool_size, open=False,
            connection_class=QmarkConnection, configure=_configure,
            check=ConnectionPool.check_connection, timeout=limits.pool_timeout,
            reconnect_timeout=RECONNECT_FOR, name="museum")
        try:
            # One plain connection first: a server that cannot be reached fails at once with
            # the driver's reason, where the pool would retry until its timeout.
            self._connect_plainly()
            self._pool.open(wait=True, timeout=OPENING_WAIT)
            self._open_schema(read_only, migrate)
        except (psycopg.OperationalError, Unavailable) as error:
            self._pool.close()
            raise Unavailable(f"{self._describe()} is unavailable: {one_line(error)}") from error
        except psycopg.Error as error:
            self._pool.close()
            raise StorageError(f"{self._describe()}: migrating the schema failed: "
                               f"{one_line(error)}") from error
        except StorageError:
            self._pool.close()
            raise

    def _describe(self):
        return f"PostgreSQL at {self.url}"

    def _diagnose(self, reason):
        """Where the pool only says it had no connection to give, a plain connection says
        why (the server is down, refuses, ...)."""
        try:
            self._connect_plainly()
        except psycopg.Error as error:
            return one_line(error)
        return reason

    @contextmanager
    def _connection(self):
        with self._pool.connection() as conn:
            yield conn

    @contextmanager
    def _transaction(self):
        with self._pool.connection() as conn, conn.transaction():
            yield conn

    @contextmanager
    def _snapshot(self):
        with self._pool.connection() as conn:
            conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            try:
                yield conn
            finally:
                conn.execute("ROLLBACK")  # nothing was written

    @contextmanager
    def _scratch_database(self):
        """A schema of its own in a transaction that is rolled back: nothing stays, and a
        read-only store may make it (which takes the CREATE privilege on the database)."""
        with self._pool.connection() as conn, conn.transaction() as transaction:
            conn.execute("SET TRANSACTION READ WRITE")
            scratch = f"museum_scratch_{secrets.token_hex(8)}"
            try:
                conn.execute(f"CREATE SCHEMA {scratch}")
            except errors.InsufficientPrivilege as error:
                raise StorageError(f"{self._describe()}: cannot make a scratch schema to "
                                   f"compare with: {one_line(error)}") from error
            conn.execute(f"SET LOCAL search_path TO {scratch}")
            yield conn
            raise psycopg.Rollback(transaction)

    def _lock_schema(self, conn):
        conn.execute("SELECT pg_advisory_xact_lock(?)", (MIGRATION_LOCK,))

    def _lock_buyer(self, conn, user):
        conn.execute("SELECT pg_advisory_xact_lock(CAST(? AS integer), hashtext(?))",
                     (BUYER_LOCKS, user))

    def _lock_holds(self, conn):
        conn.execute("SELECT pg_advisory_xact_lock(?)", (HOLDS_LOCK,))

    def _lock_event(self, conn, event_id, change):
        kind = "pg_advisory_xact_lock" if change else "pg_advisory_xact_lock_shared"
        conn.execute(f"SELECT {kind}(CAST(? AS integer), hashtext(?))",
                     (EVENT_LOCKS, str(event_id)))

    def _read_schema_version(self, conn):
        # A scan of the catalog, not to_regclass(): after waiting for the migration lock, a
        # name lookup could answer from this connection's cache of the time before.
        if not conn.execute("SELECT count(*) FROM pg_tables WHERE tablename = "
                            "'schema_migrations' AND schemaname = current_schema()").fetchone()[0]:
            return 0
        return conn.execute("SELECT max(version) FROM schema_migrations").fetchone()[0] or 0

    def _record_schema_version(self, conn, version):
        conn.execute("INSERT INTO schema_migrations (version) VALUES (?)", (version,))

    def close(self):
        """Close the pool's connections."""
        self._pool.close()

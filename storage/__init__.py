"""Persistence of the museum service behind one narrow interface.

The app module talks only to `Store`; it holds no SQL, and storage knows no HTTP.
Records cross the interface as plain dicts shaped like the API's JSON:

event:  {"eventId", "name", "location", "eventDescription", "dates": [YYYY-MM-DD, ...], "price"}
ticket: {"ticketId", "ticketType", "ticketDate", "eventId" (or None), "confirmationCode",
         "email", "phone" (or None)}

Ids and dates are strings (UUID text, ISO dates); validation happens before a call, in the
app. Domain errors are the exceptions below; backends raise nothing else on ordinary failures.
"""

import re
from abc import ABC, abstractmethod

# A password in a url: `scheme://user:PASSWORD@host` or `?password=PASSWORD`.
USER_PASSWORD = re.compile(r"(://[^/?#@:]*:)[^/?#@]*(?=@)")
QUERY_PASSWORD = re.compile(r"([?&]password=)[^&#]*", re.IGNORECASE)


class StorageError(Exception):
    """Base of every domain error raised by a store."""


class NotFound(StorageError):
    """The record does not exist, or its event is cancelled."""


class DateNotOffered(StorageError):
    """A ticket date is not one of the event's dates; `dates` lists the valid ones."""

    def __init__(self, dates):
        super().__init__(f"the event takes place on {', '.join(dates)}")
        self.dates = dates


class DuplicateCode(StorageError):
    """The confirmation code is already taken; the caller draws another one."""


class IdempotencyConflict(StorageError):
    """The idempotency key was used before with a different request."""


class Unavailable(StorageError):
    """The database cannot be reached or written (locked, read-only, disk full, gone)."""


class SchemaTooNew(StorageError):
    """The database was written by a newer version of the service."""


class Store(ABC):
    """What the museum service needs from a database."""

    @abstractmethod
    def check(self):
        """Run a trivial query; raise `Unavailable` when the database does not answer."""

    @abstractmethod
    def create_event(self, event):
        """Insert a new event dict (with its eventId; dates sorted, unique); return it."""

    @abstractmethod
    def get_event(self, event_id):
        """Return the event; `NotFound` if unknown or cancelled."""

    @abstractmethod
    def list_events(self, start, end, offset, limit):
        """Return `(events, total)` for the listed events with a date in [start, end].

        `end` None means open-ended. Order: first date inside the window, then name, then
        eventId. `total` counts every matching event in the window, not just this page.
        """

    @abstractmethod
    def events_version(self):
        """A number that grows with every event created, changed or cancelled, in the same
        transaction as the change: a listing cached under it is current while it stays."""

    @abstractmethod
    def update_event(self, event_id, changes):
        """Apply `changes` (a subset of the event's fields) in one transaction; return the
        event after the update. `NotFound` if unknown or cancelled."""

    @abstractmethod
    def cancel_event(self, event_id):
        """Mark the event cancelled; it and its tickets stay stored. `NotFound` if unknown
        or already cancelled."""

    @abstractmethod
    def create_ticket(self, ticket, idempotency=None):
        """Store a ticket and return `(ticket, created)`.

        For an event ticket the event must be listed (`NotFound`) and the date one of its
        dates (`DateNotOffered`), checked in the same transaction as the insert.
        `idempotency` is `(user, key, fingerprint)` or None: when that user's key was used
        before with the same fingerprint, nothing is written and the stored ticket is
        returned with `created` False; with another fingerprint, `IdempotencyConflict`.
        A taken confirmation code raises `DuplicateCode`.
        """

    @abstractmethod
    def get_ticket(self, ticket_id):
        """Return the ticket plus `eventName` (None for general tickets) and `cancelled`
        (True when its event was cancelled); `NotFound` if unknown."""

    @abstractmethod
    def setting(self, name, default):
        """Return the stored value of setting `name`; store `default` first if absent."""

    @abstractmethod
    def close(self):
        """Release connections."""


POSTGRES_SCHEMES = ("postgresql", "postgres")


def open_store(url):
    """Open the store a config's storage url names: a sqlite file path, `sqlite:///path`,
    `:memory:` (a private in-memory database), or `postgresql://user@host/dbname` (the
    password from the url or the standard `PG*` environment variables)."""
    scheme, separator, rest = url.partition("://")
    if separator and scheme.lower() in POSTGRES_SCHEMES:
        try:
            from storage.postgres import PostgresStore
        except ImportError as error:  # psycopg or psycopg_pool is not installed
            raise StorageError(f"PostgreSQL support needs: pip install "
                               f"'museum-service[postgres]' ({error})") from error
        return PostgresStore(url)
    if separator and scheme.lower() != "sqlite":
        raise StorageError(f"unsupported storage url {display_url(url)!r}: give a sqlite file "
                           f"path, sqlite:///path or postgresql://user@host/dbname")
    from storage.sqlite import SQLiteStore

    return SQLiteStore(rest.removeprefix("/") if separator else url)


def display_url(url):
    """`url` with any password masked, for logs and messages."""
    return QUERY_PASSWORD.sub(r"\1***", USER_PASSWORD.sub(r"\1***", url))

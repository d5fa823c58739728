"""Persistence of the museum service behind one narrow interface.

The app module talks only to `Store`; it holds no SQL, and storage knows no HTTP.
Records cross the interface as plain dicts shaped like the API's JSON:

event:  {"eventId", "name", "location", "eventDescription", "dates": [YYYY-MM-DD, ...], "price"}
        and "capacity" (places on each of its dates) when it has one: absent is unlimited;
        "prices" ({price category: price}) when it has some: absent or empty is none
ticket: {"ticketId", "ticketType", "ticketDate", "eventId" (or None), "confirmationCode",
         "email", "phone" (or None), "price", "currency", "entryTime" (HH:MM, the entry slot
         of a timed general ticket; absent or None: none), "soldBy" and "soldAt" (the user
         who bought it and when, RFC 3339 UTC text; absent or None: not recorded, as for
         tickets sold before schema 17; never read back), "category" (the price category
         it was sold in; absent or None: none, as for tickets sold before schema 19)}; as
         read back also "orderCode" (its order's code; None: sold alone), "heldUntil"
         (while its order is pending, the end of the order's hold, RFC 3339 UTC text; else
         None), "payment" (its order's "payment"; None: sold alone), "eventName"
         (None for general tickets), "cancelled" (its event was), "admittedAt" and
         "admittedBy" (None until the ticket is admitted at the door; admittedAt is RFC 3339
         UTC text), "voidedAt" (None unless voided, RFC 3339 UTC text), "voidReason" (the
         staff's reason kept with the void, or None), "orderId" (None: sold alone),
         "pageToken" (the token of its page's link, made with the sale; see `page`); once its
         contacts are erased (`erase_contacts`), "email" is "" and "phone" None; "price"
         and "currency" are None for tickets sold before prices were kept.
message: {"messageId", "kind" (how it is delivered: "email"; any other kind is stored
         alike), "target" (an email address, a receiver's URL), "payload" (a dict, stored
         as JSON: what the sender needs to compose it), "ticketId" or "orderId" (the ticket
         or order whose contacts it holds: erased with them; absent or None otherwise),
         "createdAt"}; as read
         back also "state" ("queued", "sending", "sent" or "failed"), "attempts",
         "nextAttemptAt" (when it is due, or a claim's lease ends), "lastAnswer" (what the
         receiver last said, or None) and "sentAt" (None until sent). Times are RFC 3339
         UTC text, compared as text: callers write them in one format. A webhook
         delivery (kind "webhook", see below) also has "webhookId", its receiver.
webhook: {"webhookId", "url", "secret" (its `whsec_…` signing secret), "events" (the types
         of WEBHOOK_EVENTS it wants), "createdAt"}; as read back also "disabledAt" and
         "disabledWhy" (None while it is enabled). Every change of a type in WEBHOOK_EVENTS
         queues, in its own transaction, one message of kind "webhook" to each enabled
         receiver that wants it: "target" its URL, "payload" the body to send, {"type",
         "timestamp" (RFC 3339 UTC text), "data"}. "data" is the event as read for
         event.published and event.changed (as last read, with "cancelled": True, for
         event.cancelled); {"orderId", "orderCode", "ticketIds"} for order.confirmed;
         {"orderId", "ticketIds" (those it voided), "voidedAt"} for order.voided;
         {"orderId", "orderCode", "payment", "paidAt"} for order.paid;
         {"ticketId"} with "voidedAt" for ticket.voided, "admittedAt" and "admittedBy" for
         ticket.admitted, "undoneAt" and "undoneBy" for ticket.admission-undone. No email
         or phone ever: a receiver reads more through the API.
day:    {"date", "closed" (bool), "timeOpen", "timeClose" (HH:MM, both or neither; None:
         the config's hours), "capacity" (places of general entry; None: the config's),
         "note" (or None), "changedAt" (RFC 3339 UTC text), "changedBy" (a user name)}: a
         day an admin changed through the API, which overrides the config's rule for it

Prices cross as the API shows them (an int, or a float of at most 2 decimals, checked
by the app) and are stored exactly, as whole minor units (hundredths): `minor_units` and
`price_value` convert.

Ids and dates are strings (UUID text, ISO dates); validation happens before a call, in the
app. Domain errors are the exceptions below; backends raise nothing else on ordinary failures.
"""

import importlib
import itertools
import os
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass

# What the store announces to webhook receivers, in the order `museum webhooks` lists them.
WEBHOOK_EVENTS = ("event.published", "event.changed", "event.cancelled", "order.confirmed",
                  "order.voided", "order.paid", "ticket.voided", "ticket.admitted",
                  "ticket.admission-undone")
WEBHOOK_MESSAGE = "webhook"  # the outbox kind of a webhook delivery
# An order's "payment" while the desk is yet to take it (an order of the booking page).
PAYMENT_DUE = "due"

# A password in a url: `scheme://user:PASSWORD@host` or `?password=PASSWORD`.
USER_PASSWORD = re.compile(r"(://[^/?#@:]*:)[^/?#@]*(?=@)")
QUERY_PASSWORD = re.compile(r"([?&]password=)[^&#]*", re.IGNORECASE)


def minor_units(price):
    """The whole hundredths of a price of at most 2 decimals."""
    return round(price * 100)


def price_value(minor):
    """A price in hundredths as the API shows it: 2500 is 25, 1250 is 12.5 (the nearest
    float to a 2-decimal number prints as that number)."""
    return minor // 100 if minor % 100 == 0 else minor / 100


class StorageError(Exception):
    """Base of every domain error raised by a store."""


class NotFound(StorageError):
    """The record does not exist, or its event is cancelled."""


class NotAllowed(StorageError):
    """The caller's rule refused the change; nothing was changed."""


class DateNotOffered(StorageError):
    """A ticket date is not one of the event's dates; `dates` lists the valid ones."""

    def __init__(self, dates):
        super().__init__(f"the event takes place on {', '.join(dates)}")
        self.dates = dates


class DuplicateCode(StorageError):
    """The confirmation code is already taken; the caller draws another one."""


class DatesSold(StorageError):
    """A change would remove dates that tickets were sold for; `sold` maps each such date
    to its number of tickets."""

    def __init__(self, sold):
        super().__init__(", ".join(f"{day}: {count}" for day, count in sold.items()))
        self.sold = sold


class SoldOut(StorageError):
    """A sale would take more places than there are: `date`, and `event_id` (None for
    general entry) or `entry_time` (the entry slot of a general ticket; None: the whole
    day) name what is full."""

    def __init__(self, date, event_id=None, entry_time=None):
        full = event_id or f"general entry{f' at {entry_time}' if entry_time else ''}"
        super().__init__(f"{date}: {full} is sold out")
        self.date = date
        self.event_id = event_id
        self.entry_time = entry_time


class HoldExpired(StorageError):
    """The order's hold ended before it was confirmed: its places are free again."""


class NotDue(StorageError):
    """The order has no payment due to mark paid: `status` is its status as read back
    (only a "confirmed" one is due), `payment` its payment (only PAYMENT_DUE is due)."""

    def __init__(self, order_id, status, payment):
        super().__init__(f"order {order_id} is {status}, its payment {payment}")
        self.status = status
        self.payment = payment


class DayClosed(StorageError):
    """A general ticket's date was closed through `set_day`; `date` is that date."""

    def __init__(self, date):
        super().__init__(f"{date} is closed")
        self.date = date


class CapacityBelowSold(StorageError):
    """A new capacity is below the places already sold; `sold` maps each such date to its
    number of tickets."""

    def __init__(self, sold):
        super().__init__(", ".join(f"{day}: {count}" for day, count in sold.items()))
        self.sold = sold


class DeviceExists(StorageError):
    """A device of that name is in use (added and not revoked)."""


class PairingSpent(StorageError):
    """A one-time pairing code can no longer pair: `why` is "used" (it paired a device
    before) or "expired"."""

    def __init__(self, why):
        super().__init__(f"the pairing code was {why}")
        self.why = why


class LimitReached(StorageError):
    """A limit the caller set was reached (see `create_ticket`, `undo_admission`); nothing
    was written. `first` is when the earliest of the counted actions was done (RFC 3339 UTC
    text): the caller tells from it when the limit lets go."""

    def __init__(self, first):
        super().__init__(f"limit reached; the first action counted was at {first}")
        self.first = first


class IdempotencyConflict(StorageError):
    """The idempotency key was used before with a different request."""


class Unavailable(StorageError):
    """The database cannot be reached or written (locked, read-only, disk full, gone)."""


class SchemaMismatch(StorageError):
    """The database's schema is not the one this service version uses."""


class SchemaTooNew(SchemaMismatch):
    """The database was written by a newer version of the service."""


class SchemaBehind(SchemaMismatch):
    """The database was written by an older version of the service and was left as it is
    (see `open_store`'s `migrate`); `version` is its schema version."""

    def __init__(self, message, version):
        super().__init__(message)
        self.version = version


class DatabaseMissing(StorageError):
    """A command was given a database file that does not exist; nothing was created."""


class InUse(StorageError):
    """Another process has the database open: a service is running on it."""


class Unsupported(StorageError):
    """The backend leaves this to its own tools; the message names them."""


@dataclass(frozen=True)
class Limits:
    """How long a store waits for its database, and how many connections it keeps."""

    busy_timeout: float = 5  # sqlite: seconds a write waits for another process's lock
    pool_size: int = 10  # PostgreSQL: connections per process at most
    pool_timeout: float = 1  # PostgreSQL: seconds a request waits for a connection
    connect_timeout: float = 2  # PostgreSQL: seconds a new connection may take


class Store(ABC):
    """What the museum service needs from a database."""

    @abstractmethod
    def check(self):
        """Run a trivial query; raise `Unavailable` when the database does not answer."""

    @abstractmethod
    def health(self):
        """`check`, then raise `Unavailable` while the database cannot take a write: its
        last write failed because of the database (full, read-only, locked, unreachable)
        and none succeeded since; the message says since when and why. Every few seconds
        it also tries a small write of its own, so a failure is seen with no one writing,
        and its end too. Otherwise costs no more than one read: that of `outbox_summary`,
        which it returns (the health probe's report), as its `check`."""

    @abstractmethod
    def totals(self):
        """`{"events": n, "tickets": n}`: every event and ticket stored, cancelled and void
        ones too; for the start-up line, which tells one database from another."""

    @abstractmethod
    def schema_version(self):
        """The number of schema migration steps the database has had."""

    @abstractmethod
    def schema_findings(self, older_ok=False):
        """What keeps the database's schema from being this version's, one line each; []
        when nothing does. A database at an older schema version gets a line saying so,
        unless `older_ok` (a backup restored to roll back is meant to be older).
        Then every table, column and index that a new database at the same schema version
        has and this one lacks: a step that left something out, or an edited one. Reads
        only (on PostgreSQL the new schema is built in a transaction rolled back)."""

    @abstractmethod
    def create_event(self, event):
        """Insert a new event dict (with its eventId; dates sorted, unique); return it."""

    @abstractmethod
    def create_events(self, events):
        """Insert new events in one transaction: a seed or an import of many at once."""

    @abstractmethod
    def get_event(self, event_id, cancelled_too=False):
        """Return the event; `NotFound` if unknown or cancelled. With `cancelled_too`, a
        cancelled event is returned too, as it was last, marked `"cancelled": True`."""

    @abstractmethod
    def list_events(self, start, end, offset, limit):
        """Return `(events, total)` for the listed events with a date in [start, end].

        `end` None means open-ended. Order: first date inside the window, then name, then
        eventId. `total` counts every matching event in the window, not just this page, and
        is read at the same moment as the page.
        """

    @abstractmethod
    def list_changed_events(self, since, offset, limit):
        """Return `(events, total)`: the events created, changed or cancelled at or after
        `since` (UTC, `YYYY-MM-DDTHH:MM:SS.mmmZ`), whatever their dates, in the order of
        their last change, then eventId. Each carries "updatedAt" (its last change, by the
        database's clock, in that form), a cancelled one its last data and "cancelled":
        True. Changes are timed in the order they commit, so a later call with the last
        event's "updatedAt" misses no change. `total` is read with the page."""

    @abstractmethod
    def events_version(self):
        """A number that grows with every event created, changed or cancelled, in the same
        transaction as the change: a listing cached under it is current while it stays."""

    @abstractmethod
    def update_event(self, event_id, changes):
        """Apply `changes` (a subset of the event's fields) in one transaction; return the
        event after the update. `NotFound` if unknown or cancelled; `DatesSold` if the new
        dates leave out a date that tickets were sold for, `CapacityBelowSold` if a new
        capacity is below the tickets sold for one of its dates (nothing changes then). A
        "capacity" of None removes it: the event is unlimited again."""

    @abstractmethod
    def cancel_event(self, event_id):
        """Mark the event cancelled; it and its tickets stay stored. `NotFound` if unknown
        or already cancelled."""

    @abstractmethod
    def create_ticket(self, ticket, idempotency=None, general_capacity=None,
                      slot_capacity=None, purchase_limit=None, messages=()):
        """Store a ticket and return `(ticket, created)`.

        Its place is counted in the same transaction: past the event's capacity on that
        date, or past `general_capacity` (None: unlimited) for a general ticket, or past
        `slot_capacity` (None: unlimited) in the entry slot of a general ticket with an
        "entryTime", nothing is written and `SoldOut` is raised. Sales on any instances
        are counted in turn. A general ticket's day as set through `set_day` is read in
        the same transaction, after its count is locked: a closed day raises `DayClosed`,
        and the day's "capacity", when set, counts instead of `general_capacity`.

        For an event ticket the event must be listed (`NotFound`) and the date one of its
        dates (`DateNotOffered`), checked in the same transaction as the insert; it is sold
        at the event's price of that moment (its "prices" entry for the ticket's
        "category", if it has one, else its "price"), a general ticket at the ticket's
        "price".
        `idempotency` is `(user, key, fingerprint)` or None: when that user's key was used
        before with the same fingerprint, nothing is written and the stored ticket is
        returned with `created` False; with another fingerprint, `IdempotencyConflict`.
        A taken confirmation code raises `DuplicateCode`.

        `purchase_limit`, given, is `(most, since)`: when the ticket's "soldBy" has bought
        `most` tickets with a "soldAt" after `since` (RFC 3339 UTC text), nothing is written
        and `LimitReached` names the earliest of them. Sales by one user, on any instances,
        are counted in turn.

        `messages` (message dicts, see above) are queued in the same transaction, due at
        their "createdAt": a sale that commits has them, one that fails or is replayed
        has none.
        """

    @abstractmethod
    def replayed_ticket(self, user, key, fingerprint):
        """The ticket sold earlier under that user's idempotency key, or None if the key is
        unused; `IdempotencyConflict` if it was used with another fingerprint. Reads only."""

    @abstractmethod
    def get_ticket(self, ticket_id):
        """Return the ticket as read back (see above); `NotFound` if unknown."""

    @abstractmethod
    def void_ticket(self, ticket_id, voided_at, reason=None):
        """Void the ticket (a refund at the desk) at `voided_at` (RFC 3339 UTC text), keeping
        the staff's `reason` (text, or None), and give its place back, in one transaction;
        return whether this call voided it (False: it was void already, nothing changes,
        its reason neither). The ticket stays stored, for the sales report. `NotFound` if
        unknown."""

    @abstractmethod
    def list_tickets(self, event_id, day, offset, limit):
        """Return `(tickets, total)`: a page of the event's tickets as read back, on `day`
        (None: every date), in the order of their dates, then of their sales; cancelled
        events included. `total` counts every match, read at the same moment as the page.
        `NotFound` if the event never existed."""

    @abstractmethod
    def sales(self, start, end, breakdown=False):
        """The sales report of the tickets dated in [start, end]: one row per day, then
        general entry before each event (by name), then currency: `{"date", "eventId" (None
        for general entry), "eventName", "currency" (None: sold before prices were kept),
        "sold" (every ticket, void ones too), "void", "admitted", "revenue" (the prices of
        those not void, as the API shows prices), "doubleEntries" (of those, the double
        entries recorded at the door), "categories" and "channels" (the same tickets by
        price category and by their order's channel: `[{"category" (None: sold before
        categories were kept) or "channel" (None: sold alone, not in an order), "sold",
        "void", "revenue"}, ...]`, by name, None first; only with `breakdown`)}`; days
        without tickets are left out. The breakdown is read from the window's tickets (a
        cost that grows with them), the rest from kept counts, in one snapshot."""

    @abstractmethod
    def places_taken(self, start, end, now=None):
        """The places taken on each day of [start, end] (ISO dates), from the counts kept
        with each sale and void, read at one moment (given `now`, without the places of
        holds ended by then): `{"general": {date: taken}, "slots":
        {date: {entry time: taken}}, "events": [{"date", "eventId", "name", "capacity"
        (None: unlimited), "sold"}, ...]}`, with one entry for each date of every listed
        event in the window, ordered by date, name, eventId. Days without general tickets
        are left out of "general", and days and slots without timed tickets out of
        "slots"."""

    # An order: {"orderId", "orderCode", "status" ("pending": held until "expiresAt", or
    # "confirmed"), "channel" ("web", "desk"), "payment", "email", "phone", "createdAt",
    # "expiresAt" (RFC 3339 UTC text; None unless held), "createdBy"}. Read back it gains
    # "pageToken" (the token of its page's link, made with the order; see `page`),
    # "voidReason" (the staff's reason kept with its void, or None), "paidAt" (when the
    # desk marked a payment due paid, RFC 3339 UTC text, or None),
    # "tickets" (each as a ticket is read back), and its "status" is one of "pending",
    # "confirmed", "expired" (a hold that ended unconfirmed), "cancelled", "voided".
    # `now` is RFC 3339 UTC text in the same form as "expiresAt" (they compare as text).

    @abstractmethod
    def create_order(self, order, tickets, now, general_capacity=None, slot_capacity=None,
                     idempotency=None, purchase_limit=None, on_confirmed=None):
        """Store `order` and all its `tickets` (as `create_ticket` takes them, each with
        "persons", the places it takes, 1 when absent, and "email" None when the buyer gave
        none: read back as '', as an erased one) in one transaction, or nothing; return
        the order as read back. An order created confirmed has the messages
        `on_confirmed(order as read back)` returns (see message) queued in that
        transaction (a pending one none: its hold sends nothing). Every place is counted as
        `create_ticket` counts one ticket's, each ticket's "persons" at once, with the same
        errors: `SoldOut` names the first place found full. A pending order's places count
        against capacity until it is confirmed, cancelled or its hold ends at "expiresAt":
        from then on they are free, whether or not anything is written meanwhile (see
        `places_taken`).

        `general_capacity` is one for every day, or `{date: capacity}` (a date left out:
        unlimited). `idempotency` is `(user, key, fingerprint)` or None, as for
        `create_ticket`: a key
        used before with the same fingerprint writes nothing and returns that order as read
        back; with another fingerprint (or a key that bought a single ticket),
        `IdempotencyConflict`. `purchase_limit`, given, is `(most, since)` as for
        `create_ticket`, counting the order's "createdBy" and all its tickets: past it,
        nothing is written and `LimitReached` names the earliest purchase counted (None
        when the order alone is over the limit)."""

    @abstractmethod
    def replayed_order(self, user, key, fingerprint, now):
        """The order made earlier under that user's idempotency key, as read back at `now`,
        or None if the key is unused; `IdempotencyConflict` if it was used with another
        fingerprint or bought a single ticket. Reads only."""

    @abstractmethod
    def get_order(self, order_id, now):
        """The order as read back at `now`; `NotFound` if unknown."""

    @abstractmethod
    def get_order_by_code(self, code, now):
        """The order whose "orderCode" is `code`, as read back at `now`; `NotFound` if
        none. One read of a unique index, then the order's."""

    @abstractmethod
    def confirm_order(self, order_id, now, on_confirmed=None):
        """Make a pending order confirmed and return it as read back; a confirmed one is
        returned as it is. `HoldExpired` when its hold ended; `NotAllowed` when cancelled
        or voided; `NotFound` if unknown. When this call confirms it, the messages
        `on_confirmed(order as read back)` returns are queued in the same transaction: a
        second confirmation queues none."""

    @abstractmethod
    def cancel_order(self, order_id, user, now):
        """Cancel `user`'s own pending order: its tickets void, their places free; return it
        as read back. `NotFound` if unknown or created by another user; `HoldExpired` when
        its hold ended; `NotAllowed` when it is not pending."""

    @abstractmethod
    def void_order(self, order_id, now, reason=None):
        """Void any order (an admin's refund): each of its tickets void, their places free,
        the tickets kept for the sales report, the staff's `reason` (text, or None) kept with
        the order and the tickets this voids. Return whether this call voided it (False:
        void already, nothing changes). `NotFound` if unknown."""

    @abstractmethod
    def mark_order_paid(self, order_id, payment, now):
        """Record that the desk took a confirmed order's payment due (PAYMENT_DUE) as
        `payment` ("cash", "card") at `now`, and queue the order.paid webhooks, in one
        transaction; return the order as read back. An order marked paid as `payment`
        before is returned as it is (a retry: nothing written). `NotDue` for any other
        order (free, paid otherwise, pending, expired, cancelled, voided); `NotFound` if
        unknown."""

    @abstractmethod
    def web_orders_of(self, email, since):
        """`(orders, first)`: how many orders on the "web" channel for `email` (compared
        ignoring ASCII case) were created after `since` (RFC 3339 UTC text), whatever
        became of them, and the "createdAt" of the earliest (None when there is none).
        Reads only; what every instance on the database wrote counts."""

    @abstractmethod
    def page(self, token, now):
        """What the page link of `token` shows: `("ticket", the ticket as read back)` or
        `("order", the order as read back at `now`)`; `NotFound` when no ticket or order
        has that token. Every ticket and order gets its token (128 random bits) in the
        transaction that sells it; it is found by its digest, so the time a guess takes
        tells nothing of a real token. Reads only."""

    @abstractmethod
    def set_day(self, day):
        """Store `day` (a day dict, see above), replacing what was set for its date; return
        the tickets dated that day that are not void and not of a cancelled event, as read
        back, in the order they were sold. They are read in the same transaction, after the
        day's general entry count is locked: a sale of that day on any instance commits
        before (and is listed) or after (and sees the day as set)."""

    @abstractmethod
    def clear_day(self, date):
        """Forget what `set_day` stored for `date`: the config's rule holds again. Return
        whether something was set for it."""

    @abstractmethod
    def changed_days(self, start, end):
        """The days set through `set_day` from `start` to `end` (ISO dates, inclusive), as
        day dicts ordered by date; one indexed read, cheap enough for every request."""

    @abstractmethod
    def get_ticket_by_code(self, code):
        """Return the ticket with that confirmation code, as `get_ticket` does."""

    @abstractmethod
    def admit(self, ticket_id, admitted_by, admitted_at, idempotency=None):
        """Admit the (existing) ticket once; return `(admission, admitted)` where admission
        is `{"admittedAt", "admittedBy"}` of the ticket's first admission and `admitted`
        says whether this call made it. Once is a constraint: of two gates admitting one
        ticket at the same moment, on any instances, one admits and the other reads that
        admission. Which tickets may be admitted is the caller's rule.

        `idempotency` is a scan's `(user, key, fingerprint)` or None. The key is kept with
        the admission this call makes (never with a refusal); when that user's key was
        used before with the same fingerprint, nothing is written and the answer is the
        admission it made, `(its admission, True)` (or, for a double entry's key, the
        ticket's admission and False); with another fingerprint, `IdempotencyConflict`.
        A retry on another instance at the same moment waits for the first to commit."""

    @abstractmethod
    def admit_tickets(self, ticket_ids, admitted_by, admitted_at, idempotency=None):
        """Admit each of the (existing) tickets not admitted yet, all in one transaction, as
        `admit` admits one (an order's tickets in one scan); return `{ticket id:
        (admission, admitted)}` for every one of them. `idempotency` is kept with the
        lowest of the ids when at least one is admitted; a key used before answers, for
        each ticket, the admission that scan made (`True`: the key's ticket, and those
        admitted by the same user at the same time) or the ticket's own (`False`)."""

    @abstractmethod
    def record_double_entry(self, ticket_id, scanned_by, scanned_at, idempotency=None):
        """Record that the admitted ticket was admitted again, offline, by `scanned_by` at
        `scanned_at` (RFC 3339 UTC text): an entry `double-entry` in its admission history
        and one more in the sales report's and the summary's `doubleEntries`, in one
        transaction. Return `(admission, recorded)`: the ticket's admission (None, and
        nothing recorded, when it has none: it was undone meanwhile) and whether this call
        recorded it. `idempotency` as for `admit`: a key used before records nothing
        again."""

    @abstractmethod
    def replayed_scan(self, user, key, fingerprint):
        """What the scan under that user's idempotency key did, `{"ticketId", "outcome"
        ("admitted" or "double-entry"), "at" (the admission's or the double entry's time)}`,
        or None if the key is unused; `IdempotencyConflict` if it was used with another
        fingerprint. Reads only. Keys are kept as long as their ticket's contacts."""

    @abstractmethod
    def door_list(self, day, since=None):
        """The door's list of the tickets dated `day` (ISO date), read at one moment:
        `{"version", "tickets": [{"ticketId", "confirmationCode", "eventId", "eventName",
        "entryTime", "voidedAt", "cancelled", "admittedAt", "admittedBy", "heldUntil",
        "payment", "currency" (as a ticket is read back), "orderId" (None: sold alone),
        "orderDue" (for a ticket of an order whose "payment" is "due", paid at the desk:
        the prices of the order's tickets not void, on any day, summed as the API shows
        prices; else None)}, ...]}` in no
        particular order; never an email or phone. `version` is the day's change number as
        read; with `since` (an earlier answer's version), only the tickets changed after it
        (sold, admitted, undone, voided, their event cancelled, their order confirmed or
        marked paid). A change committed after a version was read always has a greater
        number, however transactions on any instances interleave, so `since` never misses one."""

    @abstractmethod
    def door_list_version(self, day):
        """The day's change number, as `door_list` gives it (0: no change recorded)."""

    @abstractmethod
    def undo_admission(self, ticket_id, undone_by, undone_at, may_undo=None,
                       undo_limit=None):
        """Remove the ticket's admission, recording who undid it and when (RFC 3339 UTC
        text) in its history; `NotFound` if it has none. `may_undo`, given, is the caller's
        rule: called with the admission `{"admittedAt", "admittedBy"}` inside the same
        transaction; when it answers False, `NotAllowed` and nothing changes. `undo_limit`,
        given, is `(most, since)`: when `undone_by` has undone this ticket's admission
        `most` times at or after `since` (RFC 3339 UTC text), `LimitReached` naming the
        first of them, and nothing changes. Undos of one ticket come in turn."""

    @abstractmethod
    def admission_history(self, ticket_id, offset=0, limit=None):
        """`(entries, total)`: a page (from `offset`, at most `limit`; None: all) of every
        admission, undo and double entry of the ticket, oldest first, `[{"action":
        "admitted", "undone" or "double-entry", "at", "by"}, ...]` ([] for a ticket never
        admitted, or unknown); `total` counts them all, read at the same moment."""

    @abstractmethod
    def lookup_tickets(self, day, email=None, codes=(), limit=20):
        """At most `limit` tickets dated `day`, as read back (see above), ordered by code:
        those bought with `email` (the whole address, ASCII letters compared without
        case), or else those whose confirmation code is one of `codes` (one or two)."""

    @abstractmethod
    def count_guess(self, user, at, window):
        """Count one guess at the door (a typed code, a lookup) of `user` at `at` (seconds
        since the epoch) in its window: a window starts at the first guess after the last
        one ended and lasts `window` seconds. Return `(guesses, start)`: the window's
        guesses, this one included, and its start. One atomic statement: guesses on any
        instances at once are all counted."""

    @abstractmethod
    def guesses(self, user):
        """`(guesses, start)` of `user`'s latest window, as `count_guess` last left it;
        `(0, None)` when it never guessed. One read of a primary key."""

    @abstractmethod
    def door_summary(self, day):
        """Tickets sold and admitted for `day`, leaving out void tickets and cancelled events:
        `{"sold": {"general": n, "event": n}, "admitted": {...}, "events": [{"eventId",
        "name", "sold", "admitted"}, ...], "devices": [{"name", "admitted"}, ...],
        "doubleEntries": n}`, events ordered by name, then eventId; devices (the users who
        admitted) by name; doubleEntries counts the day's double entries (see
        `record_double_entry`)."""

    @abstractmethod
    def arrivals(self, start, end):
        """The admissions of the tickets dated in [start, end] (ISO dates), leaving out void
        tickets and cancelled events, counted per quarter of an hour of their time in UTC:
        `[{"at": "2027-10-01T09:15:00Z", "admitted": n}, ...]`, the earliest first, quarters
        without admissions left out. A quarter of an hour, as every time zone's offset is a
        whole number of them: the caller counts the quarters by the museum's own hour,
        across a change of daylight saving time too. One grouped read of the window's
        tickets."""

    @abstractmethod
    def erase_contacts(self, before, limit):
        """Erase the email and phone of at most `limit` tickets dated before `before` (an
        ISO date) that still have them, and forget their idempotency keys and scan keys (whose
        fingerprints hash the buyer's email), and those of at most `limit` orders whose
        tickets are all dated before `before`, with the outbox messages that hold those
        contacts, in one short transaction; return how many tickets and orders were erased
        (fewer than `limit`: none are left). The tickets, their orders, codes and admissions
        stay, so the counts stay true."""

    @abstractmethod
    def claim_messages(self, now, lease_until, limit):
        """Claim at most `limit` messages due at `now`, the earliest first: queued ones whose
        "nextAttemptAt" has come, and sending ones whose lease ended (their sender died).
        Each becomes "sending" until `lease_until` with one more attempt, and is returned
        as read back. A claim commits before the caller sends: on PostgreSQL, rows another
        instance is claiming are skipped (`FOR UPDATE SKIP LOCKED`); on sqlite its one
        writer makes claims take turns. Either way a row goes to one claimant at a time."""

    @abstractmethod
    def settle_message(self, message_id, attempt, state, answer, at, next_attempt_at=None):
        """Record the outcome of the claim that made `attempt` (its "attempts" as claimed):
        `state` "sent" (at `at`), "failed", or "queued" again, due at `next_attempt_at`;
        `answer` is what the receiver said. Return False, changing nothing, when the row is
        no longer that claim's (its lease ended and another claimant took it, or an admin
        dropped it). A sent row is never claimed again."""

    @abstractmethod
    def list_messages(self, state=None, limit=100):
        """At most `limit` messages as read back (of `state` only, if given), the newest
        first."""

    @abstractmethod
    def retry_message(self, message_id, now):
        """Queue a queued or failed message again, due at `now`, its attempts counted from
        0; return it as read back. `NotFound` if unknown; `NotAllowed` if it is sent, or
        being sent."""

    @abstractmethod
    def drop_message(self, message_id):
        """Forget a message that is not being sent. `NotFound` if unknown; `NotAllowed`
        while it is "sending" (its claim may still deliver it)."""

    @abstractmethod
    def queue_mail_again(self, message, since, most, user=None):
        """Queue `message` (see message, without "target") to the current email of the
        ticket or order its "ticketId" or "orderId" names, in one transaction, unless that
        has no email (none given, or erased), the ticket is void or the order not
        confirmed, or `most` messages of it were queued after `since`; return whether
        it was queued. `NotFound` when unknown, or, given `user`, sold to another user."""

    @abstractmethod
    def outbox_summary(self):
        """`{"failed": n, "oldest": the "createdAt" of the oldest failed message (None when
        none failed)}`: for the health check, one indexed read."""

    @abstractmethod
    def add_webhook(self, webhook):
        """Register the receiver `webhook` (see webhook): from the commit on, the changes it
        wants queue deliveries to it."""

    @abstractmethod
    def webhooks(self):
        """Every receiver as read back, the oldest first, secrets included."""

    @abstractmethod
    def webhook(self, webhook_id):
        """The receiver as read back, or None when it was removed."""

    @abstractmethod
    def remove_webhook(self, webhook_id):
        """Forget the receiver and its deliveries, but those being sent (their claim finds
        it gone). `NotFound` if unknown."""

    @abstractmethod
    def disable_webhook(self, webhook_id, at, why):
        """Disable the receiver (it answered 410 Gone): no change queues a delivery to it
        from the commit on, and its queued deliveries fail with `why` as their last answer.
        Return whether this call disabled it (False: disabled already, or removed)."""

    @abstractmethod
    def scrub(self):
        """After erasing: clear what was erased from the database's files as far as the
        backend can. Return False when it could not finish now (try again later)."""

    @abstractmethod
    def add_device(self, name, role, key_digest, created_at, pairing=None):
        """Record the device `name` with its `role` and the digest of its key
        (museum_credentials.hash_key's `key$salt$digest`), added at `created_at` (RFC 3339 UTC
        text); it signs in from the commit on, on every instance. With `pairing`, a
        `(code digest, expires at)` pair, its one-time pairing code is recorded in the
        same transaction (see `pair_device`). `DeviceExists` while a device of that name
        is in use; a revoked one's name may be taken again."""

    @abstractmethod
    def pair_device(self, code_digest, key_digest, now):
        """Spend the one-time pairing code whose digest is `code_digest` at `now` (RFC 3339
        UTC text): its device signs in with the key of `key_digest` from the commit on,
        and with no key it had before. Returns the device's `{"name", "role"}`. Of two
        exchanges of one code at once, one pairs. `NotFound` if no code has that digest or
        its device was revoked; `PairingSpent` if the code was used before or expired
        (`expires at` not after `now`); nothing is written then."""

    @abstractmethod
    def revoke_device(self, name, revoked_at):
        """Revoke the device `name` in use at `revoked_at` (RFC 3339 UTC text): from the
        commit on it signs in nowhere. Its row stays, for the list. `NotFound` if no device
        of that name is in use."""

    @abstractmethod
    def device(self, name):
        """The device `name` in use: `{"name", "role", "keyDigest"}`, or None (unknown or
        revoked). One read of an index, cheap enough for every request that names it."""

    @abstractmethod
    def list_devices(self):
        """Every device ever added, revoked ones too, by name then by when it was added:
        `[{"name", "role", "createdAt", "revokedAt" (None while in use)}, ...]`; never a
        key or its digest."""

    @abstractmethod
    def setting(self, name, default=None):
        """Return the stored value of setting `name`. With a `default`, store it first if
        absent; without one, only read (None if absent)."""

    @abstractmethod
    def close(self):
        """Release connections."""


POSTGRES_SCHEMES = ("postgresql", "postgres")


def open_store(url, read_only=False, migrate=True, limits=Limits()):
    """Open the store a config's storage url names: a sqlite file path, `sqlite:///path`,
    `:memory:` (a private in-memory database), or `postgresql://user@host/dbname` (the
    password from the url or the standard `PG*` environment variables).

    A new, empty database is given this version's schema. An existing one at an older
    schema version is migrated, unless `migrate` is False: then `SchemaBehind` is raised
    and the database is left as it is, to be backed up first. A `read_only` store never
    writes: it creates no file, migrates nothing (a schema of another version raises
    `SchemaMismatch`, unless `migrate` is False: then it is opened as it is, to be
    inspected) and refuses writes with `Unavailable`. `limits` bound the waits for
    the database (see `Limits`)."""
    if _is_postgres(url):
        return _postgres_module("postgres").PostgresStore(url, read_only, migrate, limits)
    from storage.sqlite import SQLiteStore

    return SQLiteStore(sqlite_path(url), read_only, migrate, limits)


def _postgres_module(name):
    """The module `storage.NAME` of the PostgreSQL backend; `StorageError` saying what to
    install when its driver is missing."""
    try:
        return importlib.import_module(f"storage.{name}")
    except ImportError as error:  # psycopg or psycopg_pool is not installed
        raise StorageError(f"PostgreSQL support needs: pip install "
                           f"'museum-service[postgres]' ({error})") from error


def _is_postgres(url):
    scheme, separator, _ = url.partition("://")
    return bool(separator) and scheme.lower() in POSTGRES_SCHEMES


def sqlite_path(url):
    """The file a sqlite storage url names; `StorageError` for a url of another kind."""
    scheme, separator, rest = url.partition("://")
    if not separator:
        return url
    if scheme.lower() != "sqlite":
        raise StorageError(f"unsupported storage url {display_url(url)!r}: give a sqlite file "
                           f"path, sqlite:///path or postgresql://user@host/dbname")
    return rest.removeprefix("/")


def missing_database(url):
    """`DatabaseMissing` when `url` names a sqlite file that does not exist, for the commands
    that must not create one (a PostgreSQL server says for itself that a database is
    missing)."""
    path = sqlite_file(url)
    if path is not None and not os.path.exists(path):
        raise DatabaseMissing(f"{os.path.abspath(path)}: no database there (nothing was "
                              f"created; a new one is made by 'museum init' or the first "
                              f"'museum serve')")


def is_museum_database(path):
    """Whether the file at `path` is a sqlite database with a museum schema."""
    from storage.sqlite import is_museum_database as holds_one

    return holds_one(path)


def sqlite_file(url):
    """The file a storage url names when it is a sqlite file; None for PostgreSQL and for
    an in-memory database."""
    if _is_postgres(url):
        return None
    path = sqlite_path(url)
    return None if path == ":memory:" else path


# -- keeping the database: copies, checks and restores --------------------------------------
# sqlite's file is the service's to copy; a PostgreSQL database is copied by the server's
# own tools, which storage/postgres_dump.py runs.

PG_NO_COPY_BEFORE_MIGRATING = ("a PostgreSQL database is not copied before a migration: "
                               "take a backup first with 'museum backup FILE'")


def backup(url, destination, erase_before=None):
    """Write a copy of the database at `url`, as it was at one moment, to the file
    `destination`, while services keep using the database. The copy is readable by its
    owner only and one self-contained file, and replaces any file at `destination` only
    once it is checked: sqlite's integrity check; on PostgreSQL, a `pg_dump -Fc` archive
    that `pg_restore` reads back, with the museum's schema version in it. The contacts of
    tickets dated before `erase_before` (an ISO date; sqlite only) are erased in it."""
    if _is_postgres(url):
        _postgres_module("postgres_dump").dump(url, destination)
        return
    from storage.sqlite import backup_file

    backup_file(sqlite_path(url), destination, erase_before)


def backup_beside(url, version, day, erase_before):
    """Back up the sqlite database at `url` beside itself, before it is migrated from schema
    `version`, as `PATH.vVERSION.DAY.bak` (`DAY` an ISO date; `-2`, `-3`… after it when
    taken: an earlier copy is never replaced), with the contacts of tickets dated before
    `erase_before` erased, as the service erases them; return its path. `Unsupported` for
    PostgreSQL, whose database has no file to be beside."""
    if _is_postgres(url):
        raise Unsupported(PG_NO_COPY_BEFORE_MIGRATING)
    stem = f"{sqlite_path(url)}.v{version}.{day}"
    destination = f"{stem}.bak"
    for number in itertools.count(2):
        if not os.path.exists(destination):
            break
        destination = f"{stem}-{number}.bak"
    backup(url, destination, erase_before)
    return destination


def restore(url, source):
    """Replace the database at `url` with the backup file `source` (written by `backup`),
    which must read back whole and have a schema this version can use or migrate (an older
    one is restored as it is: that is a rollback). `InUse` while a service uses the
    database. Return what became of the database it replaced, as a phrase for the operator:
    sqlite keeps it beside itself (`PATH.before-restore`); on PostgreSQL every table, view
    and sequence of the museum's schema is dropped and the dump restored into the emptied
    schema, in one transaction, so a failed restore changes nothing."""
    if _is_postgres(url):
        return _postgres_module("postgres_dump").restore(url, source)
    from storage.sqlite import restore_file

    kept = restore_file(sqlite_path(url), source)
    return f"the database it replaced is kept as {kept}" if kept else "there was none before"


def inspect(url, older_schema_ok=False):
    """What is wrong with the database at `url`, one line each; [] when it is sound.
    sqlite: the file's integrity and foreign-key checks first. Then, on both backends, that
    it answers a query, and its schema (`Store.schema_findings`): its version (an older one
    is no finding when `older_schema_ok`: a backup restored to roll back), and every table,
    column and index a database of that version should have. Reads only."""
    findings = []
    if not _is_postgres(url):
        from storage.sqlite import file_findings

        findings = file_findings(sqlite_path(url))
        if findings:  # a damaged file: opening it as a store would only say so again
            return findings
    try:
        store = open_store(url, read_only=True, migrate=False)
    except StorageError as error:
        return [str(error)]
    try:
        store.check()
        findings += store.schema_findings(older_schema_ok)
    except StorageError as error:
        findings.append(str(error))
    finally:
        store.close()
    return findings


def schema_versions(url):
    """(the schema version of the database at `url`, the one this service uses). Reads
    only."""
    store = open_store(url, read_only=True, migrate=False)
    try:
        return store.schema_version(), len(store.MIGRATIONS)
    finally:
        store.close()


def display_url(url):
    """`url` with any password masked, for logs and messages."""
    return QUERY_PASSWORD.sub(r"\1***", USER_PASSWORD.sub(r"\1***", url))

"""The store written once in SQL that sqlite and PostgreSQL both speak.

Every rule of the interface lives here, once. A backend supplies only its dialect part:
how it connects and opens a write transaction, its schema's migrations and where it keeps
the schema version, the row locks it needs, and which driver errors mean the database is
unavailable. Statements use `?` placeholders; the PostgreSQL backend translates them.

Ids, dates and the event's date list cross as text on both backends (the event's dates as a
JSON list), so one set of row builders serves both.

The store also remembers the database's last outage, for health checks and for a log that
says it once: when a call fails because of the database, since when and why; when a write
succeeds again, that it is over.
"""

import hashlib
import inspect
import json
import logging
import secrets
import threading
import time
import uuid
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from datetime import datetime, timezone

from storage import (
    DateNotOffered,
    DatesSold,
    DeviceExists,

    DayClosed,
    DuplicateCode,
    HoldExpired,
    CapacityBelowSold,
    IdempotencyConflict,
    LimitReached,
    NotAllowed,
    NotDue,
    NotFound,
    PAYMENT_DUE,
    PairingSpent,
    SchemaBehind,
    SchemaTooNew,
    SoldOut,
    StorageError,
    Store,
    Unavailable,
    WEBHOOK_EVENTS,
    WEBHOOK_MESSAGE,
    minor_units,
    price_value,
)

log = logging.getLogger("museum.storage")

PRICES_STEP = 9  # the schema step that keeps prices in hundredths, rounding finer ones

# How often a health check tries a write of its own: rarely while writes succeed (a full
# disk is seen even with no sales), often while they fail (so is the end of the outage).
PROBE_EVERY = 5  # seconds
PROBE_EVERY_IN_OUTAGE = 1  # seconds
# The write tried: a setting no one reads, an operator's clue of when it last worked.
WRITE_PROBE = """
    INSERT INTO settings (name, value) VALUES ('write_checked_at', ?)
    ON CONFLICT (name) DO UPDATE SET value = excluded.value"""

# Held while an outage begins or ends, so each is logged once: both are rare.
OUTAGE_LOCK = threading.Lock()

# The open ends of a window: earlier and later than any date the service accepts.
FIRST_DATE = "0001-01-01"
LAST_DATE = "9999-12-31"

EVENT_COLUMNS = ("e.id, e.name, e.location, e.description, e.dates, e.price_minor, e.capacity, "
                 "e.prices")
# Where a read of the changes puts its `cancelled` mark: the column after the event's.
CANCELLED_COLUMN = len(EVENT_COLUMNS.split(","))

# A ticket with its order's code and id and, while the order is pending, the end of its
# hold (the door refuses such a ticket: it is not paid), read on the orders' primary key.
TICKETS_READ_BACK = """
    SELECT t.id, t.type, t.date, t.event_id, t.confirmation_code, t.email, t.phone,
           t.price_minor, t.currency, e.name, e.cancelled IS TRUE, a.admitted_at,
           a.admitted_by, t.voided_at, t.entry_time, t.category, t.page_token, o.code,
           CASE WHEN o.status = 'pending' THEN o.expires_at END, t.void_reason,
           o.id, o.payment
    FROM tickets t LEFT JOIN events e ON e.id = t.event_id
                   LEFT JOIN admissions a ON a.ticket_id = t.id
                   LEFT JOIN orders o ON o.id = t.order_id"""
TICKET_BY_ID = TICKETS_READ_BACK + " WHERE t.id = ?"
# The ticket page (schema step 23): each ticket and each order has a link `/t/TOKEN`, the
# token 128 random bits. The token itself is kept, since the ticket read, the order answer
# and a mail sent later show the link again (a digest alone could not); it opens nothing a
# reader of the database or a backup could not already see there (the QR secret and the
# confirmation codes are beside it). The page finds it by its SHA-256 digest, on a unique
# index: the index walk compares the digest of a guess, never the guess itself, so how long
# it takes says nothing about any real token.
TICKET_BY_PAGE = TICKETS_READ_BACK + " WHERE t.page_digest = ?"
TICKET_BY_CODE = TICKETS_READ_BACK + " WHERE t.confirmation_code = ?"
# A page of an event's buyers, in the order they bought, on the index by event and date.
EVENT_TICKETS = TICKETS_READ_BACK + """
    WHERE t.event_id = ? AND t.date >= ? AND t.date <= ?
    ORDER BY t.date, t.created_at, t.id
    LIMIT ? OFFSET ?"""
EVENT_TICKETS_COUNT = """
    SELECT count(*) FROM tickets WHERE event_id = ? AND date >= ? AND date <= ?"""

# The door's counts for one day, one row per event (event_id NULL: general tickets), of the
# tickets that are valid or admitted (not void, not of a cancelled event), from
# the index of tickets by date and the admissions' primary key.
SUMMARY_QUERY = """
    SELECT t.event_id, e.name, count(*), count(a.ticket_id)
    FROM tickets t LEFT JOIN events e ON e.id = t.event_id
                   LEFT JOIN admissions a ON a.ticket_id = t.id
    WHERE t.date = ? AND e.cancelled IS NOT TRUE AND t.voided_at IS NULL
    GROUP BY t.event_id, e.name
    ORDER BY e.name, t.event_id"""

# The day's admissions by the device (user) that made them, from the same index; sorted
# by the caller, as the backends' collations differ.
DEVICES_QUERY = """
    SELECT a.admitted_by, count(*)
    FROM tickets t JOIN admissions a ON a.ticket_id = t.id
                   LEFT JOIN events e ON e.id = t.event_id
    WHERE t.date = ? AND e.cancelled IS NOT TRUE
    GROUP BY a.admitted_by"""

# A lost ticket, found among one day's tickets by its buyer's email (the index on date and
# lower(email)) or by its confirmation codes (the unique index on the code).
LOOKUP_BY_EMAIL = TICKETS_READ_BACK + \
    " WHERE t.date = ? AND lower(t.email) = ? ORDER BY t.confirmation_code LIMIT ?"
LOOKUP_BY_CODES = TICKETS_READ_BACK + \
    " WHERE t.date = ? AND t.confirmation_code IN (?, ?) ORDER BY t.confirmation_code LIMIT ?"
ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")

# A door user's guesses in its current window, counted in one statement on any instance: a
# window that ended starts again at this guess. (Both expressions read the row as it was.)
COUNT_GUESS = """
    INSERT INTO guess_counts (user_name, window_start, guesses) VALUES (?, ?, 1)
    ON CONFLICT (user_name) DO UPDATE SET
        guesses = CASE WHEN guess_counts.window_start > excluded.window_start - ?
                       THEN guess_counts.guesses + 1 ELSE 1 END,
        window_start = CASE WHEN guess_counts.window_start > excluded.window_start - ?
                            THEN guess_counts.window_start ELSE excluded.window_start END
    RETURNING guesses, window_start"""
# A user's purchases since a moment, and an undoer's undos of one ticket, on their indexes.
PURCHASES_SINCE = """
    SELECT count(*), min(sold_at) FROM tickets WHERE sold_by = ? AND sold_at > ?"""
UNDOS_SINCE = """
    SELECT count(*), min(done_at) FROM admission_events
    WHERE ticket_id = ? AND action = 'undone' AND done_by = ? AND done_at >= ?"""

# A device's sign-in, on the unique index of the devices in use.
DEVICE_IN_USE = "SELECT role, key_digest FROM devices WHERE name = ? AND revoked_at IS NULL"

RECORD_ADMISSION_EVENT = """
    INSERT INTO admission_events (ticket_id, action, done_at, done_by) VALUES (?, ?, ?, ?)"""
# Starts the audit trail with the admissions made before it (used by a migration step of
# both backends: never change it).
ADMISSION_EVENTS_FROM_ADMISSIONS = """
    INSERT INTO admission_events (ticket_id, action, done_at, done_by)
    SELECT ticket_id, 'admitted', admitted_at, admitted_by FROM admissions
    ORDER BY admitted_at"""

# A page of the listing: the listing index is walked in its own order (date, name, id),
# and each event is kept at its first date inside the window, so the database reads little
# more than the page itself however many events the window holds.
LIST_QUERY = f"""
    SELECT {EVENT_COLUMNS}
    FROM event_dates d JOIN events e ON e.id = d.event_id
    WHERE d.date >= ? AND d.date <= ?
      AND NOT EXISTS (SELECT 1 FROM event_dates earlier
                      WHERE earlier.event_id = d.event_id
                        AND earlier.date >= ? AND earlier.date < d.date)
    ORDER BY d.date, d.name, d.event_id
    LIMIT ? OFFSET ?"""

# The events created, changed or cancelled from a moment on, in the order of their last
# change, cancelled ones too (read on the index of the changes).
CHANGES_QUERY = f"""
    SELECT {EVENT_COLUMNS}, e.cancelled IS TRUE, e.changed_at
    FROM events e WHERE e.changed_at >= ?
    ORDER BY e.changed_at, e.id
    LIMIT ? OFFSET ?"""
CHANGES_COUNT_QUERY = "SELECT count(*) FROM events WHERE changed_at >= ?"

# Events with a date in a closed window, counted on the listing index.
COUNT_QUERY = "SELECT count(DISTINCT event_id) FROM event_dates WHERE date >= ? AND date <= ?"
# With no end, an event is in the window when its last date is: the listed events are
# counted by last date (a row per day, kept with the listing index), and those rows summed.
OPEN_COUNT_QUERY = "SELECT coalesce(sum(events), 0) FROM listed_last_dates WHERE date >= ?"
# Fills `listed_last_dates` from the listing index, which holds listed events only (used by
# a migration step of both backends: never change it).
LAST_DATES_FROM_THE_LISTING_INDEX = """
    INSERT INTO listed_last_dates (date, events)
    SELECT last_date, count(*)
    FROM (SELECT max(date) AS last_date FROM event_dates GROUP BY event_id) AS ends
    GROUP BY last_date"""
COUNT_LAST_DATE = """
    INSERT INTO listed_last_dates (date, events) VALUES (?, ?)
    ON CONFLICT (date) DO UPDATE SET events = listed_last_dates.events + excluded.events"""


# A sale takes a place: the counter row of its day (and event) is created or counted up, and
# read back, in the sale's transaction. On PostgreSQL the row stays locked until the commit,
# so sales of one day, on any instances, count in turn: the counter row is the capacity
# rule's lock point (sqlite's is its one writer). The places are kept, not counted from the
# tickets, because the availability reads 31 days of them at once (docs/performance.md,
# "Which tables are kept, and why").
# Holds (orders awaiting payment) count only until they expire, with no job to
# give their places back, so no kept count can follow them. A sale (and the availability)
# will count the kept places sold plus, live, the held tickets whose hold ends after its
# clock, read on a small partial index of the held tickets (date, event, entry time, hold
# end; WHERE a hold end is set), under the same counter row's lock, which a hold takes too
# without counting up (as LOCK_GENERAL_PLACES does). A paid hold joins the kept count in its
# payment's transaction; an expired one just stops counting. Few tickets are held at any
# moment, so the live part stays small whatever a year has sold.
TAKE_GENERAL_PLACE = """
    INSERT INTO general_places (date, taken) VALUES (?, ?)
    ON CONFLICT (date) DO UPDATE SET taken = general_places.taken + excluded.taken
    RETURNING taken"""
TAKE_SLOT_PLACE = """
    INSERT INTO slot_places (date, entry_time, taken) VALUES (?, ?, ?)
    ON CONFLICT (date, entry_time) DO UPDATE SET taken = slot_places.taken + excluded.taken
    RETURNING taken"""
TAKE_EVENT_PLACE = """
    INSERT INTO event_places (event_id, date, taken) VALUES (?, ?, ?)
    ON CONFLICT (event_id, date) DO UPDATE SET taken = event_places.taken + excluded.taken
    RETURNING taken"""
# The events taking place each day of a window, in the listing's order, with the places
# taken on that date; read from the listing index and the counts, never from the tickets.
EVENT_PLACES_QUERY = """
    SELECT d.date, d.event_id, d.name, e.capacity, coalesce(p.taken, 0)
    FROM event_dates d JOIN events e ON e.id = d.event_id
                       LEFT JOIN event_places p ON p.event_id = d.event_id AND p.date = d.date
    WHERE d.date >= ? AND d.date <= ?
    ORDER BY d.date, d.name, d.event_id"""
# The sales report's counts per day, event ('' for general entry) and currency ('' when
# unknown): every ticket sold, those voided and admitted, and the prices of those not void.
# Fills `daily_sales` from the tickets (used by a migration step of both backends: never
# change it).
DAILY_SALES_FROM_THE_TICKETS = """
    INSERT INTO daily_sales (date, event_id, currency, sold, voided, admitted, revenue)
    SELECT t.date, coalesce(CAST(t.event_id AS TEXT), ''), coalesce(t.currency, ''),
           count(*), count(t.voided_at), count(a.ticket_id),
           coalesce(sum(CASE WHEN t.voided_at IS NULL THEN t.price_minor END), 0)
    FROM tickets t LEFT JOIN admissions a ON a.ticket_id = t.id
    GROUP BY 1, 2, 3"""
COUNT_SALE = """
    INSERT INTO daily_sales (date, event_id, currency, sold, voided, admitted, revenue)
    VALUES (?, ?, ?, 1, 0, 0, ?)
    ON CONFLICT (date, event_id, currency) DO UPDATE
    SET sold = daily_sales.sold + 1, revenue = daily_sales.revenue + excluded.revenue"""
COUNT_VOID = """
    UPDATE daily_sales SET voided = voided + 1, revenue = revenue - ?
    WHERE date = ? AND event_id = ? AND currency = ?"""
COUNT_ADMISSION = """
    UPDATE daily_sales SET admitted = admitted + ?
    WHERE (date, event_id, currency) IN (
        SELECT date, coalesce(CAST(event_id AS TEXT), ''), coalesce(currency, '')
        FROM tickets WHERE id = ?)"""
COUNT_DOUBLE_ENTRY = """
    UPDATE daily_sales SET double_entries = double_entries + 1
    WHERE (date, event_id, currency) IN (
        SELECT date, coalesce(CAST(event_id AS TEXT), ''), coalesce(currency, '')
        FROM tickets WHERE id = ?)"""
SALES_QUERY = """
    SELECT date, event_id, currency, sold, voided, admitted, revenue, double_entries
    FROM daily_sales WHERE date >= ? AND date <= ?"""
# The same tickets counted by price category ('' before categories were kept) and by
# their order's channel ('' for a ticket sold alone), from the tickets on their index by
# date: no count is kept by category, so the window's tickets are read, only when asked
# (a year of 100,000 tickets: about 0.3 s on sqlite, where the kept counts take a few ms).
# Cast: PostgreSQL sums bigints as numeric.
SALES_BY_CATEGORY_AND_CHANNEL = """
    SELECT t.date, coalesce(CAST(t.event_id AS TEXT), ''), coalesce(t.currency, ''),
           coalesce(t.category, ''), coalesce(o.channel, ''), count(*), count(t.voided_at),
           CAST(coalesce(sum(CASE WHEN t.voided_at IS NULL THEN t.price_minor END), 0)
                AS BIGINT)
    FROM tickets t LEFT JOIN orders o ON o.id = t.order_id
    WHERE t.date >= ? AND t.date <= ?
    GROUP BY 1, 2, 3, 4, 5"""

# The door's list of a day's tickets (`door_list`) is sent whole, then as the changes since
# a cursor. Every change of a ticket's row in that list (a sale, an admission, an undo, a
# void, its event cancelled) takes the next number of the ticket's day from day_versions
# and writes it beside the ticket, in the change's own transaction; the cursor is the
# day's number as read with the list. A sequence or a clock would not do: on PostgreSQL
# concurrent transactions commit in another order than they drew their numbers, so a
# reader could see 8 committed while 7 is not yet, hand out cursor 8 and miss 7 for good.
# The day's row instead stays locked from the draw to the commit, so the next number of
# that day is drawn only after the previous one committed: numbers commit in order, and a
# snapshot that sees number n sees every change numbered below it. The price is that
# changes of one day take their numbers in turn, a row lock held for the few statements
# left in their transaction (the number is drawn last); sales and admissions of a day
# already take their turns on its counts.
DAY_CHANGE = """
    INSERT INTO day_versions (date, version) VALUES (?, 1)
    ON CONFLICT (date) DO UPDATE SET version = day_versions.version + 1
    RETURNING version"""
MARK_TICKET_CHANGED = """
    INSERT INTO ticket_versions (ticket_id, date, version) VALUES (?, ?, ?)
    ON CONFLICT (ticket_id) DO UPDATE SET version = excluded.version"""
MARK_EVENT_TICKETS_CHANGED = """
    INSERT INTO ticket_versions (ticket_id, date, version)
    SELECT id, date, ? FROM tickets WHERE event_id = ? AND date = ?
    ON CONFLICT (ticket_id) DO UPDATE SET version = excluded.version"""
# A ticket of an order paid at the desk (`payment` 'due') carries what its order costs (its
# tickets not void, on any day), for the door to say what to collect without the service.
DOOR_LIST_COLUMNS = """
    SELECT t.id, t.confirmation_code, t.event_id, e.name, t.entry_time, t.voided_at,
           e.cancelled IS TRUE, a.admitted_at, a.admitted_by,
           CASE WHEN o.status = 'pending' THEN o.expires_at END, t.order_id, o.payment,
           CASE WHEN o.payment = 'due' THEN
               (SELECT CAST(sum(d.price_minor) AS BIGINT) FROM tickets d
                WHERE d.order_id = t.order_id AND d.voided_at IS NULL) END, t.currency
    FROM tickets t LEFT JOIN events e ON e.id = t.event_id
                   LEFT JOIN admissions a ON a.ticket_id = t.id
                   LEFT JOIN orders o ON o.id = t.order_id"""
DOOR_LIST = DOOR_LIST_COLUMNS + " WHERE t.date = ?"
DOOR_LIST_SINCE = DOOR_LIST_COLUMNS + """
    JOIN ticket_versions v ON v.ticket_id = t.id
    WHERE v.date = ? AND v.version > ?"""


# The days an admin changed through the API, which override the config's rule.
DAY_COLUMNS = "date, closed, time_open, time_close, capacity, note, changed_at, changed_by"
SET_DAY = f"""
    INSERT INTO changed_days ({DAY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (date) DO UPDATE SET closed = excluded.closed, time_open = excluded.time_open,
        time_close = excluded.time_close, capacity = excluded.capacity, note = excluded.note,
        changed_at = excluded.changed_at, changed_by = excluded.changed_by"""
CHANGED_DAYS = f"""
    SELECT {DAY_COLUMNS} FROM changed_days WHERE date >= ? AND date <= ? ORDER BY date"""
# Locks the day's general entry count (creating it at 0) as a sale's TAKE_GENERAL_PLACE
# does: a change of the day and a sale of it on PostgreSQL come in turn.
LOCK_GENERAL_PLACES = """
    INSERT INTO general_places (date, taken) VALUES (?, 0)
    ON CONFLICT (date) DO UPDATE SET taken = general_places.taken"""
# The tickets a change of the day may concern: those that still hold a place that day.
TICKETS_OF_THE_DAY = TICKETS_READ_BACK + """
    WHERE t.date = ? AND t.voided_at IS NULL AND e.cancelled IS NOT TRUE
    ORDER BY t.created_at, t.id"""
# A voided ticket gives its places (its `persons`) back.
FREE_GENERAL_PLACE = "UPDATE general_places SET taken = taken - ? WHERE date = ?"
FREE_EVENT_PLACE = "UPDATE event_places SET taken = taken - ? WHERE event_id = ? AND date = ?"
FREE_SLOT_PLACE = "UPDATE slot_places SET taken = taken - ? WHERE date = ? AND entry_time = ?"


# What a place is, in the order sales take them: a day's general entry, one of its entry
# slots, an event's date.
GENERAL, SLOT, EVENT = 0, 1, 2

# Holds, exact without a background job. A pending order's tickets are inserted with their
# places taken in the kept counts, as a sale's are; while the hold lasts they count against
# every capacity. Once its `expires_at` has passed, the first write that takes or frees
# places (a sale, an order, an order's confirmation, cancellation or void) finds it expired,
# at its start: before it takes any other lock it marks the order 'expired', voids its
# tickets and gives their places back (`_release_expired_holds`), in its own transaction,
# so its own count already sees them free (a write that fails rolls the release back with
# it, and the next one does it again). On PostgreSQL the releases take one advisory lock in turn, taken
# only when an expired hold is seen, and free the places in the order sales take them: a
# release and a sale never wait for each other in a circle. A read of the places between
# the hold's end and that write subtracts the expired holds' places not given back yet
# (`EXPIRED_HOLDS_HELD`), so reads and writes agree on every place at every moment. That
# read starts from the few pending orders (their partial index), then their tickets: the
# CROSS JOIN keeps sqlite from starting with every ticket of the window instead (about
# 8,500 of them for 31 days at 100,000 tickets a year, on every availability read).
EXPIRED_HOLD_SEEN = """
    SELECT 1 FROM orders WHERE status = 'pending' AND expires_at <= ? LIMIT 1"""
EXPIRE_HOLDS = """
    UPDATE orders SET status = 'expired' WHERE status = 'pending' AND expires_at <= ?
    RETURNING id"""
EXPIRED_HOLDS_HELD = """
    SELECT t.date, CAST(t.event_id AS TEXT), t.entry_time, t.type, sum(t.persons)
    FROM orders o CROSS JOIN tickets t
    WHERE o.status = 'pending' AND o.expires_at <= ? AND t.order_id = o.id
      AND t.voided_at IS NULL
      AND t.date >= ? AND t.date <= ?
    GROUP BY 1, 2, 3, 4"""
ORDER_COLUMNS = ("id, code, status, channel, payment, email, phone, created_at, expires_at, "
                 "created_by, page_token")
# What a read adds to the columns an order is written with: what became of it later.
ORDER_READ_BACK = ORDER_COLUMNS + ", void_reason, paid_at"
ORDER_TICKETS = TICKETS_READ_BACK + """
    WHERE t.order_id = ? ORDER BY t.date, t.event_id, t.entry_time, t.category, t.id"""


def places_needed(tickets):
    """{(date, GENERAL | SLOT | EVENT, entry time or event id or ''): persons} that
    `tickets` take: a general ticket its day and its slot if it has one, an event ticket its
    event's date, each its "persons" (1 when absent)."""
    needed = {}
    for ticket in tickets:
        day, persons = ticket["ticketDate"], ticket.get("persons", 1)
        if ticket["ticketType"] == "event":
            places = [(day, EVENT, ticket["eventId"])]
        else:
            places = [(day, GENERAL, "")]
            if ticket.get("entryTime") is not None:
                places.append((day, SLOT, ticket["entryTime"]))
        for place in places:
            needed[place] = needed.get(place, 0) + persons
    return needed


def order_record(row, tickets, now):
    """An order as read back: a pending order whose hold ended reads 'expired'."""
    (order_id, code, status, channel, payment, email, phone, created_at, expires_at,
     created_by, page_token, void_reason, paid_at) = row
    if status == "pending" and expires_at <= now:
        status = "expired"
    return {"orderId": order_id, "orderCode": code, "status": status, "channel": channel,
            "payment": payment, "email": email, "phone": phone, "createdAt": created_at,
            "expiresAt": expires_at, "createdBy": created_by, "pageToken": page_token,
            "voidReason": void_reason, "paidAt": paid_at, "tickets": tickets}


def new_page():
    """A fresh page token (128 random bits, URL-safe: 22 characters) and its digest."""
    token = secrets.token_urlsafe(16)
    return token, page_digest(token)


def page_digest(token):
    """The digest a page token is kept and found by (see TICKET_BY_PAGE)."""
    return hashlib.sha256(token.encode()).hexdigest()


def pages_for_earlier_sales(conn):
    """A page token for every ticket and order sold before schema step 23, made in its
    migration so that every ticket has its link from then on and reads stay reads (used by
    that step of both backends: never change it)."""
    for table in ("tickets", "orders"):
        unpaged = conn.execute(f"SELECT id FROM {table} WHERE page_digest IS NULL").fetchall()
        conn.executemany(f"UPDATE {table} SET page_token = ?, page_digest = ? WHERE id = ?",
                         [(*new_page(), row[0]) for row in unpaged])

# The admissions of a window's tickets per quarter of an hour in UTC (admitted_at is RFC 3339
# UTC text, "2027-10-01T09:17:03Z": its first 13 characters are the hour, the next two after
# the colon its minute); on the tickets' date index.
ARRIVALS_QUERY = """
    SELECT substr(a.admitted_at, 1, 13),
           CAST(substr(a.admitted_at, 15, 2) AS INTEGER) / 15 * 15 AS quarter, count(*)
    FROM tickets t JOIN admissions a ON a.ticket_id = t.id
                   LEFT JOIN events e ON e.id = t.event_id
    WHERE t.date >= ? AND t.date <= ? AND t.voided_at IS NULL AND e.cancelled IS NOT TRUE
    GROUP BY 1, 2 ORDER BY 1, 2"""

# The outbox (see the step that makes it): a row per message, queued in the transaction of
# what caused it.
MESSAGE_COLUMNS = ("id, kind, target, payload, ticket_id, order_id, state, attempts, "
                   "next_attempt_at, last_answer, created_at, sent_at, webhook_id")
QUEUE_MESSAGE = ("INSERT INTO outbox (id, kind, target, payload, ticket_id, order_id, state, "
                 "next_attempt_at, created_at) VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?)")
# Due: queued and its time come, or sending with its lease ended (a sender died).
CLAIM_MESSAGES = f"""
    UPDATE outbox SET state = 'sending', attempts = attempts + 1, next_attempt_at = ?
    WHERE id IN (SELECT id FROM outbox
                 WHERE state IN ('queued', 'sending') AND next_attempt_at <= ?
                 ORDER BY next_attempt_at LIMIT ? {{claim_lock}})
    RETURNING {MESSAGE_COLUMNS}"""


EMPTY_BREAKDOWN = {"categories": [], "channels": []}


def sales_breakdown(rows):
    """{(date, event id or '', currency or ''): {"categories": [...], "channels": [...]}}
    from SALES_BY_CATEGORY_AND_CHANNEL's rows: each category's and each channel's "sold",
    "void" and "revenue", by name ('' as None)."""
    counts = {}
    for day, event_id, currency, category, channel, sold, voided, revenue in rows:
        row = counts.setdefault((day, event_id, currency), {"categories": {}, "channels": {}})
        for kind, name in (("categories", category), ("channels", channel)):
            each = row[kind].setdefault(name, [0, 0, 0])
            each[0], each[1], each[2] = each[0] + sold, each[1] + voided, each[2] + revenue
    return {key: {kind: [{"category" if kind == "categories" else "channel": name or None,
                          "sold": sold, "void": voided, "revenue": price_value(revenue)}
                         for name, (sold, voided, revenue) in sorted(by_name.items())]
                  for kind, by_name in row.items()}
            for key, row in counts.items()}


def event_record(row):
    event_id, name, location, description, dates, price, capacity, prices = row[:8]
    event = {"eventId": event_id, "name": name, "location": location,
             "eventDescription": description, "dates": json.loads(dates),
             "price": price_value(price)}
    if capacity is not None:
        event["capacity"] = capacity
    if prices:
        event["prices"] = {name: price_value(minor) for name, minor in json.loads(prices).items()}
    return event


def prices_text(prices):
    """An event's category prices as stored: JSON of hundredths; None when it has none."""
    return json.dumps({name: minor_units(price) for name, price in prices.items()}) \
        if prices else None


def changed_event_record(row):
    """An event with its `cancelled` mark (at `CANCELLED_COLUMN`), shown only when it is."""
    event = event_record(row)
    return {**event, "cancelled": True} if row[CANCELLED_COLUMN] else event


def day_record(row):
    day, closed, time_open, time_close, capacity, note, changed_at, changed_by = row
    return {"date": day, "closed": bool(closed), "timeOpen": time_open,
            "timeClose": time_close, "capacity": capacity, "note": note,
            "changedAt": changed_at, "changedBy": changed_by}


def ticket_record(row):
    (ticket_id, kind, date, event_id, code, email, phone, price, currency, event_name,
     cancelled, admitted_at, admitted_by, voided_at, entry_time, category, page_token,
     order_code, held_until, void_reason, order_id, payment) = row
    return {"ticketId": ticket_id, "ticketType": kind, "ticketDate": date, "eventId": event_id,
            "confirmationCode": code, "email": email, "phone": phone,
            "price": None if price is None else price_value(price), "currency": currency,
            "eventName": event_name, "cancelled": bool(cancelled),
            "admittedAt": admitted_at, "admittedBy": admitted_by, "voidedAt": voided_at,
            "entryTime": entry_time, "category": category, "pageToken": page_token,
            "orderCode": order_code, "heldUntil": held_until, "voidReason": void_reason,
            "orderId": order_id, "payment": payment}


def message_record(row):
    (message_id, kind, target, payload, ticket_id, order_id, state, attempts, next_attempt_at,
     last_answer, created_at, sent_at, webhook_id) = row
    message = {"messageId": message_id, "kind": kind, "target": target,
               "payload": json.loads(payload), "ticketId": ticket_id, "orderId": order_id,
               "state": state, "attempts": attempts, "nextAttemptAt": next_attempt_at,
               "lastAnswer": last_answer, "createdAt": created_at, "sentAt": sent_at}
    if kind == WEBHOOK_MESSAGE:
        message["webhookId"] = webhook_id
    return message


# Webhooks: the receivers, and a delivery queued to one of them (see the step that makes
# them). A delivery's id is its `webhook-id`, the same on every attempt.
WEBHOOK_COLUMNS = "id, url, secret, events, created_at, disabled_at, disabled_why"
QUEUE_DELIVERY = ("INSERT INTO outbox (id, kind, target, payload, webhook_id, state, "
                  "next_attempt_at, created_at) VALUES (?, ?, ?, ?, ?, 'queued', ?, ?)")


def webhook_record(row):
    webhook_id, url, secret, events, created_at, disabled_at, disabled_why = row
    return {"webhookId": webhook_id, "url": url, "secret": secret,
            "events": json.loads(events), "createdAt": created_at,
            "disabledAt": disabled_at, "disabledWhy": disabled_why}


def _prices_to_round(conn):
    """'NAME (ID) PRICE to ROUNDED' for each event whose price (a float before schema step
    PRICES_STEP) has more than 2 decimals, rounded as that step's SQL rounds it; a price
    such as 0.29, whose float is a hair off 29 hundredths, is not one."""
    return [f"{name!r} ({event_id}) {price!r} to {price_value(int(hundredths))}"
            for event_id, name, price, hundredths in conn.execute(
                "SELECT id, name, price, round(price * 100) FROM events "
                "WHERE abs(price * 100 - round(price * 100)) > 0.000001 ORDER BY name, id")]


def run_step(conn, step):
    """Run a migration step's entries in order: each is SQL text, or a function of the
    connection for a change plain SQL cannot state in that dialect."""
    for entry in step:
        if callable(entry):
            entry(conn)
        else:
            conn.execute(entry)


def step_fingerprint(step):
    """The sha256 of a migration step's entries (a function's by its source), as
    storage/migrations.lock records it: it changes whenever the step does."""
    texts = [inspect.getsource(entry) if callable(entry) else entry for entry in step]
    return hashlib.sha256("\n;\n".join(texts).encode()).hexdigest()


def _kind_first(schema_object):
    kind, table, name = schema_object
    return ["table", "column", "index"].index(kind), table, name


def one_line(error):
    """A driver's message without its line breaks: it ends up in logs and startup errors."""
    return " ".join(str(error).split())


def utc_timestamp():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Outage:
    """The database failing: since when (UTC, to the second) and its latest one-line reason."""

    since: str
    reason: str


class SQLStore(Store):
    """The interface implemented once; subclasses fill in the dialect part below."""

    MIGRATIONS = []  # steps, each a list of statements (see `run_step`), applied in order
    # Row locks for the read that precedes a write. sqlite needs none: BEGIN IMMEDIATE
    # already runs one writer at a time.
    SHARE_LOCK = ""  # the event stays as read until the ticket sold for it commits
    UPDATE_LOCK = ""  # one change of an event at a time
    CLAIM_LOCK = ""  # outbox rows another sender is claiming are skipped, not waited for
    NO_LIMIT = None  # what a LIMIT clause takes for none (PostgreSQL: NULL)
    # The database's clock as `events.changed_at` keeps it (UTC, to the millisecond), read
    # when the statement runs: after the change counter's lock, so in the order of commits.
    CHANGE_TIME = ""
    # Rows (kind, table, name) for every table, column and index of the current schema.
    SCHEMA_OBJECTS = ""
    OUTAGE_ERRORS = ()  # driver errors meaning the database cannot be used right now
    BUG_ERRORS = ()  # subclasses of those that are the service's bugs all the same
    # Replaced, never changed in place, by whichever thread sees a failure or its end.
    _outage = None  # the current outage, None while writes succeed
    _next_probe = 0.0  # time.monotonic() from which a health check tries a write

    # -- the dialect part -----------------------------------------------------------------

    def _connection(self):
        """A context manager giving a connection for reads."""
        raise NotImplementedError

    def _transaction(self):
        """A context manager giving a connection inside a write transaction, committed when
        the block ends and rolled back if it raises."""
        raise NotImplementedError

    def _snapshot(self):
        """A context manager giving a connection inside a read-only transaction: all its
        statements see the database as it was at the first."""
        raise NotImplementedError

    def _read_schema_version(self, conn):
        raise NotImplementedError

    def _record_schema_version(self, conn, version):
        raise NotImplementedError

    def _lock_schema(self, conn):
        """Hold off other instances migrating the same database until this one commits."""

    def _lock_buyer(self, conn, user):
        """Hold off other sales to `user` until this transaction ends (sqlite: its one
        writer at a time already does)."""

    def _lock_holds(self, conn):
        """Hold off other releases of expired holds until this transaction ends (sqlite: its
        one writer at a time already does)."""

    def _lock_event(self, conn, event_id, change):
        """Take the event's turn until this transaction ends: shared by its sales, alone by a
        `change` of it, which waits only for the sales under way, never for later ones
        (sqlite: its one writer at a time already does)."""

    def _forget_connection(self):
        """After an outage: drop what cannot be trusted, so the next call reconnects."""

    def _scrub_files(self):
        """Clear erased values from the database's files; False if it cannot finish now."""
        return True

    def _describe(self):
        """How the database is named in messages."""
        raise NotImplementedError

    def _scratch_database(self):
        """A context manager giving a connection to an empty schema of this dialect, thrown
        away afterwards: `schema_findings` builds a new database's schema there."""
        raise NotImplementedError

    def _diagnose(self, reason):
        """A better reason for the log than `reason`, the first failure of an outage."""
        return reason

    # -- connections, failures and migrations ---------------------------------------------

    def _reading(self):
        return self._failures_as_unavailable(self._connection)

    def _reading_one_snapshot(self):
        return self._failures_as_unavailable(self._snapshot)

    def _writing(self):
        return self._failures_as_unavailable(self._transaction, writes=True)

    @contextmanager
    def _failures_as_unavailable(self, connecting, writes=False):
        """The connection `connecting()` gives, where the database's own failures (gone,
        locked, read-only, full) become `Unavailable` and are remembered as an outage;
        domain errors and the service's bugs pass unchanged. A write that commits ends the
        outage. One context manager, not two nested: every request's work passes through
        it."""
        try:
            with connecting() as conn:
                yield conn
        except Unavailable as error:
            self._failed(str(error))
            raise
        except (StorageError, *self.BUG_ERRORS):
            raise
        except self.OUTAGE_ERRORS as error:
            self._forget_connection()
            self._failed(one_line(error))
            raise Unavailable(one_line(error)) from error
        if writes and self._outage is not None:
            self._recovered()

    def _failed(self, reason):
        """Remember the outage; the first failure of one is logged, and has the next
        health check try a write at once."""
        reason = reason.removeprefix(f"{self._describe()}: ")  # the log names the database
        with OUTAGE_LOCK:
            if self._outage is not None:
                self._outage = Outage(self._outage.since, reason)
                return
            self._outage = Outage(utc_timestamp(), reason)
            self._next_probe = 0.0
        log.error("database unavailable: %s: %s", self._describe(), self._diagnose(reason))

    def _recovered(self):
        with OUTAGE_LOCK:
            if self._outage is None:
                return
            self._outage = None
        log.warning("database available again: %s", self._describe())

    def health(self):
        summary = None
        try:
            self._check_file()
            summary = self.outbox_summary()  # the read that checks, and what is reported
        except Unavailable as error:
            self._failed(str(error))  # whatever the check failed on, remembered
        else:
            self._probe_now_and_then()
        outage = self._outage
        if outage is not None:
            raise Unavailable(f"{outage.reason} (since {outage.since})")
        return summary

    def _check_file(self):
        """What a backend checks before its first read of a check (see SQLiteStore's)."""

    def _probe_now_and_then(self):
        """A small write, at most every PROBE_EVERY seconds (every PROBE_EVERY_IN_OUTAGE in
        an outage); its failure or success is remembered as any write's."""
        now = time.monotonic()
        if now < self._next_probe:
            return
        in_outage = self._outage is not None
        self._next_probe = now + (PROBE_EVERY_IN_OUTAGE if in_outage else PROBE_EVERY)
        try:
            with self._writing() as conn:
                conn.execute(WRITE_PROBE, (utc_timestamp(),))
        except Unavailable:
            pass  # remembered, and answered by health()

    def schema_version(self):
        with self._reading() as conn:
            return self._read_schema_version(conn)

    def _open_schema(self, read_only, migrate):
        """Give a new database this version's schema and migrate an older one when allowed;
        `SchemaBehind` when not. A read-only store never migrates; told not to, it opens an
        older schema as it is, to be inspected (but not an empty database)."""
        version = self._checked_schema_version()
        if version == len(self.MIGRATIONS) or (read_only and not migrate and version > 0):
            return
        if read_only or (version > 0 and not migrate):
            raise SchemaBehind(self._behind(version), version)
        self._migrate()

    def _behind(self, version):
        return (f"{self._describe()}: database schema version {version}, this service uses "
                f"{len(self.MIGRATIONS)}; migrate it with 'museum migrate' or 'museum serve "
                f"--migrate'")

    def _migrate(self):
        """Apply the missing steps in one transaction. The version is read first without a
        lock, so an up-to-date database costs a starting instance no write lock."""
        if self._checked_schema_version() == len(self.MIGRATIONS):
            return
        with self._writing() as conn:
            self._lock_schema(conn)
            version = self._read_schema_version(conn)  # another instance may have migrated
            rounded = _prices_to_round(conn) if 0 < version < PRICES_STEP else []
            for number, step in enumerate(self.MIGRATIONS[version:], start=version + 1):
                run_step(conn, step)
                self._record_schema_version(conn, number)
        if rounded:  # said once the migration that rounded them has committed
            log.warning("%s: schema step %d keeps prices in whole hundredths: rounded the "
                        "prices with more than 2 decimals (%d): %s", self._describe(),
                        PRICES_STEP, len(rounded), "; ".join(rounded))

    def _checked_schema_version(self):
        version = self.schema_version()
        if version > len(self.MIGRATIONS):
            raise SchemaTooNew(
                f"{self._describe()}: database schema version {version} is newer than this "
                f"service supports ({len(self.MIGRATIONS)}); upgrade the service")
        return version

    def schema_findings(self, older_ok=False):
        with self._reading() as conn:
            version = self._read_schema_version(conn)
            present = self._schema_objects(conn)
        with self._failures_as_unavailable(self._scratch_database) as scratch:
            for step in self.MIGRATIONS[:version]:
                run_step(scratch, step)
            expected = self._schema_objects(scratch)
        tables = {table for kind, table, _ in present if kind == "table"}
        missing = [f"{self._describe()}: missing {kind} {name}, which a new database at "
                   f"schema version {version} has"
                   for kind, table, name in sorted(expected - present, key=_kind_first)
                   if kind == "table" or table in tables]  # a missing table's line will do
        behind = version < len(self.MIGRATIONS) and not older_ok
        return ([self._behind(version)] if behind else []) + missing

    def _schema_objects(self, conn):
        """{(kind, table, name)} for the tables, columns (named table.column) and indexes of
        the schema `conn` works in."""
        return set(conn.execute(self.SCHEMA_OBJECTS).fetchall())

    # -- events ---------------------------------------------------------------------------

    def check(self):
        self._check_file()
        with self._reading() as conn:
            conn.execute("SELECT count(*) FROM settings").fetchone()

    def totals(self):
        with self._reading() as conn:
            events, tickets = conn.execute(
                "SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM tickets)").fetchone()
        return {"events": events, "tickets": tickets}

    def create_event(self, event):
        self.create_events([event])
        return event

    def create_events(self, events):
        with self._writing() as conn:
            self._count_event_change(conn)
            for event in events:
                conn.execute(
                    "INSERT INTO events (id, name, location, description, dates, price_minor, "
                    "capacity, prices, changed_at) "
                    f"VALUES (?, ?, ?, ?, ?, ?, ?, ?, {self.CHANGE_TIME})",
                    (event["eventId"], event["name"], event["location"],
                     event["eventDescription"], json.dumps(event["dates"]),
                     minor_units(event["price"]), event.get("capacity"),
                     prices_text(event.get("prices"))))
                self._index_dates(conn, event)
                self._announce(conn, "event.published",
                               self._listed_event(conn, event["eventId"]), utc_timestamp())

    def get_event(self, event_id, cancelled_too=False):
        if not cancelled_too:
            with self._reading() as conn:
                return self._listed_event(conn, event_id)
        with self._reading() as conn:
            row = conn.execute(f"SELECT {EVENT_COLUMNS}, e.cancelled IS TRUE FROM events e "
                               "WHERE e.id = ?", (event_id,)).fetchone()
        if row is None:
            raise NotFound(event_id)
        return changed_event_record(row)

    def list_events(self, start, end, offset, limit):
        # One snapshot: a change committed between the page and the count would make the
        # total disagree with the page it is sent with.
        with self._reading_one_snapshot() as conn:
            rows = conn.execute(LIST_QUERY, (start, end or LAST_DATE, start, limit, offset))
            page = [event_record(row) for row in rows.fetchall()]
            if end is None:
                total = conn.execute(OPEN_COUNT_QUERY, (start,)).fetchone()[0]
            else:
                total = conn.execute(COUNT_QUERY, (start, end)).fetchone()[0]
        return page, total

    def list_changed_events(self, since, offset, limit):
        with self._reading_one_snapshot() as conn:  # the total agrees with the page
            rows = conn.execute(CHANGES_QUERY, (since, limit, offset)).fetchall()
            total = conn.execute(CHANGES_COUNT_QUERY, (since,)).fetchone()[0]
        return [{**changed_event_record(row), "updatedAt": row[-1]} for row in rows], total

    def events_version(self):
        with self._reading() as conn:
            return conn.execute("SELECT version FROM event_changes").fetchone()[0]

    def update_event(self, event_id, changes):
        with self._writing() as conn:
            self._count_event_change(conn)
            self._lock_event(conn, event_id, change=True)
            event = self._listed_event(conn, event_id, self.UPDATE_LOCK)
            sold = self._sold_by_date(conn, event_id)
            if "dates" in changes:
                self._refuse_removing_sold_dates(sold, set(changes["dates"]))
            if changes.get("capacity") is not None:  # None: unlimited again
                self._refuse_capacity_below_sold(sold, changes["capacity"])
            if "dates" in changes or "name" in changes:  # what the listing index holds
                self._unindex_dates(conn, event_id, event["dates"])
                self._index_dates(conn, {**event, **changes})
            event.update(changes)
            conn.execute(
                "UPDATE events SET name = ?, location = ?, description = ?, dates = ?, "
                "price_minor = ?, capacity = ?, prices = ?, "
                f"changed_at = {self.CHANGE_TIME} WHERE id = ?",
                (event["name"], event["location"], event["eventDescription"],
                 json.dumps(event["dates"]), minor_units(event["price"]),
                 event.get("capacity"), prices_text(event.get("prices")), event_id))
            if event.get("capacity") is None:  # unlimited: absent, as events read back show it
                event.pop("capacity", None)
            if not event.get("prices"):  # none: absent, as events read back show it
                event.pop("prices", None)
            self._announce(conn, "event.changed", event, utc_timestamp())
        return event

    def cancel_event(self, event_id):
        with self._writing() as conn:
            self._count_event_change(conn)
            self._lock_event(conn, event_id, change=True)
            # On PostgreSQL the update waits for sales holding the row FOR SHARE, and a
            # concurrent cancel finds the row cancelled once it may look.
            row = conn.execute(
                f"UPDATE events SET cancelled = true, changed_at = {self.CHANGE_TIME} "
                "WHERE id = ? AND NOT cancelled RETURNING dates", (event_id,)).fetchone()
            if row is None:
                raise NotFound(event_id)
            self._unindex_dates(conn, event_id, json.loads(row[0]))
            cancelled = conn.execute(f"SELECT {EVENT_COLUMNS}, true FROM events e "
                                     "WHERE e.id = ?", (event_id,)).fetchone()
            self._announce(conn, "event.cancelled", changed_event_record(cancelled),
                           utc_timestamp())
            for day, _ in self._sold_by_date(conn, event_id):  # in date order, as all take them
                version = conn.execute(DAY_CHANGE, (day,)).fetchone()[0]
                conn.execute(MARK_EVENT_TICKETS_CHANGED, (version, event_id, day))

    @staticmethod
    def _sold_by_date(conn, event_id):
        """[(date, places taken)] of the event's dates with tickets, in date order. Sales
        hold the event's row, so no ticket is sold between this count and the change it
        guards."""
        return conn.execute("SELECT date, taken FROM event_places WHERE event_id = ? "
                            "AND taken > 0 ORDER BY date", (event_id,)).fetchall()

    @staticmethod
    def _refuse_removing_sold_dates(sold, kept):
        removed = {day: count for day, count in sold if day not in kept}
        if removed:
            raise DatesSold(removed)

    @staticmethod
    def _refuse_capacity_below_sold(sold, capacity):
        over = {day: count for day, count in sold if count > capacity}
        if over:
            raise CapacityBelowSold(over)

    @staticmethod
    def _count_event_change(conn):
        """Bump the events version inside the transaction of the change it counts."""
        conn.execute("UPDATE event_changes SET version = version + 1")

    @staticmethod
    def _listed_event(conn, event_id, lock=""):
        row = conn.execute(
            f"SELECT {EVENT_COLUMNS} FROM events e WHERE e.id = ? AND NOT e.cancelled {lock}",
            (event_id,)).fetchone()
        if row is None:
            raise NotFound(event_id)
        return event_record(row)

    @staticmethod
    def _index_dates(conn, event):
        """List the event: its dates in the listing index, its last date in the counts."""
        conn.executemany("INSERT INTO event_dates (date, name, event_id) VALUES (?, ?, ?)",
                         [(day, event["name"], event["eventId"]) for day in event["dates"]])
        conn.execute(COUNT_LAST_DATE, (event["dates"][-1], 1))

    @staticmethod
    def _unindex_dates(conn, event_id, dates):
        conn.executemany("DELETE FROM event_dates WHERE date = ? AND event_id = ?",
                         [(day, event_id) for day in dates])
        conn.execute(COUNT_LAST_DATE, (dates[-1], -1))

    # -- tickets --------------------------------------------------------------------------

    def create_ticket(self, ticket, idempotency=None, general_capacity=None,
                      slot_capacity=None, purchase_limit=None, messages=()):
        with self._writing() as conn:
            # The key is claimed before the sale: a retry on another instance waits on it
            # until this transaction ends, then replays, and a failed sale frees the key.
            if idempotency is not None and not self._claim(conn, idempotency, ticket):
                return self._replayed(conn, *idempotency), False
            released = self._release_expired_holds(conn, ticket.get("soldAt"))
            if purchase_limit is not None:
                self._refuse_past_purchase_limit(conn, ticket["soldBy"], *purchase_limit)
            sold = self._sell(conn, [ticket], None, general_capacity, slot_capacity)
            self._mark_all_changed(conn, released + [(ticket["ticketId"],
                                                      ticket["ticketDate"])])
            self._queue(conn, messages)
        return sold[0], True

    def _sell(self, conn, tickets, order_id, general_capacity, slot_capacity):
        """Take the places of `tickets` (each its "persons", 1 when absent) and insert them
        into order `order_id` (None: sold alone); return them as read back (for a ticket
        sold alone: an order's are read back with their order). `SoldOut`,
        `DayClosed`, `DateNotOffered` or `NotFound` (an event) before anything is kept."""
        events = self._events_sold(conn, tickets)
        self._take_places(conn, places_needed(tickets), events, general_capacity,
                          slot_capacity)
        sold = []
        for ticket in tickets:
            event = events.get(ticket.get("eventId"))
            price = ticket.get("price") if event is None else \
                event.get("prices", {}).get(ticket.get("category"), event["price"])
            page_token = self._insert_ticket(conn, ticket, order_id, price)
            # The row as inserted, with the name of an event that stays locked until the
            # commit.
            sold.append(ticket_record((
                ticket["ticketId"], ticket["ticketType"], ticket["ticketDate"],
                ticket.get("eventId"), ticket["confirmationCode"], ticket["email"],
                ticket.get("phone"), minor_units(price), ticket["currency"],
                event and event["name"], False, None, None, None, ticket.get("entryTime"),
                ticket.get("category"), page_token, None, None, None, order_id, None)))
        return sold

    def _events_sold(self, conn, tickets):
        """{event id: event} of the tickets' events, each locked for the sale in the order of
        their ids (so two sales never wait for each other in a circle) and read as it
        stands; `DateNotOffered` when a ticket's date is not one of its event's."""
        events = {}
        for event_id in sorted({ticket["eventId"] for ticket in tickets
                                if ticket["ticketType"] == "event"}):
            self._lock_event(conn, event_id, change=False)
            events[event_id] = self._listed_event(conn, event_id, self.SHARE_LOCK)
        for ticket in tickets:
            event = events.get(ticket.get("eventId"))
            if event is not None and ticket["ticketDate"] not in event["dates"]:
                raise DateNotOffered(event["dates"])
        return events

    @staticmethod
    def _insert_ticket(conn, ticket, order_id, price):
        """Insert the ticket with a new page token, which is returned. A ticket without its
        buyer's email (an order at the desk) keeps '', as an erased contact does."""
        page_token, digest = new_page()
        inserted = conn.execute(
            "INSERT INTO tickets (id, type, date, event_id, confirmation_code, email, "
            "phone, price_minor, currency, entry_time, sold_by, sold_at, category, order_id, "
            "persons, page_token, page_digest) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (confirmation_code) DO NOTHING",
            (ticket["ticketId"], ticket["ticketType"], ticket["ticketDate"],
             ticket.get("eventId"), ticket["confirmationCode"], ticket["email"] or "",
             ticket.get("phone"), minor_units(price), ticket["currency"],
             ticket.get("entryTime"), ticket.get("soldBy"), ticket.get("soldAt"),
             ticket.get("category"), order_id, ticket.get("persons", 1), page_token, digest))
        if inserted.rowcount == 0:
            raise DuplicateCode(ticket["confirmationCode"])
        conn.execute(COUNT_SALE, (ticket["ticketDate"], ticket.get("eventId") or "",
                                  ticket["currency"], minor_units(price)))
        return page_token

    def _refuse_past_purchase_limit(self, conn, user, most, since, buying=1):
        """`LimitReached` when `user`, having bought tickets after `since`, would pass `most`
        with `buying` more; the user's sales are held off meanwhile, so two at once are
        counted one after the other."""
        self._lock_buyer(conn, user)
        bought, first = conn.execute(PURCHASES_SINCE, (user, since)).fetchone()
        if bought + buying > most:
            raise LimitReached(first)

    @staticmethod
    def _take_places(conn, needed, events, general_capacity, slot_capacity):
        """Count `needed` ({place: persons}, see `places_needed`) in the kept counts, in the
        order of the places (a void and an expired hold free them in the same order, so
        two writes never wait for each other in a circle); `SoldOut` past a capacity: the
        day's (as set through `set_day`, read once its count holds the lock: `DayClosed`,
        or its capacity instead of `general_capacity`), a slot's, an event date's."""
        for (day, kind, name), persons in sorted(needed.items()):
            if kind == GENERAL:
                taken = conn.execute(TAKE_GENERAL_PLACE, (day, persons)).fetchone()[0]
                changed = conn.execute("SELECT closed, capacity FROM changed_days "
                                       "WHERE date = ?", (day,)).fetchone()
                if changed and changed[0]:
                    raise DayClosed(day)
                capacity = changed[1] if changed and changed[1] is not None \
                    else general_capacity.get(day) if isinstance(general_capacity, dict) \
                    else general_capacity
                if capacity is not None and taken > capacity:
                    raise SoldOut(day)
            elif kind == SLOT:
                taken = conn.execute(TAKE_SLOT_PLACE, (day, name, persons)).fetchone()[0]
                if slot_capacity is not None and taken > slot_capacity:
                    raise SoldOut(day, entry_time=name)
            else:
                taken = conn.execute(TAKE_EVENT_PLACE, (name, day, persons)).fetchone()[0]
                capacity = events[name].get("capacity")
                if capacity is not None and taken > capacity:
                    raise SoldOut(day, name)

    @staticmethod
    def _claim(conn, idempotency, ticket):
        """Take the key for this ticket; False when another sale holds it."""
        claimed = conn.execute(
            "INSERT INTO idempotency_keys (user_name, key, fingerprint, ticket_id) "
            "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING", (*idempotency, ticket["ticketId"]))
        return claimed.rowcount == 1

    def replayed_ticket(self, user, key, fingerprint):
        with self._reading() as conn:
            return self._replayed(conn, user, key, fingerprint)

    @classmethod
    def _replayed(cls, conn, user, key, fingerprint):
        row = cls._keyed(conn, "SELECT fingerprint, ticket_id FROM idempotency_keys "
                         "WHERE user_name = ? AND key = ?", user, key, fingerprint)
        if row is None:
            return None
        return ticket_record(conn.execute(TICKET_BY_ID, (row[1],)).fetchone())

    @staticmethod
    def _keyed(conn, query, user, key, fingerprint):
        """The row `query` finds for `user`'s Idempotency-Key `key` (its fingerprint first),
        None if the key is new; IdempotencyConflict if it came with another request. Sales
        and scans keep their keys apart, each with what it made."""
        row = conn.execute(query, (user, key)).fetchone()
        if row is not None and row[0] != fingerprint:
            raise IdempotencyConflict(key)
        return row

    def get_ticket(self, ticket_id):
        with self._reading() as conn:
            return self._ticket(conn, TICKET_BY_ID, ticket_id)

    @staticmethod
    def _ticket(conn, query, key):
        row = conn.execute(query, (key,)).fetchone()
        if row is None:
            raise NotFound(key)
        return ticket_record(row)

    def void_ticket(self, ticket_id, voided_at, reason=None):
        with self._writing() as conn:
            # Of two voids at once, the second waits for the first's row lock (PostgreSQL)
            # and then finds the ticket void: one place is given back.
            voided = self._void_tickets(conn, "id = ?", (ticket_id,), voided_at, reason)
            if not voided:
                self._ticket(conn, TICKET_BY_ID, ticket_id)  # NotFound, or void already
                return False
            self._mark_all_changed(conn, voided)
            self._announce(conn, "ticket.voided", {"ticketId": ticket_id,
                                                   "voidedAt": voided_at}, voided_at)
        return True

    @staticmethod
    def _void_tickets(conn, which, params, voided_at, reason=None):
        """Void the tickets not void yet that `which` (SQL over `tickets`) finds, keeping
        the staff's `reason` (None: none given), give their places back and count them
        void in the report; [(ticket id, date)] of those voided, for `_mark_all_changed`."""
        rows = conn.execute(f"UPDATE tickets SET voided_at = ?, void_reason = ? WHERE {which} "
                            "AND voided_at IS NULL RETURNING id, event_id, date, price_minor, "
                            "currency, entry_time, persons",
                            (voided_at, reason, *params)).fetchall()
        freed = places_needed({"ticketType": "general" if event_id is None else "event",
                               "eventId": event_id, "ticketDate": day,
                               "entryTime": entry_time, "persons": persons}
                              for _, event_id, day, _, _, entry_time, persons in rows)
        # The counts in the order a sale takes them (places, then sales): on PostgreSQL
        # a void and a sale of one day never wait for each other in a circle.
        for (day, kind, name), persons in sorted(freed.items()):
            if kind == GENERAL:
                conn.execute(FREE_GENERAL_PLACE, (persons, day))
            elif kind == SLOT:
                conn.execute(FREE_SLOT_PLACE, (persons, day, name))
            else:
                conn.execute(FREE_EVENT_PLACE, (persons, name, day))
        for _, event_id, day, price, currency, _, _ in sorted(
                rows, key=lambda row: (row[2], row[1] or "", row[4] or "")):
            conn.execute(COUNT_VOID, (price or 0, day, event_id or "", currency or ""))
        return [(row[0], row[2]) for row in rows]

    def _mark_all_changed(self, conn, tickets):
        """`_mark_changed` for each of [(ticket id, date)], by date: drawn last, in turn."""
        for ticket_id, day in sorted(tickets, key=lambda ticket: ticket[1]):
            self._mark_changed(conn, ticket_id, day)

    def list_tickets(self, event_id, day, offset, limit):
        window = (day or FIRST_DATE, day or LAST_DATE)
        with self._reading_one_snapshot() as conn:
            if conn.execute("SELECT count(*) FROM events WHERE id = ?",
                            (event_id,)).fetchone()[0] == 0:
                raise NotFound(event_id)
            rows = conn.execute(EVENT_TICKETS, (event_id, *window, limit, offset)).fetchall()
            total = conn.execute(EVENT_TICKETS_COUNT, (event_id, *window)).fetchone()[0]
        return [ticket_record(row) for row in rows], total

    def sales(self, start, end, breakdown=False):
        with self._reading_one_snapshot() as conn:
            rows = conn.execute(SALES_QUERY, (start, end)).fetchall()
            kinds = conn.execute(SALES_BY_CATEGORY_AND_CHANNEL, (start, end)).fetchall() \
                if breakdown else []
            event_ids = sorted({row[1] for row in rows if row[1]})
            names = dict(conn.execute(
                f"SELECT id, name FROM events WHERE id IN ({', '.join('?' * len(event_ids))})",
                event_ids).fetchall()) if event_ids else {}
        by_kind = sales_breakdown(kinds)
        report = [{"date": day, "eventId": event_id or None, "eventName": names.get(event_id),
                   "currency": currency or None, "sold": sold, "void": voided,
                   "admitted": admitted, "revenue": price_value(revenue),
                   "doubleEntries": double_entries,
                   **(by_kind.get((day, event_id or "", currency or ""), EMPTY_BREAKDOWN)
                      if breakdown else {})}
                  for day, event_id, currency, sold, voided, admitted, revenue, double_entries
                  in rows]
        # General entry first, then the events by name (names sort as on both backends).
        report.sort(key=lambda row: (row["date"], row["eventId"] is not None,
                                     row["eventName"] or "", row["eventId"] or "",
                                     row["currency"] or ""))
        return report

    def places_taken(self, start, end, now=None):
        with self._reading_one_snapshot() as conn:
            general = dict(conn.execute("SELECT date, taken FROM general_places "
                                        "WHERE date >= ? AND date <= ?", (start, end)))
            events = conn.execute(EVENT_PLACES_QUERY, (start, end)).fetchall()
            slots = conn.execute("SELECT date, entry_time, taken FROM slot_places "
                                 "WHERE date >= ? AND date <= ?", (start, end)).fetchall()
            expired = conn.execute(EXPIRED_HOLDS_HELD, (now, start, end)).fetchall() \
                if now is not None else []
        # The places of holds that ended but that no write has given back yet.
        not_held = places_needed({"ticketDate": day, "eventId": event_id, "ticketType": kind,
                                  "entryTime": entry_time, "persons": persons}
                                 for day, event_id, entry_time, kind, persons in expired)
        taken_in_slots = {}
        for day, entry_time, taken in slots:
            taken_in_slots.setdefault(day, {})[entry_time] = \
                taken - not_held.get((day, SLOT, entry_time), 0)
        return {"general": {day: taken - not_held.get((day, GENERAL, ""), 0)
                            for day, taken in general.items()},
                "slots": taken_in_slots,
                "events": [{"date": day, "eventId": event_id, "name": name,
                            "capacity": capacity,
                            "sold": taken - not_held.get((day, EVENT, event_id), 0)}
                           for day, event_id, name, capacity, taken in events]}

    # -- orders ---------------------------------------------------------------------------

    def _release_expired_holds(self, conn, now):
        """Give back the places of every hold ended at `now` (see EXPIRED_HOLD_SEEN's
        paragraph); [(ticket id, date)] of the tickets voided, for `_mark_all_changed`."""
        if now is None or conn.execute(EXPIRED_HOLD_SEEN, (now,)).fetchone() is None:
            return []
        self._lock_holds(conn)
        expired = [row[0] for row in conn.execute(EXPIRE_HOLDS, (now,)).fetchall()]
        if not expired:
            return []
        return self._void_tickets(conn, f"order_id IN ({', '.join('?' * len(expired))})",
                                  expired, now)

    def create_order(self, order, tickets, now, general_capacity=None, slot_capacity=None,
                     idempotency=None, purchase_limit=None, on_confirmed=None):
        with self._writing() as conn:
            # The key is claimed with the order's first ticket, as a single sale claims it.
            if idempotency is not None and not self._claim(conn, idempotency, tickets[0]):
                return self._replayed_order(conn, *idempotency, now)
            released = self._release_expired_holds(conn, now)
            if purchase_limit is not None:
                self._refuse_past_purchase_limit(conn, order["createdBy"], *purchase_limit,
                                                 buying=len(tickets))
            conn.execute(f"INSERT INTO orders ({ORDER_COLUMNS}, page_digest) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         (order["orderId"], order["orderCode"], order["status"],
                          order["channel"], order.get("payment"), order.get("email"),
                          order.get("phone"), order["createdAt"], order.get("expiresAt"),
                          order.get("createdBy"), *new_page()))
            self._sell(conn, tickets, order["orderId"], general_capacity, slot_capacity)
            self._mark_all_changed(conn, released + [(ticket["ticketId"], ticket["ticketDate"])
                                                     for ticket in tickets])
            stored = self._order(conn, order["orderId"], now)
            if stored["status"] == "confirmed":
                self._confirmed(conn, stored, now, on_confirmed)
            return stored

    def replayed_order(self, user, key, fingerprint, now):
        with self._reading_one_snapshot() as conn:
            return self._replayed_order(conn, user, key, fingerprint, now)

    @classmethod
    def _replayed_order(cls, conn, user, key, fingerprint, now):
        row = cls._keyed(conn, "SELECT fingerprint, ticket_id FROM idempotency_keys "
                         "WHERE user_name = ? AND key = ?", user, key, fingerprint)
        if row is None:
            return None
        (order_id,) = conn.execute("SELECT order_id FROM tickets WHERE id = ?",
                                   (row[1],)).fetchone()
        if order_id is None:  # the key bought a single ticket: another request
            raise IdempotencyConflict(key)
        return cls._order(conn, order_id, now)

    def get_order(self, order_id, now):
        with self._reading_one_snapshot() as conn:
            return self._order(conn, order_id, now)

    def get_order_by_code(self, code, now):
        with self._reading_one_snapshot() as conn:
            row = conn.execute("SELECT id FROM orders WHERE code = ?", (code,)).fetchone()
            if row is None:
                raise NotFound(code)
            return self._order(conn, row[0], now)

    @staticmethod
    def _order(conn, order_id, now, key="id"):
        """The order whose `key` column (its id, or its page's digest) is `order_id`, as
        read back at `now`; `NotFound`."""
        row = conn.execute(f"SELECT {ORDER_READ_BACK} FROM orders WHERE {key} = ?",
                           (order_id,)).fetchone()
        if row is None:
            raise NotFound(order_id)
        tickets = [ticket_record(ticket) for ticket in conn.execute(ORDER_TICKETS, (row[0],))]
        return order_record(row, tickets, now)

    def page(self, token, now):
        digest = page_digest(token)
        with self._reading_one_snapshot() as conn:
            ticket = conn.execute(TICKET_BY_PAGE, (digest,)).fetchone()
            if ticket is not None:
                return "ticket", ticket_record(ticket)
            return "order", self._order(conn, digest, now, key="page_digest")

    def confirm_order(self, order_id, now, on_confirmed=None):
        with self._writing() as conn:
            released = self._release_expired_holds(conn, now)
            status = self._order_status(conn, order_id)
            if status == "expired":
                raise HoldExpired(order_id)
            if status not in ("pending", "confirmed"):
                raise NotAllowed(f"order {order_id} is {status}")
            conn.execute("UPDATE orders SET status = 'confirmed' WHERE id = ?", (order_id,))
            paid = conn.execute("SELECT id, date FROM tickets WHERE order_id = ?",
                                (order_id,)).fetchall() if status == "pending" else []
            # Paid, its tickets change in the door's list: unpaid there until now.
            self._mark_all_changed(conn, released + [tuple(row) for row in paid])
            confirmed = self._order(conn, order_id, now)
            if status == "pending":
                self._confirmed(conn, confirmed, now, on_confirmed)
            return confirmed

    def _confirmed(self, conn, order, now, on_confirmed):
        """Queue what a confirmation sends: `on_confirmed`'s messages, and the webhooks."""
        if on_confirmed is not None:
            self._queue(conn, on_confirmed(order))
        self._announce(conn, "order.confirmed", {
            "orderId": order["orderId"], "orderCode": order["orderCode"],
            "ticketIds": [ticket["ticketId"] for ticket in order["tickets"]]}, now)

    def cancel_order(self, order_id, user, now):
        with self._writing() as conn:
            released = self._release_expired_holds(conn, now)
            row = conn.execute("SELECT status, created_by FROM orders WHERE id = ? " +
                               self.UPDATE_LOCK, (order_id,)).fetchone()
            if row is None or row[1] != user:
                raise NotFound(order_id)
            if row[0] == "expired":
                raise HoldExpired(order_id)
            if row[0] != "pending":
                raise NotAllowed(f"order {order_id} is {row[0]}")
            conn.execute("UPDATE orders SET status = 'cancelled' WHERE id = ?", (order_id,))
            voided = self._void_tickets(conn, "order_id = ?", (order_id,), now)
            self._mark_all_changed(conn, released + voided)
            return self._order(conn, order_id, now)

    def void_order(self, order_id, now, reason=None):
        with self._writing() as conn:
            released = self._release_expired_holds(conn, now)
            if self._order_status(conn, order_id) == "voided":
                return False
            conn.execute("UPDATE orders SET status = 'voided', void_reason = ? WHERE id = ?",
                         (reason, order_id))
            voided = self._void_tickets(conn, "order_id = ?", (order_id,), now, reason)
            self._mark_all_changed(conn, released + voided)
            self._announce(conn, "order.voided", {
                "orderId": order_id, "ticketIds": [ticket_id for ticket_id, _ in voided],
                "voidedAt": now}, now)
        return True

    def mark_order_paid(self, order_id, payment, now):
        with self._writing() as conn:
            released = self._release_expired_holds(conn, now)
            row = conn.execute("SELECT status, payment, paid_at FROM orders WHERE id = ? " +
                               self.UPDATE_LOCK, (order_id,)).fetchone()
            if row is None:
                raise NotFound(order_id)
            status, paid, paid_at = row
            if paid == payment and paid_at is not None:  # a retry: paid as asked already
                self._mark_all_changed(conn, released)
                return self._order(conn, order_id, now)
            if status != "confirmed" or paid != PAYMENT_DUE:
                raise NotDue(order_id, status, paid)
            conn.execute("UPDATE orders SET payment = ?, paid_at = ? WHERE id = ?",
                         (payment, now, order_id))
            tickets = conn.execute("SELECT id, date FROM tickets WHERE order_id = ?",
                                   (order_id,)).fetchall()
            # Paid, its tickets change in the door's list, as a confirmation's do.
            self._mark_all_changed(conn, released + [tuple(row) for row in tickets])
            paid_order = self._order(conn, order_id, now)
            self._announce(conn, "order.paid", {
                "orderId": order_id, "orderCode": paid_order["orderCode"],
                "payment": payment, "paidAt": now}, now)
            return paid_order

    def _order_status(self, conn, order_id):
        """The order's stored status, its row locked until the commit; `NotFound`."""
        row = conn.execute("SELECT status FROM orders WHERE id = ? " + self.UPDATE_LOCK,
                           (order_id,)).fetchone()
        if row is None:
            raise NotFound(order_id)
        return row[0]

    def web_orders_of(self, email, since):
        # No index on email: a scan of the orders, few for a museum, and only for orders
        # made without credentials (which [shop] orders_per_hour limits per address).
        with self._reading() as conn:
            orders, first = conn.execute(
                "SELECT count(*), min(created_at) FROM orders WHERE channel = 'web' AND "
                "created_at > ? AND lower(email) = ?",
                (since, email.translate(ASCII_LOWER))).fetchone()
        return orders, first

    # -- the museum's days ----------------------------------------------------------------

    def set_day(self, day):
        with self._writing() as conn:
            conn.execute(LOCK_GENERAL_PLACES, (day["date"],))
            conn.execute(SET_DAY, (day["date"], day["closed"], day["timeOpen"],
                                   day["timeClose"], day["capacity"], day["note"],
                                   day["changedAt"], day["changedBy"]))
            rows = conn.execute(TICKETS_OF_THE_DAY, (day["date"],)).fetchall()
        return [ticket_record(row) for row in rows]

    def clear_day(self, date):
        with self._writing() as conn:
            return conn.execute("DELETE FROM changed_days WHERE date = ?",
                                (date,)).rowcount == 1

    def changed_days(self, start, end):
        with self._reading() as conn:
            return [day_record(row) for row in conn.execute(CHANGED_DAYS, (start, end))]

    # -- the door -------------------------------------------------------------------------

    def get_ticket_by_code(self, code):
        with self._reading() as conn:
            return self._ticket(conn, TICKET_BY_CODE, code)

    def admit(self, ticket_id, admitted_by, admitted_at, idempotency=None):
        return self.admit_tickets([ticket_id], admitted_by, admitted_at, idempotency)[ticket_id]

    def admit_tickets(self, ticket_ids, admitted_by, admitted_at, idempotency=None):
        with self._writing() as conn:
            # The key is claimed first, as a sale claims its key: a retry on another
            # instance waits on it until this transaction ends, then reads what it made.
            if idempotency is not None and not self._claim_door_key(
                    conn, idempotency, min(ticket_ids), "admitted", admitted_at):
                return self._keyed_admissions(conn, ticket_ids, *idempotency)
            # The primary key admits once. On PostgreSQL a second gate's insert waits for
            # the first one's commit and does nothing; the select then reads that admission.
            # Every insert comes before any count, each in the order of the ids, so two
            # gates admitting tickets of one order never wait for each other in a circle.
            admitted = [ticket_id for ticket_id in sorted(ticket_ids) if conn.execute(
                "INSERT INTO admissions (ticket_id, admitted_at, admitted_by) VALUES (?, ?, ?) "
                "ON CONFLICT DO NOTHING", (ticket_id, admitted_at, admitted_by)).rowcount == 1]
            for ticket_id in admitted:
                conn.execute(RECORD_ADMISSION_EVENT,
                             (ticket_id, "admitted", admitted_at, admitted_by))
                conn.execute(COUNT_ADMISSION, (1, ticket_id))
                self._announce(conn, "ticket.admitted", {
                    "ticketId": ticket_id, "admittedAt": admitted_at,
                    "admittedBy": admitted_by}, admitted_at)
            if idempotency is not None and not admitted:  # a refusal keeps no key
                conn.execute("DELETE FROM door_keys WHERE user_name = ? AND key = ?",
                             idempotency[:2])
            answer = {ticket_id: ({"admittedAt": admitted_at, "admittedBy": admitted_by}, True)
                      for ticket_id in admitted}
            answer.update({ticket_id: (self._admission(conn, ticket_id), False)
                           for ticket_id in ticket_ids if ticket_id not in answer})
            self._mark_all_changed(conn, [(ticket_id, self._ticket_date(conn, ticket_id))
                                          for ticket_id in admitted])
        return answer

    @staticmethod
    def _admission(conn, ticket_id, lock=""):
        row = conn.execute(f"SELECT admitted_at, admitted_by FROM admissions "
                           f"WHERE ticket_id = ? {lock}", (ticket_id,)).fetchone()
        return row and {"admittedAt": row[0], "admittedBy": row[1]}

    @staticmethod
    def _claim_door_key(conn, idempotency, ticket_id, outcome, done_at):
        """Take a scan's key for what it does; False when it was taken before."""
        claimed = conn.execute(
            "INSERT INTO door_keys (user_name, key, fingerprint, ticket_id, outcome, done_at) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (*idempotency, ticket_id, outcome, done_at))
        return claimed.rowcount == 1

    def _keyed_admissions(self, conn, ticket_ids, user, key, fingerprint):
        """What `admit_tickets` answers for a key taken before: for the ticket it was kept
        with, the admission it made, or (a double entry's key) the ticket's admission, not
        made by this call; for the others, their admission, made by that call when it is
        the key's (same user and time)."""
        replayed = self._replayed_scan(conn, user, key, fingerprint)
        made = {"admittedAt": replayed["at"], "admittedBy": user}
        answer = {}
        for ticket_id in ticket_ids:
            admission = self._admission(conn, ticket_id)
            if replayed["outcome"] == "admitted" and (
                    ticket_id == replayed["ticketId"] or admission == made):
                answer[ticket_id] = made, True
            else:
                answer[ticket_id] = admission, False
        return answer

    def record_double_entry(self, ticket_id, scanned_by, scanned_at, idempotency=None):
        with self._writing() as conn:
            # The admission stays locked until the commit: no undo comes in between.
            admission = self._admission(conn, ticket_id, self.UPDATE_LOCK)
            if admission is None:
                return None, False
            if idempotency is not None and not self._claim_door_key(
                    conn, idempotency, ticket_id, "double-entry", scanned_at):
                self._replayed_scan(conn, *idempotency)  # IdempotencyConflict, or recorded
                return admission, False
            conn.execute(RECORD_ADMISSION_EVENT,
                         (ticket_id, "double-entry", scanned_at, scanned_by))
            conn.execute(COUNT_DOUBLE_ENTRY, (ticket_id,))
        return admission, True

    def replayed_scan(self, user, key, fingerprint):
        with self._reading() as conn:
            return self._replayed_scan(conn, user, key, fingerprint)

    @classmethod
    def _replayed_scan(cls, conn, user, key, fingerprint):
        row = cls._keyed(conn, "SELECT fingerprint, ticket_id, outcome, done_at FROM door_keys "
                         "WHERE user_name = ? AND key = ?", user, key, fingerprint)
        if row is None:
            return None
        return {"ticketId": row[1], "outcome": row[2], "at": row[3]}

    @staticmethod
    def _ticket_date(conn, ticket_id):
        return conn.execute("SELECT date FROM tickets WHERE id = ?", (ticket_id,)).fetchone()[0]

    @staticmethod
    def _mark_changed(conn, ticket_id, day=None):
        """Number the ticket's change in its day's list (see DAY_CHANGE): last in its
        transaction, so the day's row is locked for as short a time as can be."""
        if day is None:
            day = SQLStore._ticket_date(conn, ticket_id)
        version = conn.execute(DAY_CHANGE, (day,)).fetchone()[0]
        conn.execute(MARK_TICKET_CHANGED, (ticket_id, day, version))

    def door_list(self, day, since=None):
        query, key = (DOOR_LIST, (day,)) if since is None else (DOOR_LIST_SINCE, (day, since))
        with self._reading_one_snapshot() as conn:
            version = self._day_version(conn, day)
            rows = conn.execute(query, key).fetchall()
        return {"version": version, "tickets": [
            {"ticketId": ticket_id, "confirmationCode": code, "eventId": event_id,
             "eventName": event_name, "entryTime": entry_time, "voidedAt": voided_at,
             "cancelled": bool(cancelled), "admittedAt": admitted_at, "admittedBy": admitted_by,
             "heldUntil": held_until, "orderId": order_id, "payment": payment,
             "orderDue": None if due is None else price_value(due), "currency": currency}
            for (ticket_id, code, event_id, event_name, entry_time, voided_at, cancelled,
                 admitted_at, admitted_by, held_until, order_id, payment, due, currency)
            in rows]}

    def door_list_version(self, day):
        with self._reading() as conn:
            return self._day_version(conn, day)

    @staticmethod
    def _day_version(conn, day):
        row = conn.execute("SELECT version FROM day_versions WHERE date = ?", (day,)).fetchone()
        return row[0] if row else 0

    def undo_admission(self, ticket_id, undone_by, undone_at, may_undo=None,
                       undo_limit=None):
        with self._writing() as conn:
            # Deleted first and judged after: the row stays locked until the commit, so no
            # other undo or admission of the ticket comes between the rule and the change.
            row = conn.execute("DELETE FROM admissions WHERE ticket_id = ? "
                               "RETURNING admitted_at, admitted_by", (ticket_id,)).fetchone()
            if row is None:
                raise NotFound(ticket_id)
            if may_undo is not None and not may_undo({"admittedAt": row[0],
                                                      "admittedBy": row[1]}):
                raise NotAllowed(ticket_id)  # rolls the delete back
            if undo_limit is not None:
                most, since = undo_limit
                undone, first = conn.execute(UNDOS_SINCE,
                                             (ticket_id, undone_by, since)).fetchone()
                if undone >= most:
                    raise LimitReached(first)  # rolls the delete back
            conn.execute(COUNT_ADMISSION, (-1, ticket_id))
            conn.execute(RECORD_ADMISSION_EVENT, (ticket_id, "undone", undone_at, undone_by))
            self._mark_changed(conn, ticket_id)
            self._announce(conn, "ticket.admission-undone", {
                "ticketId": ticket_id, "undoneAt": undone_at, "undoneBy": undone_by}, undone_at)

    def admission_history(self, ticket_id, offset=0, limit=None):
        with self._reading_one_snapshot() as conn:
            rows = conn.execute("SELECT action, done_at, done_by FROM admission_events "
                                "WHERE ticket_id = ? ORDER BY id LIMIT ? OFFSET ?",
                                (ticket_id, self.NO_LIMIT if limit is None else limit,
                                 offset)).fetchall()
            total = conn.execute("SELECT count(*) FROM admission_events WHERE ticket_id = ?",
                                 (ticket_id,)).fetchone()[0]
        return [{"action": action, "at": at, "by": by} for action, at, by in rows], total

    def count_guess(self, user, at, window):
        with self._writing() as conn:
            guesses, start = conn.execute(COUNT_GUESS, (user, at, window, window)).fetchone()
        return guesses, start

    def guesses(self, user):
        with self._reading() as conn:
            row = conn.execute("SELECT guesses, window_start FROM guess_counts "
                               "WHERE user_name = ?", (user,)).fetchone()
        return (0, None) if row is None else tuple(row)

    def lookup_tickets(self, day, email=None, codes=(), limit=20):
        if email is not None:
            query, key = LOOKUP_BY_EMAIL, (email.translate(ASCII_LOWER),)
        else:
            query, key = LOOKUP_BY_CODES, (codes[0], codes[-1])
        with self._reading() as conn:
            rows = conn.execute(query, (day, *key, limit)).fetchall()
        return [ticket_record(row) for row in rows]

    def door_summary(self, day):
        with self._reading_one_snapshot() as conn:
            rows = conn.execute(SUMMARY_QUERY, (day,)).fetchall()
            devices = conn.execute(DEVICES_QUERY, (day,)).fetchall()
            # Cast: PostgreSQL sums bigints as numeric.
            double_entries = conn.execute(
                "SELECT CAST(coalesce(sum(double_entries), 0) AS BIGINT) FROM daily_sales "
                "WHERE date = ?", (day,)).fetchone()[0]
        summary = {"sold": {"general": 0, "event": 0}, "admitted": {"general": 0, "event": 0},
                   "events": [], "devices": [{"name": name, "admitted": admitted}
                                             for name, admitted in sorted(devices)],
                   "doubleEntries": double_entries}
        for event_id, name, sold, admitted in rows:
            kind = "general" if event_id is None else "event"
            summary["sold"][kind] += sold
            summary["admitted"][kind] += admitted
            if event_id is not None:
                summary["events"].append({"eventId": event_id, "name": name, "sold": sold,
                                          "admitted": admitted})
        return summary

    def arrivals(self, start, end):
        with self._reading() as conn:
            rows = conn.execute(ARRIVALS_QUERY, (start, end)).fetchall()
        return [{"at": f"{hour}:{quarter:02d}:00Z", "admitted": admitted}
                for hour, quarter, admitted in rows]

    # -- the outbox ------------------------------------------------------------------------

    @staticmethod
    def _queue(conn, messages):
        conn.executemany(QUEUE_MESSAGE, [
            (message["messageId"], message["kind"], message["target"],
             json.dumps(message["payload"]), message.get("ticketId"), message.get("orderId"),
             message["createdAt"], message["createdAt"]) for message in messages])

    def claim_messages(self, now, lease_until, limit):
        with self._writing() as conn:
            rows = conn.execute(CLAIM_MESSAGES.format(claim_lock=self.CLAIM_LOCK),
                                (lease_until, now, limit)).fetchall()
        # RETURNING gives no order: the earliest created go first.
        return sorted((message_record(row) for row in rows),
                      key=lambda message: message["createdAt"])

    def settle_message(self, message_id, attempt, state, answer, at, next_attempt_at=None):
        with self._writing() as conn:
            settled = conn.execute(
                "UPDATE outbox SET state = ?, last_answer = ?, sent_at = ?, "
                "next_attempt_at = coalesce(?, next_attempt_at) "
                "WHERE id = ? AND state = 'sending' AND attempts = ?",
                (state, answer, at if state == "sent" else None, next_attempt_at, message_id,
                 attempt))
            return settled.rowcount == 1

    def list_messages(self, state=None, limit=100):
        where, args = ("WHERE state = ?", (state,)) if state else ("", ())
        with self._reading() as conn:
            rows = conn.execute(f"SELECT {MESSAGE_COLUMNS} FROM outbox {where} "
                                f"ORDER BY created_at DESC, id LIMIT ?", (*args, limit)).fetchall()
        return [message_record(row) for row in rows]

    def retry_message(self, message_id, now):
        with self._writing() as conn:
            state = self._message_state(conn, message_id)
            if state not in ("queued", "failed"):
                raise NotAllowed(f"the message is {state}")
            row = conn.execute(
                f"UPDATE outbox SET state = 'queued', attempts = 0, next_attempt_at = ? "
                f"WHERE id = ? RETURNING {MESSAGE_COLUMNS}", (now, message_id)).fetchone()
        return message_record(row)

    def drop_message(self, message_id):
        with self._writing() as conn:
            if self._message_state(conn, message_id) == "sending":
                raise NotAllowed("the message is being sent")
            conn.execute("DELETE FROM outbox WHERE id = ?", (message_id,))

    def _message_state(self, conn, message_id):
        """The message's state, its row locked until the transaction ends; `NotFound`."""
        row = conn.execute(f"SELECT state FROM outbox WHERE id = ? {self.UPDATE_LOCK}",
                           (message_id,)).fetchone()
        if row is None:
            raise NotFound(message_id)
        return row[0]

    def queue_mail_again(self, message, since, most, user=None):
        ticket_id, order_id = message.get("ticketId"), message.get("orderId")
        with self._writing() as conn:
            # The ticket's or order's row stays locked to the commit: two resends at once
            # on two instances are counted one after the other.
            if ticket_id is not None:
                row = conn.execute(
                    f"SELECT email, sold_by, voided_at IS NULL FROM tickets WHERE id = ? "
                    f"{self.UPDATE_LOCK}", (ticket_id,)).fetchone()
                queued = "SELECT count(*) FROM outbox WHERE ticket_id = ? AND created_at > ?"
            else:
                row = conn.execute(
                    f"SELECT email, created_by, status = 'confirmed' FROM orders WHERE id = ? "
                    f"{self.UPDATE_LOCK}", (order_id,)).fetchone()
                queued = "SELECT count(*) FROM outbox WHERE order_id = ? AND created_at > ?"
            if row is None or (user is not None and row[1] != user):
                raise NotFound(ticket_id or order_id)
            email, _, valid = row
            if not email or not valid or \
                    conn.execute(queued, (ticket_id or order_id, since)).fetchone()[0] >= most:
                return False
            self._queue(conn, [{**message, "target": email}])
        return True

    @staticmethod
    def _announce(conn, event_type, data, at):
        """Queue a delivery of the change `event_type` with its `data` at `at` to each
        enabled receiver that wants it, in the change's transaction. The receivers are
        few: one read of their small table, no index needed."""
        assert event_type in WEBHOOK_EVENTS, event_type
        body = json.dumps({"type": event_type, "timestamp": at, "data": data})
        conn.executemany(QUEUE_DELIVERY, [
            (str(uuid.uuid4()), WEBHOOK_MESSAGE, url, body, webhook_id, at, at)
            for webhook_id, url, events in conn.execute(
                "SELECT id, url, events FROM webhooks WHERE disabled_at IS NULL").fetchall()
            if event_type in json.loads(events)])

    # -- webhooks -------------------------------------------------------------------------

    def add_webhook(self, webhook):
        with self._writing() as conn:
            conn.execute(f"INSERT INTO webhooks ({WEBHOOK_COLUMNS}) "
                         "VALUES (?, ?, ?, ?, ?, NULL, NULL)",
                         (webhook["webhookId"], webhook["url"], webhook["secret"],
                          json.dumps(list(webhook["events"])), webhook["createdAt"]))

    def webhooks(self):
        with self._reading() as conn:
            rows = conn.execute(f"SELECT {WEBHOOK_COLUMNS} FROM webhooks "
                                "ORDER BY created_at, id").fetchall()
        return [webhook_record(row) for row in rows]

    def webhook(self, webhook_id):
        with self._reading() as conn:
            row = conn.execute(f"SELECT {WEBHOOK_COLUMNS} FROM webhooks WHERE id = ?",
                               (webhook_id,)).fetchone()
        return row and webhook_record(row)

    def remove_webhook(self, webhook_id):
        with self._writing() as conn:
            if conn.execute("DELETE FROM webhooks WHERE id = ? RETURNING id",
                            (webhook_id,)).fetchone() is None:
                raise NotFound(webhook_id)
            conn.execute("DELETE FROM outbox WHERE webhook_id = ? AND state <> 'sending'",
                         (webhook_id,))

    def disable_webhook(self, webhook_id, at, why):
        with self._writing() as conn:
            disabled = conn.execute(
                "UPDATE webhooks SET disabled_at = ?, disabled_why = ? "
                "WHERE id = ? AND disabled_at IS NULL RETURNING id",
                (at, why, webhook_id)).fetchone()
            conn.execute("UPDATE outbox SET state = 'failed', last_answer = ? "
                         "WHERE webhook_id = ? AND state = 'queued'", (why, webhook_id))
        return disabled is not None

    def outbox_summary(self):
        with self._reading() as conn:
            failed, oldest = conn.execute("SELECT count(*), min(created_at) FROM outbox "
                                          "WHERE state = 'failed'").fetchone()
        return {"failed": failed, "oldest": oldest}

    # -- personal data that expires --------------------------------------------------------

    def erase_contacts(self, before, limit):
        with self._writing() as conn:
            # The outer condition again: on PostgreSQL a row another instance erased
            # meanwhile is re-checked after its lock, and skipped.
            erased = conn.execute(
                "UPDATE tickets SET email = '', phone = NULL WHERE email <> '' AND id IN "
                "(SELECT id FROM tickets WHERE date < ? AND email <> '' LIMIT ?) RETURNING id",
                (before, limit)).fetchall()
            conn.executemany("DELETE FROM idempotency_keys WHERE ticket_id = ?", erased)
            conn.executemany("DELETE FROM door_keys WHERE ticket_id = ?", erased)
            # An order's contact goes with its last ticket's date.
            orders = conn.execute(
                "UPDATE orders SET email = NULL, phone = NULL WHERE (email IS NOT NULL OR "
                "phone IS NOT NULL) AND id IN (SELECT order_id FROM tickets WHERE order_id "
                "IS NOT NULL GROUP BY order_id HAVING max(date) < ? LIMIT ?) RETURNING id",
                (before, limit)).fetchall()
            # The messages that hold those contacts go with them.
            conn.executemany("DELETE FROM outbox WHERE ticket_id = ?", erased)
            conn.executemany("DELETE FROM outbox WHERE order_id = ?", orders)
        return len(erased) + len(orders)

    def scrub(self):
        with self._failures_as_unavailable(nullcontext):
            return self._scrub_files()

    # -- devices --------------------------------------------------------------------------

    def add_device(self, name, role, key_digest, created_at, pairing=None):
        with self._writing() as conn:
            # The unique index of the devices in use refuses a second one of that name, on
            # any instance: of two adds at once, one inserts and the other does nothing.
            inserted = conn.execute(
                "INSERT INTO devices (name, role, key_digest, created_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (name) WHERE revoked_at IS NULL DO NOTHING RETURNING id",
                (name, role, key_digest, created_at)).fetchone()
            if inserted is None:
                raise DeviceExists(name)
            if pairing is not None:
                conn.execute("INSERT INTO device_pairings (code_digest, device_id, expires_at) "
                             "VALUES (?, ?, ?)", (pairing[0], inserted[0], pairing[1]))

    def pair_device(self, code_digest, key_digest, now):
        with self._writing() as conn:
            # One statement spends the code: of two exchanges at once, one finds it unused.
            spent = conn.execute(
                "UPDATE device_pairings SET used_at = ? WHERE code_digest = ? AND "
                "used_at IS NULL AND expires_at > ? RETURNING device_id",
                (now, code_digest, now)).fetchone()
            if spent is None:
                raise self._unpaired(conn, code_digest)
            device = conn.execute(
                "UPDATE devices SET key_digest = ? WHERE id = ? AND revoked_at IS NULL "
                "RETURNING name, role", (key_digest, spent[0])).fetchone()
            if device is None:  # revoked since: the code is spent with nothing written
                raise NotFound(code_digest)
        return {"name": device[0], "role": device[1]}

    @staticmethod
    def _unpaired(conn, code_digest):
        """Why the code of `code_digest` pairs nothing: the error to raise."""
        row = conn.execute("SELECT used_at FROM device_pairings WHERE code_digest = ?",
                           (code_digest,)).fetchone()
        if row is None:
            return NotFound(code_digest)
        return PairingSpent("used" if row[0] else "expired")

    def revoke_device(self, name, revoked_at):
        with self._writing() as conn:
            revoked = conn.execute("UPDATE devices SET revoked_at = ? "
                                   "WHERE name = ? AND revoked_at IS NULL", (revoked_at, name))
            if revoked.rowcount == 0:
                raise NotFound(name)

    def device(self, name):
        with self._reading() as conn:
            row = conn.execute(DEVICE_IN_USE, (name,)).fetchone()
        return None if row is None else {"name": name, "role": row[0], "keyDigest": row[1]}

    def list_devices(self):
        with self._reading() as conn:
            rows = conn.execute("SELECT name, role, created_at, revoked_at, id "
                                "FROM devices").fetchall()
        # Sorted here: the backends' collations order names differently.
        return [{"name": name, "role": role, "createdAt": created, "revokedAt": revoked}
                for name, role, created, revoked, _ in sorted(rows, key=lambda row: (row[0],
                                                                                    row[4]))]

    # -- settings -------------------------------------------------------------------------

    def setting(self, name, default=None):
        if default is None:
            with self._reading() as conn:
                row = conn.execute("SELECT value FROM settings WHERE name = ?",
                                   (name,)).fetchone()
            return row[0] if row else None
        with self._writing() as conn:
            # Two instances starting together: the second insert waits for the first to
            # commit, then the select (a statement of its own) reads the winner's value.
            conn.execute("INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT DO NOTHING",
                         (name, default))
            return conn.execute("SELECT value FROM settings WHERE name = ?",
                                (name,)).fetchone()[0]

"""Shared steps of the ticket tests: request bodies, buying, events and the sqlite file.

The calendar around the tests' fixed NOW (Sunday 2026-11-22, UTC) with the default hours:
Monday 23 closed, Tuesday 24 open, Friday 27 short hours, Tuesday 1 December open.
"""

import re
import sqlite3
from contextlib import closing

from conftest import ADMIN

TICKETS = "/v1.1/tickets"
EVENTS = "/v1.1/special-events"
OPEN_DAY = "2026-11-24"
EVENT_DATES = ["2026-12-05", "2026-12-06"]
UNKNOWN_ID = "3fa85f64-5717-4562-b3fc-2c963f66afa6"
CODE = re.compile(r"^ticket-(general|event)-[0-9a-f]{6}-[0-9a-f]{5}$")
OMIT = object()  # a field value meaning "leave the field out"


def body(ticket_type="general", **fields):
    """A valid purchase body for `ticket_type`, with `fields` changed (OMIT drops one)."""
    values = {"ticketType": ticket_type, "ticketDate": OPEN_DAY, "email": "ada@example.org"}
    if ticket_type == "event":
        values.update(ticketDate=EVENT_DATES[0], eventId=UNKNOWN_ID)
    values.update(fields)
    return {name: value for name, value in values.items() if value is not OMIT}


def buy(client, payload, status=201, headers=ADMIN, key=None):
    """POST /v1.1/tickets, with an Idempotency-Key header when `key` is not None."""
    if key is not None:
        headers = {**headers, "Idempotency-Key": key}
    return client.post_json(TICKETS, payload, headers=headers, status=status)


def create_event(client, name="Night at the Museum", dates=EVENT_DATES):
    """POST a special event as admin; return its JSON."""
    event = {"name": name, "location": "Great Hall", "eventDescription": "Torches and owls.",
             "dates": list(dates), "price": 12.5}
    return client.post_json(EVENTS, event, headers=ADMIN, status=201).json


def cancel_event(client, event_id):
    client.delete(f"{EVENTS}/{event_id}", headers=ADMIN, status=204)


def qr_path(ticket_id):
    return f"{TICKETS}/{ticket_id}/qr"


def query(db_path, sql, *args):
    """Every row of `sql` over the sqlite file, read on a connection of its own."""
    with closing(sqlite3.connect(db_path)) as conn:
        return conn.execute(sql, args).fetchall()


def ticket_count(db_path):
    return query(db_path, "SELECT count(*) FROM tickets")[0][0]

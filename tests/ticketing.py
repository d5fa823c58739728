"""Shared steps of the tests that buy tickets: request bodies, events, dates, buying, and
the sqlite file read back.

Under WebTest the clock is conftest's fixed NOW (Sunday 2026-11-22, UTC); with the default
hours: Monday 23 closed, Tuesday 24 open, Friday 27 short hours, Tuesday 1 December open.
`body`, `buy`, `create_event` and `cancel_event` work on that calendar.

A real server keeps the real clock, so its dates are counted from today (UTC): `open_days`
gives days on which the museum sells general tickets, and `event_body` and `ticket_body`
number their records so that many can be told apart.

`fresh_code(kind)` draws a confirmation code for a ticket handed straight to a store, the
way the service draws its own, so tests that sell thousands never draw one twice.

`sell_order(store, categories)` sells an order straight through the store (as the orders'
API does), one general ticket per category named, for today unless told otherwise.

`check_store` opens the sqlite file on a connection of its own and proves what the store
holds is whole and valid: sqlite's own integrity and foreign-key checks, the listing index
in step with the events, and every stored event and ticket passing the service's own input
validation again.
"""

import json
import sqlite3
import uuid
from contextlib import closing, contextmanager
from datetime import datetime, timedelta, timezone

import museum
import museum_validation
import museum_door
import storage
from conftest import ADMIN, TODAY

TICKETS = "/v1.1/tickets"
EVENTS = "/v1.1/special-events"
PNG = b"\x89PNG\r\n\x1a\n"
OPEN_DAY = "2026-11-24"
EVENT_DATES = ["2026-12-05", "2026-12-06"]
UNKNOWN_ID = "3fa85f64-5717-4562-b3fc-2c963f66afa6"
CODE = museum_door.CONFIRMATION_CODE
OMIT = object()  # a field value meaning "leave the field out"
fresh_code = museum_door.new_confirmation_code


def sell_order(store, categories, day=TODAY, status="confirmed", expires_at=None,
               channel="web", payment=None, created_by="visitor"):
    """An order sold straight through the store at conftest's NOW: one general ticket per
    name in `categories` (a category's name, or (name, date) for another day), each at 10.
    Returns the order as read back."""
    tickets = []
    for each in categories:
        category, ticket_day = each if isinstance(each, tuple) else (each, day)
        tickets.append({
            "ticketId": str(uuid.uuid4()), "ticketType": "general", "ticketDate": ticket_day,
            "eventId": None, "confirmationCode": fresh_code("general"),
            "email": "family@example.org", "phone": None, "price": 10, "currency": "EUR",
            "category": category, "soldBy": created_by, "soldAt": "2026-11-22T11:55:00Z"})
    order = {"orderId": str(uuid.uuid4()), "orderCode": museum_door.new_order_code(),
             "status": status, "channel": channel, "payment": payment,
             "email": "family@example.org", "phone": None, "createdAt": "2026-11-22T11:55:00Z",
             "expiresAt": expires_at, "createdBy": created_by}
    return store.create_order(order, tickets, "2026-11-22T11:55:00Z")


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


# -- on a real server, with the real clock ---------------------------------------------

def open_days(config_text, count, skip=1):
    """`count` ISO dates, from `skip` days after today (UTC) on, when the museum is open."""
    config = museum.parse_config(config_text)
    day = datetime.now(timezone.utc).date() + timedelta(days=skip)
    days = []
    while len(days) < count:
        if config.schedule.hours_on(day):
            days.append(day.isoformat())
        day += timedelta(days=1)
    return days


def event_body(number, dates, **changes):
    """A valid event, told apart from others by `number` in its name."""
    return {"name": f"Evening lecture {number}", "location": "Auditorium \u2013 west wing",
            "eventDescription": f"Talk number {number}.\nWith questions afterwards.",
            "dates": list(dates), "price": number * 1.5, **changes}


def ticket_body(number, day, event_id=None):
    """A valid purchase: general, or for `event_id` on `day`."""
    body = {"ticketType": "event" if event_id else "general", "ticketDate": day,
            "email": f"visitor.{number}@example.org", "phone": f"+44 20 7946 {number:04d}"}
    if event_id:
        body["eventId"] = event_id
    return body


# -- the sqlite file --------------------------------------------------------------------

def query(db_path, sql, *args):
    """Every row of `sql` over the sqlite file, read on a connection of its own."""
    with closing(sqlite3.connect(db_path)) as conn:
        return conn.execute(sql, args).fetchall()


@contextmanager
def write_locked(db_path):
    """Another process in the middle of a write to the sqlite file: its connection holds
    the write lock until the block ends, then writes nothing."""
    with closing(sqlite3.connect(db_path, isolation_level=None)) as conn:
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        finally:
            conn.execute("ROLLBACK")


def ticket_count(db_path):
    return query(db_path, "SELECT count(*) FROM tickets")[0][0]


def stored_events(db_path):
    """{eventId: (event dict as the API shows it, cancelled)} for every stored event."""
    return {row[0]: ({"eventId": row[0], "name": row[1], "location": row[2],
                      "eventDescription": row[3], "dates": json.loads(row[4]),
                      "price": storage.price_value(row[5])}, bool(row[6]))
            for row in query(db_path, "SELECT id, name, location, description, dates, "
                                      "price_minor, cancelled FROM events")}


def stored_tickets(db_path):
    """{ticketId: purchase body as sent (no nulls)} plus its code, for every stored ticket."""
    tickets = {}
    for ticket_id, kind, day, event_id, code, email, phone in query(
            db_path, "SELECT id, type, date, event_id, confirmation_code, email, phone "
                     "FROM tickets"):
        body = {"ticketType": kind, "ticketDate": day, "email": email, "phone": phone,
                "eventId": event_id}
        tickets[ticket_id] = ({name: value for name, value in body.items() if value is not None},
                              code)
    return tickets


def check_store(db_path):
    """Assert the sqlite file is whole and holds only records the service would accept;
    return (events, tickets) as `stored_events` and `stored_tickets` give them."""
    assert query(db_path, "PRAGMA integrity_check") == [("ok",)]
    assert query(db_path, "PRAGMA foreign_key_check") == []
    events = stored_events(db_path)
    index = {}
    for day, event_id in query(db_path, "SELECT date, event_id FROM event_dates"):
        index.setdefault(event_id, []).append(day)
    for event_id, (event, cancelled) in events.items():
        fields = {name: value for name, value in event.items() if name != "eventId"}
        validator = museum_validation.Validator()
        checked = museum_validation.check_fields(fields, museum.EVENT_FIELDS, validator)
        assert not validator.errors and checked == fields, (event, validator.errors)
        assert sorted(index.get(event_id, [])) == ([] if cancelled else event["dates"]), event
    assert set(index) <= set(events)
    tickets = stored_tickets(db_path)
    for ticket_id, (body, code) in tickets.items():
        validator = museum_validation.Validator()
        museum_validation.check_fields(body, museum.TICKET_FIELDS, validator)
        assert not validator.errors, (body, validator.errors)
        assert (body["ticketType"] == "event") == ("eventId" in body), body
        assert "eventId" not in body or body["eventId"] in events, body
        assert code.startswith(f"ticket-{body['ticketType']}-"), code
    assert len({code for _, code in tickets.values()}) == len(tickets)
    return events, tickets


def ended_hold(store):
    """The id of an order whose hold ended an hour before conftest's NOW."""
    made = store.create_order({
        "orderId": str(uuid.uuid4()), "orderCode": museum_door.new_order_code(),
        "status": "pending", "channel": "web", "email": "bo@example.org",
        "createdAt": "2026-11-22T10:45:00Z", "expiresAt": "2026-11-22T11:00:00Z",
        "createdBy": "admin"}, [{
            "ticketId": str(uuid.uuid4()), "ticketType": "general", "ticketDate": OPEN_DAY,
            "confirmationCode": museum_door.new_confirmation_code("general"),
            "email": "bo@example.org", "price": 0, "currency": "EUR"}],
        "2026-11-22T10:45:00Z")
    return made["orderId"]

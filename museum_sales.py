"""What the museum has sold, as HTTP resources of the museum service: a sold ticket read
back or voided, the places left each day (the availability) and the sales report; and the
rules of timed entry: which entryTime a ticket may name, and when the door admits it.

The availability and the report read counts the store keeps with each sale, void and
admission; the opening hours, entry slots and general entry capacity come from the config.
"""

import csv
import io
from datetime import timedelta

from museum import (
    ADMIN_ROLE,
    GATE_ROLE,
    VISITOR_ROLE,
    Validator,
    _path_uuid,
    json_response,
    parse_query,
    rfc3339,
    ticket_status,
)
from museum_config import minute_of_day, time_of_day

AVAILABILITY_DAYS_DEFAULT = 7  # today and the 6 days after
AVAILABILITY_DAYS_MAX = 31
REPORT_DAYS_MAX = 366
REPORT_COLUMNS = ("date", "ticketType", "eventId", "eventName", "sold", "void", "admitted",
                  "revenue", "currency")
CSV = "text/csv"


# -- a ticket ------------------------------------------------------------------------------

class Ticket:
    """One ticket: read at the door or the desk, and voided (a refund) by an admin."""

    needed_roles = {"GET": GATE_ROLE, "DELETE": ADMIN_ROLE}

    def __init__(self, store, clock):
        self.store = store
        self.clock = clock

    def on_get(self, req, resp, ticket_id):
        ticket = self.store.get_ticket(_path_uuid(ticket_id, "ticketId"))
        json_response(resp, ticket_view(ticket, contacts=req.context.user.role == ADMIN_ROLE))

    def on_delete(self, req, resp, ticket_id):
        # A second void answers 204 too: the ticket is void, as asked.
        self.store.void_ticket(_path_uuid(ticket_id, "ticketId"), rfc3339(self.clock()))
        resp.status = 204


TICKET_VIEW_FIELDS = ("ticketId", "ticketType", "ticketDate", "confirmationCode", "price",
                      "currency")


def ticket_view(ticket, contacts=False):
    """A ticket as it is read back: with its buyer's email and phone only for `contacts`
    (an admin), and only until they are erased."""
    view = {name: ticket[name] for name in TICKET_VIEW_FIELDS}
    if ticket["entryTime"]:
        view["entryTime"] = ticket["entryTime"]
    view["status"] = ticket_status(ticket)
    if ticket["eventId"]:
        view.update(eventId=ticket["eventId"], eventName=ticket["eventName"])
    if ticket["admittedAt"]:
        view.update(admittedAt=ticket["admittedAt"], admittedBy=ticket["admittedBy"])
    if contacts and ticket["email"]:
        view["email"] = ticket["email"]
    if contacts and ticket["phone"]:
        view["phone"] = ticket["phone"]
    return view


# -- timed entry ----------------------------------------------------------------------------

def check_entry_time(validator, schedule, body, ticket):
    """The rules of a purchase's `entryTime` (its HH:MM form is checked with the other
    fields, into `ticket`): with timed entry on, a general ticket names one of its day's
    slots; an event ticket never names one, nor does any ticket with timed entry off."""
    given, kind, day = "entryTime" in body, ticket.get("ticketType"), ticket.get("ticketDate")
    if given and kind == "event":
        validator.error("entryTime", "must not be given for an event ticket")
    elif given and schedule.slot_minutes is None:
        validator.error("entryTime", "must not be given: this museum has no timed entry")
    elif kind == "general" and schedule.slot_minutes is not None and day:
        slots = schedule.slots_on(day)
        if not given:
            validator.error("entryTime", "is required: general entry is by entry time, one "
                            "of the day's slots (see the availability)")
        elif ticket.get("entryTime") and slots and ticket["entryTime"] not in slots:
            validator.error("entryTime", f"must be one of the entry times of {day}: "
                            f"{', '.join(slots)}")


class EntryTimes:
    """The door's rule of timed entry: a ticket with an entry slot is admitted from
    `early_minutes` before its slot, and from then on that day as any ticket of its day."""

    def __init__(self, time_zone, early_minutes, clock):
        self.time_zone = time_zone  # the museum's (None: the server's local zone)
        self.early_minutes = early_minutes
        self.clock = clock

    def too_early(self, ticket):
        """For a ticket of today that came before its time, the detail saying from when it
        is admitted; None for any other ticket."""
        if not ticket["entryTime"]:
            return None
        now = self.clock().astimezone(self.time_zone)
        opens = minute_of_day(ticket["entryTime"]) - self.early_minutes
        if now.hour * 60 + now.minute >= opens:
            return None
        return (f"too early: entry at {ticket['entryTime']}, admitted from "
                f"{time_of_day(opens)}")


# -- the availability ----------------------------------------------------------------------

def date_window(req, today, default_days, max_days):
    """The `startDate` and `endDate` query parameters as dates: by default `default_days`
    from today, at most `max_days` (400 naming the parameter otherwise)."""
    validator = Validator()
    start = parse_query(req, validator, "startDate", Validator.date, None) or today
    end = parse_query(req, validator, "endDate", Validator.date, None)
    if start and end is None:
        end = start + timedelta(days=default_days - 1)
    if start and end and end < start:
        validator.error("endDate", "must not be before startDate")
    elif start and end and (end - start).days >= max_days:
        validator.error("endDate", f"must be at most {max_days} days from startDate, "
                                   f"counting both")
    validator.raise_if_invalid("A query parameter is not valid; see errors.")
    return start, end


def places(capacity, sold):
    """The counts of one kind of place; capacity None is unlimited."""
    available = None if capacity is None else max(capacity - sold, 0)
    return {"capacity": capacity, "sold": sold, "available": available}


class Availability:
    """The places left on each day of a window: general entry and each event's."""

    needed_roles = {"GET": VISITOR_ROLE}

    def __init__(self, store, schedule, capacity, today):
        self.store = store
        self.schedule = schedule
        self.capacity = capacity
        self.today = today

    def on_get(self, req, resp):
        start, end = date_window(req, self.today(), AVAILABILITY_DAYS_DEFAULT,
                                 AVAILABILITY_DAYS_MAX)
        taken = self.store.places_taken(start.isoformat(), end.isoformat())
        events = {}
        for entry in taken["events"]:
            events.setdefault(entry["date"], []).append(
                {"eventId": entry["eventId"], "name": entry["name"],
                 **places(entry["capacity"], entry["sold"])})
        days = []
        for offset in range((end - start).days + 1):
            day = start + timedelta(days=offset)
            key = day.isoformat()
            is_open = self.schedule.hours_on(day) is not None
            general = places(self.capacity.on(day), taken["general"].get(key, 0)) \
                if is_open else None
            entry = {"date": key, "open": is_open, "general": general}
            if self.schedule.slot_minutes is not None:
                entry["slots"] = self._slots(day, taken["slots"].get(key, {}))
            days.append({**entry, "events": events.get(key, [])})
        json_response(resp, days)

    def _slots(self, day, taken):
        """The entry slots of an open day, with their places ([] when closed)."""
        return [{"time": slot, **places(self.capacity.per_slot, taken.get(slot, 0))}
                for slot in self.schedule.slots_on(day)]


# -- the sales report ---------------------------------------------------------------------

class SalesReport:
    """What was sold for each day of a window (at most REPORT_DAYS_MAX days, by default
    today alone): JSON, or CSV when the client prefers `text/csv`."""

    needed_roles = {"GET": ADMIN_ROLE}

    def __init__(self, store, today):
        self.store = store
        self.today = today

    def on_get(self, req, resp):
        start, end = date_window(req, self.today(), 1, REPORT_DAYS_MAX)
        rows = report_rows(self.store, start, end)
        if req.client_prefers(["application/json", CSV]) == CSV:
            resp.content_type = f"{CSV}; charset=utf-8"
            resp.downloadable_as = f"sales-{start}-{end}.csv"
            resp.data = report_csv(rows).encode()
        else:
            json_response(resp, rows)


def report_rows(store, start, end):
    """The report's rows for [start, end] (dates), in REPORT_COLUMNS' terms."""
    return [{"date": row["date"], "ticketType": "event" if row["eventId"] else "general",
             "eventId": row["eventId"], "eventName": row["eventName"], "sold": row["sold"],
             "void": row["void"], "admitted": row["admitted"], "revenue": row["revenue"],
             "currency": row["currency"]}
            for row in store.sales(start.isoformat(), end.isoformat())]


# A cell a spreadsheet would take for a formula (OWASP, CSV injection) is kept as text.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def report_csv(rows):
    """The rows as CSV (RFC 4180, CRLF line ends) under a header of REPORT_COLUMNS."""
    text = io.StringIO()
    writer = csv.writer(text)
    writer.writerow(REPORT_COLUMNS)
    for row in rows:
        writer.writerow([_neutralised(row[name]) for name in REPORT_COLUMNS])
    return text.getvalue()


def _neutralised(value):
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value

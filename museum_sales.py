"""What the museum has sold, as plain data: a sold ticket as it is read back, the places
left on a day (the availability), and the sales report's rows and CSV.

Pure functions over what the store returns; the HTTP resources that serve them live in
museum.py. The availability and the report read counts the store keeps with each sale,
void and admission; the opening hours and the general entry capacity come from the config.
"""

import csv
import io

AVAILABILITY_DAYS_DEFAULT = 7  # today and the 6 days after
AVAILABILITY_DAYS_MAX = 31
REPORT_DAYS_MAX = 366
REPORT_COLUMNS = ("date", "ticketType", "eventId", "eventName", "sold", "void", "admitted",
                  "revenue", "currency")
TICKET_VIEW_FIELDS = ("ticketId", "ticketType", "ticketDate", "confirmationCode", "price",
                      "currency")


def ticket_view(ticket, status, contacts=False):
    """A ticket as it is read back, with its `status`: with its buyer's email and phone only
    for `contacts` (an admin), and only until they are erased."""
    view = {name: ticket[name] for name in TICKET_VIEW_FIELDS}
    view["status"] = status
    if ticket["eventId"]:
        view.update(eventId=ticket["eventId"], eventName=ticket["eventName"])
    if ticket["admittedAt"]:
        view.update(admittedAt=ticket["admittedAt"], admittedBy=ticket["admittedBy"])
    if contacts and ticket["email"]:
        view["email"] = ticket["email"]
    if contacts and ticket["phone"]:
        view["phone"] = ticket["phone"]
    return view


# -- the availability ----------------------------------------------------------------------

def places(capacity, sold):
    """The counts of one kind of place; capacity None is unlimited."""
    available = None if capacity is None else max(capacity - sold, 0)
    return {"capacity": capacity, "sold": sold, "available": available}


def events_by_day(taken_events):
    """{date: [each event's places that day]} from the store's `places_taken()["events"]`."""
    events = {}
    for entry in taken_events:
        events.setdefault(entry["date"], []).append(
            {"eventId": entry["eventId"], "name": entry["name"],
             **places(entry["capacity"], entry["sold"])})
    return events


def day_availability(day, hours, general_capacity, general_sold, events):
    """One day's entry of the availability: open when it has `hours`, the general entry's
    places (None when closed) and its `events`' places."""
    is_open = hours is not None
    general = places(general_capacity, general_sold) if is_open else None
    return {"date": day.isoformat(), "open": is_open, "general": general, "events": events}


# -- the sales report ---------------------------------------------------------------------

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

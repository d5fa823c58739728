"""What the backends share: records built from decoded row values, and failure mapping.

Each backend decodes its own column types (JSON text or arrays, ISO text or date objects)
and hands plain values to the builders here, so both give the interface the same dicts.
"""

import functools

from storage import Unavailable

# The open end of a listing window: later than any date the service accepts.
LAST_DATE = "9999-12-31"


def event_record(event_id, name, location, description, dates, price):
    return {
        "eventId": event_id,
        "name": name,
        "location": location,
        "eventDescription": description,
        "dates": dates,
        "price": price,
    }


def ticket_record(ticket_id, kind, date, event_id, code, email, phone, event_name, cancelled):
    return {
        "ticketId": ticket_id,
        "ticketType": kind,
        "ticketDate": date,
        "eventId": event_id,
        "confirmationCode": code,
        "email": email,
        "phone": phone,
        "eventName": event_name,
        "cancelled": bool(cancelled),
    }


def count_event_change(conn):
    """Bump the events version, inside the transaction of the change it counts."""
    conn.execute("UPDATE event_changes SET version = version + 1")


def read_events_version(conn):
    return conn.execute("SELECT version FROM event_changes").fetchone()[0]


def listing_page(conn, list_query, count_query, window, offset, limit, to_event):
    """(events, total) for one page: the total rides on the page's rows, and only an empty
    page past the end needs the count query of its own."""
    rows = conn.execute(list_query, (*window, limit, offset)).fetchall()
    if rows:
        return [to_event(row) for row in rows], rows[0][-1]
    return [], conn.execute(count_query, window).fetchone()[0]


def one_line(error):
    """A driver's message without its line breaks: it ends up in logs and startup errors."""
    return " ".join(str(error).split())


def unavailable_on(*failures):
    """A method decorator turning a driver's operational `failures` into `Unavailable`."""

    def decorate(method):
        @functools.wraps(method)
        def guarded(self, *args, **kwargs):
            try:
                return method(self, *args, **kwargs)
            except failures as error:
                raise Unavailable(one_line(error)) from error

        return guarded

    return decorate

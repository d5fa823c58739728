"""What the museum has sold, as plain data: a sold ticket as it is read back, the places
left on a day (the availability), the sales report's rows and CSV, and the rules of timed
entry: which entryTime a ticket may name, and when the door admits it.

Pure functions over what the store returns; the HTTP resources that serve them live in
museum_tickets.py and museum_reports.py. The availability and the report read counts the
store keeps with each sale, void and admission; the opening hours, entry slots and general
entry capacity come from the config, with the days an admin changed over it
(`days_as_set`). A sale's mail to its buyer is an outbox message made here (`ticket_mails`,
`order_mails`), which the store queues in the sale's own transaction and museum_outbox
delivers.
"""

import csv
import io
import re
from datetime import datetime, timedelta

from museum_vocabulary import EMAIL_MESSAGE, minute_of_day

AVAILABILITY_DAYS_DEFAULT = 7  # today and the 6 days after
AVAILABILITY_DAYS_MAX = 31
REPORT_DAYS_MAX = 366
# doubleEntries came last (1.4), so that a spreadsheet reading columns by place still works.
REPORT_COLUMNS = ("date", "ticketType", "eventId", "eventName", "sold", "void", "admitted",
                  "revenue", "currency", "doubleEntries")
# [auth] visitor_tickets_per_hour: a visitor credential's purchases counted in this window.
PURCHASE_WINDOW = timedelta(hours=1)
PURCHASE_LIMIT_RULE = ("This credential bought as many tickets within the last hour as "
                       "[auth] visitor_tickets_per_hour allows; retry later.")
# [shop]: the orders made without credentials, counted per address and per email.
SHOP_ADDRESS_LIMITED = ("This address made as many orders without credentials within the "
                        "hour as [shop] orders_per_hour allows; retry later.")
SHOP_EMAIL_LIMITED = ("This email has as many orders made without credentials within 24 "
                      "hours as [shop] orders_per_email_per_day allows; retry later.")
# The desk refunds the visits of its own day, and closes that day; other days are an
# admin's, who sees the whole picture (an event cancelled, a complaint by mail).
DESK_VOIDS_TODAYS = ("The desk role voids only tickets dated today at the museum, and orders "
                     "whose tickets all are; any other needs the admin role.")
DESK_READS_TODAY = ("The desk role reads the report of today at the museum only; another "
                    "window needs the admin role.")
TICKET_VIEW_FIELDS = ("ticketId", "ticketType", "ticketDate", "confirmationCode", "price",
                      "currency")


def days_as_set(config, store, start, end):
    """(schedule, capacity) of `config` from the date `start` to `end`, with the days an
    admin changed through the API over the config's rule."""
    changed = store.changed_days(start.isoformat(), end.isoformat())
    return config.schedule.with_changed_days(changed), config.capacity.with_changed_days(changed)


def ticket_view(ticket, status, contacts=False, links=None, staff=False):
    """A ticket as it is read back, with its `status`: with its buyer's email and phone only
    for `contacts` (an admin), and only until they are erased; with what `links` (a
    museum_ticket_page.TicketLinks) adds, its QR's text and its page's link; with its void's
    reason only for `staff` (the museum's: never a buyer, a mail or a webhook)."""
    view = {name: ticket[name] for name in TICKET_VIEW_FIELDS}
    if links is not None:
        view.update(links.of_ticket(ticket))
    if ticket["entryTime"]:
        view["entryTime"] = ticket["entryTime"]
    if ticket["category"]:  # none on tickets sold before categories were kept
        view["category"] = ticket["category"]
    view["status"] = status
    if ticket["eventId"]:
        view.update(eventId=ticket["eventId"], eventName=ticket["eventName"])
    if ticket["admittedAt"]:
        view.update(admittedAt=ticket["admittedAt"], admittedBy=ticket["admittedBy"])
    if contacts and ticket["email"]:
        view["email"] = ticket["email"]
    if contacts and ticket["phone"]:
        view["phone"] = ticket["phone"]
    if staff and ticket["voidReason"]:
        view["voidReason"] = ticket["voidReason"]
    return view


# -- timed entry ----------------------------------------------------------------------------

def check_entry_time(validator, schedule, body, ticket, now):
    """The rules of a purchase's `entryTime` (its HH:MM form is checked with the other
    fields, into `ticket`): with timed entry on, a general ticket names one of its day's
    slots, not one of today's that has ended by `now` (the museum's local time); an event
    ticket never names one, nor does any ticket with timed entry off."""
    given, kind, day = "entryTime" in body, ticket.get("ticketType"), ticket.get("ticketDate")
    if given and kind == "event":
        validator.error("entryTime", "not-allowed", "must not be given for an event ticket")
    elif given and schedule.slot_minutes is None:
        validator.error("entryTime", "not-allowed",
                        "must not be given: this museum has no timed entry")
    elif kind == "general" and schedule.slot_minutes is not None and day:
        slots = schedule.slots_on(day)
        entry = ticket.get("entryTime")
        if not given:
            validator.error("entryTime", "required", "is required: general entry is by entry "
                            "time, one of the day's slots (see the availability)")
        elif entry and slots and entry not in slots:
            validator.error("entryTime", "not-a-slot", f"must be one of the entry times of {day}: "
                            f"{', '.join(slots)}")
        elif entry and day == now.date() and _ended(entry, schedule.slot_minutes, now):
            validator.error("entryTime", "slot-ended",
                            f"the entry slot {entry} of today has ended")


def _ended(entry_time, slot_minutes, now):
    return minute_of_day(entry_time) + slot_minutes <= now.hour * 60 + now.minute


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


def day_availability(day, schedule, capacity, taken, events, now):
    """One day's entry of the availability: open when the `schedule` has hours, the general
    entry's places (None when closed), each entry slot's when timed entry is on (those of
    today that have ended by `now`, the museum's time, with none available), and its
    `events`' places; `taken` is what the store's places_taken gave."""
    key = day.isoformat()
    is_open = schedule.hours_on(day) is not None
    general = places(capacity.on(day), taken["general"].get(key, 0)) if is_open else None
    entry = {"date": key, "open": is_open, "general": general}
    if schedule.slot_minutes is not None:
        sold = taken["slots"].get(key, {})
        entry["slots"] = [_slot(slot, capacity.per_slot, sold.get(slot, 0), day == now.date()
                                and _ended(slot, schedule.slot_minutes, now))
                          for slot in schedule.slots_on(day)]
    return {**entry, "events": events.get(key, [])}


def _slot(time, capacity, sold, ended):
    slot = {"time": time, **places(capacity, sold)}
    if ended:  # no longer sold (check_entry_time)
        slot.update(available=0, ended=True)
    return slot


# -- the sales report ---------------------------------------------------------------------

# A ticket sold alone (POST /tickets, one per call) is counted in this channel; an order's
# tickets in their order's (`web`, `desk`).
SOLD_ALONE = "single"
# A ticket sold before categories were kept is counted in this category in the CSV.
NO_CATEGORY = "(none)"
BREAKDOWN_COUNTS = ("sold", "void", "revenue")
BREAKDOWNS = (("category", "categories"), ("channel", "channels"))  # (column, row's list)


def report_rows(store, start, end, breakdown=False):
    """The report's rows for [start, end] (dates), in REPORT_COLUMNS' terms; with
    `breakdown`, each with its `categories` and `channels`."""
    return [{"date": row["date"], "ticketType": "event" if row["eventId"] else "general",
             "eventId": row["eventId"], "eventName": row["eventName"], "sold": row["sold"],
             "void": row["void"], "admitted": row["admitted"], "revenue": row["revenue"],
             "currency": row["currency"], "doubleEntries": row["doubleEntries"],
             **(_breakdown(row) if breakdown else {})}
            for row in store.sales(start.isoformat(), end.isoformat(), breakdown)]


def arrivals_per_hour(store, start, end, zone):
    """{hour of the day at the museum: admissions} of the tickets dated in [start, end]
    (dates), each admission counted in the hour the museum's clock showed (`zone`: its
    ZoneInfo, None for the server's own): on the day the clocks go back, the hour that
    comes twice counts both."""
    hours = {}
    for quarter in store.arrivals(start.isoformat(), end.isoformat()):
        hour = datetime.fromisoformat(quarter["at"]).astimezone(zone).hour
        hours[hour] = hours.get(hour, 0) + quarter["admitted"]
    return hours


def slot_places_per_hour(config, store, day):
    """{hour of the day: places of the entry slots of `day` starting in it}; None when the
    day has no places by the hour: no timed entry, slots without a capacity, or closed
    (general entry's capacity is the whole day's, which no hour has alone)."""
    schedule, capacity = days_as_set(config, store, day, day)
    slots = schedule.slots_on(day)
    if capacity.per_slot is None or not slots:
        return None
    places = {}
    for slot in slots:
        hour = minute_of_day(slot) // 60
        places[hour] = places.get(hour, 0) + capacity.per_slot
    return places


def _breakdown(row):
    return {"categories": row["categories"],
            "channels": sorted(({**each, "channel": each["channel"] or SOLD_ALONE}
                                for each in row["channels"]), key=lambda each: each["channel"])}


# A cell a spreadsheet would take for a formula (OWASP, CSV injection) is kept as text by a
# "'" before it. A value's cell may begin inside it: a spreadsheet that splits on ";" (where
# the decimal mark is a comma) reads "a;=1+2" as two cells, whatever quotes the csv module
# put around it for ","; so every start of text after a ",", ";", '"' or line end counts.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
CELL_STARTS = re.compile(r'(^|[,;"\r\n])(?=[' + re.escape("".join(FORMULA_STARTS)) + "])")


def report_csv(rows):
    """The rows as CSV (RFC 4180, CRLF line ends) under a header of REPORT_COLUMNS, then
    the breakdown's columns (`breakdown_columns`) when the rows have one."""
    text = io.StringIO()
    writer = csv.writer(text)
    breakdown = breakdown_columns(rows)
    writer.writerow([*REPORT_COLUMNS, *(":".join(column) for column in breakdown)])
    for row in rows:
        counts = {(kind, _breakdown_name(kind, each), count): each[count]
                  for kind, listed in BREAKDOWNS for each in row.get(listed, ())
                  for count in BREAKDOWN_COUNTS}
        writer.writerow([*(_neutralised(row[name]) for name in REPORT_COLUMNS),
                         *(counts.get(column, 0) for column in breakdown)])
    return text.getvalue()


def breakdown_columns(rows):
    """The CSV's columns after REPORT_COLUMNS: for each category found in `rows` (by name),
    then each channel, its sold, void and revenue: `category:adult:sold`, ...,
    `channel:web:revenue` (a ticket of no category counts as NO_CATEGORY)."""
    return [(kind, name, count) for kind, listed in BREAKDOWNS
            for name in sorted({_breakdown_name(kind, each) for row in rows
                                for each in row.get(listed, ())})
            for count in BREAKDOWN_COUNTS]


def _breakdown_name(kind, each):
    return each[kind] or NO_CATEGORY


def _neutralised(value):
    if value is None:
        return ""
    if isinstance(value, str):
        return CELL_STARTS.sub(r"\1'", value)
    return value


def ticket_mails(config, ticket, new_id, created_at):
    """The outbox messages a sale of `ticket` queues with it: the buyer's mail, named by
    `new_id()` and made at `created_at` (RFC 3339 UTC text), when [mail] url is set; none
    otherwise."""
    if not config["mail"]["url"]:
        return []
    return [{**mail_of(ticket_id=ticket["ticketId"], new_id=new_id, created_at=created_at),
             "target": ticket["email"]}]


def order_mails(config, new_id, created_at):
    """A function of a confirmed order (as the store reads it back) to the outbox messages
    its confirmation queues in its transaction (`Store.create_order`, `confirm_order`):
    one mail with all its tickets to the order's email, when it has one and [mail] url is
    set; none otherwise."""
    def mails(order):
        if not config["mail"]["url"] or not order["email"]:
            return []
        return [{**mail_of(order_id=order["orderId"], new_id=new_id, created_at=created_at),
                 "target": order["email"]}]

    return mails


def mail_of(new_id, created_at, ticket_id=None, order_id=None):
    """The mail of one ticket or of one order's tickets as an outbox message, to an address
    the caller adds as its "target" (or the store, for `queue_mail_again`)."""
    named = {"ticketId": ticket_id} if ticket_id else {"orderId": order_id}
    return {"messageId": new_id(), "kind": EMAIL_MESSAGE, "payload": named, **named,
            "createdAt": created_at}

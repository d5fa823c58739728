"""The door's rules, apart from HTTP: the confirmation code and the signed text of a
ticket's QR code, what the door makes of a presented ticket, and what it shows of one.

Used by the door's resources in museum_admissions.py (which turn these outcomes into answers) and by
`museum verify-ticket`; it writes to the store only what admitting a ticket records.
"""

import hashlib
import hmac
import logging
import re
import secrets
import typing
from datetime import date, datetime, timedelta, timezone

import museum_categories
import storage
from museum_vocabulary import ADMIN_ROLE, TICKET_TYPES, minute_of_day, time_of_day

log = logging.getLogger("museum")


# ============================================================================================
# The confirmation code and the QR text
# ============================================================================================

# The code's random part, as groups of hex digits: 44 random bits, like 792d82-891fc.
RANDOM_GROUPS = (6, 5)


def confirmation_code(kind, random_part):
    """The one shape of a code: `ticket-<kind>-<random part>` (the pattern below is made
    with it too)."""
    return f"ticket-{kind}-{random_part}"


RANDOM_PART = re.compile("-".join(f"[0-9a-f]{{{digits}}}" for digits in RANDOM_GROUPS))
CONFIRMATION_CODE = re.compile(confirmation_code(f"({'|'.join(TICKET_TYPES)})",
                                                 RANDOM_PART.pattern))


def new_random_part():
    """A fresh random part of a code, matching RANDOM_PART."""
    groups = (format(secrets.randbits(4 * digits), f"0{digits}x") for digits in RANDOM_GROUPS)
    return "-".join(groups)


def new_confirmation_code(kind):
    """A fresh code for a ticket of `kind`, matching CONFIRMATION_CODE."""
    return confirmation_code(kind, new_random_part())


# An order's code, typed at the door or read from the order's QR to admit all its tickets:
# `order-<random part>`, like order-792d82-891fc.
ORDER_CODE = re.compile(f"order-{RANDOM_PART.pattern}")
ORDER_PREFIX = "order-"


def new_order_code():
    """A fresh order code, matching ORDER_CODE."""
    return f"{ORDER_PREFIX}{new_random_part()}"


def qr_text(secret, ticket_id, code):
    """What the ticket's QR code says: the ticket, its code and an HMAC tag over both (an
    order's QR says the same of the order's id and code)."""
    return f"MUSEUM1:{ticket_id}:{code}:{_qr_tag(secret, ticket_id, code)}"


def _qr_tag(secret, ticket_id, code):
    return hmac.new(secret.encode(), f"{ticket_id}:{code}".encode(), "sha256").hexdigest()[:20]


# The one shape of a ticket's or an order's QR text (see qr_text); anything else is a misread
# or another kind of code (a URL, a Wi-Fi code), never a ticket of this museum.
QR_TEXT = re.compile("MUSEUM1:([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}):"
                     f"({CONFIRMATION_CODE.pattern}|{ORDER_CODE.pattern}):([0-9a-f]{{20}})")


def well_formed_qr_text(text):
    """Whether `text` has the shape of a ticket's QR text, genuine or not."""
    return QR_TEXT.fullmatch(text.strip()) is not None


def read_qr_text(secret, text):
    """(ticket_id, code) when `text` is a genuine ticket QR text (an order's: (order_id,
    order code)), else None."""
    shaped = QR_TEXT.fullmatch(text.strip())
    if shaped is None:
        return None
    ticket_id, code, tag = shaped.group(1), shaped.group(2), shaped.group(4)
    return (ticket_id, code) if hmac.compare_digest(tag, _qr_tag(secret, ticket_id, code)) \
        else None


def typed_codes(typed):
    """The confirmation codes a typed code may be, ignoring case and surrounding spaces:
    itself when whole, the code of either kind of ticket when only its random part was
    typed (`792d82-891fc`), none when it has neither shape."""
    code = typed.strip().lower()
    if CONFIRMATION_CODE.fullmatch(code):
        return [code]
    if RANDOM_PART.fullmatch(code):
        return [confirmation_code(kind, code) for kind in TICKET_TYPES]
    return []


def typed_order_code(typed):
    """The order code a typed code may be, as `typed_codes` reads it: itself when whole,
    the order's code when only a random part was typed; None when it has neither shape."""
    code = typed.strip().lower()
    if ORDER_CODE.fullmatch(code):
        return code
    if RANDOM_PART.fullmatch(code):
        return f"{ORDER_PREFIX}{code}"
    return None


def typed_code_shaped(typed):
    """Whether a typed code has the shape of a ticket's or an order's code (or their random
    part): only such a code is looked up, and counts as a guess when unknown."""
    return bool(typed_codes(typed)) or typed_order_code(typed) is not None


# ============================================================================================
# What the door makes of a ticket
# ============================================================================================

QR_TEXT_LIMIT = 512  # a genuine QR text is about 120 characters
TYPED_CODE_LIMIT = 100  # a confirmation code as typed; a genuine one is 27 characters
DOOR_OUTCOMES = {  # result: (status, detail); `admitted` answers 201 with the admission
    "already-admitted": (409, "This ticket was admitted before."),  # see already_admitted
    "wrong-date": (409, "This ticket is for another day."),  # detail: see `wrong_date`
    "too-early": (409, "This ticket's entry time has not come."),  # see EntryTimes.detail
    "unpaid": (409, "This ticket's order is not paid yet: it is on hold until it is."),
    "ambiguous": (409, "These digits end both a ticket's code and an order's; type the "
                       "whole code."),
    "cancelled": (410, "The event of this ticket was cancelled."),
    "void": (410, "This ticket was voided."),
    "forged": (422, "This is not a genuine ticket of this museum."),
    "unreadable": (422, "This is not a museum ticket's QR code; scan again."),
    "unknown": (404, "No ticket with this code was sold."),
}
ORDER_DETAILS = {  # what the door says of a whole order refused, where a ticket's words differ
    "unpaid": "This order is not paid yet: it is on hold until it is.",
    "void": "This order was cancelled or voided, or its hold ended unpaid.",
    "already-admitted": "Every ticket of this order valid today was admitted before.",
    "wrong-date": "No ticket of this order is for today.",
    "too-early": "The entry time of this order's tickets has not come.",
    "cancelled": "The event of this order's tickets was cancelled.",
}
# Of an order with no ticket admitted, the refusal its tickets' results make, the first of
# these found: a ticket of today says more than one of another day.
ORDER_REFUSALS = ("already-admitted", "too-early", "wrong-date", "cancelled", "void")
# The same user scanning a ticket it admitted this long ago is told so (`sameDevice`): a
# second look at the visitor in front of it, not a ticket passed back through the queue.
SAME_DEVICE_WINDOW = timedelta(minutes=2)
DOOR_FIELDS = ("ticketId", "ticketType", "ticketDate", "confirmationCode")
TICKET_STATUSES = ("valid", "admitted", "void", "cancelled", "unpaid")


def _found(find, key):
    try:
        return find(key)
    except storage.NotFound:
        return None


def door_check(store, secret, today, entry_times, qr_text=None, code=None):
    """What the door makes of a presented ticket or order, from its QR text or its typed
    code (see `typed_codes` and `typed_order_code`), on `today` and by `entry_times`:
    `(result, ticket)`, result one of `admittable`, `already-admitted`, `wrong-date`,
    `too-early`, `unpaid` (its order is on hold), `cancelled`, `void` (with the ticket),
    `forged`, `unreadable` (not a QR text's shape, or a typed code not shaped as a code),
    `ambiguous` (typed digits ending a ticket's code and an order's) or `unknown` (ticket
    None); for an order, `("order", order)` (the order as read back; `order_check` judges
    it). Reads only."""
    if (qr_text is not None and not well_formed_qr_text(qr_text)) or (
            code is not None and not typed_code_shaped(code)):
        return "unreadable", None
    now = _utc_text(entry_times.now())
    if qr_text is not None:
        genuine = read_qr_text(secret, qr_text)
        if genuine is None:
            return "forged", None
        found_id, code = genuine
        if code.startswith(ORDER_PREFIX):
            order = _found(lambda order_code: store.get_order_by_code(order_code, now), code)
            if order is not None and order["orderId"] != found_id:
                return "forged", None
            return ("order", order) if order else ("unknown", None)
        ticket = _found(store.get_ticket, found_id)
        if ticket is not None and ticket["confirmationCode"] != code:
            return "forged", None
    else:
        found = (_found(store.get_ticket_by_code, typed) for typed in typed_codes(code))
        ticket = next(filter(None, found), None)
        order_code = typed_order_code(code)
        order = order_code and _found(
            lambda order_code: store.get_order_by_code(order_code, now), order_code)
        if order and ticket:
            return "ambiguous", None
        if order:
            return "order", order
    if ticket is None:
        return "unknown", None
    return ticket_check(ticket, today, entry_times), ticket


def ticket_check(ticket, today, entry_times):
    """`door_check`'s result for a ticket found: `admittable` or why not."""
    status = door_status(ticket, entry_times.now())
    if status in ("void", "cancelled", "unpaid"):
        return status
    if status == "admitted":
        return "already-admitted"
    if ticket["ticketDate"] != today.isoformat():
        return "wrong-date"
    if entry_times.too_early(ticket):
        return "too-early"
    return "admittable"


def order_check(order):
    """What the door makes of an order as a whole: `admittable` (confirmed: each ticket is
    judged as it would be alone), `unpaid` (pending: on hold) or `void` (expired,
    cancelled or voided)."""
    if order["status"] == "pending":
        return "unpaid"
    return "admittable" if order["status"] == "confirmed" else "void"


def admit(store, secret, today, entry_times, scan, **presented):
    """Admit a presented ticket or order (as `door_check` takes it) as `scan` says (a Scan):
    `(result, ticket)`, result `admitted` (the ticket with its admission, and `collect`
    when the door takes its order's payment: see `order_collect`) or, when not
    admittable, `door_check`'s; an already admitted ticket carries `sameDevice` or
    `doubleEntry` (see `already_admitted`). An order answers as `admit_order`. A scan's key
    used before answers what it did then."""
    if scan.idempotency is not None:
        replayed = store.replayed_scan(*scan.idempotency)
        if replayed is not None:
            return _replayed(store, scan, replayed, today, entry_times, presented)
    result, ticket = door_check(store, secret, today, entry_times, **presented)
    if result == "order":
        return admit_order(store, today, entry_times, scan, ticket)
    if result == "already-admitted":
        return result, already_admitted(store, scan, ticket)
    if result != "admittable":
        return result, ticket
    collect = ticket_collect(store, ticket, scan.now)  # as its order stands before
    admission, admitted = store.admit(ticket["ticketId"], scan.user, scan.at, scan.idempotency)
    if admitted:
        return "admitted", {**ticket, **admission, **collect}
    # Another gate was a moment faster.
    return "already-admitted", already_admitted(store, scan, {**ticket, **admission})


def admit_order(store, today, entry_times, scan, order):
    """Admit, in one scan, every ticket of a confirmed `order` that would be admitted alone:
    `(result, order)`, the order's tickets each with its own `result` (`admitted`, or why
    not). Result `admitted` when at least one was; else the order's refusal (`unpaid`,
    `void`) or the first of ORDER_REFUSALS among its tickets' results. A ticket already
    admitted is never recorded as a double entry here: the door's page decides offline
    only the tickets of its list, never an order."""
    result = order_check(order)
    if result != "admittable":
        return result, {**order, "tickets": [{**ticket, "result": result}
                                             for ticket in order["tickets"]]}
    results = {ticket["ticketId"]: ticket_check(ticket, today, entry_times)
               for ticket in order["tickets"]}
    admittable = [ticket_id for ticket_id, each in results.items() if each == "admittable"]
    admissions = store.admit_tickets(admittable, scan.user, scan.at, scan.idempotency) \
        if admittable else {}
    return _order_admitted(order, results, admissions, scan,
                           order_collect(order, today.isoformat()))


def _order_admitted(order, results, admissions, scan, collect):
    """The order's answer from each ticket's result and the admissions made of those
    admittable ({ticket id: (admission, admitted)}), with `collect` (see `order_collect`)
    when one was."""
    tickets = []
    for ticket in order["tickets"]:
        result = results[ticket["ticketId"]]
        if ticket["ticketId"] in admissions:
            admission, admitted = admissions[ticket["ticketId"]]
            # Not admitted by this scan: another gate was a moment faster.
            ticket = {**ticket, **admission}
            result = "admitted" if admitted else "already-admitted"
        if result == "already-admitted":
            ticket = already_seen(scan, ticket)
        tickets.append({**ticket, "result": result})
    order = {**order, "tickets": tickets}
    if any(ticket["result"] == "admitted" for ticket in tickets):
        return "admitted", {**order, **collect}
    found = {ticket["result"] for ticket in tickets}
    return next((result for result in ORDER_REFUSALS if result in found), "void"), order


def order_collect(order, day, earlier_than=None):
    """`{"collect": what the door takes}` (see `to_collect`) for a scan admitting tickets of
    `order` on `day` (ISO date), when the order is to be paid at the desk and not paid yet
    (`payment` "due") and none of its tickets of that day was admitted before: as `order`
    was read before the scan admitted (or, for a scan replayed, admitted earlier than its
    admission's time `earlier_than`); else {}. So the whole order's price is asked for
    once a day, however its tickets come in: the order's code, or each ticket alone at any
    gate (two gates admitting two of them at the same moment may both ask; none is left
    unasked)."""
    if order["payment"] != storage.PAYMENT_DUE or any(
            ticket["ticketDate"] == day and ticket["admittedAt"] and (
                earlier_than is None or _utc(ticket["admittedAt"]) < _utc(earlier_than))
            for ticket in order["tickets"]):
        return {}
    due = sum(storage.minor_units(ticket["price"]) for ticket in order["tickets"]
              if not ticket["voidedAt"])
    return {"collect": to_collect(due, order["tickets"][0]["currency"])}


def ticket_collect(store, ticket, now, earlier_than=None):
    """`order_collect` for a scan of one `ticket` at `now`: its order is read only when it
    is to be paid at the desk and not paid yet."""
    if ticket.get("payment") != storage.PAYMENT_DUE:
        return {}
    order = store.get_order_by_code(ticket["orderCode"], _utc_text(now))
    return order_collect(order, ticket["ticketDate"], earlier_than)


def to_collect(hundredths, currency):
    """What the door takes for an order paid at the desk: `{"amount": "25.00", "currency":
    "EUR"}`, the amount exact, with its two decimals, as it is said aloud and shown."""
    return {"amount": f"{hundredths // 100}.{hundredths % 100:02d}", "currency": currency}


def _utc_text(moment):
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class Scan(typing.NamedTuple):
    """Who scanned and when: `user`, `at` (RFC 3339 UTC text: the time admitted), `now`
    (an aware datetime), `offline` (admitted by the page offline at `at`, sent later) and
    `idempotency` (`(user, key, fingerprint)` of its Idempotency-Key, or None)."""

    user: str
    at: str
    now: datetime
    offline: bool = False
    idempotency: tuple = None


def already_admitted(store, scan, ticket):
    """The admitted ticket as the door shows it to `scan`: `sameDevice` when this user
    admitted it within SAME_DEVICE_WINDOW (of now, or of an offline scan's time); else, for
    a scan admitted offline, a double entry recorded and `doubleEntry`."""
    seen = already_seen(scan, ticket)
    if seen.get("sameDevice") or not scan.offline:
        return seen
    admission, _ = store.record_double_entry(ticket["ticketId"], scan.user, scan.at,
                                             scan.idempotency)
    if admission is None:  # undone in the meantime: the offline admission stands alone
        return ticket
    return {**ticket, **admission, "doubleEntry": True}


def already_seen(scan, ticket):
    """The admitted ticket with `sameDevice` when this user admitted it within
    SAME_DEVICE_WINDOW (of now, or of an offline scan's time)."""
    if ticket["admittedBy"] == scan.user and any(
            abs(moment - _utc(ticket["admittedAt"])) <= SAME_DEVICE_WINDOW
            for moment in (scan.now, _utc(scan.at))):
        return {**ticket, "sameDevice": True}
    return ticket


def _replayed(store, scan, replayed, today, entry_times, presented):
    ticket = store.get_ticket(replayed["ticketId"])
    if ticket["orderCode"] and _presented_code(presented) == ticket["orderCode"]:
        return _order_replayed(store, scan, replayed, today, entry_times, ticket["orderCode"])
    if replayed["outcome"] == "admitted":  # the admission it made, as answered then
        return "admitted", {**ticket, "admittedAt": replayed["at"], "admittedBy": scan.user,
                            **ticket_collect(store, ticket, scan.now, replayed["at"])}
    return "already-admitted", {**ticket, "doubleEntry": True}


def _presented_code(presented):
    """The code a presentation names: the typed one (an order's, when shaped as one), or
    the one in a QR text."""
    if "code" in presented:
        return typed_order_code(presented["code"])
    return QR_TEXT.fullmatch(presented["qr_text"].strip()).group(2)


def _order_replayed(store, scan, replayed, today, entry_times, order_code):
    """What an order's scan under a key used before did: the tickets it admitted (the
    key's, and those admitted by the same user at the same moment), the others as they
    stand."""
    order = store.get_order_by_code(order_code, _utc_text(entry_times.now()))
    made = {"admittedAt": replayed["at"], "admittedBy": scan.user}
    admissions = {ticket["ticketId"]: (made, True) for ticket in order["tickets"]
                  if ticket["ticketId"] == replayed["ticketId"] or (
                      ticket["admittedAt"], ticket["admittedBy"]) == (replayed["at"], scan.user)}
    results = {ticket["ticketId"]: ticket_check(ticket, today, entry_times)
               for ticket in order["tickets"]}
    return _order_admitted(order, results, admissions, scan,
                           order_collect(order, today.isoformat(), replayed["at"]))


def _utc(text):
    return datetime.fromisoformat(text).astimezone(timezone.utc)


def ticket_status(ticket):
    """One of TICKET_STATUSES: a void ticket is void whatever else happened to it."""
    if ticket["voidedAt"]:
        return "void"
    if ticket["cancelled"]:
        return "cancelled"
    return "admitted" if ticket["admittedAt"] else "valid"


def door_status(ticket, now):
    """The ticket's status at the door at `now` (an aware datetime): as `ticket_status`
    says, but `unpaid` while its order is on hold, `void` once that hold ended unpaid."""
    status = ticket_status(ticket)
    if status == "valid" and ticket.get("heldUntil"):
        return "unpaid" if _utc(ticket["heldUntil"]) > now else "void"
    return status


def door_details(ticket, config=None):
    """What the door shows of a ticket: never its buyer's email or phone; its price
    category, with its label and door note as `config` has them."""
    details = {name: ticket[name] for name in DOOR_FIELDS}
    if ticket.get("category"):
        details["category"] = ticket["category"]
        category = config and museum_categories.by_name(config, ticket["category"])
        if category:
            details["categoryLabel"] = category.label
            if category.note:
                details["doorNote"] = category.note
    if ticket["eventName"]:
        details["eventName"] = ticket["eventName"]
    if ticket.get("entryTime"):
        details["entryTime"] = ticket["entryTime"]
    if ticket["admittedAt"]:
        details.update(admittedAt=ticket["admittedAt"], admittedBy=ticket["admittedBy"])
    details.update({flag: True for flag in SCAN_FLAGS if ticket.get(flag)})
    if ticket.get("collect"):
        details["collect"] = ticket["collect"]
    return details


SCAN_FLAGS = ("sameDevice", "doubleEntry")  # what `already_admitted` may add


def order_details(order, config):
    """What the door shows of an order scanned (see `admit_order`): its code, how many of
    its tickets this scan admitted, and each ticket's details and result."""
    tickets = [{**door_details(ticket, config), "result": ticket["result"]}
               for ticket in order["tickets"] if "result" in ticket]
    details = {"orderCode": order["orderCode"],
               "admitted": sum(ticket["result"] == "admitted" for ticket in tickets),
               "tickets": tickets}
    if order.get("collect"):
        details["collect"] = order["collect"]
    return details


def lookup_details(ticket, now, config=None):
    """What a lookup shows of a ticket at `now`: the door's details, its event, status
    and order's code; never its buyer's email or phone."""
    details = door_details(ticket, config)
    if ticket["eventId"]:
        details["eventId"] = ticket["eventId"]
    if ticket["orderCode"]:
        details["orderCode"] = ticket["orderCode"]
    # The desk finds a ticket's order by its id, and the staff who look see why it was void.
    if ticket["orderId"]:
        details["orderId"] = ticket["orderId"]
    if ticket["voidReason"]:
        details["voidReason"] = ticket["voidReason"]
    return {**details, "status": door_status(ticket, now),
            "admitted": bool(ticket["admittedAt"])}


def wrong_date(ticket, today):
    """`(when, detail)` of a ticket for another day: `early` or `past`, and a detail such as
    `early: ticket for 2026-12-05 (in 12 days)` or `past: ticket was for 2026-11-20`."""
    day = date.fromisoformat(ticket["ticketDate"])
    if day < today:
        return "past", f"past: ticket was for {day}"
    days = (day - today).days
    return "early", f"early: ticket for {day} (in {days} day{'' if days == 1 else 's'})"


def verify_ticket(text, secret, store, today, entry_times):
    """The door's verdict on a scanned QR text or a typed confirmation code (whole or its
    random part), read only: `valid …`, `already admitted …`, `forged`, `unknown`,
    `cancelled`, `void`, `unpaid`, `wrong date, early: …` / `wrong date, past: …` or `too
    early: …` (EntryTimes); for an order, `order …: N of M tickets admittable today` or
    its refusal."""
    presented = {"code": text} if typed_code_shaped(text) else {"qr_text": text}
    result, ticket = door_check(store, secret, today, entry_times, **presented)
    if result == "order":
        if order_check(ticket) != "admittable":
            return f"order {ticket['orderCode']}: {order_check(ticket)}"
        admittable = sum(ticket_check(each, today, entry_times) == "admittable"
                         for each in ticket["tickets"])
        return (f"order {ticket['orderCode']}: {admittable} of {len(ticket['tickets'])} "
                f"tickets admittable today")
    if result == "wrong-date":
        return f"wrong date, {wrong_date(ticket, today)[1]}"
    if result == "too-early":
        return entry_times.detail(ticket)
    if result == "already-admitted":
        return f"already admitted at {ticket['admittedAt']} by {ticket['admittedBy']}"
    if result != "admittable":
        return result
    what = f"event {ticket['eventName']}" if ticket["eventName"] else "general entry"
    return f"valid: {what}, {ticket['ticketDate']}, not admitted yet"


# ============================================================================================
# The door's list: the day's tickets, for the page to decide without the service
# ============================================================================================

LIST_COLUMNS = ("ticketId", "codeDigest", "event", "entryTime", "category", "status",
                "admittedAt", "admittedBy", "orderId", "collect")
CURSOR = re.compile(r"(\d{4}-\d{2}-\d{2})\.(\d{1,18})")


def code_digest(code):
    """What the list shows of a confirmation code: the first 16 hex digits of its SHA-256,
    which the page computes over the code it reads, and which gives the code away to no
    one without it."""
    return hashlib.sha256(code.encode()).hexdigest()[:16]


def door_list(listed, day, since, zone_name, now):
    """The list's answer (see LIST_COLUMNS) of `listed` (Store.door_list) for `day`, whole
    or (`since` a version) its changes: one row per ticket, by ticket id; `event` an index
    into `events`; admittedAt and admittedBy only on admitted rows, in the museum's zone
    (that of `now`, the time at the museum)."""
    events, rows = {}, []
    for ticket in sorted(listed["tickets"], key=lambda ticket: ticket["ticketId"]):
        event = None
        if ticket["eventId"]:
            event = events.setdefault(ticket["eventId"], (len(events), ticket["eventName"]))[0]
        status = door_status(ticket, now)
        row = [ticket["ticketId"], code_digest(ticket["confirmationCode"]), event,
               ticket["entryTime"], None, status]
        if status == "admitted":
            admitted_at = datetime.fromisoformat(ticket["admittedAt"]).astimezone(now.tzinfo)
            row += [admitted_at.isoformat(timespec="seconds"), ticket["admittedBy"]]
        rows.append(row + _listed_collect(ticket, len(row)))
    return {"date": day.isoformat(), "timeZone": zone_name,
            "now": now.isoformat(timespec="seconds"),
            "cursor": f"{day.isoformat()}.{listed['version']}", "complete": since is None,
            "events": [{"eventId": event_id, "eventName": name}
                       for event_id, (_, name) in events.items()],
            "columns": list(LIST_COLUMNS), "tickets": rows}


def _listed_collect(ticket, length):
    """The cells a row of `length` cells gains for a ticket of an order paid at the desk and
    not paid yet: its order's id and what to collect (`to_collect`), after `admittedBy`
    (null, with `admittedAt`, until admitted); none for any other ticket. The page says
    what to collect offline as the service would: once, with the first of the order's
    tickets of the day it admits (it sees the others' rows)."""
    if ticket["payment"] != storage.PAYMENT_DUE:
        return []
    return [None] * (LIST_COLUMNS.index("orderId") - length) + [
        ticket["orderId"], to_collect(storage.minor_units(ticket["orderDue"]),
                                      ticket["currency"])]


def read_cursor(validator, name, text, day):
    """The version in a list's cursor for `day`; an error for another day's or a malformed
    one."""
    shaped = CURSOR.fullmatch(text)
    if shaped is None or shaped.group(1) != day.isoformat():
        validator.error(name, "not-a-cursor",
                        f"must be a cursor of an earlier answer for {day.isoformat()}")
        return None
    return int(shaped.group(2))


def list_etag(day, since, version, events_version, zone_name):
    """The strong validator of a list answer: it changes with every change of the day's
    tickets and of any event (their names). The answer's `now` is left out: it is the
    clock's reading, not the list's state."""
    state = f"{day.isoformat()}|{since}|{version}|{events_version}|{zone_name}"
    return hashlib.sha256(state.encode()).hexdigest()[:20]


UNDO_WINDOW = timedelta(minutes=10)
UNDO_RULE = (f"A gate may undo only its own admissions, within {UNDO_WINDOW.seconds // 60} "
             f"minutes; ask an admin.")


def may_undo(user, admission, now):
    """Whether `user` may undo `admission` (see UNDO_RULE): an admin at any time, the gate
    that made it within UNDO_WINDOW."""
    return user.role == ADMIN_ROLE or (
        admission["admittedBy"] == user.name
        and now - datetime.fromisoformat(admission["admittedAt"]) <= UNDO_WINDOW)


class UndoLimit:
    """A gate undoes one ticket's admission (and so admits it again) at most MOST times a
    day at the museum: an admission undone and made again without end would let one ticket
    in many times, and hide it. An admin has no limit."""

    MOST = 3
    RULE = (f"This gate has undone this ticket's admission {MOST} times today, as many as a "
            f"gate may; ask an admin.")

    def __init__(self, now):
        self.now = now  # the time at the museum

    def limit(self, user):
        """`(most, since)` for Store.undo_admission (None for an admin): since the start of
        today at the museum, as RFC 3339 UTC text."""
        if user.role == ADMIN_ROLE:
            return None
        return self.MOST, self._day_starts().astimezone(timezone.utc).strftime(
            "%Y-%m-%dT%H:%M:%SZ")

    def day_ends(self):
        """When today ends at the museum, and the limit with it."""
        return self._day_starts() + timedelta(days=1)

    def _day_starts(self):
        return self.now().replace(hour=0, minute=0, second=0, microsecond=0)


class TypedCodeLimit:
    """Codes typed at the door, and lookups of lost tickets, can be guessed there: after
    LIMIT of them within a window of WINDOW seconds (unknown codes, every lookup), a user
    (a device, or a person signed in at the door) is refused until the window ends (a hit
    would give away a ticket's id, with which any signed-in user fetches its image). One
    limit shared by the door and the lookup, and by every instance: the counts are the
    store's (`count_guess`). A QR text is no guess and costs no count."""

    LIMIT = 30
    WINDOW = 60

    def __init__(self, store, clock):
        self.store = store
        self.clock = clock  # an aware datetime: now

    def seconds_refused(self, user):
        """How long `user` is still refused (0: not refused)."""
        return self._refused_for(*self.store.guesses(user))

    def count(self, user):
        """Count one guess of `user`; return how long it is refused from now on (0: not
        refused). The one too many starts the refusal, and is logged."""
        guesses, start = self.store.count_guess(user, self.clock().timestamp(), self.WINDOW)
        if guesses == self.LIMIT + 1:
            log.warning("admissions refused to %s for up to %d s: more than %d unknown ticket "
                        "codes or lookups within %d s", user, self.WINDOW, self.LIMIT,
                        self.WINDOW)
        return self._refused_for(guesses, start)

    def _refused_for(self, guesses, start):
        if guesses <= self.LIMIT:
            return 0
        return max(0.0, start + self.WINDOW - self.clock().timestamp())


class EntryTimes:
    """Timed entry at the door: a ticket with an entry slot is admitted from `early_minutes`
    before its slot, and from then on that day as any ticket of its day."""

    def __init__(self, early_minutes, now):
        self.early_minutes = early_minutes
        self.now = now  # the time at the museum

    def _opens(self, ticket):
        return max(minute_of_day(ticket["entryTime"]) - self.early_minutes, 0)

    def too_early(self, ticket):
        """Whether a ticket of today came before it may be admitted."""
        if not ticket["entryTime"]:
            return False
        now = self.now()
        return now.hour * 60 + now.minute < self._opens(ticket)

    def at(self, moment):
        """The same rule at `moment` (the time at the museum), for a scan made earlier."""
        return EntryTimes(self.early_minutes, lambda: moment)

    def detail(self, ticket):
        """What the door says to a ticket that came too early."""
        return (f"too early: entry at {ticket['entryTime']}, admitted from "
                f"{time_of_day(self._opens(ticket))}")

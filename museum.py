"""The museum service: opening hours, special events and tickets over HTTP/JSON.

One WSGI application (Falcon) behind HTTP Basic auth, all API paths under /v1.1, served by
waitress from the `museum` command (museum_cli.py). Sections, in order: the declared body
fields, resources (one class per path), the application. Beside it: the Validator and how
declared fields are checked in museum_validation.py, the configuration and password
hashes in museum_config.py, signing in in museum_auth.py, the access log in
museum_access_log.py, problem answers, JSON bodies, query parameters, paging headers and the
router in museum_http.py, the events' listing cache in museum_listings.py, the scanner
page's files in museum_pages/, the door's rules in museum_door.py, and what the app shares
with the command line and the mock in museum_services.py.
"""

import functools
import hashlib
import json
import logging
import math
import re
import threading
from datetime import date, datetime, timedelta

import falcon
import falcon.inspect

import museum_auth
import museum_categories
import museum_listings
import museum_openapi
import museum_privacy
import museum_sales
import storage
from museum_access_log import AccessLog, SafeHeaders, exit_cleanly_on_sigterm, open_access_log
from museum_codes import field_error
from museum_config import (ADMIN_ROLE, CAPACITY_MAX, GATE_ROLE, PRICE_MAX, TICKET_LABELS,
                           TICKET_TYPES, TIME_OF_DAY, VISITOR_ROLE, LiveConfig, check_passwords,
                           load_config)
from museum_days import DAY_FIELDS, HOURS_HORIZON_DAYS, MuseumDay, MuseumHours, days_as_set
# Raised and used by integrators who embed the app (docs/production.md): part of its API.
from museum_config import ConfigError, parse_config  # noqa: F401
from museum_door import (DOOR_OUTCOMES, QR_TEXT_LIMIT, TYPED_CODE_LIMIT, UNDO_RULE, EntryTimes,
                         Scan, TypedCodeLimit, UndoLimit, admit, door_details, door_list,
                         list_etag, lookup_details, may_undo, new_confirmation_code, qr_text,
                         read_cursor, ticket_status, typed_codes, wrong_date)
from museum_http import (BAD_QUERY, BODY_LIMIT, KEY_REUSED, PAGE_MAX, PAGE_SIZE_DEFAULT,
                         PAGE_SIZE_MAX, Problem, Router, closed_on, date_window, json_response,
                         paging, parse_query, read_json, rfc3339, set_paging_headers,
                         storage_error_as_problem, to_json, unexpected_error, write_problem)
from museum_openapi import (DATE_SCHEMA, UUID_SCHEMA, Answer, Operation, anchored, query, ref,
                            trimmed_text)
from museum_services import (museum_now, museum_today, museum_zone_name, new_uuid,
                             open_configured_store, qr_secret, utc_now)
from museum_pages import PageFile
from museum_ticket_image import TicketImages
from museum_validation import (EMAIL_MAX, PHONE, Field, Validator, When, check_fields,
                               checked_by)

# Two versions, kept apart: the software's own (semantic; a fix or a new option makes a new
# one, pyproject.toml reads it) and the interface's, which the OpenAPI document's
# info.version states and which changes only when the API does.
__version__ = "1.4.0"
INTERFACE_VERSION = "1.3.0"
API = "/v1.1"
log = logging.getLogger("museum")
# waitress-serve leaves SIGTERM to its default, which kills the process before the access
# lines waiting are written (museum_access_log): a host without a handler of its own has it
# made an exit, as Ctrl-C is. Only the main thread may set it, and it imports this module.
exit_cleanly_on_sigterm()


# ============================================================================================
# Validation
# ============================================================================================

IDEMPOTENCY_KEY = re.compile(r"[\x21-\x7e]{1,200}")
# The limits below are also the OpenAPI document's (openapi_description hands them over).
NAME_MAX = 200  # an event's name and location, after trimming
DESCRIPTION_MAX = 5000
EVENT_DATES_MAX = 366


def _event_dates(validator, name, value):
    if not isinstance(value, list) or not 1 <= len(value) <= EVENT_DATES_MAX:
        validator.error(name, "not-a-date-list", f"must be a list of 1 to {EVENT_DATES_MAX} dates")
        return None
    days = [validator.date(f"{name}[{index}]", item) for index, item in enumerate(value)]
    return sorted({day.isoformat() for day in days if day})


EMAIL_SCHEMA = {"type": "string", "format": "email", "maxLength": EMAIL_MAX}
# The writable fields of an event: its create and change bodies, and the event itself.
EVENT_FIELDS = {
    "name": Field(checked_by(Validator.text, NAME_MAX), trimmed_text(NAME_MAX),
                  "Pirate Coding Workshop", True),
    "location": Field(checked_by(Validator.text, NAME_MAX), trimmed_text(NAME_MAX),
                      "Seven Seas Gallery", True),
    "eventDescription": Field(checked_by(Validator.text, DESCRIPTION_MAX, True),
                              trimmed_text(DESCRIPTION_MAX),
                              "Learn to code like a pirate: treasure maps, loops and parrots.",
                              True),
    "dates": Field(_event_dates, {
        "type": "array", "minItems": 1, "maxItems": EVENT_DATES_MAX, "items": DATE_SCHEMA,
        "description": "The event's days; returned sorted, without duplicates."},
        ["2027-10-30", "2027-10-31"], True),
    "price": Field(checked_by(Validator.price), {
        "type": "number", "minimum": 0, "maximum": PRICE_MAX,
        "description": "Price of one event ticket in the museum's currency, with at most 2 "
        "decimals (more is refused, 400); kept exactly. A ticket keeps the price it was sold "
        "at when the event's price changes later."}, 25, True),
    "capacity": Field(checked_by(Validator.whole_number, 1, CAPACITY_MAX), {
        "type": "integer", "minimum": 1, "maximum": CAPACITY_MAX,
        "description": "Places on each of the event's dates; without it, unlimited. Returned "
        "only when set; `null` in a change removes it (unlimited again)."}, 20,
        nullable_in_patch=True),
    "prices": museum_categories.PRICES_FIELD,
}
TICKET_FIELDS = {
    "ticketType": Field(checked_by(Validator.choice, TICKET_TYPES),
                        ref("schemas", "TicketType"), "event", True),
    "ticketDate": Field(checked_by(Validator.date), {**DATE_SCHEMA, "description": "The day "
                        "of the visit: an open day, not before today."}, "2027-10-30", True),
    "email": Field(checked_by(Validator.email), EMAIL_SCHEMA, "visitor@example.com", True),
    "phone": Field(checked_by(Validator.phone), {"type": "string", "pattern": anchored(PHONE),
                   "description": "At least 7 of its characters are digits."}, "+1 555-0100"),
    "eventId": Field(checked_by(Validator.uuid), UUID_SCHEMA,
                     "3f1c9a52-7d4e-4b8a-9c61-2e5f0d8b7a14", When("ticketType", "event")),
    "entryTime": Field(checked_by(Validator.time_of_day), {"type": "string", "pattern": anchored(
        TIME_OF_DAY), "description": "With timed entry, a general ticket's entry slot (one of "
        "the day's `slots` in the availability), required; otherwise refused."}, "10:30"),
    "category": museum_categories.CATEGORY_FIELD,
}


# ============================================================================================
# Resources, one class per path
# ============================================================================================

# Each resource describes its operations (museum_openapi.Operation) in `described`.
PAGED = ("XTotalCount", "Link")  # the headers of a page of a listing


class Health:
    """200 while the database answers and takes writes; 503 saying why otherwise. The store
    logs the outage once: not here, where a load balancer asks every few seconds."""

    auth_required = False
    ANSWER = to_json({"status": "ok", "version": __version__, "interface": INTERFACE_VERSION})

    def __init__(self, store):
        self.store = store

    def on_get(self, req, resp):
        try:
            self.store.health()
        except storage.Unavailable as reason:
            raise Problem(503, f"The database cannot serve: {reason}",
                          headers={"Retry-After": "5"}) from reason
        resp.data = self.ANSWER


class OpenAPIDocument:
    """The OpenAPI description of this interface; public, so clients can be generated."""

    auth_required = False
    described = {"get": Operation("getOpenApiDescription", "Description",
                                  "Get this OpenAPI description",
                                  answers={200: Answer("This document.", {"type": "object"})})}

    def on_get(self, req, resp):
        json_response(resp, openapi_description())


class SpecialEvents:
    needed_roles = {"GET": VISITOR_ROLE, "POST": ADMIN_ROLE}
    described = {
        "post": Operation("createSpecialEvent", "Events", "Create a special event", (), {
            201: Answer("The event was created.", "SpecialEvent", ("Location",))},
            "SpecialEventCreate"),
        "get": Operation("listSpecialEvents", "Events", "List special events",
                         ("StartDate", "EndDate", "Page", "Limit"), {200: Answer(
                             "One page of events.", "SpecialEventList", PAGED)})}

    def __init__(self, store, live, today, new_id, public_url):
        self.store = store
        self.live = live  # museum_config.LiveConfig: the price categories
        self.today = today
        self.new_id = new_id
        self.public_url = public_url
        self.listings = museum_listings.ListingCache(store)

    def on_post(self, req, resp):
        validator = Validator()
        event = check_fields(read_json(req), EVENT_FIELDS, validator)
        museum_categories.check_event_prices(validator, self.live.config, event.get("prices"))
        validator.raise_if_invalid()
        event = self.store.create_event({"eventId": self.new_id(), **event})
        json_response(resp, event, 201)
        resp.location = f"{self.public_url}{API}/special-events/{event['eventId']}"

    def on_get(self, req, resp):
        validator = Validator()
        start, end = date_window(req, validator, self.today())
        page, limit = paging(req, validator)
        validator.raise_if_invalid(BAD_QUERY)
        resp.data, total = self.listings.page(
            start.isoformat(), end and end.isoformat(), (page - 1) * limit, limit)
        set_paging_headers(req, resp, self.public_url, page, limit, total)


class SpecialEvent:
    needed_roles = {"GET": VISITOR_ROLE, "PATCH": ADMIN_ROLE, "DELETE": ADMIN_ROLE}
    described = {
        "get": Operation("getSpecialEvent", "Events", "Get a special event", ("EventId",),
                         {200: "SpecialEvent", 404: "NotFound"}),
        "patch": Operation("updateSpecialEvent", "Events", "Update a special event",
                           ("EventId",), {200: "SpecialEvent", 404: "NotFound",
                                          409: "EventChangeRefused"}, "SpecialEventUpdate"),
        "delete": Operation("deleteSpecialEvent", "Events", "Cancel a special event",
                            ("EventId",), {204: Answer("The event was cancelled.", None),
                                           404: "NotFound"})}

    def __init__(self, store, live):
        self.store = store
        self.live = live  # museum_config.LiveConfig: the price categories

    def on_get(self, req, resp, event_id):
        json_response(resp, self.store.get_event(_path_uuid(event_id, "eventId")))

    def on_patch(self, req, resp, event_id):
        event_id = _path_uuid(event_id, "eventId")
        validator = Validator()
        changes = check_fields(read_json(req), EVENT_FIELDS, validator, change=True)
        museum_categories.check_event_prices(validator, self.live.config, changes.get("prices"))
        validator.raise_if_invalid()
        event = self.store.update_event(event_id, changes) if changes \
            else self.store.get_event(event_id)
        json_response(resp, event)

    def on_delete(self, req, resp, event_id):
        self.store.cancel_event(_path_uuid(event_id, "eventId"))
        resp.status = 204


def _path_uuid(value, name):
    validator = Validator()
    checked = validator.uuid(name, value)
    validator.raise_if_invalid(f"The {name} in the path is not a UUID.")
    return checked


# Tickets sell at most this many days ahead: a contact is erased keep_contact_days after
# its ticket's date, so a ticket dated in 9999 would keep its buyer's email for ever.
SALE_HORIZON_DAYS = 366


class Tickets:
    """Buying a ticket (any role), and the list of an event's buyers (admin)."""

    needed_roles = {"POST": VISITOR_ROLE, "GET": ADMIN_ROLE}
    described = {
        "post": Operation("buyMuseumTickets", "Tickets", "Buy a museum ticket",
                          ("IdempotencyKey",), {201: Answer(
                              "The ticket was bought.", "TicketPurchase", ("Location",)),
                              404: "NotFound", 409: "PurchaseConflict",
                              429: "PurchaseLimitReached"}, "BuyTicketRequest"),
        "get": Operation("listEventTickets", "Tickets", "List an event's buyers", (
            query("eventId", "The event.", UUID_SCHEMA, TICKET_FIELDS["eventId"].example, True),
            query("date", "Only the tickets for this date.", DATE_SCHEMA, "2027-10-30"),
            "Page", "Limit"), {200: Answer("One page of tickets.", {
                "type": "array", "maxItems": PAGE_SIZE_MAX, "items": ref("schemas", "Ticket")},
                PAGED), 404: "NotFound"})}

    def __init__(self, store, live, now, new_id, public_url):
        self.store = store
        self.live = live  # museum_config.LiveConfig: hours, capacity, price and currency
        self.now = now  # the time at the museum
        self.new_id = new_id
        self.public_url = public_url

    def on_post(self, req, resp):
        key = idempotency_key(req)
        body = read_json(req)
        idempotency = None
        if key is not None:
            # A retry gets its ticket before any rule is checked again: a sale made before
            # midnight stays answerable after it.
            idempotency = (req.context.user.name, key, _fingerprint(body))
            replayed = self.store.replayed_ticket(*idempotency)
            if replayed is not None:
                self._answer(resp, replayed)
                return
        config, now = self.live.config, self.now()
        ticket, capacity = self._check(body, config, now)
        ticket.update(soldBy=req.context.user.name, soldAt=rfc3339(now))
        purchase_limit = self._purchase_limit(req.context.user, config, now)
        for _ in range(3):  # a fresh code on the rare clash with an existing one
            try:
                stored, _ = self.store.create_ticket(
                    {**ticket, "confirmationCode": new_confirmation_code(ticket["ticketType"])},
                    idempotency, capacity.on(date.fromisoformat(ticket["ticketDate"])),
                    slot_capacity=capacity.per_slot, purchase_limit=purchase_limit)
                break
            except storage.DuplicateCode:
                continue
            except storage.LimitReached as reached:
                raise purchase_limit_reached(reached.first, now) from None
        else:
            raise Problem(503, "Could not draw a unique confirmation code; try again.",
                          headers={"Retry-After": "1"})
        self._answer(resp, stored)

    def on_get(self, req, resp):
        """An event's tickets with their buyers' contacts, to tell them of a change."""
        validator = Validator()
        if req.params.get("eventId") is None:
            validator.error("eventId", "required", "is required")
        event_id = parse_query(req, validator, "eventId", Validator.uuid, None)
        day = parse_query(req, validator, "date", Validator.date, None)
        page, limit = paging(req, validator)
        validator.raise_if_invalid(BAD_QUERY)
        tickets, total = self.store.list_tickets(event_id, day and day.isoformat(),
                                                 (page - 1) * limit, limit)
        json_response(resp, [museum_sales.ticket_view(ticket, ticket_status(ticket), True)
                             for ticket in tickets])
        set_paging_headers(req, resp, self.public_url, page, limit, total)

    def _answer(self, resp, ticket):
        json_response(resp, self._receipt(ticket), 201)
        resp.location = f"{self.public_url}{API}/tickets/{ticket['ticketId']}/qr"

    @staticmethod
    def _purchase_limit(user, config, now):
        """A visitor credential's `(most, since)` by `[auth] visitor_tickets_per_hour`
        (None: no limit; other roles have none)."""
        most = config["auth"]["visitor_tickets_per_hour"]
        if most is None or user.role != VISITOR_ROLE:
            return None
        return most, rfc3339(now - museum_sales.PURCHASE_WINDOW)

    def _check(self, body, config, now):
        """The ticket to sell by `config` at `now`, and the general entry capacity of its
        day."""
        validator = Validator()
        ticket = check_fields(body, TICKET_FIELDS, validator)
        kind, day = ticket.get("ticketType"), ticket.get("ticketDate")
        if day and day < now.date():
            validator.error("ticketDate", "past", "must not be in the past")
        elif day and (day - now.date()).days > SALE_HORIZON_DAYS:
            validator.error("ticketDate", "beyond-horizon",
                            f"must be at most {SALE_HORIZON_DAYS} days ahead")
        schedule, capacity = config.schedule, config.capacity
        if kind == "general" and day:  # the day as an admin may have changed it
            schedule, capacity = days_as_set(config, self.store, day, day)
        if kind == "general" and day and day >= now.date() and not schedule.hours_on(day):
            validator.error("ticketDate", "closed", closed_on(day.isoformat()))
        museum_sales.check_entry_time(validator, schedule, body, ticket, now)
        museum_categories.check_category(validator, config, ticket.get("category"))
        validator.raise_if_invalid()
        category = museum_categories.sold_in(config, ticket.get("category"))
        return {**ticket, "ticketId": self.new_id(), "ticketDate": day.isoformat(),
                "eventId": ticket.get("eventId"), "category": category.name,
                "price": storage.price_value(category.price),
                "currency": config["museum"]["currency"]}, capacity

    def _receipt(self, ticket):
        label = TICKET_LABELS[ticket["ticketType"]].lower()
        receipt = {"message": f"Museum {label} ticket purchased",
                   **{name: ticket[name] for name in museum_sales.TICKET_VIEW_FIELDS}}
        if ticket["ticketType"] == "event":
            receipt.update(eventName=ticket["eventName"], eventId=ticket["eventId"])
        if ticket["entryTime"]:
            receipt["entryTime"] = ticket["entryTime"]
        return receipt


def purchase_limit_reached(first, now):
    """429 for a visitor credential at its limit, whose first purchase counted was at
    `first`: retry when that one leaves the window."""
    return Problem(429, museum_sales.PURCHASE_LIMIT_RULE, headers={
        "Retry-After": retry_after(datetime.fromisoformat(first) + museum_sales.PURCHASE_WINDOW,
                                  now)})


def retry_after(moment, now):
    """Retry-After's whole seconds from `now` to `moment` (at least 1)."""
    return str(max(1, math.ceil((moment - now).total_seconds())))


def idempotency_key(req):
    """The request's Idempotency-Key header, None when absent; 400 when malformed."""
    key = req.get_header("Idempotency-Key")
    if key is not None and not IDEMPOTENCY_KEY.fullmatch(key):
        raise Problem(400, "Idempotency-Key must be 1 to 200 visible ASCII characters.",
                      errors=[field_error("Idempotency-Key", "malformed", "is malformed")])
    return key


def _fingerprint(body):
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode("utf-8", "surrogatepass")) \
        .hexdigest()


class Ticket:
    """One ticket: read at the door or the desk, and voided (a refund) by an admin."""

    needed_roles = {"GET": GATE_ROLE, "DELETE": ADMIN_ROLE}
    described = {
        "get": Operation("getTicket", "Tickets", "Read a ticket", ("TicketId",), {
            200: Answer("The ticket.", "Ticket"), 404: "NotFound"}),
        "delete": Operation("voidTicket", "Tickets", "Void a ticket", ("TicketId",), {
            204: Answer("The ticket is void.", None), 404: "NotFound"})}

    def __init__(self, store, clock):
        self.store = store
        self.clock = clock

    def on_get(self, req, resp, ticket_id):
        ticket = self.store.get_ticket(_path_uuid(ticket_id, "ticketId"))
        json_response(resp, museum_sales.ticket_view(ticket, ticket_status(ticket),
                                                     req.context.user.role == ADMIN_ROLE))

    def on_delete(self, req, resp, ticket_id):
        # A second void answers 204 too: the ticket is void, as asked.
        self.store.void_ticket(_path_uuid(ticket_id, "ticketId"), rfc3339(self.clock()))
        resp.status = 204


class Availability:
    """The places left on each day of a window: general entry and each event's."""

    needed_roles = {"GET": VISITOR_ROLE}
    described = {"get": Operation("getAvailability", "Tickets", "Places left each day", (
        "StartDate", query("endDate", "Last day to include; defaults to "
                           f"{museum_sales.AVAILABILITY_DAYS_DEFAULT - 1} days after `startDate`, "
                           f"at most {museum_sales.AVAILABILITY_DAYS_MAX - 1} days after it.",
                           DATE_SCHEMA, "2027-10-31")), {200: Answer("One entry per day.", {
                               "type": "array", "maxItems": museum_sales.AVAILABILITY_DAYS_MAX,
                               "items": ref("schemas", "DayAvailability")})})}

    def __init__(self, store, live, now):
        self.store = store
        self.live = live  # museum_config.LiveConfig
        self.now = now  # the time at the museum: today's ended entry slots

    def on_get(self, req, resp):
        validator = Validator()
        now = self.now()
        start, end = date_window(req, validator, now.date(),
                                 museum_sales.AVAILABILITY_DAYS_DEFAULT,
                                 museum_sales.AVAILABILITY_DAYS_MAX)
        validator.raise_if_invalid(BAD_QUERY)
        schedule, capacity = days_as_set(self.live.config, self.store, start, end)
        taken = self.store.places_taken(start.isoformat(), end.isoformat())
        events = museum_sales.events_by_day(taken["events"])
        days = [start + timedelta(days=offset) for offset in range((end - start).days + 1)]
        json_response(resp, [museum_sales.day_availability(day, schedule, capacity, taken,
                                                           events, now) for day in days])


class SalesReport:
    """What was sold for each day of a window (at most REPORT_DAYS_MAX days, by default
    today alone): JSON, or CSV when the client prefers `text/csv`."""

    needed_roles = {"GET": ADMIN_ROLE}
    described = {"get": Operation("getSalesReport", "Reports", "The sales report", (
        query("startDate", "First day; defaults to today at the museum.", DATE_SCHEMA,
              "2027-10-01"),
        query("endDate", f"Last day; defaults to `startDate`, at most "
              f"{museum_sales.REPORT_DAYS_MAX - 1} days after it.", DATE_SCHEMA, "2027-10-31")),
        {200: "SalesReport"})}

    def __init__(self, store, today):
        self.store = store
        self.today = today

    def on_get(self, req, resp):
        validator = Validator()
        start, end = date_window(req, validator, self.today(), 1, museum_sales.REPORT_DAYS_MAX)
        validator.raise_if_invalid(BAD_QUERY)
        rows = museum_sales.report_rows(self.store, start, end)
        if req.client_prefers(["application/json", "text/csv"]) == "text/csv":
            resp.content_type = "text/csv; charset=utf-8"
            resp.downloadable_as = f"sales-{start}-{end}.csv"
            resp.data = museum_sales.report_csv(rows).encode()
        else:
            json_response(resp, rows)


class TicketImage:
    """The ticket's image with its QR code; drawn once per ticket per process."""

    needed_roles = {"GET": VISITOR_ROLE}
    described = {"get": Operation("getTicketCode", "Tickets", "Get a ticket's scannable code",
                                  ("TicketId", "IfNoneMatch"), {
                                      200: "TicketImage", 304: "NotModified", 404: "NotFound",
                                      410: "Gone"})}

    def __init__(self, store, secret):
        self.store = store
        self.images = TicketImages(secret)

    def on_get(self, req, resp, ticket_id):
        ticket = self.store.get_ticket(_path_uuid(ticket_id, "ticketId"))
        if ticket["voidedAt"]:
            raise Problem(410, DOOR_OUTCOMES["void"][1])
        if ticket["cancelled"]:
            raise Problem(410, DOOR_OUTCOMES["cancelled"][1])
        png, digest = self.images.image(ticket)
        resp.etag = etag = falcon.ETag(digest)
        resp.cache_control = ["private", "max-age=86400"]
        if req.if_none_match and any(tag in ("*", etag) for tag in req.if_none_match):
            resp.status = 304
            return
        resp.content_type = "image/png"
        resp.data = png


# ============================================================================================
# The door: admitting tickets at the entrance, and the page the gate staff use
# ============================================================================================

ADMISSION_FIELDS = {  # exactly one of code and confirmationCode; scannedAt offline only
    "code": Field(checked_by(Validator.text, QR_TEXT_LIMIT), trimmed_text(
        QR_TEXT_LIMIT, "The text of the ticket's QR code, as scanned. "), qr_text(
            "example secret", "a8e2d6c0-51b7-4f3e-8d92-6c4b1e0f7a35",
            "ticket-general-3fa85f-64571")),
    "confirmationCode": Field(checked_by(Validator.text, TYPED_CODE_LIMIT), trimmed_text(
        TYPED_CODE_LIMIT, "The confirmation code printed on the ticket, as typed; letter "
        "case does not matter. "), "ticket-general-3fa85f-64571"),
    "scannedAt": Field(checked_by(Validator.moment), {
        "type": "string", "format": "date-time", "description": "Only for a scan the door's "
        "page admitted offline: when, with its offset; at most a minute ahead of the "
        "service's clock and a day behind it. Such a scan is admitted at that time; a "
        "ticket admitted meanwhile by another admission is recorded as a double entry."},
        "2027-10-29T10:14:05+02:00"),
}
OFFLINE_AHEAD = timedelta(minutes=1)  # a device's clock may run this much ahead
OFFLINE_BEHIND = timedelta(hours=24)  # an offline scan sent later than this is refused


def exactly_one(body, first, second, validator, missing):
    """The body gives `first` or `second`, not both; `missing` says what to give."""
    if first in body and second in body:
        validator.error(second, "conflicts", f"must not be given with {first}")
    elif first not in body and second not in body:
        validator.error(first, "required", missing)


def refuse_guessing(remaining):
    """429 while the `TypedCodeLimit` refuses a user for `remaining` seconds."""
    if remaining > 0:
        raise Problem(429, "Too many unknown ticket codes or lookups; wait a minute and "
                      "retry.", headers={"Retry-After": str(math.ceil(remaining))})


class Admissions:
    """Admit a ticket at the door: each ticket once, on its day; a scan's Idempotency-Key
    replayed answers what it did. Unknown typed codes count toward the `TypedCodeLimit`;
    QR texts and unreadable input never do."""

    needed_roles = {"POST": GATE_ROLE}
    described = {"post": Operation("admitTicket", "Door", "Admit a ticket at the door", (
        "IdempotencyKey",), {
        201: Answer("The ticket was admitted (or, replayed, was admitted by this key).",
                    "Admission"), 404: "UnknownTicket",
        409: "NotAdmittable", 410: "DeadTicket", 422: "ForgedTicket"}, "AdmissionRequest")}

    def __init__(self, store, secret, now, clock, guesses, entry_times):
        self.store = store
        self.secret = secret
        self.now = now  # the time at the museum
        self.clock = clock
        self.guesses = guesses
        self.entry_times = entry_times  # museum_door.EntryTimes: timed entry's door rule

    def on_post(self, req, resp):
        user = req.context.user.name
        key = idempotency_key(req)
        body = read_json(req)
        now = self.clock()
        presented, scanned_at = self._presented(body, now)
        # Only a typed code shaped as one can be a guess; a QR text is decided even while
        # the limit holds, and a misread is no guess at all.
        guess = "code" in presented and bool(typed_codes(presented["code"]))
        if guess:
            refuse_guessing(self.guesses.seconds_refused(user))
        museum_now = (scanned_at or now).astimezone(self.now().tzinfo)
        entry_times = self.entry_times.at(museum_now) if scanned_at else self.entry_times
        scan = Scan(user, rfc3339(scanned_at or now), now, scanned_at is not None,
                    None if key is None else (user, key, _fingerprint(body)))
        try:
            result, ticket = admit(self.store, self.secret, museum_now.date(), entry_times,
                                   scan, **presented)
        except storage.IdempotencyConflict:
            raise Problem(422, KEY_REUSED) from None
        if result == "admitted":
            json_response(resp, {"result": "admitted", **door_details(ticket)}, 201)
            return
        if result == "unknown" and guess:
            refuse_guessing(self.guesses.count(user))
        self._refuse(result, ticket, museum_now.date(), entry_times)

    @staticmethod
    def _refuse(result, ticket, today, entry_times):
        status, detail = DOOR_OUTCOMES[result]
        members = {"result": result, **(door_details(ticket) if ticket else {})}
        if result == "wrong-date":
            members["when"], detail = wrong_date(ticket, today)
        if result == "too-early":
            detail = entry_times.detail(ticket)
        raise Problem(status, detail, members=members)

    @staticmethod
    def _presented(body, now):
        """{"qr_text": …} or {"code": …} (exactly one of the two body fields), and the
        offline scan's time (None: scanned now)."""
        validator = Validator()
        values = check_fields(body, ADMISSION_FIELDS, validator)
        exactly_one(body, "code", "confirmationCode", validator,
                    "is required, or confirmationCode typed from the ticket")
        scanned_at = values.get("scannedAt")
        if scanned_at and not now - OFFLINE_BEHIND <= scanned_at <= now + OFFLINE_AHEAD:
            validator.error("scannedAt", "out-of-window", "must be within the last 24 hours, "
                            "and not more than a minute ahead")
        validator.raise_if_invalid()
        if "code" in values:
            return {"qr_text": values["code"]}, scanned_at
        return {"code": values["confirmationCode"]}, scanned_at


class AdmissionList:
    """The day's tickets, for the door's page to decide without the service (see
    museum_door.door_list): whole, or changed since a cursor; never an email or phone. A
    gate may read today's and tomorrow's, an admin any day's."""

    needed_roles = {"GET": GATE_ROLE}
    described = {"get": Operation("listAdmissions", "Door", "The day's tickets for the door", (
        query("date", "The day; defaults to today at the museum. A gate may ask for today "
              "and tomorrow only.", DATE_SCHEMA, "2027-10-29"),
        query("since", "A `cursor` of an earlier answer for that day: only the tickets "
              "changed after it.", {"type": "string"}, "2027-10-29.41"), "IfNoneMatch"), {
        200: Answer("The day's tickets.", "AdmissionList", ("ETag",)),
        304: "ListNotModified"})}

    def __init__(self, store, now, zone_name):
        self.store = store
        self.now = now  # the time at the museum
        self.zone_name = zone_name

    def on_get(self, req, resp):
        now = self.now()
        validator = Validator()
        day = parse_query(req, validator, "date", Validator.date, None) or now.date()
        since = parse_query(req, validator, "since", functools.partial(read_cursor, day=day),
                            None)
        if req.context.user.role != ADMIN_ROLE and day not in (now.date(),
                                                               now.date() + timedelta(days=1)):
            validator.error("date", "not-today-or-tomorrow",
                            "must be today or tomorrow at the museum for a gate")
        validator.raise_if_invalid(BAD_QUERY)
        events_version = self.store.events_version()
        resp.etag = etag = falcon.ETag(list_etag(
            day, since, self.store.door_list_version(day.isoformat()), events_version,
            self.zone_name))
        if req.if_none_match and any(tag in ("*", etag) for tag in req.if_none_match):
            resp.status = 304
            return
        listed = self.store.door_list(day.isoformat(), since)
        # Tagged with the version read with the list: a change since the first read shows.
        resp.etag = falcon.ETag(list_etag(day, since, listed["version"], events_version,
                                          self.zone_name))
        json_response(resp, door_list(listed, day, since, self.zone_name, now))


class Admission:
    """A ticket's admission history, and undoing an admission made by mistake: by the gate
    (user) that made it within UNDO_WINDOW, by an admin at any time. Both are kept in the
    ticket's history."""

    needed_roles = {"GET": GATE_ROLE, "DELETE": GATE_ROLE}
    described = {
        "get": Operation("getAdmissionHistory", "Door", "Get a ticket's admission history",
                         ("TicketId", "Page", "Limit"), {
                             200: Answer("The ticket's admissions: one page of its history.",
                                         "AdmissionHistory", PAGED), 404: "NotFound"}),
        "delete": Operation("undoAdmission", "Door", "Undo an admission", ("TicketId",), {
            204: Answer("The admission was undone.", None), 403: "UndoNotAllowed",
            404: "NotAdmitted", 429: "UndoLimitReached"})}

    def __init__(self, store, clock, now, public_url):
        self.store = store
        self.clock = clock
        self.undos = UndoLimit(now)
        self.public_url = public_url

    def on_get(self, req, resp, ticket_id):
        ticket_id = _path_uuid(ticket_id, "ticketId")
        validator = Validator()
        page, limit = paging(req, validator)
        validator.raise_if_invalid(BAD_QUERY)
        ticket = self.store.get_ticket(ticket_id)
        body = {"ticketId": ticket["ticketId"], "admitted": bool(ticket["admittedAt"])}
        if ticket["admittedAt"]:
            body.update(admittedAt=ticket["admittedAt"], admittedBy=ticket["admittedBy"])
        body["history"], total = self.store.admission_history(ticket_id, (page - 1) * limit,
                                                              limit)
        json_response(resp, body)
        set_paging_headers(req, resp, self.public_url, page, limit, total)

    def on_delete(self, req, resp, ticket_id):
        user, now = req.context.user, self.clock()
        try:
            self.store.undo_admission(_path_uuid(ticket_id, "ticketId"), user.name, rfc3339(now),
                                      lambda admission: may_undo(user, admission, now),
                                      self.undos.limit(user))
        except storage.NotFound:
            raise Problem(404, "This ticket has not been admitted.") from None
        except storage.NotAllowed:
            raise Problem(403, UNDO_RULE) from None
        except storage.LimitReached:
            raise Problem(429, self.undos.RULE, headers={
                "Retry-After": retry_after(self.undos.day_ends(), now)}) from None
        resp.status = 204


LOOKUP_FIELDS = {  # exactly one of email and code
    "email": Field(checked_by(Validator.email), {
        **EMAIL_SCHEMA, "description": "The buyer's whole email address."}, "visitor@example.com"),
    "code": Field(checked_by(Validator.text, TYPED_CODE_LIMIT), trimmed_text(
        TYPED_CODE_LIMIT, "A confirmation code, whole (ticket-event-792d82-891fc) or only its "
        "random part (792d82-891fc); letter case does not matter. "), "3fa85f-64571"),
    "date": Field(checked_by(Validator.date), DATE_SCHEMA, "2027-10-29"),
}
LOOKUP_LIMIT = 20  # tickets answered at most


class TicketLookup:
    """Find a visitor's lost ticket among a day's tickets: by the buyer's whole email
    address (sent in the body, never in a URL or a log) or by its confirmation code, whole
    or only its random part. Every lookup counts toward the `TypedCodeLimit`; a gate's
    email lookups are for today and tomorrow only."""

    needed_roles = {"POST": GATE_ROLE}
    described = {"post": Operation("lookupTickets", "Door", "Find a visitor's lost ticket", (), {
        200: Answer("The tickets found (none: an empty list).", "LookupResult")}, "LookupRequest")}

    def __init__(self, store, today, guesses):
        self.store = store
        self.today = today
        self.guesses = guesses

    def on_post(self, req, resp):
        user = req.context.user
        values, codes = self._wanted(read_json(req), user, self.today())
        refuse_guessing(self.guesses.count(user.name))
        day = (values.get("date") or self.today()).isoformat()
        tickets = self.store.lookup_tickets(day, email=values.get("email"), codes=codes,
                                            limit=LOOKUP_LIMIT)
        json_response(resp, {"date": day, "tickets": [lookup_details(t) for t in tickets]})

    @staticmethod
    def _wanted(body, user, today):
        """The checked body, and the codes its `code` may be ([] for an email). A gate
        looks emails up among today's and tomorrow's tickets only: on any day, a lookup
        would tell whether an address bought a ticket at all."""
        validator = Validator()
        values = check_fields(body, LOOKUP_FIELDS, validator)
        exactly_one(body, "email", "code", validator, "is required, or code")
        if values.get("email") and user.role != ADMIN_ROLE and values.get("date") not in (
                None, today, today + timedelta(days=1)):
            validator.error("date", "not-today-or-tomorrow",
                            "must be today or tomorrow at the museum for a gate's "
                            "email lookup")
        codes = typed_codes(values["code"]) if values.get("code") else []
        if values.get("code") and not codes:
            validator.error("code", "not-a-code", "must be a confirmation code like "
                            "ticket-event-792d82-891fc, or its last part 792d82-891fc")
        validator.raise_if_invalid()
        return values, codes


class AdmissionSummary:
    """The door's counters for one day."""

    needed_roles = {"GET": GATE_ROLE}
    described = {"get": Operation("getAdmissionSummary", "Door",
                                  "Count the day's tickets sold and admitted", (query(
                                      "date", "The day to count; defaults to today at the "
                                      "museum.", DATE_SCHEMA, "2027-10-30"),), {
                                      200: Answer("The day's counts.", "AdmissionSummary")})}

    def __init__(self, store, today):
        self.store = store
        self.today = today

    def on_get(self, req, resp):
        validator = Validator()
        day = parse_query(req, validator, "date", Validator.date, None) or self.today()
        validator.raise_if_invalid(BAD_QUERY)
        json_response(resp, {"date": day.isoformat(), **self.store.door_summary(day.isoformat())})


# ============================================================================================
# The application
# ============================================================================================

# Every path under API with the class of its resource, written as the OpenAPI description
# writes it (and in its order); Falcon's field is the same name in snake case (event_id).
API_ROUTES = {
    "/museum-hours": MuseumHours, "/museum-hours/{date}": MuseumDay,
    "/special-events": SpecialEvents,
    "/special-events/{eventId}": SpecialEvent, "/tickets": Tickets,
    "/admissions": Admissions, "/admissions/summary": AdmissionSummary,
    "/admissions/list": AdmissionList,
    "/admissions/lookup": TicketLookup, "/admissions/{ticketId}": Admission,
    "/availability": Availability, "/reports/sales": SalesReport,
    "/tickets/{ticketId}": Ticket, "/tickets/{ticketId}/qr": TicketImage,
    "/price-categories": museum_categories.PriceCategories, "/museum": museum_categories.Museum,
    "/openapi.json": OpenAPIDocument}


@functools.cache
def openapi_description():
    """The OpenAPI document of API_ROUTES, stating this module's limits, patterns and
    declared fields (museum_openapi reads the door's rules from museum_door itself)."""
    return museum_openapi.document(API_ROUTES, {
        "API": API, "INTERFACE_VERSION": INTERFACE_VERSION, "BAD_QUERY": BAD_QUERY,
        "BODY_LIMIT": BODY_LIMIT, "IDEMPOTENCY_KEY": IDEMPOTENCY_KEY, "PAGE_MAX": PAGE_MAX,
        "PAGE_SIZE_MAX": PAGE_SIZE_MAX, "PAGE_SIZE_DEFAULT": PAGE_SIZE_DEFAULT,
        "LOOKUP_LIMIT": LOOKUP_LIMIT, "HOURS_HORIZON_DAYS": HOURS_HORIZON_DAYS,
        "SALE_HORIZON_DAYS": SALE_HORIZON_DAYS, "EVENT_FIELDS": EVENT_FIELDS,
        "TICKET_FIELDS": TICKET_FIELDS, "ADMISSION_FIELDS": ADMISSION_FIELDS,
        "LOOKUP_FIELDS": LOOKUP_FIELDS, "DAY_FIELDS": DAY_FIELDS})


EXPOSED_ANYWHERE = "anywhere but a loopback development run"


def create_app(config, store=None, authenticator=None, clock=utc_now, new_id=new_uuid,
               middleware=(), exposed_on=EXPOSED_ANYWHERE, access=None,
               erase_contacts=False):
    """The WSGI app for `config`, a Config or the LiveConfig that `museum serve` reloads
    (see museum_config.LiveConfig). By default the store is opened from the config's storage
    url, users are checked against its [users] (and a reload's) and the store's devices, and
    the access log is written as its [log] says; tests inject `store`, `clock` (giving an
    aware datetime), `new_id` and `access` (a museum_access_log.AccessLogWriter), and
    `museum mock` its own authenticator and `middleware`. With `erase_contacts` (`museum
    serve`, `museum:app`), old contacts are erased from the store daily, as museum_privacy
    says.

    While any user still has the demo password, the app is built only for a loopback
    development run, which the caller states with `exposed_on=None` (museum_config's
    check_passwords says why): `museum serve` states it when it listens on loopback.
    """
    live = config if isinstance(config, LiveConfig) else LiveConfig(config)
    config = live.config
    check_passwords(config, exposed_on)
    store = store or open_configured_store(config)
    if authenticator is None:
        authenticator = museum_auth.authenticator_for(config, store=store)
        live.follow(authenticator.take_users)
    live.follow(set_log_level)
    access = access or open_access_log(config)
    app = falcon.App(middleware=[AccessLog(access), SafeHeaders(), *middleware, authenticator],
                     router=Router())
    app.req_options.keep_blank_qs_values = True  # `?page=` is malformed, not absent
    app.set_error_serializer(write_problem)
    app.add_error_handler(Exception, unexpected_error)
    app.add_error_handler(storage.StorageError, storage_error_as_problem)
    add_routes(app, live, store, clock, new_id)
    if erase_contacts:  # last: an app that could not be built erases nothing
        museum_privacy.erase_contacts_daily(store, config["storage"]["url"],
                                            museum_today(config, clock),
                                            config["privacy"]["keep_contact_days"])
    return app


def add_routes(app, live, store, clock, new_id):
    """Every path of the service, each with its resource."""
    app.add_route("/healthz", Health(store))
    built = {type(resource): resource
             for resource in api_resources(live, store, clock, new_id)}
    for path, kind in API_ROUTES.items():
        app.add_route(API + re.sub(r"\{(\w+)Id\}", r"{\1_id}", path), built[kind])
    app.add_route("/scan", PageFile("scan.html", "text/html; charset=utf-8"))
    app.add_route("/scan/scan.js", PageFile("scan.js", "text/javascript; charset=utf-8"))
    app.add_route("/scan/scan.css", PageFile("scan.css", "text/css; charset=utf-8"))
    app.add_route("/scan/offline.js", PageFile("offline.js", "text/javascript; charset=utf-8"))
    # The worker lives beside the page's files but serves the page itself, at /scan.
    app.add_route("/scan/sw.js", PageFile("sw.js", "text/javascript; charset=utf-8",
                                          {"Service-Worker-Allowed": "/scan"}))


def api_resources(live, store, clock, new_id):
    """One resource of each class in API_ROUTES, made on the app's dependencies. Those
    that follow a reload read `live`; the others keep the config they were made with."""
    config = live.config
    now, today = museum_now(config, clock), museum_today(config, clock)
    # Built on public_url when set: never on the Host or X-Forwarded-Host a client sent.
    # Unset, Location stays a path (relative to the URL requested) and Link takes the request's.
    public_url = config["server"]["public_url"]
    secret = qr_secret(config, store)
    guesses = TypedCodeLimit(store, clock)
    entry_times = EntryTimes(config["door"]["early_minutes"], now)
    return (OpenAPIDocument(), MuseumHours(store, live, today),
            MuseumDay(store, live, today, clock),
            SpecialEvents(store, live, today, new_id, public_url), SpecialEvent(store, live),
            Tickets(store, live, now, new_id, public_url), Ticket(store, clock),
            Availability(store, live, now),
            SalesReport(store, today), TicketImage(store, secret),
            Admissions(store, secret, now, clock, guesses, entry_times),
            AdmissionList(store, now, museum_zone_name(config, now)),
            AdmissionSummary(store, today), TicketLookup(store, today, guesses),
            Admission(store, clock, now, public_url),
            museum_categories.PriceCategories(live), museum_categories.Museum(live, clock))


def set_log_level(config):
    """The application log's level, from [log] level (the host configures its handlers)."""
    log.setLevel(config["log"]["level"])


_hosted_app = None
_hosted_app_lock = threading.Lock()


def app(environ, start_response):
    """WSGI entry point for other hosts (`museum:app`): built from the default config on the
    first request, not at import, as `museum serve` builds its app (museum_hosted says how);
    from then on it erases old contacts daily, as `museum serve` does."""
    global _hosted_app
    if _hosted_app is None:
        with _hosted_app_lock:
            if _hosted_app is None:
                import museum_hosted

                _hosted_app = museum_hosted.HostedApp(functools.partial(
                    museum_hosted.build_from_default_config, create_app, set_log_level,
                    EXPOSED_ANYWHERE))
    return _hosted_app(environ, start_response)


if __name__ == "__main__":  # before 1.3.0, `python -m museum` ran the command line
    raise SystemExit("museum: the command line is `museum` (or `python -m museum_cli`)")

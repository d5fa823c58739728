"""The door's resources (`/v1.1/admissions`): admitting a ticket, the day's list for the
door's page to decide offline, a ticket's admission history and undoing an admission,
finding a visitor's lost ticket, and the day's counters.

They turn the door's rules (museum_door: codes, QR texts, outcomes, the limits on typed
codes and undos) into answers; their request bodies are declared here once.
"""

import functools
import math
from datetime import timedelta

import falcon

import storage
from museum_door import (DOOR_OUTCOMES, ORDER_DETAILS, QR_TEXT_LIMIT, TYPED_CODE_LIMIT,
                         UNDO_RULE, Scan, UndoLimit, admit, door_details, door_list, list_etag,
                         lookup_details, may_undo, order_details, qr_text, read_cursor,
                         typed_code_shaped, typed_codes, typed_order_code, wrong_date)
from museum_http import (BAD_QUERY, KEY_REUSED, Problem, fingerprint, idempotency_key,
                         json_response, not_modified, paging, parse_query, read_json,
                         retry_after, rfc3339, set_paging_headers)
from museum_openapi import (DATE_SCHEMA, EMAIL_SCHEMA, PAGED, Answer, Operation, query,
                            trimmed_text)
from museum_validation import (Field, Validator, check_fields, checked_by, exactly_one,
                               path_uuid)
from museum_vocabulary import ADMIN_ROLE, GATE_ROLE

ADMISSION_FIELDS = {  # exactly one of code and confirmationCode; scannedAt offline only
    "code": Field(checked_by(Validator.text, QR_TEXT_LIMIT), trimmed_text(
        QR_TEXT_LIMIT, "The text of the ticket's QR code, or of an order's (admits all the "
        "order's tickets valid today), as scanned. "), qr_text(
            "example secret", "a8e2d6c0-51b7-4f3e-8d92-6c4b1e0f7a35",
            "ticket-general-3fa85f-64571")),
    "confirmationCode": Field(checked_by(Validator.text, TYPED_CODE_LIMIT), trimmed_text(
        TYPED_CODE_LIMIT, "The confirmation code printed on the ticket, or an order's code "
        "(order-792d82-891fc: admits all the order's tickets valid today), as typed, whole or "
        "only its random part (792d82-891fc); letter case does not matter. "),
        "ticket-general-3fa85f-64571"),
    "scannedAt": Field(checked_by(Validator.moment), {
        "type": "string", "format": "date-time", "description": "Only for a scan the door's "
        "page admitted offline: when, with its offset; at most a minute ahead of the "
        "service's clock and a day behind it. Such a scan is admitted at that time; a "
        "ticket admitted meanwhile by another admission is recorded as a double entry."},
        "2027-10-29T10:14:05+02:00"),
}
OFFLINE_AHEAD = timedelta(minutes=1)  # a device's clock may run this much ahead
OFFLINE_BEHIND = timedelta(hours=24)  # an offline scan sent later than this is refused


def refuse_guessing(remaining):
    """429 while the `TypedCodeLimit` refuses a user for `remaining` seconds."""
    if remaining > 0:
        raise Problem(429, "Too many unknown ticket codes or lookups; wait a minute and "
                      "retry.", headers={"Retry-After": str(math.ceil(remaining))})


def is_order(subject):
    """Whether what the door found (museum_door.admit's second value) is an order."""
    return subject is not None and "tickets" in subject


class Admissions:
    """Admit a ticket at the door: each ticket once, on its day; an order's code admits all
    its tickets valid today in one scan; a ticket of an order not paid yet is refused
    (`unpaid`). A scan's Idempotency-Key replayed answers what it did. Unknown typed codes
    count toward the `TypedCodeLimit`; QR texts and unreadable input never do."""

    needed_roles = {"POST": GATE_ROLE}
    described = {"post": Operation("admitTicket", "Door", "Admit a ticket at the door", (
        "IdempotencyKey",), {
        201: Answer("The ticket was admitted (or, replayed, was admitted by this key).",
                    "Admission"), 404: "UnknownTicket",
        409: "NotAdmittable", 410: "DeadTicket", 422: "ForgedTicket"}, "AdmissionRequest")}

    def __init__(self, store, secret, now, clock, guesses, entry_times, live):
        self.live = live  # the categories' labels and door notes
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
        guess = "code" in presented and typed_code_shaped(presented["code"])
        if guess:
            refuse_guessing(self.guesses.seconds_refused(user))
        museum_now = (scanned_at or now).astimezone(self.now().tzinfo)
        entry_times = self.entry_times.at(museum_now) if scanned_at else self.entry_times
        scan = Scan(user, rfc3339(scanned_at or now), now, scanned_at is not None,
                    None if key is None else (user, key, fingerprint(body)))
        try:
            result, ticket = admit(self.store, self.secret, museum_now.date(), entry_times,
                                   scan, **presented)
        except storage.IdempotencyConflict:
            raise Problem(422, KEY_REUSED) from None
        if result == "admitted":
            json_response(resp, {"result": "admitted", **self._details(ticket)}, 201)
            return
        if result == "unknown" and guess:
            refuse_guessing(self.guesses.count(user))
        self._refuse(result, ticket, museum_now.date(), entry_times)

    def _details(self, subject):
        """What the answer shows of a ticket or of an order."""
        config = self.live.config
        return order_details(subject, config) if is_order(subject) else \
            door_details(subject, config)

    def _refuse(self, result, ticket, today, entry_times):
        status, detail = DOOR_OUTCOMES[result]
        members = {"result": result, **(self._details(ticket) if ticket else {})}
        if is_order(ticket):
            raise Problem(status, ORDER_DETAILS.get(result, detail), members=members)
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
        if not_modified(req, resp, list_etag(
                day, since, self.store.door_list_version(day.isoformat()), events_version,
                self.zone_name)):
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
        ticket_id = path_uuid(ticket_id, "ticketId")
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
            self.store.undo_admission(path_uuid(ticket_id, "ticketId"), user.name, rfc3339(now),
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
        "random part (792d82-891fc), or an order's code (order-792d82-891fc: the order's "
        "tickets of the day); letter case does not matter. "), "3fa85f-64571"),
    "date": Field(checked_by(Validator.date), DATE_SCHEMA, "2027-10-29"),
}
LOOKUP_LIMIT = 20  # tickets answered at most


class TicketLookup:
    """Find a visitor's lost ticket among a day's tickets: by the buyer's whole email
    address (sent in the body, never in a URL or a log) or by its confirmation code, whole
    or only its random part, or an order's tickets by the order's code. Each ticket found
    of an order names the order's code, which admits them all. Every lookup counts toward
    the `TypedCodeLimit`; a gate's email lookups are for today and tomorrow only."""

    needed_roles = {"POST": GATE_ROLE}
    described = {"post": Operation("lookupTickets", "Door", "Find a visitor's lost ticket", (), {
        200: Answer("The tickets found (none: an empty list).", "LookupResult")}, "LookupRequest")}

    def __init__(self, store, now, clock, guesses, live):
        self.store = store
        self.now = now  # the time at the museum
        self.clock = clock
        self.guesses = guesses
        self.live = live  # the categories' labels and door notes

    def on_post(self, req, resp):
        user, now = req.context.user, self.now()
        values, codes = self._wanted(read_json(req), user, now.date())
        refuse_guessing(self.guesses.count(user.name))
        day = (values.get("date") or now.date()).isoformat()
        tickets = self.store.lookup_tickets(day, email=values.get("email"), codes=codes,
                                            limit=LOOKUP_LIMIT) if codes or "email" in values \
            else []
        json_response(resp, {"date": day, "tickets": [
            lookup_details(ticket, now, self.live.config)
            for ticket in tickets + self._order_tickets(values, day, tickets, now)]})

    def _order_tickets(self, values, day, found, now):
        """The tickets of `day` of the order a typed code names, but those `found` already,
        up to LOOKUP_LIMIT in all."""
        order_code = values.get("code") and typed_order_code(values["code"])
        if not order_code:
            return []
        try:
            order = self.store.get_order_by_code(order_code, rfc3339(self.clock()))
        except storage.NotFound:
            return []
        known = {ticket["ticketId"] for ticket in found}
        return [ticket for ticket in order["tickets"] if ticket["ticketDate"] == day
                and ticket["ticketId"] not in known][:LOOKUP_LIMIT - len(found)]

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
        if values.get("code") and not typed_code_shaped(values["code"]):
            validator.error("code", "not-a-code", "must be a confirmation code like "
                            "ticket-event-792d82-891fc, an order's code like "
                            "order-792d82-891fc, or their last part 792d82-891fc")
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

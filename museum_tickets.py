"""Tickets: buying one (`POST /v1.1/tickets`), an event's buyers, reading and voiding a
ticket, its scannable image, and the places left each day (`/v1.1/availability`).

The rules of a sale live beside it: what a ticket's body may hold (`TICKET_FIELDS`), how far
ahead it may be dated, and a visitor credential's purchase limit; what is left of a day,
a ticket as it is read back and timed entry are museum_sales', the confirmation code
museum_door's, and the capacity itself the store's, which checks it in the sale's own
transaction.
"""

from datetime import date, datetime, timedelta

import museum_categories
import museum_sales
import storage
from museum_door import DOOR_OUTCOMES, new_confirmation_code, ticket_status
from museum_http import (API, BAD_QUERY, PAGE_SIZE_MAX, Problem, closed_on, date_window,
                         fingerprint, idempotency_key, json_response, paging, parse_query,
                         png_response, read_json, retry_after, rfc3339, set_paging_headers)
from museum_openapi import (DATE_SCHEMA, EMAIL_SCHEMA, PAGED, UUID_SCHEMA, Answer, Operation,
                            anchored, query, ref, trimmed_text)
from museum_ticket_image import TicketImages
from museum_validation import (PHONE, Field, Validator, When, check_fields, checked_by,
                               optional_body, path_uuid)
from museum_vocabulary import (ADMIN_ROLE, DESK_ROLE, GATE_ROLE, TICKET_LABELS, TICKET_TYPES, TIME_OF_DAY,
                               VISITOR_ROLE)

# Tickets sell at most this many days ahead: a contact is erased keep_contact_days after
# its ticket's date, so a ticket dated in 9999 would keep its buyer's email for ever.
SALE_HORIZON_DAYS = 366

# The body of a sale.
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
    # The configured category names are checked apart (check_category), as a reload may
    # change them.
    "category": Field(museum_categories.category_name, {
        "type": "string", "pattern": anchored(museum_categories.NAME), "description": "The "
        "ticket's price category, one of `GET /price-categories`; without it, the first of "
        "them."}, "adult"),
}


# The optional body of a void, a ticket's or an order's (museum.py hands it to museum_orders).
VOID_REASON_MAX = 200
VOID_FIELDS = {"reason": Field(checked_by(Validator.text, VOID_REASON_MAX), trimmed_text(
    VOID_REASON_MAX, "Why it is voided: kept with the void and shown to the museum's staff "
    "as `voidReason`, never mailed nor sent to a webhook (it may name a person). No control "
    "characters. "), "Visitor fell ill; refunded in cash", True)}


class TicketSale:
    """The rules of a sale, shared by a single ticket (`Tickets`) and an order's tickets
    (museum_orders, which museum.py hands this to, the two standing on one floor): which
    day, entry time and category a ticket may have at a moment, its price, a visitor
    credential's purchase limit, and fresh codes on the rare clash."""

    def __init__(self, store, new_id):
        self.store = store
        self.new_id = new_id

    def check(self, validator, body, fields, config, now):
        """The ticket `body` asks for at `now`, its `fields` (TICKET_FIELDS or an order
        item's) checked into `validator` and priced in its category, and the general entry
        capacity of its day; None for the ticket while a field is wrong."""
        ticket = check_fields(body, fields, validator)
        kind, day = ticket.get("ticketType"), ticket.get("ticketDate")
        if day and day < now.date():
            validator.error("ticketDate", "past", "must not be in the past")
        elif day and (day - now.date()).days > SALE_HORIZON_DAYS:
            validator.error("ticketDate", "beyond-horizon",
                            f"must be at most {SALE_HORIZON_DAYS} days ahead")
        schedule, capacity = config.schedule, config.capacity
        if kind == "general" and day:  # the day as an admin may have changed it
            schedule, capacity = museum_sales.days_as_set(config, self.store, day, day)
        if kind == "general" and day and day >= now.date() and not schedule.hours_on(day):
            validator.error("ticketDate", "closed", closed_on(day.isoformat()))
        museum_sales.check_entry_time(validator, schedule, body, ticket, now)
        museum_categories.check_category(validator, config, ticket.get("category"))
        if validator.errors:
            return None, capacity
        category = museum_categories.sold_in(config, ticket.get("category"))
        return {**ticket, "ticketId": self.new_id(), "ticketDate": day.isoformat(),
                "eventId": ticket.get("eventId"), "category": category.name,
                "price": storage.price_value(category.price), "persons": category.persons,
                "currency": config["museum"]["currency"]}, capacity

    @staticmethod
    def purchase_limit(user, config, now):
        """A visitor credential's `(most, since)` by `[auth] visitor_tickets_per_hour`
        (None: no limit; other roles have none)."""
        most = config["auth"]["visitor_tickets_per_hour"]
        if most is None or user.role != VISITOR_ROLE:
            return None
        return most, rfc3339(now - museum_sales.PURCHASE_WINDOW)

    @staticmethod
    def stored(write, now):
        """What `write()` stores, called again (drawing fresh codes) on the rare clash with
        an existing code; 429 past the purchase limit, 503 after three clashes."""
        for _ in range(3):
            try:
                return write()
            except storage.DuplicateCode:
                continue
            except storage.LimitReached as reached:
                raise purchase_limit_reached(reached.first, now) from None
        raise Problem(503, "Could not draw a unique confirmation code; try again.",
                      headers={"Retry-After": "1"})


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

    def __init__(self, store, live, now, sale, public_url, links):
        self.store = store
        self.live = live  # museum_config.LiveConfig: hours, capacity, price and currency
        self.now = now  # the time at the museum
        self.sale = sale  # TicketSale
        self.public_url = public_url
        self.links = links  # museum_ticket_page.TicketLinks

    def on_post(self, req, resp):
        key = idempotency_key(req)
        body = read_json(req)
        idempotency = None
        if key is not None:
            # A retry gets its ticket before any rule is checked again: a sale made before
            # midnight stays answerable after it.
            idempotency = (req.context.user.name, key, fingerprint(body))
            replayed = self.store.replayed_ticket(*idempotency)
            if replayed is not None:
                self._answer(resp, replayed)
                return
        config, now = self.live.config, self.now()
        validator = Validator()
        ticket, capacity = self.sale.check(validator, body, TICKET_FIELDS, config, now)
        validator.raise_if_invalid()
        ticket.update(soldBy=req.context.user.name, soldAt=rfc3339(now))
        purchase_limit = self.sale.purchase_limit(req.context.user, config, now)
        # Queued in the sale's transaction: a sale that commits is mailed, even after a crash.
        mails = museum_sales.ticket_mails(config, ticket, self.sale.new_id, rfc3339(now))
        stored, _ = self.sale.stored(lambda: self.store.create_ticket(
            {**ticket, "confirmationCode": new_confirmation_code(ticket["ticketType"])},
            idempotency, capacity.on(date.fromisoformat(ticket["ticketDate"])),
            slot_capacity=capacity.per_slot, purchase_limit=purchase_limit, messages=mails), now)
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
        json_response(resp, [museum_sales.ticket_view(ticket, ticket_status(ticket), True,
                                                      self.links, staff=True)
                             for ticket in tickets])
        set_paging_headers(req, resp, self.public_url, page, limit, total)

    def _answer(self, resp, ticket):
        json_response(resp, self._receipt(ticket), 201)
        resp.location = f"{self.public_url}{API}/tickets/{ticket['ticketId']}/qr"

    def _receipt(self, ticket):
        label = TICKET_LABELS[ticket["ticketType"]].lower()
        receipt = {"message": f"Museum {label} ticket purchased",
                   **{name: ticket[name] for name in museum_sales.TICKET_VIEW_FIELDS},
                   **self.links.of_ticket(ticket)}
        if ticket["ticketType"] == "event":
            receipt.update(eventName=ticket["eventName"], eventId=ticket["eventId"])
        if ticket["entryTime"]:
            receipt["entryTime"] = ticket["entryTime"]
        return receipt


def purchase_limit_reached(first, now):
    """429 for a visitor credential at its limit, whose first purchase counted was at
    `first` (None: the order alone is over the limit): retry when that one leaves the
    window."""
    since = now if first is None else datetime.fromisoformat(first)
    return Problem(429, museum_sales.PURCHASE_LIMIT_RULE, headers={
        "Retry-After": retry_after(since + museum_sales.PURCHASE_WINDOW, now)})


class Ticket:
    """One ticket: read at the door or the desk, and voided (a refund): one dated today at
    the desk, any by an admin."""

    needed_roles = {"GET": GATE_ROLE, "DELETE": DESK_ROLE}
    described = {
        "get": Operation("getTicket", "Tickets", "Read a ticket", ("TicketId",), {
            200: Answer("The ticket.", "Ticket"), 404: "NotFound"}),
        "delete": Operation("voidTicket", "Tickets", "Void a ticket", ("TicketId",), {
            204: Answer("The ticket is void.", None), 403: "NotTodaysTicket",
            404: "NotFound"}, "VoidRequest", body_required=False)}

    def __init__(self, store, clock, now, links):
        self.store = store
        self.clock = clock
        self.now = now  # the time at the museum
        self.links = links  # museum_ticket_page.TicketLinks

    def on_delete(self, req, resp, ticket_id):
        ticket_id = path_uuid(ticket_id, "ticketId")
        reason = optional_body(req, VOID_FIELDS).get("reason")
        if req.context.user.role != ADMIN_ROLE and \
                self.store.get_ticket(ticket_id)["ticketDate"] != self.now().date().isoformat():
            raise Problem(403, museum_sales.DESK_VOIDS_TODAYS)
        # A second void answers 204 too: the ticket is void, as asked (its first reason kept).
        self.store.void_ticket(ticket_id, rfc3339(self.clock()), reason)
        resp.status = 204

    def on_get(self, req, resp, ticket_id):
        ticket = self.store.get_ticket(path_uuid(ticket_id, "ticketId"))
        # Every role that reads a ticket is the museum's staff: it sees the void's reason.
        json_response(resp, museum_sales.ticket_view(
            ticket, ticket_status(ticket), req.context.user.role == ADMIN_ROLE, self.links,
            staff=True))


class Availability:
    """The places left on each day of a window: general entry and each event's."""

    needed_roles = {"GET": VISITOR_ROLE}
    shop_methods = ("GET",)  # [shop] enabled: anyone may read it
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
        schedule, capacity = museum_sales.days_as_set(self.live.config, self.store, start, end)
        taken = self.store.places_taken(start.isoformat(), end.isoformat(), rfc3339(now))
        events = museum_sales.events_by_day(taken["events"])
        days = [start + timedelta(days=offset) for offset in range((end - start).days + 1)]
        json_response(resp, [museum_sales.day_availability(day, schedule, capacity, taken,
                                                           events, now) for day in days])


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
        ticket = self.store.get_ticket(path_uuid(ticket_id, "ticketId"))
        if ticket["voidedAt"]:
            raise Problem(410, DOOR_OUTCOMES["void"][1])
        if ticket["cancelled"]:
            raise Problem(410, DOOR_OUTCOMES["cancelled"][1])
        png_response(req, resp, *self.images.image(ticket))

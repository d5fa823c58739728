"""Orders: several tickets bought together, all or nothing (`POST /v1.1/orders`), quoted
without buying (`?simulate=true`), held while the visitor pays and then confirmed, read,
cancelled by their creator or voided by an admin (with the reason kept), a payment due
marked paid at the desk, and the order's own scannable code.

An order's tickets follow a single sale's rules (museum_tickets.TicketSale, which museum.py
hands over: the two modules stand on one floor), and its items' fields are a single sale's
(`order_fields`); the store writes an order's tickets in one transaction or none of them,
and counts a hold's places until it ends, exactly, with no job to run.
"""

from contextlib import contextmanager
from datetime import date, timedelta

import storage
from museum_codes import field_error
from museum_door import new_confirmation_code, new_order_code, ticket_status
from museum_http import (API, INVALID_BODY, Problem, fingerprint, idempotency_key, json_response,
                         png_response, read_json, rfc3339)
from museum_openapi import EMAIL_SCHEMA, Answer, Operation, query, ref
from museum_sales import DESK_VOIDS_TODAYS, order_mails, ticket_view
from museum_ticket_image import TicketImages
from museum_validation import (Field, Validator, When, check_fields, checked_by,
                               optional_body, path_uuid)
from museum_vocabulary import (ADMIN_ROLE, ANYONE_ROLE, DESK_PAYMENTS, DESK_ROLE, GATE_ROLE,
                               ROLES, VISITOR_ROLE)

# The museum's own staff, who read a void's reason; a buyer never does.
STAFF_ROLES = (GATE_ROLE, DESK_ROLE, ADMIN_ROLE)

# Who may sell on each channel: anyone through the shop ([shop] enabled) and every account
# on the web, the museum's desk staff at the desk. The one place that says it, so a new
# role is one line here.
CHANNEL_ROLES = {"web": (ANYONE_ROLE, *ROLES), "desk": (DESK_ROLE, ADMIN_ROLE)}
PAYMENTS = ("cash", "card", "free", "invoice")
ORDER_TICKETS_MAX = 50  # tickets in one order, adding up the items' quantities
# An order's item is a single sale's ticket without its buyer (the order has one).
ITEM_TICKET_FIELDS = ("ticketType", "ticketDate", "eventId", "entryTime", "category")
# The service computes every price: a client that sends one is told so.
PRICE_FIELDS = ("price", "total", "currency")
ORDER_STATUSES = ("pending", "confirmed", "expired", "cancelled", "voided")
# An order made without credentials (the booking page) takes no payment: with a price, it
# is paid at the desk when [shop] pay_at_desk says so, and reads `"payment": "due"`.
PAYMENT_DUE = storage.PAYMENT_DUE
# What the desk marks a payment due paid with (`POST /orders/{orderId}/payment`).
PAYMENT_FIELDS = {"payment": Field(checked_by(Validator.choice, DESK_PAYMENTS), {
    "type": "string", "enum": list(DESK_PAYMENTS),
    "description": "How the desk took the payment due."}, "cash", True)}
NOT_PAID_AT_DESK = ("must be free: a ticket with a price is booked without credentials only "
                    "to be paid at the desk ([shop] pay_at_desk)")


def order_fields(ticket_fields):
    """(an order's body, one of its items) as Fields by name, the ticket fields being those
    of a single sale (museum_tickets.TICKET_FIELDS)."""
    item = {name: ticket_fields[name] for name in ITEM_TICKET_FIELDS}
    item["quantity"] = Field(_quantity, {
        "type": "integer", "minimum": 1, "maximum": ORDER_TICKETS_MAX, "default": 1,
        "description": "How many such tickets."}, 2)
    email = ticket_fields["email"]
    order = {
        "items": Field(_items, {
            "type": "array", "minItems": 1, "maxItems": ORDER_TICKETS_MAX,
            "items": ref("schemas", "OrderItem"), "description": (
                f"The tickets: 1 to {ORDER_TICKETS_MAX} in all, adding up the quantities.")},
            [{"ticketType": "general", "ticketDate": "2027-10-29", "category": "adult",
              "quantity": 2},
             {"ticketType": "general", "ticketDate": "2027-10-29", "category": "child",
              "quantity": 2}], True),
        "email": email._replace(required=False, schema={
            **EMAIL_SCHEMA, "description": "The buyer's; required for the `web` channel "
            "(but not for a quote), optional at the `desk`."}),
        "phone": ticket_fields["phone"],
        "channel": Field(checked_by(Validator.choice, tuple(CHANNEL_ROLES)), {
            "type": "string", "enum": list(CHANNEL_ROLES), "default": "web",
            "description": "`web` (a shop or a visitor) or `desk` (the museum's desk: "
            f"the {', '.join(CHANNEL_ROLES['desk'])} role)."}, "web"),
        "payment": Field(checked_by(Validator.choice, PAYMENTS), {
            "type": "string", "enum": list(PAYMENTS),
            "description": "How the desk was paid; required for the `desk` channel, "
            "refused otherwise."}, None, When("channel", "desk")),
        "hold": Field(checked_by(Validator.boolean), {
            "type": "boolean", "default": False, "description": "`true`: the order is "
            "`pending`, its places held until `expiresAt` (`[orders] hold_minutes`) for "
            "the payment; confirm it before then."}, True),
    }
    return order, item


def _items(validator, name, value):
    if isinstance(value, list) and 1 <= len(value) <= ORDER_TICKETS_MAX \
            and all(isinstance(item, dict) for item in value):
        return value
    validator.error(name, "not-a-list", f"must be a list of 1 to {ORDER_TICKETS_MAX} objects")
    return None


def _quantity(validator, name, value):
    if isinstance(value, int) and not isinstance(value, bool) \
            and 1 <= value <= ORDER_TICKETS_MAX:
        return value
    validator.error(name, "out-of-range",
                    f"must be a whole number from 1 to {ORDER_TICKETS_MAX}")
    return None


def _refuse_prices(validator, body):
    """`body` without the price fields a client may not set, each refused."""
    for name in PRICE_FIELDS:
        if name in body:
            validator.error(name, "assigned-by-service",
                            "is the service's to compute from the price categories")
    return {name: value for name, value in body.items() if name not in PRICE_FIELDS}


def order_view(order, contacts, links, staff=False):
    """An order as it is read back: its tickets as a ticket is read back, with what `links`
    (a museum_ticket_page.TicketLinks) adds (those of an ended hold void: their places are
    free), the buyer's email and phone for `contacts`, the void's reason for `staff`."""
    status = order["status"]
    view = {"orderId": order["orderId"], "orderCode": order["orderCode"], "status": status,
            "channel": order["channel"], **_totals(order["tickets"]),
            "createdAt": order["createdAt"]}
    if order["payment"]:
        view["payment"] = order["payment"]
    if order["paidAt"]:
        view["paidAt"] = order["paidAt"]
    if staff and order["voidReason"]:
        view["voidReason"] = order["voidReason"]
    if status in ("pending", "expired"):
        view["expiresAt"] = order["expiresAt"]
    for name in ("email", "phone"):
        if contacts and order[name]:
            view[name] = order[name]
    view["tickets"] = [ticket_view(ticket, "void" if status == "expired"
                                   else ticket_status(ticket), links=links, staff=staff)
                       for ticket in order["tickets"]]
    return view


def _totals(tickets):
    """The order's `total` (exact, in hundredths) and `currency`, from its tickets."""
    total = sum(storage.minor_units(ticket["price"]) for ticket in tickets)
    return {"total": storage.price_value(total), "currency": tickets[0]["currency"]}


class Orders:
    """Buying several tickets in one order, or a quote for them."""

    needed_roles = {"POST": VISITOR_ROLE}
    shop_methods = ("POST",)  # [shop] enabled: anyone may order, within the shop's limits
    described = {"post": Operation(
        "createOrder", "Orders", "Buy tickets in one order", (
            query("simulate", "`true`: a quote, with the prices and the total, buying "
                  "nothing.", {"type": "boolean", "default": False}, True),
            "IdempotencyKey"), {
            200: "OrderQuote",
            201: Answer("The order was made.", "Order", ("Location",)),
            403: "ChannelRefused", 404: "NotFound", 409: "PurchaseConflict",
            429: "OrderLimitReached"}, "OrderRequest")}

    def __init__(self, store, live, now, sale, new_id, public_url, fields, links, limits):
        self.store = store
        self.links = links  # museum_ticket_page.TicketLinks
        self.live = live  # museum_config.LiveConfig
        self.now = now  # the time at the museum
        self.sale = sale  # museum_tickets.TicketSale
        self.new_id = new_id
        self.public_url = public_url
        self.fields, self.item_fields = fields  # order_fields()
        self.limits = limits  # museum_shop.OrderLimits: an order without credentials

    def on_post(self, req, resp):
        simulate = _simulate(req)
        key = idempotency_key(req)
        body = read_json(req)
        user, now = req.context.user, self.now()
        idempotency = None
        if key is not None and not simulate:
            # A retry gets its order before any rule is checked again, as a ticket's does.
            idempotency = (user.name, key, fingerprint(body))
            replayed = self.store.replayed_order(*idempotency, rfc3339(now))
            if replayed is not None:
                self._answer(resp, replayed)
                return
        config = self.live.config
        order, tickets, capacities = self._check(body, user, config, now, simulate)
        if user.role == ANYONE_ROLE:
            order = self._paid_at_desk(order, tickets, config["shop"])
        if simulate:
            json_response(resp, self._quote(order, tickets))
            return
        limit = self.sale.purchase_limit(user, config, now)

        def write():
            codes = {"orderCode": new_order_code()}
            return self.store.create_order(
                {**order, **codes}, [{**ticket, "confirmationCode": new_confirmation_code(
                    ticket["ticketType"])} for ticket in tickets], rfc3339(now),
                capacities, config.capacity.per_slot, idempotency, limit,
                on_confirmed=order_mails(config, self.new_id, rfc3339(now)))
        with self.limits.admitted(req, order["email"], len(tickets), field="items"):
            self._answer(resp, self.sale.stored(write, now))

    def _paid_at_desk(self, order, tickets, shop):
        """An order without credentials: free, or with `payment` "due" where [shop]
        pay_at_desk lets the desk take the payment; 400 otherwise (the shop takes none)."""
        if self._quote(order, tickets)["total"] == 0:
            return order
        if not shop["pay_at_desk"]:
            raise Problem(400, INVALID_BODY, errors=[field_error(
                "items", "not-allowed", NOT_PAID_AT_DESK)])
        return {**order, "payment": PAYMENT_DUE}

    def _check(self, body, user, config, now, simulate=False):
        """(the order, its tickets, {date: general entry capacity} of their days) that
        `body` asks `user` to make at `now` (or, `simulate`, to quote: a quote needs no
        buyer's email, so a shop shows its total before asking for one); 400 naming every
        bad field, 403 for a channel the user's role may not sell on."""
        validator = Validator()
        if not isinstance(body, dict):
            raise Problem(400, "The request body must be a JSON object.")
        # The channel's default is as if given, so that its rules (a payment) follow.
        order = check_fields({"channel": "web", **_refuse_prices(validator, body)},
                             self.fields, validator)
        channel = order.setdefault("channel", "web")  # left out when null, and refused
        if channel == "web" and "email" not in body and not simulate:
            validator.error("email", "required", "is required for the web channel")
        tickets, capacities, events = [], {}, {}
        for index, item in enumerate(order.get("items") or ()):
            sold, capacity = self._item_tickets(validator.within(f"items[{index}]."), item,
                                                config, now, events)
            tickets += sold
            if sold and sold[0]["ticketType"] == "general":
                capacities[sold[0]["ticketDate"]] = capacity
        if len(tickets) > ORDER_TICKETS_MAX:
            validator.error("items", "out-of-range", f"must hold 1 to {ORDER_TICKETS_MAX} "
                            f"tickets in all, not {len(tickets)}")
        validator.raise_if_invalid()
        if user.role not in CHANNEL_ROLES[channel]:
            raise Problem(403, channel_refused(channel))
        moment, hold = rfc3339(now), order.get("hold", False)
        contact = {"email": order.get("email"), "phone": order.get("phone")}
        made = {"orderId": self.new_id(), "status": "pending" if hold else "confirmed",
                "channel": channel, "payment": order.get("payment"), **contact,
                "createdAt": moment, "createdBy": user.name, "expiresAt": rfc3339(
                    now + timedelta(minutes=config["orders"]["hold_minutes"])) if hold
                else None}
        return made, [{**ticket, **contact, "soldBy": user.name, "soldAt": moment}
                      for ticket in tickets], capacities

    def _item_tickets(self, validator, item, config, now, events):
        """(the tickets one item asks for, each a single sale's, none while a field is
        wrong; the general entry capacity of their day). An event's ticket is checked
        against the event as it stands (read once into `events`, by id; the sale checks it
        again), so that a date it does not offer names its item, and priced as it is now
        (the sale prices it in its own transaction)."""
        item = _refuse_prices(validator, item)
        quantity = self.item_fields["quantity"].check(validator, "quantity",
                                                      item.get("quantity", 1))
        fields = {name: field for name, field in self.item_fields.items()
                  if name != "quantity"}
        ticket, capacity = self.sale.check(
            validator, {name: value for name, value in item.items() if name != "quantity"},
            fields, config, now)
        if ticket is None or quantity is None:
            return [], None
        if ticket["eventId"]:
            event = events.get(ticket["eventId"]) or self.store.get_event(ticket["eventId"])
            events[ticket["eventId"]] = event
            if ticket["ticketDate"] not in event["dates"]:
                validator.error("ticketDate", "not-an-event-date",
                                f"must be one of {', '.join(event['dates'])}")
                return [], None
            ticket.update(eventName=event["name"], price=event.get("prices", {}).get(
                ticket["category"], event["price"]))
        return [{**ticket, "ticketId": self.new_id()} for _ in range(quantity)], \
            capacity.on(date.fromisoformat(ticket["ticketDate"]))

    def _quote(self, order, tickets):
        """What the order would cost, its tickets priced as the store would price them
        now (an event's by its `prices`); no ids, codes or places."""
        quoted = []
        for ticket in tickets:
            view = ticket_view({"eventName": None, **ticket, "confirmationCode": None,
                                "admittedAt": None, "entryTime": ticket.get("entryTime")},
                               "valid")
            quoted.append({name: value for name, value in view.items()
                           if name not in ("ticketId", "confirmationCode", "status")})
        quote = {"channel": order["channel"], **_totals(quoted)}
        if order["payment"]:
            quote["payment"] = order["payment"]
        return {**quote, "tickets": quoted}

    def _answer(self, resp, order):
        json_response(resp, order_view(order, True, self.links), 201)
        resp.location = f"{self.public_url}{API}/orders/{order['orderId']}"


def channel_refused(channel):
    """What a 403 says to a role that may not sell on `channel`."""
    return f"The {channel} channel needs the {' or '.join(CHANNEL_ROLES[channel])} role."


def _simulate(req):
    """Whether `?simulate=` asks for a quote: `true` or `false`, else 400."""
    validator = Validator()
    text = req.get_param("simulate")
    if text not in (None, "true", "false"):
        validator.error("simulate", "not-a-boolean", "must be true or false")
    validator.raise_if_invalid("A query parameter is not valid; see errors.")
    return text == "true"


class _OneOrder:
    """What the resources of one order share: finding it for the user asking. The account
    that created it, a gate, a desk and an admin find it; to any other it does not exist
    (404, never 403, so that ids cannot be probed)."""

    def __init__(self, store, now, links):
        self.store = store
        self.now = now  # the time at the museum
        self.links = links  # museum_ticket_page.TicketLinks

    def found(self, req, order_id):
        """The order of the path, as read back now; 404 unless the user may read it."""
        user = req.context.user
        order = self.store.get_order(path_uuid(order_id, "orderId"), rfc3339(self.now()))
        if user.role not in STAFF_ROLES and \
                order["createdBy"] != user.name:
            raise storage.NotFound(order_id)
        return order

    @staticmethod
    def sees_contacts(req, order):
        """The creator and an admin see the buyer's email and phone; a gate does not."""
        user = req.context.user
        return user.role == ADMIN_ROLE or order["createdBy"] == user.name

    def view(self, req, order):
        """The order as `req`'s user reads it: the museum's staff see a void's reason."""
        return order_view(order, self.sees_contacts(req, order), self.links,
                          req.context.user.role in STAFF_ROLES)


class Order(_OneOrder):
    """One order: read, cancelled by its creator while pending, voided by an admin or by
    the desk when all its tickets are dated today (either may say why: the reason is kept
    with the void)."""

    needed_roles = {"GET": VISITOR_ROLE, "DELETE": VISITOR_ROLE}
    described = {
        "get": Operation("getOrder", "Orders", "Read an order", ("OrderId",), {
            200: Answer("The order.", "Order"), 404: "NotFound"}),
        "delete": Operation("cancelOrder", "Orders", "Cancel or void an order", ("OrderId",), {
            204: Answer("The order is cancelled (its creator) or void (an admin, or the "
                        "desk when all its tickets are dated today).", None),
            403: "NotTodaysTicket", 404: "NotFound", 409: "OrderConflict"}, "VoidRequest",
            body_required=False)}

    def __init__(self, store, now, links, void_fields):
        super().__init__(store, now, links)
        self.void_fields = void_fields  # museum_tickets.VOID_FIELDS: a void's reason

    def on_get(self, req, resp, order_id):
        json_response(resp, self.view(req, self.found(req, order_id)))

    def on_delete(self, req, resp, order_id):
        user, moment = req.context.user, rfc3339(self.now())
        order_id = path_uuid(order_id, "orderId")
        reason = optional_body(req, self.void_fields).get("reason")
        with _order_conflicts():
            if user.role in (ADMIN_ROLE, DESK_ROLE):  # a refund: a void order answers 204 too
                self._refuse_unless_todays(user, order_id, moment)
                self.store.void_order(order_id, moment, reason)
            elif reason is not None:  # a buyer's words would be shown to the staff
                raise Problem(400, INVALID_BODY, errors=[field_error(
                    "reason", "not-allowed", CANCEL_KEEPS_NO_REASON)])
            else:
                self.store.cancel_order(order_id, user.name, moment)
        resp.status = 204

    def _refuse_unless_todays(self, user, order_id, moment):
        """The desk voids an order only when each of its tickets is dated today, as it voids
        tickets (403 otherwise); an admin voids any."""
        if user.role == ADMIN_ROLE:
            return
        today = self.now().date().isoformat()
        if any(ticket["ticketDate"] != today
               for ticket in self.store.get_order(order_id, moment)["tickets"]):
            raise Problem(403, DESK_VOIDS_TODAYS)


class OrderConfirmation(_OneOrder):
    """A held order made final once its payment went through."""

    needed_roles = {"POST": VISITOR_ROLE}
    described = {"post": Operation("confirmOrder", "Orders", "Confirm a held order", (
        "OrderId",), {200: Answer("The order, confirmed.", "Order"), 404: "NotFound",
                      409: "OrderConflict"})}

    def __init__(self, store, now, links, live, new_id):
        super().__init__(store, now, links)
        self.live = live  # museum_config.LiveConfig: [mail], for the confirmation's mail
        self.new_id = new_id

    def on_post(self, req, resp, order_id):
        order = self.found(req, order_id)
        if req.context.user.role == GATE_ROLE and order["createdBy"] != req.context.user.name:
            raise storage.NotFound(order_id)  # a gate reads orders; it confirms none
        now = rfc3339(self.now())
        with _order_conflicts():  # the mail is queued in the confirmation's transaction
            confirmed = self.store.confirm_order(
                order["orderId"], now, order_mails(self.live.config, self.new_id, now))
        json_response(resp, self.view(req, confirmed))


class OrderPayment(_OneOrder):
    """An order's payment due (booked on the shop to be paid at the desk) marked paid by
    the desk: cash or card. A retry after an answer lost answers the order again."""

    needed_roles = {"POST": DESK_ROLE}
    described = {"post": Operation("markOrderPaid", "Orders", "Mark a payment due paid", (
        "OrderId",), {200: Answer("The order, paid.", "Order"), 404: "NotFound",
                      409: "OrderNotDue"}, "OrderPaymentRequest")}

    def on_post(self, req, resp, order_id):
        order_id = path_uuid(order_id, "orderId")
        validator = Validator()
        payment = check_fields(read_json(req), PAYMENT_FIELDS, validator).get("payment")
        validator.raise_if_invalid()
        try:
            paid = self.store.mark_order_paid(order_id, payment, rfc3339(self.now()))
        except storage.NotDue as refused:
            raise Problem(409, not_due(refused.status, refused.payment),
                          members={"reason": "not-due"}) from None
        json_response(resp, self.view(req, paid))


def not_due(status, payment):
    """Why an order with `status` and `payment` has no payment due to mark paid."""
    if status != "confirmed":
        return f"The order has no payment due: it is {status}."
    if payment is None:  # free, or paid through a shop of its own
        return "The order has no payment due: it was not booked to be paid at the desk."
    return f"The order has no payment due: its payment is {payment}."


CANCEL_KEEPS_NO_REASON = ("is kept only with a void by the staff (an admin, or the desk); a "
                          "cancel of one's own pending order takes none")
EXPIRED = "The order's hold has ended: its places are free again."
NOT_PENDING = "The order is no longer pending: it was cancelled, voided or confirmed."


@contextmanager
def _order_conflicts():
    """The store's refusals of an order's change, as 409s with their reason."""
    try:
        yield
    except storage.HoldExpired:
        raise Problem(409, EXPIRED, members={"reason": "expired"}) from None
    except storage.NotAllowed:
        raise Problem(409, NOT_PENDING, members={"reason": "not-pending"}) from None


class OrderImage(_OneOrder):
    """The order's own QR code, which admits all its tickets valid that day at once."""

    needed_roles = {"GET": VISITOR_ROLE}
    described = {"get": Operation("getOrderCode", "Orders", "Get an order's scannable code",
                                  ("OrderId", "IfNoneMatch"), {
                                      200: "TicketImage", 304: "NotModified",
                                      404: "NotFound", 410: "OrderGone"})}

    def __init__(self, store, now, links):
        super().__init__(store, now, links)
        self.images = TicketImages(links.secret)

    def on_get(self, req, resp, order_id):
        order = self.found(req, order_id)
        if order["status"] in ("expired", "cancelled", "voided"):
            raise Problem(410, order_gone(order["status"]))
        png_response(req, resp, *self.images.order_image(order))



def order_gone(status):
    """What the order's code answers once it admits nobody."""
    return f"The order is {status}: its code admits nobody."


def _roles_text(channel):
    roles = CHANNEL_ROLES[channel]
    return roles[0] if len(roles) == 1 else f"{', '.join(roles[:-1])} or {roles[-1]}"


# What the OpenAPI description states of orders (museum.py hands it over).
ORDER_FACTS = {"ORDER_TICKETS_MAX": ORDER_TICKETS_MAX,
               "ORDER_PAYMENTS": (*PAYMENTS, PAYMENT_DUE), "WEB_ROLES": _roles_text("web"),
               "DESK_ROLES": _roles_text("desk"), "ORDER_STATUSES": ORDER_STATUSES,
               "EXPIRED": EXPIRED, "NOT_PENDING": NOT_PENDING,
               "NOT_DUE_PAID": not_due("confirmed", "card"), "NOT_DUE_VOIDED": not_due(
                   "voided", PAYMENT_DUE), "CANCEL_KEEPS_NO_REASON": CANCEL_KEEPS_NO_REASON,
               "PAYMENT_FIELDS": PAYMENT_FIELDS,
               "DESK_REFUSED": channel_refused("desk"), "ORDER_GONE": order_gone("expired")}

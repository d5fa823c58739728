"""Sending a ticket's or an order's mail again: `POST /tickets/{ticketId}/resend`
and `POST /orders/{orderId}/resend`, for the account that bought it, the door and an admin.

The answer is 202 whenever the ticket or order exists for the caller: whether a mail was
queued (none when mail is off, the buyer gave no email or it was erased, the ticket is void
or the order not confirmed, or RESENDS_PER_HOUR were queued for it in the past hour) is not
told, so the answer says nothing of a buyer's address and a resend button cannot flood an
inbox. The mail is queued in the outbox like a sale's, to the address stored with the
ticket or order, and museum_outbox sends it.
"""

from datetime import timedelta

import museum_sales
from museum_http import rfc3339
from museum_openapi import UUID_SCHEMA, Answer, Operation, query
from museum_validation import path_uuid
from museum_vocabulary import VISITOR_ROLE

RESENDS_PER_HOUR = 3  # mails queued per ticket or order, the sale's own included

_ORDER_ID = "2b5e0a8c-6f0e-4c1b-9a51-7c3d2e1f0a9b"  # the example of an order's id
_ACCEPTED = Answer(f"Accepted: the mail is sent again unless {RESENDS_PER_HOUR} were sent "
                   "in the past hour, the buyer's email is unknown or erased, or what it "
                   "holds is void; which of these holds is not told.", None)
_UNKNOWN = "NotFound"


class _Resend:
    """What both resends share: the caller's own sales only for a visitor account, any for
    the door and an admin; 202 whatever is queued."""

    needed_roles = {"POST": VISITOR_ROLE}

    def __init__(self, store, live, clock, new_id):
        self.store = store
        self.live = live  # museum_config.LiveConfig: [mail] url
        self.clock = clock
        self.new_id = new_id

    def _resend(self, req, resp, **named):
        user = req.context.user
        now = self.clock()
        message = museum_sales.mail_of(self.new_id, rfc3339(now), **named)
        # With mail off nothing is queued, but the id and its owner are checked all the same.
        most = RESENDS_PER_HOUR if self.live.config["mail"]["url"] else 0
        self.store.queue_mail_again(message, rfc3339(now - timedelta(hours=1)), most,
                                    user=user.name if user.role == VISITOR_ROLE else None)
        resp.status = 202


class TicketResend(_Resend):
    """A ticket's mail, again, to its buyer."""

    described = {"post": Operation(
        "resendTicket", "Tickets", "Mail a ticket to its buyer again", ("TicketId",),
        {202: _ACCEPTED, 404: _UNKNOWN})}

    def on_post(self, req, resp, ticket_id):
        self._resend(req, resp, ticket_id=path_uuid(ticket_id, "ticketId"))


class OrderResend(_Resend):
    """An order's mail (all its tickets), again, to its buyer."""

    described = {"post": Operation(
        "resendOrder", "Tickets", "Mail an order's tickets to its buyer again",
        ({**query("orderId", "The order's id.", UUID_SCHEMA, _ORDER_ID, True), "in": "path"},),
        {202: _ACCEPTED, 404: _UNKNOWN})}

    def on_post(self, req, resp, order_id):
        self._resend(req, resp, order_id=path_uuid(order_id, "orderId"))

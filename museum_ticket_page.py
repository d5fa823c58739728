"""The ticket page: each ticket and each order has a link, `<public_url>/t/<token>`, that
shows its QR codes large with what the visitor needs at the door, needs no credentials,
prints one ticket per page and keeps working offline once opened.

The token is 128 random bits made with the sale (storage says how it is kept and found):
whoever holds the link may see the ticket, as whoever holds the printed ticket may. The
ticket read and the sale answer show the link and the QR's exact text (`TicketLinks`). A
voided ticket or order answers 410, and a link no one was given 404, both as plain pages.

The page is one HTML file filled in here (museum_pages/ticket.html and
ticket-article.html), its stylesheet, and a script that registers a service worker scoped
to the page alone, which keeps the page for a visit without the network. The QR codes are
SVG drawn by segno inside the HTML, so a kept page is whole; nothing comes from elsewhere.
"""

import functools
import html
import importlib.resources
import re
import string
from datetime import date

import segno

import museum_categories
import storage
from museum_door import qr_text, ticket_status
from museum_http import rfc3339
from museum_pages import PageFile
from museum_vocabulary import TICKET_LABELS

PAGE_PATH = "/t"
# What `secrets.token_urlsafe(16)` makes (storage.sql.new_page): anything else is no link
# the museum gave out, answered as an unknown one without asking the database.
TOKEN = re.compile(r"[A-Za-z0-9_-]{22}")

# The page runs only its own script and stylesheet; the QR codes are SVG inside it. The
# token is in the address: no Referer may carry it away, and no search engine list it.
PAGE_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "connect-src 'self'; worker-src 'self'; base-uri 'none'; form-action 'none'; "
        "frame-ancestors 'none'"),
    "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
    "Referrer-Policy": "no-referrer",
    "X-Robots-Tag": "noindex, nofollow",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
# The visitor's own browser may keep the page (its service worker does, for offline use);
# no shared cache may, and an online visit always asks again, so a void shows at once.
PAGE_CACHING = ["private", "no-cache"]
# A page that shows no ticket is never kept.
NO_TICKET_CACHING = ["no-store"]

# What a ticket page or an order page answers 410 with, by the reason it shows nothing.
GONE = {
    "void": ("This ticket was voided", "It was refunded or cancelled and no longer admits "
             "anyone."),
    "cancelled": ("This event was cancelled", "The ticket no longer admits anyone; the "
                  "museum tells its buyers what happens next."),
    "voided": ("This order was voided", "Its tickets were refunded and no longer admit "
               "anyone."),
    "expired": ("This order was not completed", "It was not confirmed in time, so its "
                "tickets were never valid."),
    "cancelled-order": ("This order was cancelled", "Its tickets were given back and no "
                        "longer admit anyone."),
    "none-left": ("No ticket of this order is valid", "Each of its tickets was voided or "
                  "its event cancelled."),
}
UNKNOWN = ("No ticket here", "This link is not one the museum gave out: check that it was "
           "copied whole.")
# An order awaiting its payment shows its tickets without their codes.
PENDING_NOTE = ("Awaiting confirmation: the QR codes appear here once the order is "
                "confirmed.")


class TicketLinks:
    """What a ticket's answers add for the visitor and for a shop: `qrText`, the exact text
    of its QR code (for a shop that prints its own tickets), and `ticketPage`, its page's
    link: on `public_url`, or a path when that is unset (as Location headers are)."""

    def __init__(self, secret, public_url):
        self.secret = secret  # signs the QR text
        self.public_url = public_url

    def of_ticket(self, ticket):
        """`{"qrText", "ticketPage"}` of a ticket as the store reads it back."""
        return {"qrText": qr_text(self.secret, ticket["ticketId"], ticket["confirmationCode"]),
                "ticketPage": self.page(ticket["pageToken"])}

    def page(self, token):
        """The link of the page of `token` (a ticket's or an order's "pageToken")."""
        return f"{self.public_url}{PAGE_PATH}/{token}"


def add_routes(app, store, live, clock, links):
    """The page at /t/<token> and its files, outside the API as the scanner page is."""
    app.add_route(f"{PAGE_PATH}/{{token}}", TicketPage(store, live, clock, links.secret))
    for name, media_type in (("ticket.css", "text/css"), ("ticket.js", "text/javascript"),
                             ("ticket-sw.js", "text/javascript")):
        app.add_route(f"{PAGE_PATH}/{name}",
                      PageFile(name, f"{media_type}; charset=utf-8", PAGE_HEADERS))


class TicketPage:
    """The page of one ticket, or of an order with each of its tickets; no credentials."""

    auth_required = False

    def __init__(self, store, live, clock, secret):
        self.store = store
        self.live = live  # museum_config.LiveConfig: the museum's name, the categories
        self.clock = clock
        self.secret = secret
        self.page = _template("ticket.html")  # $title, $body
        self.article = _template("ticket-article.html")  # one ticket

    def on_get(self, req, resp, token):
        resp.set_headers(PAGE_HEADERS)
        found = self._find(token)
        if found is None:
            self._notice(resp, 404, *UNKNOWN)
            return
        kind, record = found
        tickets = [record] if kind == "ticket" else record["tickets"]
        gone = gone_reason(kind, record)
        if gone is not None:
            self._notice(resp, 410, *GONE[gone])
            return
        config = self.live.config
        pending = kind == "order" and record["status"] == "pending"
        articles = "".join(self._article(config, ticket, pending) for ticket in tickets)
        title = f"Ticket · {config['museum']['name']}"
        if kind == "order":
            title = f"Order {record['orderCode']} · {config['museum']['name']}"
            count = f"{len(tickets)} ticket{'s' if len(tickets) > 1 else ''}"
            articles = f'<p class="order">Order {record["orderCode"]} · {count}</p>{articles}'
        resp.cache_control = PAGE_CACHING
        self._write(resp, 200, title, articles)

    def _find(self, token):
        """(kind, record) the token's page shows; None for a token no one was given."""
        if not TOKEN.fullmatch(token):
            return None
        try:
            return self.store.page(token, rfc3339(self.clock()))
        except storage.NotFound:
            return None

    def _article(self, config, ticket, pending):
        status = ticket_status(ticket)
        shows_code = not pending and status in ("valid", "admitted")
        details = [("Date", _long_date(ticket["ticketDate"]))]
        if ticket["entryTime"]:
            details.append(("Entry", ticket["entryTime"]))
        if ticket["category"]:
            category = museum_categories.by_name(config, ticket["category"])
            details.append(("Category", category.label if category else ticket["category"]))
        details.append(("Code", ticket["confirmationCode"]))
        return self.article.substitute(
            museum=html.escape(config["museum"]["name"]),
            what=html.escape(ticket["eventName"] or TICKET_LABELS[ticket["ticketType"]]),
            qr=qr_svg(qr_text(self.secret, ticket["ticketId"], ticket["confirmationCode"]))
            if shows_code else "",
            details="".join(f"<dt>{name}</dt><dd>{html.escape(value)}</dd>"
                            for name, value in details),
            status=html.escape(PENDING_NOTE if pending else STATUS_NOTES[status]))

    def _notice(self, resp, status, headline, text):
        resp.cache_control = NO_TICKET_CACHING
        self._write(resp, status, headline, f'<section class="notice"><h1>{headline}</h1>'
                                            f"<p>{text}</p></section>")

    def _write(self, resp, status, title, body):
        resp.status = status
        resp.content_type = "text/html; charset=utf-8"
        resp.text = self.page.substitute(title=html.escape(title), body=body)


# What an article says under a ticket's details, by its status (museum_door.ticket_status).
STATUS_NOTES = {"valid": "Show this code at the entrance.",
                "admitted": "Admitted at the entrance.",
                "void": "Voided: this ticket no longer admits anyone.",
                "cancelled": "Its event was cancelled."}


def gone_reason(kind, record):
    """Why the page of a ticket or order shows nothing (a key of GONE), or None."""
    if kind == "ticket":
        status = ticket_status(record)
        return status if status in ("void", "cancelled") else None
    if record["status"] in ("voided", "expired"):
        return record["status"]
    if record["status"] == "cancelled":
        return "cancelled-order"
    statuses = {ticket_status(ticket) for ticket in record["tickets"]}
    return None if statuses & {"valid", "admitted"} else "none-left"


@functools.lru_cache(maxsize=1024)
def qr_svg(text):
    """The QR code of `text` as inline SVG, sized by the stylesheet. Drawn once per text
    in a while: an order's page draws one per ticket on every visit."""
    # make_qr, not make: a Micro QR would be smaller but most phones cannot read it.
    return segno.make_qr(text, error="m").svg_inline(
        border=4, omitsize=True, svgclass="qr", lineclass=None, light="#fff",
        title="The ticket's QR code")


def _template(name):
    return string.Template(importlib.resources.files("museum_pages").joinpath(name).read_text(
        encoding="utf-8"))


def _long_date(iso_date):
    """`2026-12-01` as `Tuesday 1 December 2026`."""
    day = date.fromisoformat(iso_date)
    return f"{day:%A} {day.day} {day:%B %Y}"

"""The shop: what a browser on the museum's own web pages may do without credentials when
`[shop] enabled` is true, and the limits on the orders it makes.

Which operations the shop opens is each resource's own word (`shop_methods`, read by
museum_vocabulary.open_in_shop); the Authenticator lets requests without credentials
through to them. This module answers the browsers of `[shop] allowed_origins` with CORS
headers (`ShopCors`), and limits the orders made without credentials (`OrderLimits`),
which the orders resource asks once per order. With the shop off neither does anything:
the service answers exactly as it does without them.
"""

import contextlib
import math
from datetime import datetime, timedelta

from museum_auth import FailureCounts, client_key
from museum_codes import field_error
from museum_http import INVALID_BODY, Problem, retry_after, rfc3339
from museum_sales import SHOP_ADDRESS_LIMITED, SHOP_EMAIL_LIMITED
from museum_vocabulary import ANYONE_ROLE, open_in_shop

ADDRESS_WINDOW = timedelta(hours=1)  # [shop] orders_per_hour
EMAIL_WINDOW = timedelta(hours=24)  # [shop] orders_per_email_per_day


class ShopCors:
    """CORS (the Fetch standard) for the operations the shop opens, to the origins of
    `[shop] allowed_origins` only: any other origin gets no CORS header at all, so its
    pages cannot read the answers. No credentials are allowed across origins (no
    `Access-Control-Allow-Credentials`, no `Authorization` in a preflight's headers): the
    staff's pages are the service's own, on its own origin."""

    # What a shop's script sends beyond the safelisted headers, and what it may read.
    ALLOWED_HEADERS = "Content-Type, Idempotency-Key, X-Requested-With"
    EXPOSED_HEADERS = "Location, Link, X-Total-Count, Retry-After"
    PREFLIGHT_MAX_AGE = "600"  # seconds a browser may keep a preflight's answer

    def __init__(self, allowed_origins):
        self.origins = frozenset(allowed_origins)

    def process_resource(self, req, resp, resource, params):
        """Answer a preflight from an allowed origin for an operation the shop opens, before
        the sign-in (a preflight never carries credentials)."""
        if req.method != "OPTIONS":
            return
        origin = req.get_header("Origin")
        asked = req.get_header("Access-Control-Request-Method", default="")
        if origin not in self.origins or not open_in_shop(resource, asked):
            return  # signed in (401) as any other request: no CORS header
        methods = [method for method in ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")
                   if open_in_shop(resource, method)]
        resp.set_headers({
            "Access-Control-Allow-Origin": origin,
            "Access-Control-Allow-Methods": ", ".join(methods),
            "Access-Control-Allow-Headers": self.ALLOWED_HEADERS,
            "Access-Control-Max-Age": self.PREFLIGHT_MAX_AGE,
            "Vary": "Origin, Access-Control-Request-Method, Access-Control-Request-Headers"})
        resp.status = 204
        resp.complete = True

    def process_response(self, req, resp, resource, req_succeeded):
        """The CORS headers of an answer (an error too) of an operation the shop opens."""
        if resource is None or not open_in_shop(resource, req.method):
            return
        resp.append_header("Vary", "Origin")  # a cache must not hand one origin's to another
        origin = req.get_header("Origin")
        if origin in self.origins:
            resp.set_header("Access-Control-Allow-Origin", origin)
            resp.set_header("Access-Control-Expose-Headers", self.EXPOSED_HEADERS)


class OrderLimits:
    """The limits on an order made without credentials, by `[shop]`: at most `max_tickets`
    tickets (400 naming the field otherwise), `orders_per_hour` per client address (an
    IPv6 /64), `orders_per_email_per_day` per email (429 with Retry-After otherwise). An
    order made with credentials passes untouched ([auth] visitor_tickets_per_hour limits
    visitor credentials).

    The orders per email are counted in the store, so every instance on one database counts
    the others' (two orders of one email at the very same moment may both pass: a limit on
    abuse, not a capacity). The orders per address are counted by each instance in memory,
    as the lock-outs of logins are: behind a load balancer, each instance allows as many."""

    def __init__(self, shop_settings, store, clock):
        self.settings = shop_settings
        self.store = store
        self.clock = clock  # an aware datetime: now
        window = ADDRESS_WINDOW.total_seconds()
        # Counted when an order is made; the address that reaches the limit waits the
        # window out from then.
        self.per_address = FailureCounts(shop_settings["orders_per_hour"], window, window,
                                         clock=lambda: clock().timestamp())

    @contextlib.contextmanager
    def admitted(self, req, email, tickets, field):
        """The one call of the orders resource, around the order's creation:

            with self.limits.admitted(req, email, len(tickets), "items"):
                order = self.store.create_order(...)

        For a request without credentials (signed in as museum_auth.ANYONE): a Problem when the
        order, holding `tickets` tickets for `email` (None: no email), is past a limit (a
        400 names `field`); the order counts against the client's address once the block
        ends without an exception, so an order refused (sold out, say) costs nothing."""
        if req.context.user.role != ANYONE_ROLE:
            yield
            return
        self._refuse_if_limited(req, email, tickets, field)
        yield
        self.per_address.count(client_key(req.remote_addr))

    def _refuse_if_limited(self, req, email, tickets, field):
        most = self.settings["max_tickets"]
        if tickets > most:
            raise Problem(400, INVALID_BODY, errors=[field_error(
                field, "out-of-range", f"must hold at most {most} tickets in an order "
                "without credentials ([shop] max_tickets)")])
        waiting = self.per_address.locked_for(client_key(req.remote_addr))
        if waiting > 0:
            raise Problem(429, SHOP_ADDRESS_LIMITED,
                          headers={"Retry-After": str(max(1, math.ceil(waiting)))})
        if email:
            now = self.clock()
            orders, first = self.store.web_orders_of(email, rfc3339(now - EMAIL_WINDOW))
            if orders >= self.settings["orders_per_email_per_day"]:
                ends = datetime.fromisoformat(first) + EMAIL_WINDOW
                raise Problem(429, SHOP_EMAIL_LIMITED,
                              headers={"Retry-After": retry_after(ends, now)})

"""The museum service's app: opening hours, special events and tickets over HTTP/JSON.

One WSGI application (Falcon) behind HTTP Basic auth, all API paths under /v1.1, served by
waitress from the `museum` command (museum_cli.py) or by any WSGI host (`museum:app`). This
module assembles it: every path with its resource, the middleware, the error answers, and
the OpenAPI description made from the resources' own. The resources live by area beside
it: the opening hours and a day changed (museum_days.py), the special events
(museum_events.py), tickets and availability (museum_tickets.py), the door's admissions
(museum_admissions.py), the reports (museum_reports.py) and the shop's public access
(museum_shop.py). docs/architecture.md draws every module and which may import which.
"""

import functools
import logging
import re
import signal
import threading

import falcon
import falcon.inspect

import museum_auth
import museum_openapi
import museum_privacy
import museum_ticket_page
import museum_webhooks
import storage
from museum_about import Museum, PriceCategories
from museum_access_log import AccessLog, SafeHeaders, open_access_log
from museum_admissions import (ADMISSION_FIELDS, LOOKUP_FIELDS, LOOKUP_LIMIT, Admission,
                               AdmissionList, Admissions, AdmissionSummary, TicketLookup)
from museum_devices import DEVICE_FACTS, DevicePairing, DeviceSession
# Raised and used by integrators who embed the app (docs/production.md): part of its API.
from museum_config import ConfigError, load_config, parse_config  # noqa: F401
from museum_config import LiveConfig, check_passwords
from museum_desk import add_desk_page
from museum_days import DAY_FIELDS, HOURS_HORIZON_DAYS, MuseumDay, MuseumHours
from museum_door import EntryTimes, TypedCodeLimit
from museum_events import EVENT_CANCELLED, EVENT_FIELDS, SpecialEvent, SpecialEvents
from museum_http import (API, BAD_QUERY, BODY_LIMIT, IDEMPOTENCY_KEY, PAGE_MAX,
                         PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX, Problem, Router, json_response,
                         storage_error_as_problem, to_json, unexpected_error, write_problem)
from museum_openapi import Answer, Operation
from museum_orders import (ORDER_FACTS, Order, OrderConfirmation, OrderImage, OrderPayment,
                           Orders, order_fields)
from museum_pages import PageFile
from museum_outbox_messages import OutboxMessage, OutboxMessages, OutboxRetry
from museum_reports import ArrivalsChart, SalesChart, SalesReport
from museum_resend import OrderResend, TicketResend
from museum_shop import OrderLimits, ShopCors
from museum_shop_page import add_shop_routes
from museum_services import (museum_now, museum_today, museum_zone_name, new_uuid,
                             open_configured_store, qr_secret, utc_now)
from museum_tickets import (SALE_HORIZON_DAYS, TICKET_FIELDS, VOID_FIELDS, Availability, Ticket,
                            TicketImage, Tickets, TicketSale)

# Two versions, kept apart: the software's own (semantic; a fix or a new option makes a new
# one, pyproject.toml reads it) and the interface's, which the OpenAPI document's
# info.version states and which changes only when the API does.
__version__ = "1.7.0"
INTERFACE_VERSION = "1.5.0"
# An order's body and its items' fields: a single sale's ticket fields, and the order's own.
ORDER_FIELDS, ORDER_ITEM_FIELDS = order_fields(TICKET_FIELDS)
log = logging.getLogger("museum")


class Health:
    """200 while the database answers and takes writes; 503 saying why otherwise. The store
    logs the outage once: not here, where a load balancer asks every few seconds. The
    outbox's failed messages are reported, never a 503: the service itself is sound."""

    auth_required = False
    ANSWER = {"status": "ok", "version": __version__, "interface": INTERFACE_VERSION}

    def __init__(self, store):
        self.store = store

    def on_get(self, req, resp):
        try:
            outbox = self.store.health()
        except storage.Unavailable as reason:
            raise Problem(503, f"The database cannot serve: {reason}",
                          headers={"Retry-After": "5"}) from reason
        resp.data = to_json({**self.ANSWER, "outbox": outbox})


class OpenAPIDocument:
    """The OpenAPI description of this interface; public, so clients can be generated."""

    auth_required = False
    described = {"get": Operation("getOpenApiDescription", "Description",
                                  "Get this OpenAPI description",
                                  answers={200: Answer("This document.", {"type": "object"})})}

    def on_get(self, req, resp):
        json_response(resp, openapi_description())


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
    "/reports/sales/chart": SalesChart, "/reports/arrivals/chart": ArrivalsChart,
    "/tickets/{ticketId}": Ticket, "/tickets/{ticketId}/qr": TicketImage,
    "/devices/pair": DevicePairing, "/devices/session": DeviceSession,
    "/price-categories": PriceCategories, "/museum": Museum,
    "/orders": Orders, "/orders/{orderId}": Order, "/orders/{orderId}/confirm": OrderConfirmation,
    "/orders/{orderId}/qr": OrderImage, "/orders/{orderId}/payment": OrderPayment,
    "/tickets/{ticketId}/resend": TicketResend, "/orders/{orderId}/resend": OrderResend,
    "/outbox": OutboxMessages, "/outbox/{messageId}": OutboxMessage,
    "/outbox/{messageId}/retry": OutboxRetry, "/openapi.json": OpenAPIDocument}


@functools.cache
def openapi_description():
    """The OpenAPI document of API_ROUTES, stating the limits, patterns and declared fields
    of the app and its resource modules (museum_openapi reads the door's rules from
    museum_door itself)."""
    return museum_openapi.document(API_ROUTES, {
        "API": API, "INTERFACE_VERSION": INTERFACE_VERSION, "BAD_QUERY": BAD_QUERY,
        "BODY_LIMIT": BODY_LIMIT, "IDEMPOTENCY_KEY": IDEMPOTENCY_KEY, "PAGE_MAX": PAGE_MAX,
        "PAGE_SIZE_MAX": PAGE_SIZE_MAX, "PAGE_SIZE_DEFAULT": PAGE_SIZE_DEFAULT,
        "LOOKUP_LIMIT": LOOKUP_LIMIT, "HOURS_HORIZON_DAYS": HOURS_HORIZON_DAYS,
        "SALE_HORIZON_DAYS": SALE_HORIZON_DAYS, "EVENT_FIELDS": EVENT_FIELDS,
        "EVENT_CANCELLED": EVENT_CANCELLED,
        "TICKET_FIELDS": TICKET_FIELDS, "ADMISSION_FIELDS": ADMISSION_FIELDS,
        "LOOKUP_FIELDS": LOOKUP_FIELDS, "DAY_FIELDS": DAY_FIELDS, "ORDER_FIELDS": ORDER_FIELDS,
        "ORDER_ITEM_FIELDS": ORDER_ITEM_FIELDS, "VOID_FIELDS": VOID_FIELDS, **DEVICE_FACTS,
        **ORDER_FACTS},
        museum_webhooks.described())


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
        authenticator = museum_auth.authenticator_for(
            config, store=store, cookie_secret=qr_secret(config, store))
        live.follow(authenticator.take_users)
    live.follow(set_log_level)
    access = access or open_access_log(config)
    # The shop's CORS only while it is open ([shop] applies at a restart): a shut shop's
    # requests pay nothing for it.
    cors = [ShopCors(config["shop"]["allowed_origins"])] if config["shop"]["enabled"] else []
    app = falcon.App(middleware=[AccessLog(access), SafeHeaders(), *middleware, *cors,
                                 authenticator], router=Router())
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
    links = museum_ticket_page.TicketLinks(qr_secret(live.config, store),
                                           live.config["server"]["public_url"])
    built = {type(resource): resource
             for resource in api_resources(live, store, clock, new_id, links)}
    for path, kind in API_ROUTES.items():
        app.add_route(API + re.sub(r"\{(\w+)Id\}", r"{\1_id}", path), built[kind])
    app.add_route("/scan", PageFile("scan.html", "text/html; charset=utf-8"))
    app.add_route("/scan/scan.js", PageFile("scan.js", "text/javascript; charset=utf-8"))
    app.add_route("/scan/scan.css", PageFile("scan.css", "text/css; charset=utf-8"))
    app.add_route("/scan/offline.js", PageFile("offline.js", "text/javascript; charset=utf-8"))
    # The worker lives beside the page's files but serves the page itself, at /scan.
    app.add_route("/scan/sw.js", PageFile("sw.js", "text/javascript; charset=utf-8",
                                          {"Service-Worker-Allowed": "/scan"}))
    add_shop_routes(app, live)
    museum_ticket_page.add_routes(app, store, live, clock, links)
    add_desk_page(app)


def api_resources(live, store, clock, new_id, links):
    """One resource of each class in API_ROUTES, made on the app's dependencies (`links`
    make a ticket's QR text and page link). Those that follow a reload read `live`; the
    others keep the config they were made with."""
    config = live.config
    now, today = museum_now(config, clock), museum_today(config, clock)
    # Built on public_url when set: never on the Host or X-Forwarded-Host a client sent.
    # Unset, Location stays a path (relative to the URL requested) and Link takes the request's.
    public_url = config["server"]["public_url"]
    secret = links.secret
    guesses = TypedCodeLimit(store, clock)
    entry_times = EntryTimes(config["door"]["early_minutes"], now)
    sale = TicketSale(store, new_id)
    return (OpenAPIDocument(), MuseumHours(store, live, today),
            MuseumDay(store, live, today, clock),
            SpecialEvents(store, live, today, new_id, public_url), SpecialEvent(store, live),
            Tickets(store, live, now, sale, public_url, links), Ticket(store, clock, now, links),
            Availability(store, live, now),
            SalesReport(store, today), SalesChart(store, today),
            ArrivalsChart(store, today, live), TicketImage(store, secret),
            Admissions(store, secret, now, clock, guesses, entry_times, live),
            AdmissionList(store, now, museum_zone_name(config, now)),
            AdmissionSummary(store, today), TicketLookup(store, now, clock, guesses, live),
            Admission(store, clock, now, public_url), DevicePairing(store, clock),
            DeviceSession(store, clock), PriceCategories(live), Museum(live, clock),
            Orders(store, live, now, sale, new_id, public_url, (ORDER_FIELDS, ORDER_ITEM_FIELDS),
                   links, OrderLimits(config["shop"], store, clock)),
            Order(store, now, links, VOID_FIELDS),
            OrderConfirmation(store, now, links, live, new_id), OrderImage(store, now, links),
            OrderPayment(store, now, links),
            TicketResend(store, live, clock, new_id), OrderResend(store, live, clock, new_id),
            OutboxMessages(store), OutboxMessage(store), OutboxRetry(store, clock))


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


def waitress_app():
    """museum:app for `waitress-serve --call museum:waitress_app`, which calls this
    in its main thread before serving: SIGTERM is then handled as Ctrl-C is (Python's
    KeyboardInterrupt), on which waitress lets the requests under way finish and returns,
    and the exit writes the access lines waiting. (`museum serve` and gunicorn have
    handlers of their own.)"""
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    return app


if __name__ == "__main__":  # before 1.3.0, `python -m museum` ran the command line
    raise SystemExit("museum: the command line is `museum` (or `python -m museum_cli`)")

"""The museum service: opening hours, special events and tickets over HTTP/JSON.

One WSGI application (Falcon) behind HTTP Basic auth, all API paths under /v1.1, served by
waitress from the `museum` command. Sections, in order: validation, problem errors,
middleware, resources, the application, the command line; the configuration and password
hashes live in museum_config.py, signing in in museum_auth.py.
"""

import collections
import contextvars
import functools
import hashlib
import hmac
import importlib.resources
import ipaddress
import itertools
import json
import logging
import math
import re
import secrets
import sys
import threading
import time
import unicodedata
import uuid
from datetime import date, datetime, timedelta, timezone
from http import HTTPStatus
from urllib.parse import urlencode

import falcon

import access_log
import museum_auth
import museum_privacy
import storage
import ticket_image
from museum_config import (
    ADMIN_ROLE,
    CAPACITY_MAX,
    DATE,
    GATE_ROLE,
    PRICE_MAX,
    ROLES,
    TIME_OF_DAY,
    VISITOR_ROLE,
    ConfigError,  # noqa: F401 (raised by create_app and museum:app: see README)
    check_password,
    check_passwords,
    load_config,
    parse_config,  # noqa: F401 (with load_config, the embedding API: see README)
    storage_limits,
)

# Two versions, kept apart: the software's own (semantic; a fix or a new option makes a new
# one, pyproject.toml reads it) and the interface's, which the OpenAPI document's
# info.version states and which changes only when the API does.
__version__ = "1.2.0"
INTERFACE_VERSION = "1.1.1"
API = "/v1.1"
log = logging.getLogger("museum")


# ============================================================================================
# Validation
# ============================================================================================

UUID_TEXT = re.compile(r"[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
PHONE = re.compile(r"[0-9 +\-().]{7,20}")
IDEMPOTENCY_KEY = re.compile(r"[\x21-\x7e]{1,200}")
BODY_LIMIT = 64 * 1024
# The limits below are also the OpenAPI document's, which imports them.
NAME_MAX = 200  # an event's name and location, after trimming
DESCRIPTION_MAX = 5000
EVENT_DATES_MAX = 366
EMAIL_MAX = 254
PAGE_MAX = 10**6
PAGE_SIZE_MAX = 30
PAGE_SIZE_DEFAULT = 10
TICKET_TYPES = ("general", "event")


class Validator:
    """Collects every (field, message) of one input and raises them together."""

    def __init__(self):
        self.errors = []

    def error(self, name, message):
        self.errors.append({"field": name, "message": message})

    def raise_if_invalid(self, detail="The request is not valid; see errors."):
        if self.errors:
            raise Problem(400, detail, errors=self.errors)

    def date(self, name, value):
        if isinstance(value, str) and DATE.fullmatch(value):
            try:
                return date.fromisoformat(value)
            except ValueError:
                pass
        self.error(name, "must be a real calendar date YYYY-MM-DD")
        return None

    def uuid(self, name, value):
        if isinstance(value, str) and UUID_TEXT.fullmatch(value):
            return value.lower()
        self.error(name, "must be a UUID like 3fa85f64-5717-4562-b3fc-2c963f66afa6")
        return None

    def text(self, name, value, max_length, multiline=False):
        """A trimmed string of 1..max_length characters: valid Unicode, no control characters
        (but tabs and line breaks where `multiline`)."""
        if not isinstance(value, str):
            self.error(name, "must be a string")
            return None
        value = value.strip()
        if not 1 <= len(value) <= max_length:
            self.error(name, f"must be 1 to {max_length} characters long")
        elif not _printable(value, multiline):
            self.error(name, "must not contain control characters or invalid Unicode")
        else:
            return value
        return None

    def integer(self, name, value, low, high):
        if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 10:
            number = int(value)
            if low <= number <= high:
                return number
        self.error(name, f"must be a whole number from {low} to {high}")
        return None

    def whole_number(self, name, value, low, high):
        """A JSON integer from low to high (an integral float such as 5.0 is one too)."""
        if isinstance(value, (int, float)) and not isinstance(value, bool) \
                and low <= value <= high and value == int(value):
            return int(value)
        self.error(name, f"must be a whole number from {low} to {high}")
        return None

    def price(self, name, value):
        """A number from 0 to PRICE_MAX of at most 2 decimals, as the store gives it back."""
        # The range test comes first: isfinite() of a huge JSON integer raises OverflowError.
        if not (isinstance(value, (int, float)) and not isinstance(value, bool)
                and 0 <= value <= PRICE_MAX and math.isfinite(value)):
            self.error(name, f"must be a number from 0 to {PRICE_MAX}")
            return None
        minor = storage.minor_units(value)
        if minor / 100 != value:  # 9.999: kept in hundredths, it would change
            self.error(name, "must have at most 2 decimals")
            return None
        return storage.price_value(minor)

    def time_of_day(self, name, value):
        if isinstance(value, str) and TIME_OF_DAY.fullmatch(value):
            return value
        self.error(name, "must be a time of day HH:MM, such as 10:30")
        return None

    def choice(self, name, value, choices):
        if value in choices:
            return value
        self.error(name, f"must be one of {', '.join(choices)}")
        return None

    def email(self, name, value):
        if isinstance(value, str) and _plausible_email(value):
            return value
        self.error(name, "must be an email address like visitor@example.org")
        return None

    def phone(self, name, value):
        if isinstance(value, str) and PHONE.fullmatch(value) \
                and sum(c.isdigit() for c in value) >= 7:
            return value
        self.error(name, "must be 7 to 20 digits, spaces or +-() with at least 7 digits")
        return None


def _printable(text, multiline):
    allowed = "\t\n\r" if multiline else ""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from a JSON escape
        return False
    return not any(unicodedata.category(c) == "Cc" and c not in allowed for c in text)


def _plausible_email(value):
    local, at, domain = value.partition("@")
    labels = domain.split(".")
    return (at and local and len(value) <= EMAIL_MAX and "@" not in domain and len(labels) > 1
            and all(labels) and value.isprintable() and not any(c.isspace() for c in value)
            and _printable(value, False))


SERVICE_FIELDS = ("eventId", "ticketId", "confirmationCode")


def check_fields(body, rules, required, validator):
    """Check a JSON object against `rules` ({field: check(validator, name, value)}): unknown
    fields, nulls and missing required fields are errors; returns the checked values."""
    if not isinstance(body, dict):
        raise Problem(400, "The request body must be a JSON object.")
    for name in body:
        if name not in rules:
            validator.error(name, "is assigned by the service" if name in SERVICE_FIELDS
                            else "is not a known field")
    values = {}
    for name, check in rules.items():
        if name not in body:
            if name in required:
                validator.error(name, "is required")
        elif body[name] is None:
            validator.error(name, "must not be null")
        else:
            values[name] = check(validator, name, body[name])
    return values


def _event_dates(validator, name, value):
    if not isinstance(value, list) or not 1 <= len(value) <= EVENT_DATES_MAX:
        validator.error(name, f"must be a list of 1 to {EVENT_DATES_MAX} dates")
        return None
    days = [validator.date(f"{name}[{index}]", item) for index, item in enumerate(value)]
    return sorted({day.isoformat() for day in days if day})


EVENT_RULES = {
    "name": lambda v, name, value: v.text(name, value, NAME_MAX),
    "location": lambda v, name, value: v.text(name, value, NAME_MAX),
    "eventDescription": lambda v, name, value: v.text(name, value, DESCRIPTION_MAX,
                                                      multiline=True),
    "dates": _event_dates,
    "price": Validator.price,
    "capacity": lambda v, name, value: v.whole_number(name, value, 1, CAPACITY_MAX),
}
EVENT_REQUIRED = ("name", "location", "eventDescription", "dates", "price")

TICKET_RULES = {
    "ticketType": lambda v, name, value: v.choice(name, value, TICKET_TYPES),
    "ticketDate": Validator.date,
    "email": Validator.email,
    "phone": Validator.phone,
    "eventId": Validator.uuid,
    "entryTime": Validator.time_of_day,
}


def parse_query(req, validator, name, parse, default):
    """One query parameter, given at most once, through `parse(validator, name, text)`."""
    value = req.params.get(name)
    if value is None:
        return default
    if isinstance(value, list):
        validator.error(name, "must be given once")
        return None
    return parse(validator, name, value)


def paging(req, validator):
    """The `page` and `limit` query parameters."""
    page = parse_query(req, validator, "page", lambda v, n, t: v.integer(n, t, 1, PAGE_MAX), 1)
    limit = parse_query(req, validator, "limit",
                        lambda v, n, t: v.integer(n, t, 1, PAGE_SIZE_MAX), PAGE_SIZE_DEFAULT)
    return page, limit


# ============================================================================================
# Problem errors (RFC 9457)
# ============================================================================================

PROBLEM_JSON = "application/problem+json"
DEFAULT_DETAILS = {
    404: "There is nothing at this path.",
    405: "This method is not allowed on this path; the Allow header lists those that are.",
}


class Problem(falcon.HTTPError):
    """An HTTP error answered as application/problem+json; `errors` lists bad fields."""

    def __init__(self, status, detail, errors=None, headers=None, members=None):
        super().__init__(status, title=HTTPStatus(status).phrase, description=detail,
                         headers=headers)
        self.errors = errors
        self.members = members  # RFC 9457 extension members, added to the body


def write_problem(req, resp, error):
    """The one error serializer: every HTTPError, ours or Falcon's, as problem+json."""
    status = error.status_code
    body = {
        "type": "about:blank",
        "title": HTTPStatus(status).phrase,
        "status": status,
        "detail": error.description or DEFAULT_DETAILS.get(status, HTTPStatus(status).phrase + "."),
    }
    if getattr(error, "errors", None):
        body["errors"] = error.errors
    if getattr(error, "members", None):
        body.update(error.members)
    resp.content_type = PROBLEM_JSON
    resp.data = json.dumps(body).encode()


def storage_error_as_problem(req, resp, error, params):
    """Domain errors from the store, mapped to HTTP in this one place."""
    if isinstance(error, storage.NotFound):
        raise Problem(404, "No such record (it may have been cancelled).")
    if isinstance(error, storage.DateNotOffered):
        raise Problem(400, f"The event does not take place on that date; valid dates: "
                      f"{', '.join(error.dates)}.",
                      errors=[{"field": "ticketDate",
                               "message": f"must be one of {', '.join(error.dates)}"}])
    if isinstance(error, storage.DatesSold):
        sold = [f"{day} ({count} sold)" for day, count in error.sold.items()]
        raise Problem(409, f"Tickets were sold for dates this change removes: "
                      f"{', '.join(sold)}. Keep those dates, or cancel the event.",
                      errors=[{"field": "dates", "message": f"must keep {day}: {count} "
                               f"ticket(s) sold for it"} for day, count in error.sold.items()])
    if isinstance(error, storage.SoldOut):
        what = "this event" if error.event_id else "general entry"
        if error.entry_time:
            what = f"general entry at {error.entry_time}"
        full = {"date": error.date, **({"eventId": error.event_id} if error.event_id else {}),
                **({"entryTime": error.entry_time} if error.entry_time else {})}
        raise Problem(409, f"Sold out: no places are left for {what} on {error.date}.",
                      members={"reason": "sold-out", **full})
    if isinstance(error, storage.CapacityBelowSold):
        sold = [f"{day} ({count} sold)" for day, count in error.sold.items()]
        raise Problem(409, f"More tickets were sold than this capacity allows: "
                      f"{', '.join(sold)}. Keep a capacity of at least the tickets sold.",
                      errors=[{"field": "capacity", "message": f"must be at least {count}: "
                               f"{count} ticket(s) sold for {day}"}
                              for day, count in error.sold.items()])
    if isinstance(error, storage.IdempotencyConflict):
        raise Problem(409, "This Idempotency-Key was already used with a different request.")
    # Not logged per request: the store logs the outage once, with its reason.
    raise Problem(503, "The database is unavailable; try again shortly.",
                  headers={"Retry-After": "5"})


def unexpected_error(req, resp, error, params):
    log.error("unexpected error on %s %s", _loggable_word(req.method), _loggable_path(req.path),
              exc_info=error)
    raise Problem(500, "Something went wrong on our side; it has been logged.")


def read_json(req):
    """The request body as JSON: 415 unless a JSON media type, 413 over BODY_LIMIT, 400 if
    malformed. Reads at most BODY_LIMIT + 1 bytes whatever Content-Length claims."""
    media_type = (req.content_type or "").partition(";")[0].strip().lower()
    if media_type != "application/json" and not (
            media_type.startswith("application/") and media_type.endswith("+json")):
        raise Problem(415, "Send the body as application/json.")
    if (req.content_length or 0) > BODY_LIMIT:
        raise Problem(413, f"The body is larger than {BODY_LIMIT} bytes.")
    raw = req.bounded_stream.read(BODY_LIMIT + 1)
    if len(raw) > BODY_LIMIT:
        raise Problem(413, f"The body is larger than {BODY_LIMIT} bytes.")
    try:
        return json.loads(raw, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        raise Problem(400, "The body is not valid JSON.") from None


def _reject_constant(name):
    raise ValueError(f"{name} is not JSON")


# ============================================================================================
# Middleware
# ============================================================================================

REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{1,128}")
_request_id = contextvars.ContextVar("request_id", default=None)
# A made id is this process's random prefix and a count: unique across processes and
# restarts, and cheaper than random bytes per request (next() on a count is atomic). Its
# hex digits are written as the letters a-p: no run of digits, which the access log keeps
# for nothing that could be a phone number.
_AS_LETTERS = str.maketrans("0123456789abcdef", "abcdefghijklmnop")
_ID_PREFIX = secrets.token_hex(4).translate(_AS_LETTERS)
_request_numbers = itertools.count()


class RequestId:
    """Every request has an id, to follow it from the proxy's log line to the service's:
    a well-formed X-Request-Id from the client or proxy is kept, else one is made. It is
    echoed in the answer's X-Request-Id and named on the access line and on every warning
    or error logged while the request is answered."""

    def process_request(self, req, resp):
        given = req.get_header("X-Request-Id")
        request_id = given if given and REQUEST_ID.fullmatch(given) \
            else _ID_PREFIX + format(next(_request_numbers), "08x").translate(_AS_LETTERS)
        req.context.request_id = request_id
        _request_id.set(request_id)

    def process_response(self, req, resp, resource, req_succeeded):
        resp.set_header("X-Request-Id", req.context.request_id)
        _request_id.set(None)


class NameTheRequest(logging.Filter):
    """Ends a message logged while a request is answered with that request's id."""

    def filter(self, record):
        request_id = _request_id.get()
        if request_id is not None:
            record.msg = f"{record.msg} (request {request_id})"  # the id has no `%`
        return True


for _logger in (log, logging.getLogger("museum.storage")):
    _logger.addFilter(NameTheRequest())


class AccessLog:
    """One line per request (waitress writes none): address, method, path, status,
    duration and request id, handed to an access_log.AccessLogWriter. Never headers, query
    strings or bodies, which may carry credentials or emails; path segments that are
    neither UUIDs nor plain words are logged as `*`."""

    def __init__(self, writer):
        self.writer = writer

    def process_request(self, req, resp):
        req.context.started = time.perf_counter()

    def process_response(self, req, resp, resource, req_succeeded):
        elapsed = (time.perf_counter() - req.context.started) * 1000
        self.writer.write(f"{_loggable_address(req.remote_addr)} {_loggable_word(req.method)} "
                          f"{_loggable_path(req.path)} {resp.status_code} {elapsed:.1f}ms "
                          f"{req.context.request_id}")


LOGGABLE_WORD = re.compile(r"[A-Za-z0-9._~-]{1,64}")
DIGIT_RUN = re.compile(r"\d{7}")


@functools.lru_cache(maxsize=4096)
def _loggable_word(text):
    """`text` if it is a UUID or a short plain word without a run of 7 digits (which could
    be a phone number), else `*`: no email, phone or line break reaches the log from a URL."""
    if UUID_TEXT.fullmatch(text) or (LOGGABLE_WORD.fullmatch(text)
                                     and not DIGIT_RUN.search(text)):
        return text
    return "*"


def _loggable_path(path):
    """`path` for a log line: every segment through `_loggable_word`, at most 12 of them,
    and the segment after `tickets` cut to 8 characters, since a ticket id is the key to
    that ticket's image (event ids are public and stay whole)."""
    segments = path.split("/")[:13]
    logged = [segment and _loggable_word(segment) for segment in segments[:12]]
    for index in range(1, len(logged)):
        if segments[index - 1] == "tickets":
            logged[index] = logged[index][:8]
    return "/".join(logged) + ("/..." if len(segments) > 12 else "")


@functools.lru_cache(maxsize=4096)
def _loggable_address(address):
    try:
        return str(ipaddress.ip_address((address or "").strip("[]")))
    except ValueError:
        return "-"


class SafeHeaders:
    """No sniffing anywhere; JSON answers are never cached by browsers or proxies."""

    def process_response(self, req, resp, resource, req_succeeded):
        resp.set_header("X-Content-Type-Options", "nosniff")
        if resp.get_header("Cache-Control") is None:
            resp.set_header("Cache-Control", "no-store")


class Authenticator:
    """HTTP Basic sign-in (museum_auth.Logins), then the role the resource declares for the
    method. Deny by default: a resource that needs credentials declares `needed_roles` for
    every method it serves, HEAD taking GET's; a method it does not declare is answered 405.
    """

    CHALLENGE = {"WWW-Authenticate": 'Basic realm="museum", charset="UTF-8"'}

    def __init__(self, logins):
        self.logins = logins

    def process_resource(self, req, resp, resource, params):
        if resource is None or not getattr(resource, "auth_required", True):
            return
        try:
            user = self.logins.sign_in(req.remote_addr, req.get_header("Authorization"))
        except museum_auth.NotSignedIn:
            raise Problem(401, "Valid credentials are required.",
                          headers=self.CHALLENGE) from None
        except museum_auth.TryLater as later:
            raise Problem(429, later.detail,
                          headers={"Retry-After": str(later.seconds)}) from None
        declared = getattr(resource, "needed_roles", {})
        needed = declared.get("GET" if req.method == "HEAD" else req.method)
        if needed is None:
            allowed = [*declared, "HEAD"] if "GET" in declared else list(declared)
            raise falcon.HTTPMethodNotAllowed(allowed)
        if ROLES.index(user.role) < ROLES.index(needed):
            raise Problem(403, f"This needs the {needed} role.")
        req.context.user = user


def authenticator_for(config, accounts=None):
    """The Authenticator of `config`'s [auth] settings, over its [users] unless `accounts`
    are given (the mock's)."""
    auth = config["auth"]
    return Authenticator(museum_auth.Logins(
        accounts or museum_auth.ConfiguredUsers(config.users),
        max_failures=auth["max_failures"], max_address_failures=auth["max_address_failures"],
        failure_window=auth["failure_window"], lockout=auth["lockout"]))


# ============================================================================================
# Resources, one class per path
# ============================================================================================

_compact_json = json.JSONEncoder(separators=(",", ":")).encode


def to_json(value):
    return _compact_json(value).encode()


def json_response(resp, value, status=200):
    resp.status = status
    resp.data = to_json(value)


class ListingCache:
    """Serialized listing pages, kept while the store's `events_version` stays the same.

    Every event change bumps that version in its own transaction, and each lookup reads it
    first (one cheap query), so no page outlives a write, from this instance or another
    one sharing the database. A page is cached under the version read before its query.
    """

    LIMIT = 512

    def __init__(self, store):
        self.store = store
        self._version = None
        self._pages = {}
        self._lock = threading.Lock()

    def page(self, start, end, offset, limit):
        """(JSON bytes of the page, total in the window)."""
        version = self.store.events_version()
        key = (start, end, offset, limit)
        with self._lock:
            if version != self._version:
                self._version, self._pages = version, {}
            cached = self._pages.get(key)
        if cached is None:
            events, total = self.store.list_events(start, end, offset, limit)
            cached = to_json(events), total
            with self._lock:
                if version == self._version and len(self._pages) < self.LIMIT:
                    self._pages[key] = cached
        return cached


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

    def on_get(self, req, resp):
        json_response(resp, openapi_description())


def sales():
    """The module of what was sold (a ticket read back or voided, the availability, the
    sales report), imported when the app is built: it builds on this one."""
    import museum_sales

    return museum_sales


def openapi_description():
    """The OpenAPI document. Imported on first use, not at the top: it is built from this
    module's limits, patterns and version."""
    import openapi_document

    return openapi_document.DOCUMENT


HOURS_HORIZON_DAYS = 366  # days from startDate on that the opening hours list


class MuseumHours:
    """Opening hours come from the config alone, which lives as long as the app: pages are
    computed once and kept."""

    needed_roles = {"GET": VISITOR_ROLE}

    def __init__(self, schedule, today):
        self.schedule = schedule
        self.today = today
        self.open_days = functools.lru_cache(maxsize=64)(self._open_days)
        self.page = functools.lru_cache(maxsize=1024)(self._page)

    def _open_days(self, start):
        """Every open day in [start, start + HOURS_HORIZON_DAYS) as an API dict."""
        days = []
        for offset in range(HOURS_HORIZON_DAYS):
            try:
                day = start + timedelta(days=offset)
            except OverflowError:
                break
            hours = self.schedule.hours_on(day)
            if hours:
                days.append({"date": day.isoformat(), "timeOpen": hours[0], "timeClose": hours[1]})
        return days

    def _page(self, start, offset, limit):
        return to_json(self.open_days(start)[offset:offset + limit])

    def on_get(self, req, resp):
        validator = Validator()
        start = parse_query(req, validator, "startDate", Validator.date, None) or self.today()
        page, limit = paging(req, validator)
        validator.raise_if_invalid("A query parameter is not valid; see errors.")
        resp.data = self.page(start, (page - 1) * limit, limit)


class SpecialEvents:
    needed_roles = {"GET": VISITOR_ROLE, "POST": ADMIN_ROLE}

    def __init__(self, store, today, new_id, public_url):
        self.store = store
        self.today = today
        self.new_id = new_id
        self.public_url = public_url
        self.listings = ListingCache(store)

    def on_post(self, req, resp):
        validator = Validator()
        event = check_fields(read_json(req), EVENT_RULES, EVENT_REQUIRED, validator)
        validator.raise_if_invalid()
        event = self.store.create_event({"eventId": self.new_id(), **event})
        json_response(resp, event, 201)
        resp.location = f"{self.public_url}{API}/special-events/{event['eventId']}"

    def on_get(self, req, resp):
        validator = Validator()
        start = parse_query(req, validator, "startDate", Validator.date, None) or self.today()
        end = parse_query(req, validator, "endDate", Validator.date, None)
        page, limit = paging(req, validator)
        if start and end and end < start:
            validator.error("endDate", "must not be before startDate")
        validator.raise_if_invalid("A query parameter is not valid; see errors.")
        resp.data, total = self.listings.page(
            start.isoformat(), end and end.isoformat(), (page - 1) * limit, limit)
        set_paging_headers(req, resp, self.public_url, page, limit, total)


def set_paging_headers(req, resp, public_url, page, limit, total):
    """`X-Total-Count` and, where there are other pages, `Link` (on public_url when set)."""
    resp.set_header("X-Total-Count", str(total))
    links = _page_links(req, public_url or req.prefix, page, limit, total)
    if links:
        resp.set_header("Link", links)


def _page_links(req, base_url, page, limit, total):
    """RFC 8288 next/prev links under `base_url` that keep the other query parameters."""
    last_page = max(1, math.ceil(total / limit))
    targets = [("next", page + 1)] if page < last_page else []
    if page > 1:
        targets.append(("prev", min(page - 1, last_page)))
    if not targets:
        return ""
    kept = urlencode({name: value for name, value in req.params.items() if name != "page"},
                     doseq=True)
    url = f"{base_url}{req.path}?{kept}{'&' if kept else ''}page="
    return ", ".join(f'<{url}{number}>; rel="{rel}"' for rel, number in targets)


class SpecialEvent:
    needed_roles = {"GET": VISITOR_ROLE, "PATCH": ADMIN_ROLE, "DELETE": ADMIN_ROLE}

    def __init__(self, store):
        self.store = store

    def on_get(self, req, resp, event_id):
        json_response(resp, self.store.get_event(_path_uuid(event_id, "eventId")))

    def on_patch(self, req, resp, event_id):
        event_id = _path_uuid(event_id, "eventId")
        validator = Validator()
        body = read_json(req)
        # Only a capacity may be removed (unlimited again): null stays refused elsewhere.
        removes_capacity = isinstance(body, dict) and "capacity" in body \
            and body["capacity"] is None
        if removes_capacity:
            del body["capacity"]
        changes = check_fields(body, EVENT_RULES, (), validator)
        if removes_capacity:
            changes["capacity"] = None
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
    MESSAGES = {"general": "Museum general entry ticket purchased",
                "event": "Museum special event ticket purchased"}

    def __init__(self, store, config, today, new_id, public_url):
        self.store = store
        self.schedule = config.schedule
        self.capacity = config.capacity
        self.general_price = storage.price_value(config["tickets"]["general_price"])
        self.currency = config["museum"]["currency"]
        self.today = today
        self.new_id = new_id
        self.public_url = public_url

    def on_post(self, req, resp):
        key = self._idempotency_key(req)
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
        ticket = self._check(body)
        for _ in range(3):  # a fresh code on the rare clash with an existing one
            try:
                stored, _ = self.store.create_ticket(
                    {**ticket, "confirmationCode": _confirmation_code(ticket["ticketType"])},
                    idempotency, self.capacity.on(date.fromisoformat(ticket["ticketDate"])),
                    slot_capacity=self.capacity.per_slot)
                break
            except storage.DuplicateCode:
                continue
        else:
            raise Problem(503, "Could not draw a unique confirmation code; try again.",
                          headers={"Retry-After": "1"})
        self._answer(resp, stored)

    def on_get(self, req, resp):
        """An event's tickets with their buyers' contacts, to tell them of a change."""
        validator = Validator()
        if req.params.get("eventId") is None:
            validator.error("eventId", "is required")
        event_id = parse_query(req, validator, "eventId", Validator.uuid, None)
        day = parse_query(req, validator, "date", Validator.date, None)
        page, limit = paging(req, validator)
        validator.raise_if_invalid("A query parameter is not valid; see errors.")
        tickets, total = self.store.list_tickets(event_id, day and day.isoformat(),
                                                 (page - 1) * limit, limit)
        json_response(resp, [sales().ticket_view(ticket, contacts=True)
                             for ticket in tickets])
        set_paging_headers(req, resp, self.public_url, page, limit, total)

    def _answer(self, resp, ticket):
        json_response(resp, self._receipt(ticket), 201)
        resp.location = f"{self.public_url}{API}/tickets/{ticket['ticketId']}/qr"

    @staticmethod
    def _idempotency_key(req):
        key = req.get_header("Idempotency-Key")
        if key is not None and not IDEMPOTENCY_KEY.fullmatch(key):
            raise Problem(400, "Idempotency-Key must be 1 to 200 visible ASCII characters.",
                          errors=[{"field": "Idempotency-Key", "message": "is malformed"}])
        return key

    def _check(self, body):
        validator = Validator()
        ticket = check_fields(body, TICKET_RULES, ("ticketType", "ticketDate", "email"),
                              validator)
        kind, day = ticket.get("ticketType"), ticket.get("ticketDate")
        if day and day < self.today():
            validator.error("ticketDate", "must not be in the past")
        elif day and (day - self.today()).days > SALE_HORIZON_DAYS:
            validator.error("ticketDate", f"must be at most {SALE_HORIZON_DAYS} days ahead")
        if kind == "event" and "eventId" not in body:
            validator.error("eventId", "is required for an event ticket")
        if kind == "general" and "eventId" in body:
            validator.error("eventId", "must not be given for a general ticket")
        if kind == "general" and day and day >= self.today() and not self.schedule.hours_on(day):
            validator.error("ticketDate", f"the museum is closed on {day.isoformat()}")
        sales().check_entry_time(validator, self.schedule, body, ticket)
        validator.raise_if_invalid()
        return {**ticket, "ticketId": self.new_id(), "ticketDate": day.isoformat(),
                "eventId": ticket.get("eventId"), "price": self.general_price,
                "currency": self.currency}

    def _receipt(self, ticket):
        receipt = {"message": self.MESSAGES[ticket["ticketType"]]}
        receipt.update((name, ticket[name]) for name in
                       ("ticketId", "ticketType", "ticketDate", "confirmationCode", "price",
                        "currency"))
        if ticket["ticketType"] == "event":
            receipt.update(eventName=ticket["eventName"], eventId=ticket["eventId"])
        if ticket["entryTime"]:
            receipt["entryTime"] = ticket["entryTime"]
        return receipt


def _fingerprint(body):
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode("utf-8", "surrogatepass")) \
        .hexdigest()


CONFIRMATION_CODE = re.compile(r"ticket-(general|event)-[0-9a-f]{6}-[0-9a-f]{5}")
RANDOM_PART = re.compile(r"[0-9a-f]{6}-[0-9a-f]{5}")  # a code's last 12 characters


def _confirmation_code(kind):
    """A fresh code of the shape CONFIRMATION_CODE describes."""
    return f"ticket-{kind}-{secrets.token_hex(3)}-{secrets.randbits(20):05x}"


def qr_text(secret, ticket_id, code):
    """What the ticket's QR code says: the ticket, its code and an HMAC tag over both."""
    return f"MUSEUM1:{ticket_id}:{code}:{_qr_tag(secret, ticket_id, code)}"


def _qr_tag(secret, ticket_id, code):
    return hmac.new(secret.encode(), f"{ticket_id}:{code}".encode(), "sha256").hexdigest()[:20]


def read_qr_text(secret, text):
    """(ticket_id, code) when `text` is a genuine ticket QR text, else None."""
    parts = text.strip().split(":")
    # A genuine text is ASCII; compare_digest raises on anything else.
    if len(parts) != 4 or parts[0] != "MUSEUM1" or not text.isascii():
        return None
    _, ticket_id, code, tag = parts
    return (ticket_id, code) if hmac.compare_digest(tag, _qr_tag(secret, ticket_id, code)) \
        else None


class TicketImage:
    """The ticket's image with its QR code; rendered once per ticket per process."""

    needed_roles = {"GET": VISITOR_ROLE}

    CACHE_LIMIT = 2048

    def __init__(self, store, secret):
        self.store = store
        self.secret = secret
        self._images = collections.OrderedDict()
        self._lock = threading.Lock()
        self._drawing = {}  # key -> lock held by the one thread drawing that image

    def on_get(self, req, resp, ticket_id):
        ticket = self.store.get_ticket(_path_uuid(ticket_id, "ticketId"))
        if ticket["voidedAt"]:
            raise Problem(410, DOOR_OUTCOMES["void"][1])
        if ticket["cancelled"]:
            raise Problem(410, DOOR_OUTCOMES["cancelled"][1])
        png, etag = self._image(ticket)
        resp.etag = etag
        resp.cache_control = ["private", "max-age=86400"]
        if req.if_none_match and any(tag in ("*", etag) for tag in req.if_none_match):
            resp.status = 304
            return
        resp.content_type = "image/png"
        resp.data = png

    def _image(self, ticket):
        # The key holds everything drawn, so a renamed event gets a new image, never a stale one.
        key = (ticket["ticketId"], ticket["eventName"])
        with self._lock:
            if key in self._images:
                self._images.move_to_end(key)
                return self._images[key]
            drawing = self._drawing.setdefault(key, threading.Lock())
        with drawing:  # concurrent first requests wait for one drawing instead of each drawing
            with self._lock:
                if key in self._images:
                    return self._images[key]
            try:
                png = ticket_image.render_ticket("MUSEUM TICKET", _ticket_lines(ticket),
                                                 qr_text(self.secret, ticket["ticketId"],
                                                         ticket["confirmationCode"]))
                entry = png, falcon.ETag(hashlib.sha256(png).hexdigest()[:32])
                with self._lock:
                    self._images[key] = entry
                    if len(self._images) > self.CACHE_LIMIT:
                        self._images.popitem(last=False)
            finally:
                with self._lock:
                    self._drawing.pop(key, None)
        return entry


def _ticket_lines(ticket):
    lines = [("Type", "Special event" if ticket["ticketType"] == "event" else "General entry"),
             ("Date", ticket["ticketDate"])]
    if ticket["entryTime"]:
        lines.append(("Entry", ticket["entryTime"]))
    if ticket["eventName"]:
        lines.append(("Event", ticket["eventName"]))
    lines.append(("Code", ticket["confirmationCode"]))
    return lines


# ============================================================================================
# The door: admitting tickets at the entrance, and the page the gate staff use
# ============================================================================================

QR_TEXT_LIMIT = 512  # a genuine QR text is about 120 characters
TYPED_CODE_LIMIT = 100  # a confirmation code as typed; a genuine one is 27 characters
DOOR_OUTCOMES = {  # result: (status, detail); `admitted` answers 201 with the admission
    "already-admitted": (409, "This ticket was admitted before."),
    "wrong-date": (409, "This ticket is for another day."),  # detail: see `wrong_date`
    "too-early": (409, "This ticket's entry time has not come."),  # see EntryTimes.too_early
    "cancelled": (410, "The event of this ticket was cancelled."),
    "void": (410, "This ticket was voided."),
    "forged": (422, "This is not a genuine ticket of this museum."),
    "unknown": (404, "No ticket with this code was sold."),
}
DOOR_FIELDS = ("ticketId", "ticketType", "ticketDate", "confirmationCode")


def typed_codes(typed):
    """The confirmation codes a typed code may be, ignoring case and surrounding spaces:
    itself when whole, the code of either kind of ticket when only its random part was
    typed (`792d82-891fc`), none when it has neither shape."""
    code = typed.strip().lower()
    if CONFIRMATION_CODE.fullmatch(code):
        return [code]
    if RANDOM_PART.fullmatch(code):
        return [f"ticket-{kind}-{code}" for kind in TICKET_TYPES]
    return []


def _found(find, key):
    try:
        return find(key)
    except storage.NotFound:
        return None


def door_check(store, secret, today, qr_text=None, code=None):
    """What the door makes of a presented ticket, from its QR text or its typed confirmation
    code (see `typed_codes`): `(result, ticket)`, result one of `admittable`,
    `already-admitted`, `wrong-date`, `cancelled`, `void` (with the ticket), `forged` or
    `unknown` (ticket None). Reads only."""
    if qr_text is not None:
        genuine = read_qr_text(secret, qr_text)
        if genuine is None:
            return "forged", None
        ticket_id, code = genuine
        ticket = _found(store.get_ticket, ticket_id)
        if ticket is not None and ticket["confirmationCode"] != code:
            return "forged", None
    else:
        found = (_found(store.get_ticket_by_code, typed) for typed in typed_codes(code))
        ticket = next(filter(None, found), None)
    if ticket is None:
        return "unknown", None
    if ticket["voidedAt"]:
        return "void", ticket
    if ticket["cancelled"]:
        return "cancelled", ticket
    if ticket["admittedAt"]:
        return "already-admitted", ticket
    if ticket["ticketDate"] != today.isoformat():
        return "wrong-date", ticket
    return "admittable", ticket


TICKET_STATUSES = ("valid", "admitted", "void", "cancelled")


def ticket_status(ticket):
    """One of TICKET_STATUSES: a void ticket is void whatever else happened to it."""
    if ticket["voidedAt"]:
        return "void"
    if ticket["cancelled"]:
        return "cancelled"
    return "admitted" if ticket["admittedAt"] else "valid"


def door_details(ticket):
    """What the door shows of a ticket: never its buyer's email or phone."""
    details = {name: ticket[name] for name in DOOR_FIELDS}
    if ticket["eventName"]:
        details["eventName"] = ticket["eventName"]
    if ticket["admittedAt"]:
        details.update(admittedAt=ticket["admittedAt"], admittedBy=ticket["admittedBy"])
    return details


def wrong_date(ticket, today):
    """`(when, detail)` of a ticket for another day: `early` or `past`, and a detail such as
    `early: ticket for 2026-12-05 (in 12 days)` or `past: ticket was for 2026-11-20`."""
    day = date.fromisoformat(ticket["ticketDate"])
    if day < today:
        return "past", f"past: ticket was for {day}"
    days = (day - today).days
    return "early", f"early: ticket for {day} (in {days} day{'' if days == 1 else 's'})"


def verify_ticket(text, secret, store, today):
    """The door's verdict on a scanned QR text or a typed confirmation code (whole or its
    random part), read only: `valid …`, `already admitted …`, `forged`, `unknown`,
    `cancelled` or `wrong date, early: …` / `wrong date, past: …`."""
    presented = {"code": text} if typed_codes(text) else {"qr_text": text}
    result, ticket = door_check(store, secret, today, **presented)
    if result == "wrong-date":
        return f"wrong date, {wrong_date(ticket, today)[1]}"
    if result == "already-admitted":
        return f"already admitted at {ticket['admittedAt']} by {ticket['admittedBy']}"
    if result != "admittable":
        return result
    what = f"event {ticket['eventName']}" if ticket["eventName"] else "general entry"
    return f"valid: {what}, {ticket['ticketDate']}, not admitted yet"


ADMISSION_RULES = {
    "code": lambda v, name, value: v.text(name, value, QR_TEXT_LIMIT),
    "confirmationCode": lambda v, name, value: v.text(name, value, TYPED_CODE_LIMIT),
}


class TypedCodeLimit:
    """Codes typed at the door, and lookups of lost tickets, can be guessed there: after
    LIMIT of them counted within WINDOW seconds (unknown codes, every lookup), a user is
    answered 429 for WINDOW seconds (a hit would give away a ticket's id, with which any
    signed-in user fetches its image). One limit shared by the door and the lookup."""

    LIMIT = 30
    WINDOW = 60

    def __init__(self):
        self._counts = museum_auth.FailureCounts(self.LIMIT + 1, self.WINDOW, self.WINDOW)

    def refuse_if_reached(self, user):
        remaining = self._counts.locked_for(user)
        if remaining > 0:
            raise Problem(429, "Too many unknown ticket codes or lookups; wait a minute and "
                          "retry.", headers={"Retry-After": str(math.ceil(remaining))})

    def count(self, user):
        """Count one guess of `user`; 429 when it is one too many."""
        if self._counts.count(user):
            log.warning("admissions refused to %s for %d s: more than %d unknown ticket codes "
                        "or lookups within %d s", user, self.WINDOW, self.LIMIT, self.WINDOW)
            self.refuse_if_reached(user)


class Admissions:
    """Admit a ticket at the door: each ticket once, on its day. Unknown typed or scanned
    codes count toward the `TypedCodeLimit`."""

    needed_roles = {"POST": GATE_ROLE}

    def __init__(self, store, secret, today, clock, guesses, entry_times):
        self.store = store
        self.secret = secret
        self.today = today
        self.clock = clock
        self.guesses = guesses
        self.entry_times = entry_times  # museum_sales.EntryTimes: timed entry's door rule

    def on_post(self, req, resp):
        user = req.context.user.name
        self.guesses.refuse_if_reached(user)
        presented = self._presented(read_json(req))
        today = self.today()
        result, ticket = door_check(self.store, self.secret, today, **presented)
        too_early = self.entry_times.too_early(ticket) if result == "admittable" else None
        if too_early:
            result = "too-early"
        if result == "unknown":
            self.guesses.count(user)
        if result == "admittable":
            admission, admitted = self.store.admit(ticket["ticketId"], user,
                                                   rfc3339(self.clock()))
            ticket = {**ticket, **admission}
            if admitted:
                json_response(resp, {"result": "admitted", **door_details(ticket)}, 201)
                return
            result = "already-admitted"  # another gate was a moment faster
        status, detail = DOOR_OUTCOMES[result]
        members = {"result": result, **(door_details(ticket) if ticket else {})}
        if result == "wrong-date":
            members["when"], detail = wrong_date(ticket, today)
        if result == "too-early":
            members["entryTime"], detail = ticket["entryTime"], too_early
        raise Problem(status, detail, members=members)

    @staticmethod
    def _presented(body):
        """{"qr_text": …} or {"code": …}: exactly one of the two body fields."""
        validator = Validator()
        values = check_fields(body, ADMISSION_RULES, (), validator)
        given = [name for name in ADMISSION_RULES if name in body]
        if len(given) > 1:
            validator.error("confirmationCode", "must not be given with code")
        elif not given:
            validator.error("code", "is required, or confirmationCode typed from the ticket")
        validator.raise_if_invalid()
        if "code" in values:
            return {"qr_text": values["code"]}
        return {"code": values["confirmationCode"]}


UNDO_WINDOW = timedelta(minutes=10)
UNDO_RULE = (f"A gate may undo only its own admissions, within {UNDO_WINDOW.seconds // 60} "
             f"minutes; ask an admin.")


class Admission:
    """A ticket's admission history, and undoing an admission made by mistake: by the gate
    (user) that made it within UNDO_WINDOW, by an admin at any time. Both are kept in the
    ticket's history."""

    needed_roles = {"GET": GATE_ROLE, "DELETE": GATE_ROLE}

    def __init__(self, store, clock):
        self.store = store
        self.clock = clock

    def on_get(self, req, resp, ticket_id):
        ticket = self.store.get_ticket(_path_uuid(ticket_id, "ticketId"))
        body = {"ticketId": ticket["ticketId"], "admitted": bool(ticket["admittedAt"])}
        if ticket["admittedAt"]:
            body.update(admittedAt=ticket["admittedAt"], admittedBy=ticket["admittedBy"])
        body["history"] = self.store.admission_history(ticket["ticketId"])
        json_response(resp, body)

    def on_delete(self, req, resp, ticket_id):
        user, now = req.context.user, self.clock()

        def may_undo(admission):
            return user.role == ADMIN_ROLE or (
                admission["admittedBy"] == user.name
                and now - datetime.fromisoformat(admission["admittedAt"]) <= UNDO_WINDOW)

        try:
            self.store.undo_admission(_path_uuid(ticket_id, "ticketId"), user.name,
                                      rfc3339(now), may_undo)
        except storage.NotFound:
            raise Problem(404, "This ticket has not been admitted.") from None
        except storage.NotAllowed:
            raise Problem(403, UNDO_RULE) from None
        resp.status = 204


LOOKUP_RULES = {
    "email": Validator.email,
    "code": lambda v, name, value: v.text(name, value, TYPED_CODE_LIMIT),
    "date": Validator.date,
}
LOOKUP_LIMIT = 20  # tickets answered at most


def lookup_details(ticket):
    """What a lookup shows of a ticket: the door's details, its event and status; never
    its buyer's email or phone."""
    details = door_details(ticket)
    if ticket["eventId"]:
        details["eventId"] = ticket["eventId"]
    return {**details, "status": ticket_status(ticket), "admitted": bool(ticket["admittedAt"])}


class TicketLookup:
    """Find a visitor's lost ticket among a day's tickets: by the buyer's whole email
    address (sent in the body, never in a URL or a log) or by its confirmation code, whole
    or only its random part. Every lookup counts toward the `TypedCodeLimit`."""

    needed_roles = {"POST": GATE_ROLE}

    def __init__(self, store, today, guesses):
        self.store = store
        self.today = today
        self.guesses = guesses

    def on_post(self, req, resp):
        user = req.context.user.name
        self.guesses.refuse_if_reached(user)
        values, codes = self._wanted(read_json(req))
        self.guesses.count(user)
        day = (values.get("date") or self.today()).isoformat()
        tickets = self.store.lookup_tickets(day, email=values.get("email"), codes=codes,
                                            limit=LOOKUP_LIMIT)
        json_response(resp, {"date": day, "tickets": [lookup_details(t) for t in tickets]})

    @staticmethod
    def _wanted(body):
        """The checked body, and the codes its `code` may be ([] for an email)."""
        validator = Validator()
        values = check_fields(body, LOOKUP_RULES, (), validator)
        given = [name for name in ("email", "code") if name in body]
        if len(given) > 1:
            validator.error("code", "must not be given with email")
        elif not given:
            validator.error("email", "is required, or code")
        codes = typed_codes(values["code"]) if values.get("code") else []
        if values.get("code") and not codes:
            validator.error("code", "must be a confirmation code like "
                            "ticket-event-792d82-891fc, or its last part 792d82-891fc")
        validator.raise_if_invalid()
        return values, codes


class AdmissionSummary:
    """The door's counters for one day."""

    needed_roles = {"GET": GATE_ROLE}

    def __init__(self, store, today):
        self.store = store
        self.today = today

    def on_get(self, req, resp):
        validator = Validator()
        day = parse_query(req, validator, "date", Validator.date, None) or self.today()
        validator.raise_if_invalid("A query parameter is not valid; see errors.")
        json_response(resp, {"date": day.isoformat(), **self.store.door_summary(day.isoformat())})


# The page loads nothing but its own script and stylesheet, and no other site may frame it.
PAGE_POLICY = ("default-src 'self'; img-src 'self' data:; base-uri 'none'; "
               "form-action 'none'; frame-ancestors 'none'")


class PageFile:
    """One file of the scanner page, shipped in museum_pages/ and read once at start.

    Served without credentials: the files hold no data, and the page signs in by itself
    with explicit headers, so loading it costs no failed login and shows no login box."""

    auth_required = False

    def __init__(self, name, media_type):
        self.data = importlib.resources.files("museum_pages").joinpath(name).read_bytes()
        self.media_type = media_type

    def on_get(self, req, resp):
        resp.content_type = self.media_type
        resp.data = self.data
        resp.cache_control = ["no-cache"]
        resp.set_header("Content-Security-Policy", PAGE_POLICY)
        resp.set_header("Permissions-Policy", "camera=(self)")


def rfc3339(moment):
    """An aware datetime as RFC 3339 UTC text, to the second."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# ============================================================================================
# The application
# ============================================================================================

def utc_now():
    return datetime.now(timezone.utc)


def new_uuid():
    return str(uuid.uuid4())


def museum_today(time_zone, clock):
    """A function giving today's date in the museum's time zone (None: the server's zone)."""
    return lambda: clock().astimezone(time_zone).date()


def open_configured_store(config, migrate=False):
    """The store the config's storage url names. A database of an older schema is migrated
    only when `migrate` or [storage] auto_migrate says so, and a sqlite one is backed up
    beside itself first; otherwise `storage.SchemaBehind` says how to migrate it."""
    url, limits = config["storage"]["url"], storage_limits(config)
    try:
        return storage.open_store(url, migrate=False, limits=limits)
    except storage.SchemaBehind as behind:
        if not (migrate or config["storage"]["auto_migrate"]):
            raise
        try:
            copy = storage.backup_beside(url, behind.version)
            log.info("backed up the database at schema version %d to %s before migrating it",
                     behind.version, copy)
        except storage.Unsupported as reason:
            log.warning("migrating the database from schema version %d without a backup made "
                        "by the service: %s", behind.version, reason)
        return storage.open_store(url, limits=limits)


def qr_secret(config, store):
    return config["tickets"]["qr_secret"] or store.setting("qr_secret", secrets.token_hex(32))


EXPOSED_ANYWHERE = "anywhere but a loopback development run"


class App(falcon.App):
    """Falcon's app, where every resource that answers GET answers HEAD too (RFC 9110
    section 9.3.2: the same status and headers, no body). Falcon answers 405 to HEAD where
    a resource has no on_head; load balancers check health with `HEAD /healthz`. Falcon
    itself drops the body of an answer to HEAD and keeps its Content-Length."""

    def add_route(self, uri_template, resource, **kwargs):
        if hasattr(resource, "on_get") and not hasattr(resource, "on_head"):
            resource.on_head = resource.on_get
        super().add_route(uri_template, resource, **kwargs)


def create_app(config, store=None, authenticator=None, clock=utc_now, new_id=new_uuid,
               middleware=(), exposed_on=EXPOSED_ANYWHERE, access=None,
               erase_contacts=False):
    """The WSGI app for `config`. By default the store is opened from the config's storage
    url, users are checked against its [users] and the access log is written as its [log]
    says; tests inject `store`, `clock` (giving an aware datetime), `new_id` and `access`
    (an access_log.AccessLogWriter), and `museum mock` its own authenticator and `middleware`.
    With `erase_contacts` (`museum serve`, `museum:app`), old contacts are erased from the
    store daily, as museum_privacy says.

    While any user still has the demo password, the app is built only for a loopback
    development run, which the caller states with `exposed_on=None`: this function cannot
    see where it will be served, and under gunicorn, mod_wsgi or waitress-serve, or behind a
    reverse proxy, the demo password would reach the network. `museum serve` states it when
    it listens on a loopback address without `trusted_proxy`, and otherwise says where it
    listens. Otherwise a demo password is a ConfigError naming the users.
    """
    check_passwords(config, exposed_on)
    store = store or open_configured_store(config)
    today = museum_today(config["museum"]["timezone"], clock)
    authenticator = authenticator or authenticator_for(config)
    access = access or access_log.open_access_log(config)
    logging_middleware = [AccessLog(access)] if access else []
    app = App(middleware=[RequestId(), *logging_middleware, SafeHeaders(), *middleware,
                          authenticator])
    app.req_options.keep_blank_qs_values = True  # `?page=` is malformed, not absent
    app.set_error_serializer(write_problem)
    app.add_error_handler(Exception, unexpected_error)
    app.add_error_handler(storage.StorageError, storage_error_as_problem)
    app.add_route("/healthz", Health(store))
    app.add_route(f"{API}/openapi.json", OpenAPIDocument())
    app.add_route(f"{API}/museum-hours", MuseumHours(config.schedule, today))
    # Built on public_url when set: never on the Host or X-Forwarded-Host a client sent.
    # Unset, Location stays a path (relative to the URL requested) and Link takes the request's.
    public_url = config["server"]["public_url"]
    app.add_route(f"{API}/special-events", SpecialEvents(store, today, new_id, public_url))
    app.add_route(f"{API}/special-events/{{event_id}}", SpecialEvent(store))
    app.add_route(f"{API}/tickets", Tickets(store, config, today, new_id, public_url))
    secret = qr_secret(config, store)
    app.add_route(f"{API}/tickets/{{ticket_id}}", sales().Ticket(store, clock))
    app.add_route(f"{API}/availability",
                  sales().Availability(store, config.schedule, config.capacity, today))
    app.add_route(f"{API}/reports/sales", sales().SalesReport(store, today))
    app.add_route(f"{API}/tickets/{{ticket_id}}/qr", TicketImage(store, secret))
    guesses = TypedCodeLimit()
    entry_times = sales().EntryTimes(config["museum"]["timezone"],
                                     config["door"]["early_minutes"], clock)
    app.add_route(f"{API}/admissions",
                  Admissions(store, secret, today, clock, guesses, entry_times))
    app.add_route(f"{API}/admissions/summary", AdmissionSummary(store, today))
    app.add_route(f"{API}/admissions/lookup", TicketLookup(store, today, guesses))
    app.add_route(f"{API}/admissions/{{ticket_id}}", Admission(store, clock))
    app.add_route("/scan", PageFile("scan.html", "text/html; charset=utf-8"))
    app.add_route("/scan/scan.js", PageFile("scan.js", "text/javascript; charset=utf-8"))
    app.add_route("/scan/scan.css", PageFile("scan.css", "text/css; charset=utf-8"))
    if erase_contacts:  # last: an app that could not be built erases nothing
        museum_privacy.erase_contacts_daily(store, config["storage"]["url"], today,
                                            config["privacy"]["keep_contact_days"])
    return app


def set_log_level(config):
    """The application log's level, from [log] level (the host configures its handlers)."""
    log.setLevel(config["log"]["level"])


_default_app = None
_default_app_lock = threading.Lock()


def app(environ, start_response):
    """WSGI entry point for other hosts (`museum:app`): built from the default config on the
    first request, not at import; from then on it erases old contacts daily, as
    `museum serve` does."""
    global _default_app
    if _default_app is None:
        with _default_app_lock:
            if _default_app is None:
                config = load_config()
                set_log_level(config)
                _default_app = create_app(config, erase_contacts=True)
    return _default_app(environ, start_response)


def main(argv=None):
    """The `museum` command, which lives in museum_cli.py."""
    import museum_cli

    return museum_cli.main(argv)


if __name__ == "__main__":
    sys.exit(main())

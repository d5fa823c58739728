"""HTTP plumbing of the museum service: problem answers, JSON bodies, query parameters,
paging headers, the Idempotency-Key, the client's address and what of a request may be
logged, HEAD = GET.

Problem answers follow RFC 9457 (application/problem+json), with the store's domain errors
mapped to HTTP in one place; JSON bodies are read within BODY_LIMIT and written compact;
each query parameter is read at most once, into the caller's validator; listings page with
`X-Total-Count` and RFC 8288 links; the router answers HEAD wherever a resource answers
GET. This module knows nothing of the resources (museum.py and its siblings), which use it.
"""

import functools
import hashlib
import ipaddress
import json
import logging
import math
import re
from datetime import timedelta, timezone
from http import HTTPStatus
from urllib.parse import urlencode

import falcon
import falcon.inspect

import storage
from museum_codes import field_error
from museum_vocabulary import UUID_TEXT

log = logging.getLogger("museum")
API = "/v1.1"  # the prefix of every path of the API
BODY_LIMIT = 64 * 1024


# ============================================================================================
# Problem errors (RFC 9457)
# ============================================================================================

PROBLEM_JSON = "application/problem+json"
# A sale's key reused is 409 (here), a scan's 422 (museum_admissions.Admissions): the same words.
KEY_REUSED = "This Idempotency-Key was already used with a different request."
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


INVALID_BODY = "The request is not valid; see errors."


def closed_on(day):
    """Why no general ticket is sold for `day` (an ISO date)."""
    return f"the museum is closed on {day}"


def storage_error_as_problem(req, resp, error, params):
    """Domain errors from the store, mapped to HTTP in this one place."""
    if isinstance(error, storage.NotFound):
        raise Problem(404, "No such record (it may have been cancelled).")
    if isinstance(error, storage.DateNotOffered):
        raise Problem(400, f"The event does not take place on that date; valid dates: "
                      f"{', '.join(error.dates)}.",
                      errors=[field_error("ticketDate", "not-an-event-date",
                                          f"must be one of {', '.join(error.dates)}")])
    if isinstance(error, storage.DayClosed):  # closed while the sale was checked
        raise Problem(400, INVALID_BODY, errors=[
            field_error("ticketDate", "closed", closed_on(error.date))])
    if isinstance(error, storage.DatesSold):
        sold = [f"{day} ({count} sold)" for day, count in error.sold.items()]
        raise Problem(409, f"Tickets were sold for dates this change removes: "
                      f"{', '.join(sold)}. Keep those dates, or cancel the event.",
                      errors=[field_error("dates", "dates-sold", f"must keep {day}: {count} "
                                          f"ticket(s) sold for it")
                              for day, count in error.sold.items()],
                      members={"reason": "dates-sold"})
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
                      errors=[field_error("capacity", "below-sold", f"must be at least "
                                          f"{count}: {count} ticket(s) sold for {day}")
                              for day, count in error.sold.items()],
                      members={"reason": "capacity-below-sold"})
    if isinstance(error, storage.IdempotencyConflict):
        raise Problem(409, KEY_REUSED, members={"reason": "key-reused"})
    # Not logged per request: the store logs the outage once, with its reason.
    raise Problem(503, "The database is unavailable; try again shortly.",
                  headers={"Retry-After": "5"})


def unexpected_error(req, resp, error, params):
    log.error("unexpected error on %s %s", loggable_word(req.method),
              loggable_path(req.path, req.uri_template), exc_info=error)
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
# JSON bodies, paging headers, times
# ============================================================================================

_compact_json = json.JSONEncoder(separators=(",", ":")).encode


def to_json(value):
    return _compact_json(value).encode()


def json_response(resp, value, status=200):
    resp.status = status
    resp.data = to_json(value)


def not_modified(req, resp, tag):
    """Tag the answer with the strong `ETag` `tag`; True, and the status 304, when the
    request's `If-None-Match` holds it (or `*`): the caller then sends no body."""
    resp.set_header("ETag", f'"{tag}"')  # (falcon's `resp.etag` costs three times as much)
    if req.if_none_match and any(held in ("*", tag) for held in req.if_none_match):
        resp.status = 304
        return True
    return False


def png_response(req, resp, png, digest):
    """A PNG image with `digest` as its strong ETag, kept a day by the client; 304 while
    If-None-Match names it."""
    resp.cache_control = ["private", "max-age=86400"]
    if not not_modified(req, resp, digest):
        resp.content_type = "image/png"
        resp.data = png


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


def retry_after(moment, now):
    """Retry-After's whole seconds from `now` to `moment` (at least 1)."""
    return str(max(1, math.ceil((moment - now).total_seconds())))


def rfc3339(moment):
    """An aware datetime as RFC 3339 UTC text, to the second."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# ============================================================================================
# Request headers: the Idempotency-Key
# ============================================================================================

IDEMPOTENCY_KEY = re.compile(r"[\x21-\x7e]{1,200}")


def idempotency_key(req):
    """The request's Idempotency-Key header, None when absent; 400 when malformed."""
    key = req.get_header("Idempotency-Key")
    if key is not None and not IDEMPOTENCY_KEY.fullmatch(key):
        raise Problem(400, "Idempotency-Key must be 1 to 200 visible ASCII characters.",
                      errors=[field_error("Idempotency-Key", "malformed", "is malformed")])
    return key


def fingerprint(body):
    """What an Idempotency-Key's replay must match: a digest of the request's body."""
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode("utf-8", "surrogatepass")) \
        .hexdigest()


# ============================================================================================
# Query parameters, checked by the caller's validator (museum_validation.Validator)
# ============================================================================================

PAGE_MAX = 10**6
PAGE_SIZE_MAX = 30
PAGE_SIZE_DEFAULT = 10
BAD_QUERY = "A query parameter is not valid; see errors."


def parse_query(req, validator, name, parse, default):
    """One query parameter, given at most once, through `parse(validator, name, text)`."""
    value = req.params.get(name)
    if value is None:
        return default
    if isinstance(value, list):
        validator.error(name, "given-twice", "must be given once")
        return None
    return parse(validator, name, value)


def start_date(req, validator, today):
    """The `startDate` query parameter; by default `today`."""
    return parse_query(req, validator, "startDate", _date, None) or today


def date_window(req, validator, today, default_days=None, max_days=None):
    """The `startDate` and `endDate` query parameters as dates: an absent end is
    `default_days` from the start (None: open-ended), at most `max_days` from it."""
    start = start_date(req, validator, today)
    end = parse_query(req, validator, "endDate", _date, None)
    if end is None and default_days:
        end = start + timedelta(days=default_days - 1)
    if end and end < start:
        validator.error("endDate", "before-start", "must not be before startDate")
    elif end and max_days and (end - start).days >= max_days:
        validator.error("endDate", "window-too-long",
                        f"must be at most {max_days} days from startDate, "
                                   f"counting both")
    return start, end


def paging(req, validator):
    """The `page` and `limit` query parameters."""
    page = parse_query(req, validator, "page", lambda v, n, t: v.integer(n, t, 1, PAGE_MAX), 1)
    limit = parse_query(req, validator, "limit",
                        lambda v, n, t: v.integer(n, t, 1, PAGE_SIZE_MAX), PAGE_SIZE_DEFAULT)
    return page, limit


def _date(validator, name, text):
    return validator.date(name, text)


# ============================================================================================
# The client's address, and what of a request a log line may show
# ============================================================================================

def client_ip(address):
    """The client's address as waitress gives it (an IPv6 one may be bracketed) as an
    ipaddress object, or None when it is no address. (Its callers remember their answers.)"""
    try:
        return ipaddress.ip_address((address or "").strip("[]"))
    except ValueError:
        return None


LOGGABLE_WORD = re.compile(r"[A-Za-z0-9._~-]{1,64}")
DIGIT_RUN = re.compile(r"\d{7}")


@functools.lru_cache(maxsize=4096)
def loggable_word(text):
    """`text` if it is a UUID or a short plain word without a run of 7 digits (which could
    be a phone number), else `*`: no email, phone or line break reaches the log from a URL."""
    if UUID_TEXT.fullmatch(text) or (LOGGABLE_WORD.fullmatch(text)
                                     and not DIGIT_RUN.search(text)):
        return text
    return "*"


ID_KEPT = 8  # characters of an id a log line keeps: enough to follow it, not to use it
WHOLE_FIELDS = ("date",)  # path fields that name nothing and no one: logged whole
# Ids and codes hold runs of hex digits (a UUID's first group has 8, a code's 6 and 5).
HEX_RUN = re.compile(r"[0-9A-Fa-f]{5}")


def loggable_path(path, template=None):
    """`path` for a log line: every segment through `loggable_word`, at most 12 of them,
    and every segment that holds an id or a code cut to ID_KEPT characters, since a ticket
    id is the key to that ticket's image. `template` is the route's (Falcon's
    `req.uri_template`): each of its fields is cut but a date. Without one (no route
    matched), every segment with a run of 5 hex digits, as ids and codes have."""
    segments = path.split("/")[:13]
    fields = template.split("/") if template else []
    logged = []
    for index, segment in enumerate(segments[:12]):
        word = segment and loggable_word(segment)
        if _may_identify(segment, fields[index] if index < len(fields) else None, template):
            word = word[:ID_KEPT]
        logged.append(word)
    return "/".join(logged) + ("/..." if len(segments) > 12 else "")


def _may_identify(segment, field, template):
    if template is None:
        return bool(HEX_RUN.search(segment))
    return field is None or (field.startswith("{") and field.strip("{}") not in WHOLE_FIELDS)


@functools.lru_cache(maxsize=4096)
def loggable_address(address):
    ip = client_ip(address)
    return "-" if ip is None else str(ip)


# ============================================================================================
# Routing
# ============================================================================================

class Router(falcon.routing.CompiledRouter):
    """Falcon's router, where every resource that answers GET answers HEAD with the same
    responder (RFC 9110 section 9.3.2: the same status and headers, no body): Falcon itself
    answers 405 to HEAD where a resource has no on_head, and load balancers check health
    with `HEAD /healthz`. Falcon drops the body of an answer to HEAD and keeps its
    Content-Length."""

    def find(self, uri, req=None):
        """Falcon's route, but none where a path field is empty: `/v1.1/museum-hours/`
        is that path with a trailing slash (404), not a day named ""."""
        route = super().find(uri, req)
        if route is not None and "" in route[2].values():
            return None
        return route

    def map_http_methods(self, resource, **kwargs):
        methods = super().map_http_methods(resource, **kwargs)
        if "GET" in methods:
            methods.setdefault("HEAD", methods["GET"])
        return methods


# falcon.inspect (which lists the routes, as `falcon-inspect-app` does) knows routers by
# their class: this one is read as the router it extends.
falcon.inspect.register_router(Router)(falcon.inspect.inspect_compiled_router)

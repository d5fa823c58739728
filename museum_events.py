"""The special events: creating, listing, reading, changing and cancelling them
(`/v1.1/special-events`), their writable fields declared once, and the listing's cache.

The listing is the service's most asked read, and a page is the same for everyone who asks:
`ListingCache` keeps pages serialized while no event changes.

Changes reach other systems without polling whole listings: listings and reads
carry a strong `ETag` and answer 304 while it holds; `updatedSince` lists the events
created, changed or cancelled since a moment, cancelled ones marked; a cancelled event's
read answers 410 with what it was.
"""

import hashlib
import threading
from datetime import timezone

import museum_categories
from museum_http import (API, BAD_QUERY, Problem, date_window, json_response, not_modified,
                         paging, parse_query, read_json, set_paging_headers, to_json)
from museum_openapi import DATE_SCHEMA, PAGED, Answer, Operation, anchored, query, trimmed_text
from museum_validation import Field, Validator, check_fields, checked_by, path_uuid
from museum_vocabulary import ADMIN_ROLE, CAPACITY_MAX, PRICE_MAX, VISITOR_ROLE

# The limits below are also the OpenAPI document's (through EVENT_FIELDS' schemas).
NAME_MAX = 200  # an event's name and location, after trimming
DESCRIPTION_MAX = 5000
EVENT_DATES_MAX = 366


def _event_dates(validator, name, value):
    if not isinstance(value, list) or not 1 <= len(value) <= EVENT_DATES_MAX:
        validator.error(name, "not-a-date-list", f"must be a list of 1 to {EVENT_DATES_MAX} dates")
        return None
    days = [validator.date(f"{name}[{index}]", item) for index, item in enumerate(value)]
    return sorted({day.isoformat() for day in days if day})


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
    "capacity": Field(checked_by(Validator.places), {
        "type": "integer", "minimum": 1, "maximum": CAPACITY_MAX,
        "description": "Places on each of the event's dates; without it, unlimited. Returned "
        "only when set; `null` in a change removes it (unlimited again)."}, 20,
        nullable_in_patch=True),
    # The configured category names are checked apart (check_event_prices), as a reload may
    # change them.
    "prices": Field(museum_categories.event_prices, {
        "type": "object", "maxProperties": museum_categories.CATEGORIES_MAX,
        "propertyNames": {"pattern": anchored(museum_categories.NAME)},
        "additionalProperties": {"type": "number", "minimum": 0, "maximum": PRICE_MAX},
        "description": "The event's price for some price categories (`GET /price-categories`), "
        "each as `price`: a category not named pays `price`. Returned only when set; a change "
        "replaces the whole object, and `{}` or `null` removes it."}, {"child": 10},
        nullable_in_patch=True),
}


EVENT_CANCELLED = "The event was cancelled; `event` is what it was."
UPDATED_SINCE = query(
    "updatedSince", "An RFC 3339 date-time: list instead every event created, changed or "
    "cancelled at or after it, whatever its dates (so not with `startDate` or `endDate`), "
    "oldest change first, each with its `updatedAt`; cancelled ones with their last data "
    "and `\"cancelled\": true`. Ask again with the last event's `updatedAt`: no change is "
    "missed, and at most that moment's are seen twice.",
    {"type": "string", "format": "date-time"}, "2027-10-29T09:14:05.120Z")


def change_moment(validator, name, text):
    """The `updatedSince` parameter in the form the store keeps its change times: UTC, to
    the millisecond, rounded down (so that nothing of that moment is left out)."""
    moment = validator.moment(name, text)
    if moment is None:
        return None
    try:
        moment = moment.astimezone(timezone.utc)
    except OverflowError:  # year 1 or 9999 moved past the calendar by the offset
        validator.error(name, "out-of-window",
                        "must be a date-time between the years 1 and 9999 in UTC")
        return None
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{moment.microsecond // 1000:03d}Z"


def listing_tag(version, window, offset, limit):
    """The strong validator of a listing page: the events' version and what picks the page
    (written out: cheaper than a digest, and a client only compares it)."""
    return "/".join([str(version), *(part or "" for part in window), str(offset), str(limit)])


class SpecialEvents:
    needed_roles = {"GET": VISITOR_ROLE, "POST": ADMIN_ROLE}
    shop_methods = ("GET",)  # [shop] enabled: anyone may read it
    described = {
        "post": Operation("createSpecialEvent", "Events", "Create a special event", (), {
            201: Answer("The event was created.", "SpecialEvent", ("Location",))},
            "SpecialEventCreate"),
        "get": Operation("listSpecialEvents", "Events", "List special events",
                         ("StartDate", "EndDate", UPDATED_SINCE, "Page", "Limit",
                          "IfNoneMatch"), {
                             200: Answer("One page of events.", "SpecialEventList",
                                         (*PAGED, "ETag")),
                             304: "ListNotModified"})}

    def __init__(self, store, live, today, new_id, public_url):
        self.store = store
        self.live = live  # museum_config.LiveConfig: the price categories
        self.today = today
        self.new_id = new_id
        self.public_url = public_url
        self.listings = ListingCache(store)

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
        since = parse_query(req, validator, "updatedSince", change_moment, None)
        start, end = date_window(req, validator, self.today())
        if since:
            for name in ("startDate", "endDate"):
                if name in req.params:
                    validator.error(name, "conflicts", "must not be given with updatedSince: "
                                          "changes are listed whatever their dates")
        page, limit = paging(req, validator)
        validator.raise_if_invalid(BAD_QUERY)
        offset = (page - 1) * limit
        window = (since,) if since else (start.isoformat(), end and end.isoformat())
        # Every event created, changed or cancelled counts the version up, so a page
        # tagged with it is the same page while it stays: 304 costs that one read.
        version = self.store.events_version()
        if not_modified(req, resp, listing_tag(version, window, offset, limit)):
            return
        if since:
            events, total = self.store.list_changed_events(since, offset, limit)
            resp.data = to_json(events)
        else:
            resp.data, total = self.listings.page(version, *window, offset, limit)
        set_paging_headers(req, resp, self.public_url, page, limit, total)


class SpecialEvent:
    needed_roles = {"GET": VISITOR_ROLE, "PATCH": ADMIN_ROLE, "DELETE": ADMIN_ROLE}
    shop_methods = ("GET",)  # [shop] enabled: anyone may read it
    described = {
        "get": Operation("getSpecialEvent", "Events", "Get a special event",
                         ("EventId", "IfNoneMatch"), {
                             200: Answer("The event.", "SpecialEvent", ("ETag",)),
                             304: Answer(
                                 "`If-None-Match` matched: the event the client holds is "
                                 "current.", None),
                             404: "NotFound", 410: "EventCancelled"}),
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
        event = self.store.get_event(path_uuid(event_id, "eventId"), cancelled_too=True)
        if event.get("cancelled"):
            raise Problem(410, EVENT_CANCELLED, members={"event": event})
        body = to_json(event)
        # A digest of the body changes exactly when the answer does. BLAKE2 is Python's
        # own: OpenSSL 3's digests (sha256) look up their provider under a lock on every
        # call, which made this read cost 7 to 20 % more CPU than with no tag at all
        # (docs/performance.md).
        if not not_modified(req, resp, hashlib.blake2b(body, digest_size=10).hexdigest()):
            resp.data = body

    def on_patch(self, req, resp, event_id):
        event_id = path_uuid(event_id, "eventId")
        validator = Validator()
        changes = check_fields(read_json(req), EVENT_FIELDS, validator, change=True)
        museum_categories.check_event_prices(validator, self.live.config, changes.get("prices"))
        validator.raise_if_invalid()
        event = self.store.update_event(event_id, changes) if changes \
            else self.store.get_event(event_id)
        json_response(resp, event)

    def on_delete(self, req, resp, event_id):
        self.store.cancel_event(path_uuid(event_id, "eventId"))
        resp.status = 204


class ListingCache:
    """Serialized listing pages, kept while the store's `events_version` stays the same.

    Every event change bumps that version in its own transaction, and each lookup is given
    it, read first (one cheap query), so no page outlives a write, from this instance or
    another one sharing the database. A page is cached under the version read before its
    query.
    """

    LIMIT = 512

    def __init__(self, store):
        self.store = store
        self._version = None
        self._pages = {}
        self._lock = threading.Lock()

    def page(self, version, start, end, offset, limit):
        """(JSON bytes of the page, total in the window), `version` the store's
        `events_version` read just before."""
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

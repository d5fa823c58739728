"""The special events: creating, listing, reading, changing and cancelling them
(`/v1.1/special-events`), their writable fields declared once, and the listing's cache.

The listing is the service's most asked read, and a page is the same for everyone who asks:
`ListingCache` keeps pages serialized while no event changes.
"""

import threading

import museum_categories
from museum_http import (API, BAD_QUERY, date_window, json_response, paging, read_json,
                         set_paging_headers, to_json)
from museum_openapi import DATE_SCHEMA, PAGED, Answer, Operation, anchored, trimmed_text
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


class SpecialEvents:
    needed_roles = {"GET": VISITOR_ROLE, "POST": ADMIN_ROLE}
    shop_methods = ("GET",)  # [shop] enabled: anyone may read it
    described = {
        "post": Operation("createSpecialEvent", "Events", "Create a special event", (), {
            201: Answer("The event was created.", "SpecialEvent", ("Location",))},
            "SpecialEventCreate"),
        "get": Operation("listSpecialEvents", "Events", "List special events",
                         ("StartDate", "EndDate", "Page", "Limit"), {200: Answer(
                             "One page of events.", "SpecialEventList", PAGED)})}

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
        start, end = date_window(req, validator, self.today())
        page, limit = paging(req, validator)
        validator.raise_if_invalid(BAD_QUERY)
        resp.data, total = self.listings.page(
            start.isoformat(), end and end.isoformat(), (page - 1) * limit, limit)
        set_paging_headers(req, resp, self.public_url, page, limit, total)


class SpecialEvent:
    needed_roles = {"GET": VISITOR_ROLE, "PATCH": ADMIN_ROLE, "DELETE": ADMIN_ROLE}
    shop_methods = ("GET",)  # [shop] enabled: anyone may read it
    described = {
        "get": Operation("getSpecialEvent", "Events", "Get a special event", ("EventId",),
                         {200: "SpecialEvent", 404: "NotFound"}),
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
        json_response(resp, self.store.get_event(path_uuid(event_id, "eventId")))

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

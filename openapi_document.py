"""The museum service's OpenAPI 3.1 description.

`DOCUMENT` is plain JSON data (dicts, lists, strings, numbers, booleans, None). It is
served at `GET /v1.1/openapi.json` and printed by `museum openapi`; paths are relative
to the server URL `/v1.1`. The prose and the examples are written here; every limit,
pattern, role and the version come from the code that enforces them, imported below, so
the two cannot drift. Reused pieces live under `components` and are referenced with `$ref`.
"""

from http import HTTPStatus

from museum import (
    ADMIN_ROLE,
    BODY_LIMIT,
    CAPACITY_MAX,
    CONFIRMATION_CODE,
    DESCRIPTION_MAX,
    DOOR_FIELDS,
    DOOR_OUTCOMES,
    EMAIL_MAX,
    EVENT_DATES_MAX,
    EVENT_REQUIRED,
    HOURS_HORIZON_DAYS,
    IDEMPOTENCY_KEY,
    INTERFACE_VERSION,
    LOOKUP_LIMIT,
    NAME_MAX,
    PAGE_MAX,
    PAGE_SIZE_DEFAULT,
    PAGE_SIZE_MAX,
    PHONE,
    PRICE_MAX,
    QR_TEXT_LIMIT,
    SALE_HORIZON_DAYS,
    TICKET_STATUSES,
    TICKET_TYPES,
    TYPED_CODE_LIMIT,
    UNDO_RULE,
    UNDO_WINDOW,
    TypedCodeLimit,
    qr_text,
)
from museum_config import CURRENCY, DATE, GATE_ROLE, ROLES, SCHEMA, TIME_OF_DAY
from museum_sales import (
    AVAILABILITY_DAYS_DEFAULT,
    AVAILABILITY_DAYS_MAX,
    REPORT_COLUMNS,
    REPORT_DAYS_MAX,
    TICKET_VIEW_FIELDS,
)

_SCHEMAS = "#/components/schemas/"
_NO_STORE = {"$ref": "#/components/headers/CacheControlNoStore"}
_CREATED = {"Location": {"$ref": "#/components/headers/Location"}}
_ADMIN_ONLY = f"Needs the {ADMIN_ROLE} role."
_GATE_OR_ADMIN = f"Needs the {GATE_ROLE} or the {ADMIN_ROLE} role."
_HEADER_LIMIT = SCHEMA["server"]["max_request_header_size"].default
_EVENT_ID_EXAMPLE = "3f1c9a52-7d4e-4b8a-9c61-2e5f0d8b7a14"
_TICKET_ID_EXAMPLE = "a8e2d6c0-51b7-4f3e-8d92-6c4b1e0f7a35"
_CODE_EXAMPLE = "ticket-general-3fa85f-64571"
_EVENT_EXAMPLE = {
    "eventId": _EVENT_ID_EXAMPLE,
    "name": "Pirate Coding Workshop",
    "location": "Seven Seas Gallery",
    "eventDescription": "Learn to code like a pirate: treasure maps, loops and parrots.",
    "dates": ["2027-10-30", "2027-10-31"],
    "price": 25,
}
# The writable fields of an event: the create and update bodies and the event itself.
_EVENT_FIELDS = {
    "name": {"$ref": _SCHEMAS + "EventName"},
    "location": {"$ref": _SCHEMAS + "EventLocation"},
    "eventDescription": {"$ref": _SCHEMAS + "EventDescription"},
    "dates": {"$ref": _SCHEMAS + "EventDates"},
    "price": {"$ref": _SCHEMAS + "EventPrice"},
    "capacity": {"$ref": _SCHEMAS + "EventCapacity"},
}
# What a ticket's receipt and the door show of it: never the buyer's email or phone.
_TICKET_FIELDS = {
    "ticketId": {"type": "string", "format": "uuid"},
    "ticketType": {"$ref": _SCHEMAS + "TicketType"},
    "ticketDate": {"$ref": _SCHEMAS + "Date"},
    "confirmationCode": {"$ref": _SCHEMAS + "ConfirmationCode"},
    "eventName": {"type": "string", "description": "Only on event tickets."},
    "entryTime": {"$ref": _SCHEMAS + "EntryTime"},
}
_ADMISSION_FIELDS = {
    "admittedAt": {"type": "string", "format": "date-time",
                   "description": "When the ticket was admitted, in UTC (RFC 3339)."},
    "admittedBy": {"type": "string", "description": "The user who admitted it."},
}
_COUNT = {"type": "integer", "minimum": 0}
_SALES_ROW_EXAMPLE = {"date": "2027-10-30", "ticketType": "event", "eventId": _EVENT_ID_EXAMPLE,
                      "eventName": "Pirate Coding Workshop", "sold": 20, "void": 2,
                      "admitted": 15, "revenue": 450, "currency": "EUR"}
# A general ticket at the door, and what the door adds to it: the examples of its answers.
_DOOR_TICKET_EXAMPLE = {"ticketId": _TICKET_ID_EXAMPLE, "ticketType": "general",
                        "ticketDate": "2027-10-29", "confirmationCode": _CODE_EXAMPLE}
_ADMITTED_EXAMPLE = {"admittedAt": "2027-10-29T09:14:05Z", "admittedBy": "gate"}
# The ticket members of each refusal's example; only those that find a ticket show it.
_DOOR_REFUSAL_EXAMPLES = {
    "already-admitted": {**_DOOR_TICKET_EXAMPLE, **_ADMITTED_EXAMPLE},
    "wrong-date": {**_DOOR_TICKET_EXAMPLE, "ticketDate": "2027-10-31", "when": "early"},
    "too-early": {**_DOOR_TICKET_EXAMPLE, "entryTime": "14:30"},
    "cancelled": {**_DOOR_TICKET_EXAMPLE, "ticketType": "event",
                  "confirmationCode": "ticket-event-a1b2c3-d4e5f",
                  "eventName": "Pirate Coding Workshop"},
    "void": _DOOR_TICKET_EXAMPLE,
    "forged": {},
    "unknown": {},
}
# A wrong date's detail says early or past (museum.wrong_date), for the example's ticket.
_DOOR_REFUSAL_DETAILS = {"wrong-date": "early: ticket for 2027-10-31 (in 2 days)",
                         "too-early": "too early: entry at 14:30, admitted from 14:15"}
_LOOKUP_EXAMPLE = {
    "date": "2027-10-29",
    "tickets": [
        {**_DOOR_TICKET_EXAMPLE, "status": "admitted", "admitted": True, **_ADMITTED_EXAMPLE},
        {**_DOOR_TICKET_EXAMPLE, "ticketId": "5b0e7c1d-2f4a-4e8b-9a3c-7d6e5f4a3b21",
         "ticketType": "event", "confirmationCode": "ticket-event-a1b2c3-d4e5f",
         "eventId": _EVENT_ID_EXAMPLE, "eventName": "Pirate Coding Workshop",
         "status": "valid", "admitted": False},
    ],
}
_UNDO_MINUTES = UNDO_WINDOW.seconds // 60
# The names under components/responses of the error responses, by status.
_ERROR_NAMES = {
    400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound",
    410: "Gone", 413: "ContentTooLarge", 415: "UnsupportedMediaType",
    429: "TooManyRequests", 431: "RequestHeaderFieldsTooLarge", 503: "ServiceUnavailable",
}
# What any API operation may answer: a bad parameter or request, no credentials, a locked-out
# name or address, headers over the server's limit, an unavailable database.
_ANY_OPERATION = (400, 401, 429, 431, 503)
# The HTTP server itself answers malformed framing (400) and bodies over its buffer (413)
# with a short text; the application never sees those requests.
_SERVER_TEXT = {"text/plain": {"schema": {"type": "string"}}}
_PNG = {"schema": {"type": "string", "format": "binary"}}


def _errors(*statuses, names=None):
    """The error responses of an API operation: for `statuses`, for those every one may
    answer, and for the statuses of `names` ({status: name under components/responses}),
    which stand in for the usual response of their status."""
    chosen = {status: _ERROR_NAMES[status] for status in {*_ANY_OPERATION, *statuses}}
    chosen.update(names or {})
    return {str(status): {"$ref": "#/components/responses/" + chosen[status]}
            for status in sorted(chosen)}


def _response(description, media_type, schema, example, headers=None, named=False):
    """A response with a body of `media_type`; like every JSON answer, never cached. With
    `named`, `example` is a dict of named examples."""
    return {"description": description,
            "headers": {**(headers or {}), "Cache-Control": _NO_STORE},
            "content": {media_type: {"schema": schema,
                                     ("examples" if named else "example"): example}}}


def _problem_body(status, detail, **members):
    return {"type": "about:blank", "title": HTTPStatus(status).phrase, "status": status,
            "detail": detail, **members}


def _problem(status, description, detail, errors=None, headers=None, server_text=False):
    """A problem+json error response whose example is what the service answers."""
    example = _problem_body(status, detail, **({"errors": errors} if errors else {}))
    response = _response(description, "application/problem+json",
                         {"$ref": _SCHEMAS + "Problem"}, example, headers)
    if server_text:
        response["content"].update(_SERVER_TEXT)
    return response


def _door_problem(description, *results):
    """The door's refusal for `results` (of one status), with an example of each: what the
    service answers, its `result` and what it shows of the ticket."""
    examples = {}
    for result in results:
        status, detail = DOOR_OUTCOMES[result]
        detail = _DOOR_REFUSAL_DETAILS.get(result, detail)
        body = _problem_body(status, detail, result=result, **_DOOR_REFUSAL_EXAMPLES[result])
        examples[result] = {"value": body}
    return _response(description, "application/problem+json",
                     {"$ref": _SCHEMAS + "DoorProblem"}, examples, named=True)


def _named_problems(description, schema_name, examples):
    """A problem+json response with named examples ({name: the service's problem body})."""
    return _response(description, "application/problem+json", {"$ref": _SCHEMAS + schema_name},
                     {name: {"value": body} for name, body in examples.items()}, named=True)


def _trimmed_text(max_length, what=""):
    """A string that is 1..max_length characters once trimmed of surrounding whitespace;
    `what` begins its description."""
    return {
        "type": "string",
        "description": f"{what}Trimmed of surrounding whitespace, then 1-{max_length} "
                       "characters.",
        "minLength": 1,
        "pattern": rf"^\s*\S(?:[\s\S]{{0,{max_length - 2}}}\S)?\s*$",
    }


def _anchored(regex):
    """A Python regex used with fullmatch, as a JSON Schema pattern (which searches)."""
    return f"^{regex.pattern}$"


DOCUMENT = {
    "openapi": "3.1.0",
    "info": {
        "title": "Museum API",
        "version": INTERFACE_VERSION,
        "license": {"name": "MIT", "identifier": "MIT"},
        "description": (
            "Opening hours, special events and tickets of the museum. Every operation "
            "except fetching this description needs HTTP Basic credentials; creating, "
            f"changing and cancelling special events needs the {ADMIN_ROLE} role, admitting "
            f"tickets at the door the {GATE_ROLE} role or higher. Requests "
            "and responses are JSON, errors are RFC 9457 problem details "
            "(application/problem+json), and dates are ISO calendar dates in the "
            "museum's time zone. Requests that the HTTP server refuses before they reach "
            "the application (malformed framing, a request line and headers over "
            f"{_HEADER_LIMIT} bytes by default, bodies over its buffer limit) get its short "
            "text/plain answer instead (400, 431, 413)."
        ),
    },
    "servers": [{"url": "/v1.1"}],
    "security": [{"MuseumPlaceholderAuth": []}],
    "tags": [
        {"name": "Operations", "description": "The museum's opening hours."},
        {"name": "Events", "description": "Special events and their dates."},
        {"name": "Tickets", "description": "Buying tickets and fetching their codes."},
        {"name": "Door", "description": "Admitting tickets at the entrance; the day's counts."},
        {"name": "Reports", "description": "What was sold."},
        {"name": "Description", "description": "This OpenAPI description."},
    ],
    "paths": {
        "/museum-hours": {
            "get": {
                "operationId": "getMuseumHours",
                "summary": "Get museum hours",
                "description": (
                    "Lists the open days from `startDate` on, oldest first, with their "
                    "opening and closing times. Closed days are left out; days more than "
                    f"{HOURS_HORIZON_DAYS} days after `startDate` are never listed, so a "
                    "page past the end is an empty array."
                ),
                "tags": ["Operations"],
                "parameters": [
                    {"$ref": "#/components/parameters/StartDate"},
                    {"$ref": "#/components/parameters/Page"},
                    {"$ref": "#/components/parameters/Limit"},
                ],
                "responses": {
                    "200": _response(
                        "One page of open days.", "application/json",
                        {"$ref": _SCHEMAS + "MuseumHours"},
                        [{"date": "2027-10-29", "timeOpen": "09:00", "timeClose": "18:00"},
                         {"date": "2027-10-30", "timeOpen": "09:00", "timeClose": "21:00"}]),
                    **_errors(),
                },
            }
        },
        "/special-events": {
            "post": {
                "operationId": "createSpecialEvent",
                "summary": "Create a special event",
                "description": f"{_ADMIN_ONLY} Dates are stored sorted, without duplicates.",
                "tags": ["Events"],
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {"$ref": _SCHEMAS + "SpecialEventCreate"},
                            "example": {k: v for k, v in _EVENT_EXAMPLE.items() if k != "eventId"},
                        }
                    },
                },
                "responses": {
                    "201": _response("The event was created.", "application/json",
                                     {"$ref": _SCHEMAS + "SpecialEvent"}, _EVENT_EXAMPLE,
                                     _CREATED),
                    **_errors(403, 413, 415),
                },
            },
            "get": {
                "operationId": "listSpecialEvents",
                "summary": "List special events",
                "description": (
                    "Lists the events with at least one date between `startDate` and "
                    "`endDate` (inclusive), ordered by their first date in that window, "
                    "then by name. Cancelled events are not listed."
                ),
                "tags": ["Events"],
                "parameters": [
                    {"$ref": "#/components/parameters/StartDate"},
                    {"$ref": "#/components/parameters/EndDate"},
                    {"$ref": "#/components/parameters/Page"},
                    {"$ref": "#/components/parameters/Limit"},
                ],
                "responses": {
                    "200": _response(
                        "One page of events.", "application/json",
                        {"$ref": _SCHEMAS + "SpecialEventList"}, [_EVENT_EXAMPLE],
                        {"X-Total-Count": {"$ref": "#/components/headers/XTotalCount"},
                         "Link": {"$ref": "#/components/headers/Link"}}),
                    **_errors(),
                },
            },
        },
        "/special-events/{eventId}": {
            "parameters": [{"$ref": "#/components/parameters/EventId"}],
            "get": {
                "operationId": "getSpecialEvent",
                "summary": "Get a special event",
                "tags": ["Events"],
                "responses": {
                    "200": {"$ref": "#/components/responses/SpecialEvent"},
                    **_errors(404),
                },
            },
            "patch": {
                "operationId": "updateSpecialEvent",
                "summary": "Update a special event",
                "description": (
                    f"{_ADMIN_ONLY} Changes only the fields given; `{{}}` changes nothing. "
                    "Each field follows the same rules as on creation. The body is a JSON "
                    "merge patch (RFC 7396) without nulls, so it may also be sent as "
                    "`application/merge-patch+json`; only `\"capacity\": null` removes "
                    "the capacity (unlimited again). Dates for which tickets were sold "
                    "cannot be removed (409); cancel the event instead. A `capacity` below "
                    "the tickets already sold for one of its dates is refused too (409)."
                ),
                "tags": ["Events"],
                # One media type: several for one body defeat some client generators.
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {"$ref": _SCHEMAS + "SpecialEventUpdate"},
                            "example": {"price": 30, "dates": ["2027-10-30"]},
                        },
                    },
                },
                "responses": {
                    "200": {"$ref": "#/components/responses/SpecialEvent"},
                    **_errors(403, 404, 413, 415, names={409: "EventChangeRefused"}),
                },
            },
            "delete": {
                "operationId": "deleteSpecialEvent",
                "summary": "Cancel a special event",
                "description": (
                    f"{_ADMIN_ONLY} The event is no longer listed or found, and its "
                    "tickets' codes answer 410 Gone."
                ),
                "tags": ["Events"],
                "responses": {
                    "204": {"description": "The event was cancelled."},
                    **_errors(403, 404),
                },
            },
        },
        "/tickets": {
            "post": {
                "operationId": "buyMuseumTickets",
                "summary": "Buy a museum ticket",
                "description": (
                    "Buys a general admission ticket, or a ticket for one date of a "
                    "special event. The date must be an open day, not before today nor "
                    f"more than {SALE_HORIZON_DAYS} days ahead, and for an event one of its "
                    "dates. Repeating a request with the same "
                    "`Idempotency-Key` and body buys nothing new: it answers the ticket "
                    "bought first, before any rule on the date or the hours is checked "
                    "again, so a retry after midnight still gets it, and a retry after the "
                    "day sold out too. The same key with a different body is a conflict. "
                    "A sale past a capacity (the day's general entry, `[capacity]` in the "
                    "server's configuration, or the event's `capacity` on that date) is "
                    "refused with 409 and `\"reason\": \"sold-out\"`, naming the `date` "
                    "and, for an event, its `eventId`; nothing is sold then. With timed "
                    "entry (`[hours] slot_minutes`), a general ticket names its `entryTime`, "
                    "one of the day's slots (see the availability), and a full slot "
                    "(`[capacity] general_per_slot`) is sold out naming the `entryTime`."
                ),
                "tags": ["Tickets"],
                "parameters": [{"$ref": "#/components/parameters/IdempotencyKey"}],
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {"$ref": _SCHEMAS + "BuyTicketRequest"},
                            "examples": {
                                "general": {
                                    "summary": "General admission",
                                    "value": {
                                        "ticketType": "general",
                                        "ticketDate": "2027-10-29",
                                        "email": "visitor@example.com",
                                    },
                                },
                                "event": {
                                    "summary": "Event ticket",
                                    "value": {
                                        "ticketType": "event",
                                        "ticketDate": "2027-10-30",
                                        "email": "visitor@example.com",
                                        "phone": "+1 555-0100",
                                        "eventId": _EVENT_ID_EXAMPLE,
                                    },
                                },
                            },
                        }
                    },
                },
                "responses": {
                    "201": _response(
                        "The ticket was bought.", "application/json",
                        {"$ref": _SCHEMAS + "TicketPurchase"},
                        {"message": "Museum special event ticket purchased",
                         "ticketId": _TICKET_ID_EXAMPLE, "ticketType": "event",
                         "ticketDate": "2027-10-30",
                         "confirmationCode": "ticket-event-a1b2c3-d4e5f",
                         "price": 25, "currency": "EUR",
                         "eventName": "Pirate Coding Workshop", "eventId": _EVENT_ID_EXAMPLE},
                        _CREATED),
                    **_errors(404, 413, 415, names={409: "PurchaseConflict"}),
                },
            },
            "get": {
                "operationId": "listEventTickets",
                "summary": "List an event's buyers",
                "description": (
                    f"{_ADMIN_ONLY} The tickets of one event (a cancelled one too), with "
                    "their buyers' email and phone, to tell them of a cancellation or a "
                    "change: by date, then in the order they were sold, in pages like the "
                    "event listing."
                ),
                "tags": ["Tickets"],
                "parameters": [
                    {"name": "eventId", "in": "query", "required": True,
                     "description": "The event.", "schema": {"type": "string", "format": "uuid"},
                     "example": _EVENT_ID_EXAMPLE},
                    {"name": "date", "in": "query", "required": False,
                     "description": "Only the tickets for this date.",
                     "schema": {"$ref": _SCHEMAS + "Date"}, "example": "2027-10-30"},
                    {"$ref": "#/components/parameters/Page"},
                    {"$ref": "#/components/parameters/Limit"},
                ],
                "responses": {
                    "200": _response(
                        "One page of tickets.", "application/json",
                        {"type": "array", "maxItems": PAGE_SIZE_MAX,
                         "items": {"$ref": _SCHEMAS + "Ticket"}},
                        [{"ticketId": _TICKET_ID_EXAMPLE, "ticketType": "event",
                          "ticketDate": "2027-10-30",
                          "confirmationCode": "ticket-event-a1b2c3-d4e5f", "price": 25,
                          "currency": "EUR", "status": "valid", "eventId": _EVENT_ID_EXAMPLE,
                          "eventName": "Pirate Coding Workshop",
                          "email": "visitor@example.com"}],
                        {"X-Total-Count": {"$ref": "#/components/headers/XTotalCount"},
                         "Link": {"$ref": "#/components/headers/Link"}}),
                    **_errors(403, 404),
                },
            },
        },
        "/admissions": {
            "post": {
                "operationId": "admitTicket",
                "summary": "Admit a ticket at the door",
                "description": (
                    f"{_GATE_OR_ADMIN} The ticket is presented by the text of its QR code "
                    "or by its typed confirmation code. A ticket is admitted once, on its "
                    "date; otherwise the answer is a problem whose `result` says why: "
                    + ", ".join(f"`{result}` ({status})"
                                for result, (status, _) in DOOR_OUTCOMES.items())
                    + ". Malformed QR text is `forged` too."
                ),
                "tags": ["Door"],
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {"$ref": _SCHEMAS + "AdmissionRequest"},
                            "examples": {
                                "scanned": {
                                    "summary": "The scanned QR code",
                                    "value": {"code": qr_text("example secret",
                                                              _TICKET_ID_EXAMPLE,
                                                              _CODE_EXAMPLE)},
                                },
                                "typed": {
                                    "summary": "The confirmation code, typed",
                                    "value": {"confirmationCode": _CODE_EXAMPLE},
                                },
                            },
                        }
                    },
                },
                "responses": {
                    "201": _response(
                        "The ticket was admitted.", "application/json",
                        {"$ref": _SCHEMAS + "Admission"},
                        {"result": "admitted", **_DOOR_TICKET_EXAMPLE, **_ADMITTED_EXAMPLE}),
                    **_errors(413, 415, names={
                        403: "NeedsGateRole", 404: "UnknownTicket", 409: "NotAdmittable",
                        410: "DeadTicket", 422: "ForgedTicket"}),
                },
            }
        },
        "/admissions/summary": {
            "get": {
                "operationId": "getAdmissionSummary",
                "summary": "Count the day's tickets sold and admitted",
                "description": (
                    f"{_GATE_OR_ADMIN} Tickets sold and admitted for one day, by kind, by "
                    "event and by the device (user) that admitted them."
                ),
                "tags": ["Door"],
                "parameters": [{
                    "name": "date",
                    "in": "query",
                    "required": False,
                    "description": "The day to count; defaults to today at the museum.",
                    "schema": {"$ref": _SCHEMAS + "Date"},
                    "example": "2027-10-30",
                }],
                "responses": {
                    "200": _response(
                        "The day's counts.", "application/json",
                        {"$ref": _SCHEMAS + "AdmissionSummary"},
                        {"date": "2027-10-30", "sold": {"general": 120, "event": 35},
                         "admitted": {"general": 87, "event": 30},
                         "events": [{"eventId": _EVENT_ID_EXAMPLE,
                                     "name": "Pirate Coding Workshop", "sold": 35,
                                     "admitted": 30}],
                         "devices": [{"name": "door-north", "admitted": 70},
                                     {"name": "door-south", "admitted": 47}]}),
                    **_errors(names={403: "NeedsGateRole"}),
                },
            }
        },
        "/admissions/lookup": {
            "post": {
                "operationId": "lookupTickets",
                "summary": "Find a visitor's lost ticket",
                "description": (
                    f"{_GATE_OR_ADMIN} Finds the tickets of one day (today at the museum "
                    "unless `date` is given) by the buyer's email address, the whole address "
                    "with ASCII letters in any case, or by the confirmation code, whole or "
                    "only its random part (`792d82-891fc`), in any case. The email is sent "
                    "in the body so that no URL or log holds it. At most "
                    f"{LOOKUP_LIMIT} tickets, ordered by code; never the buyer's email or "
                    f"phone. Every lookup counts toward the limit of {TypedCodeLimit.LIMIT} "
                    f"unknown codes or lookups per user within {TypedCodeLimit.WINDOW} s "
                    "(then 429)."
                ),
                "tags": ["Door"],
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {"$ref": _SCHEMAS + "LookupRequest"},
                            "examples": {
                                "email": {
                                    "summary": "By the buyer's email address",
                                    "value": {"email": "visitor@example.com"},
                                },
                                "code": {
                                    "summary": "By the random part of the code, on a day",
                                    "value": {"code": "3fa85f-64571", "date": "2027-10-29"},
                                },
                            },
                        }
                    },
                },
                "responses": {
                    "200": _response(
                        "The tickets found (none: an empty list).", "application/json",
                        {"$ref": _SCHEMAS + "LookupResult"}, _LOOKUP_EXAMPLE),
                    **_errors(413, 415, names={403: "NeedsGateRole"}),
                },
            }
        },
        "/admissions/{ticketId}": {
            "get": {
                "operationId": "getAdmissionHistory",
                "summary": "Get a ticket's admission history",
                "description": (
                    f"{_GATE_OR_ADMIN} Whether the ticket is admitted now, and every "
                    "admission and undo of it, oldest first."
                ),
                "tags": ["Door"],
                "parameters": [{"$ref": "#/components/parameters/TicketId"}],
                "responses": {
                    "200": _response(
                        "The ticket's admissions.", "application/json",
                        {"$ref": _SCHEMAS + "AdmissionHistory"},
                        {"ticketId": _TICKET_ID_EXAMPLE, "admitted": True,
                         "admittedAt": "2027-10-29T09:20:41Z", "admittedBy": "door-south",
                         "history": [
                             {"action": "admitted", "at": "2027-10-29T09:14:05Z",
                              "by": "door-north"},
                             {"action": "undone", "at": "2027-10-29T09:15:12Z",
                              "by": "door-north"},
                             {"action": "admitted", "at": "2027-10-29T09:20:41Z",
                              "by": "door-south"}]}),
                    **_errors(404, names={403: "NeedsGateRole"}),
                },
            },
            "delete": {
                "operationId": "undoAdmission",
                "summary": "Undo an admission",
                "description": (
                    f"{_GATE_OR_ADMIN} For an admission made by mistake: the ticket may be "
                    f"admitted again. A gate may undo only the admissions it made (as the "
                    f"same user or device), within {_UNDO_MINUTES} minutes; an admin any "
                    "admission at any time. The undo is kept in the ticket's admission "
                    "history."
                ),
                "tags": ["Door"],
                "parameters": [{"$ref": "#/components/parameters/TicketId"}],
                "responses": {
                    "204": {"description": "The admission was undone."},
                    **_errors(names={403: "UndoNotAllowed", 404: "NotAdmitted"}),
                },
            },
        },
        "/availability": {
            "get": {
                "operationId": "getAvailability",
                "summary": "Places left each day",
                "description": (
                    "For each day from `startDate` (default today) to `endDate` (default "
                    f"{AVAILABILITY_DAYS_DEFAULT - 1} days later; at most "
                    f"{AVAILABILITY_DAYS_MAX} days in all): whether the museum is open, the "
                    "general entry places (`null` when closed) and each event taking place "
                    "that day, with their capacity, the tickets sold (void ones give their "
                    "place back) and the places left; `capacity` and `available` are `null` "
                    "when unlimited. With timed entry, each day's entry `slots` too."
                ),
                "tags": ["Tickets"],
                "parameters": [
                    {"$ref": "#/components/parameters/StartDate"},
                    {"name": "endDate", "in": "query", "required": False,
                     "description": (
                         f"Last day to include; defaults to {AVAILABILITY_DAYS_DEFAULT - 1} "
                         f"days after `startDate`, at most {AVAILABILITY_DAYS_MAX - 1} days "
                         "after it."),
                     "schema": {"$ref": _SCHEMAS + "Date"}, "example": "2027-10-31"},
                ],
                "responses": {
                    "200": _response(
                        "One entry per day.", "application/json",
                        {"type": "array", "maxItems": AVAILABILITY_DAYS_MAX,
                         "items": {"$ref": _SCHEMAS + "DayAvailability"}},
                        [{"date": "2027-10-28", "open": False, "general": None, "events": []},
                         {"date": "2027-10-29", "open": True,
                          "general": {"capacity": 500, "sold": 120, "available": 380},
                          "events": [{"eventId": _EVENT_ID_EXAMPLE,
                                      "name": "Pirate Coding Workshop", "capacity": 20,
                                      "sold": 20, "available": 0}]}]),
                    **_errors(),
                },
            }
        },
        "/reports/sales": {
            "get": {
                "operationId": "getSalesReport",
                "summary": "The sales report",
                "description": (
                    f"{_ADMIN_ONLY} For each day from `startDate` to `endDate` (both default "
                    f"to today; at most {REPORT_DAYS_MAX} days), general entry and then each "
                    "event by name: the tickets sold for that day (void ones too), those "
                    "voided, those admitted, and the revenue (the prices of those not void), "
                    "per currency they were sold in. Days without tickets are left out. "
                    "With `Accept: text/csv` the same rows come as CSV, with a header "
                    "line; a cell that begins with `=`, `+`, `-`, `@`, a tab or a carriage "
                    "return is prefixed with `'` so that no spreadsheet runs it."
                ),
                "tags": ["Reports"],
                "parameters": [
                    {"name": "startDate", "in": "query", "required": False,
                     "description": "First day; defaults to today at the museum.",
                     "schema": {"$ref": _SCHEMAS + "Date"}, "example": "2027-10-01"},
                    {"name": "endDate", "in": "query", "required": False,
                     "description": (
                         f"Last day; defaults to `startDate`, at most {REPORT_DAYS_MAX - 1} "
                         "days after it."),
                     "schema": {"$ref": _SCHEMAS + "Date"}, "example": "2027-10-31"},
                ],
                "responses": {
                    "200": {
                        "description": "The report's rows.",
                        "headers": {"Cache-Control": _NO_STORE},
                        "content": {
                            "application/json": {
                                "schema": {"type": "array",
                                           "items": {"$ref": _SCHEMAS + "SalesRow"}},
                                "example": [_SALES_ROW_EXAMPLE],
                            },
                            "text/csv": {
                                "schema": {"type": "string"},
                                "example": (
                                    ",".join(REPORT_COLUMNS) + "\r\n" + ",".join(
                                        str(_SALES_ROW_EXAMPLE[name])
                                        for name in REPORT_COLUMNS) + "\r\n"),
                            },
                        },
                    },
                    **_errors(403),
                },
            }
        },
        "/tickets/{ticketId}": {
            "parameters": [{"$ref": "#/components/parameters/TicketId"}],
            "get": {
                "operationId": "getTicket",
                "summary": "Read a ticket",
                "description": (
                    f"{_GATE_OR_ADMIN} The ticket as sold, its `status` and its admission; "
                    f"the {ADMIN_ROLE} role also sees the buyer's `email` and `phone` "
                    "until they are erased."
                ),
                "tags": ["Tickets"],
                "responses": {
                    "200": _response(
                        "The ticket.", "application/json", {"$ref": _SCHEMAS + "Ticket"},
                        {"ticketId": _TICKET_ID_EXAMPLE, "ticketType": "event",
                         "ticketDate": "2027-10-30",
                         "confirmationCode": "ticket-event-a1b2c3-d4e5f", "price": 25,
                         "currency": "EUR", "status": "admitted", "eventId": _EVENT_ID_EXAMPLE,
                         "eventName": "Pirate Coding Workshop", **_ADMITTED_EXAMPLE,
                         "email": "visitor@example.com", "phone": "+1 555-0100"}),
                    **_errors(404, names={403: "NeedsGateRole"}),
                },
            },
            "delete": {
                "operationId": "voidTicket",
                "summary": "Void a ticket",
                "description": (
                    f"{_ADMIN_ONLY} A refund at the desk: the ticket's place is free again "
                    "at once, its image answers 410 and the door refuses it (`void`). It "
                    "stays stored, reads as `status: void` and is counted in the sales "
                    "report. Voiding a void ticket answers 204 again."
                ),
                "tags": ["Tickets"],
                "responses": {
                    "204": {"description": "The ticket is void."},
                    **_errors(403, 404),
                },
            },
        },
        "/tickets/{ticketId}/qr": {
            "get": {
                "operationId": "getTicketCode",
                "summary": "Get a ticket's scannable code",
                "description": (
                    "Returns the ticket's QR code as a PNG image, sent as `image/png`. "
                    "`application/octet-stream` is listed too, for client generators that "
                    "hand back the bytes of that type only."
                ),
                "tags": ["Tickets"],
                "parameters": [
                    {"$ref": "#/components/parameters/TicketId"},
                    {"$ref": "#/components/parameters/IfNoneMatch"},
                ],
                "responses": {
                    "200": {
                        "description": "The code as a PNG image.",
                        "headers": {
                            "ETag": {"$ref": "#/components/headers/ETag"},
                            "Cache-Control": {"$ref": "#/components/headers/CacheControlPrivate"},
                        },
                        "content": {
                            "image/png": _PNG,
                            "application/octet-stream": _PNG,
                        },
                    },
                    "304": {
                        "description": "`If-None-Match` matched: the cached image is current.",
                        "headers": {"ETag": {"$ref": "#/components/headers/ETag"}},
                    },
                    **_errors(404, 410),
                },
            }
        },
        "/openapi.json": {
            "get": {
                "operationId": "getOpenApiDescription",
                "summary": "Get this OpenAPI description",
                "description": "Needs no credentials.",
                "tags": ["Description"],
                "security": [],
                "responses": {
                    "200": _response(
                        "This document.", "application/json", {"type": "object"},
                        {"openapi": "3.1.0",
                         "info": {"title": "Museum API", "version": INTERFACE_VERSION}}),
                    "431": {"$ref": "#/components/responses/RequestHeaderFieldsTooLarge"},
                },
            }
        },
    },
    "components": {
        "securitySchemes": {
            "MuseumPlaceholderAuth": {
                "type": "http",
                "scheme": "basic",
                "description": (
                    "Credentials of a user configured on the server. Each user has one "
                    f"role: {', '.join(ROLES)}; each role may do all that the ones before "
                    "it may."
                ),
            }
        },
        "parameters": {
            "StartDate": {
                "name": "startDate",
                "in": "query",
                "required": False,
                "description": "First date to include; defaults to today at the museum.",
                "schema": {"$ref": _SCHEMAS + "Date"},
                "example": "2027-10-29",
            },
            "EndDate": {
                "name": "endDate",
                "in": "query",
                "required": False,
                "description": "Last date to include. Without it the range is open-ended.",
                "schema": {"$ref": _SCHEMAS + "Date"},
                "example": "2030-11-30",
            },
            "Page": {
                "name": "page",
                "in": "query",
                "required": False,
                "description": "Page number, from 1; a page past the end is empty.",
                "schema": {"type": "integer", "minimum": 1, "maximum": PAGE_MAX, "default": 1},
            },
            "Limit": {
                "name": "limit",
                "in": "query",
                "required": False,
                "description": "Items per page.",
                "schema": {"type": "integer", "minimum": 1, "maximum": PAGE_SIZE_MAX,
                           "default": PAGE_SIZE_DEFAULT},
            },
            "EventId": {
                "name": "eventId",
                "in": "path",
                "required": True,
                "description": "The event's id.",
                "schema": {"type": "string", "format": "uuid"},
                "example": _EVENT_ID_EXAMPLE,
            },
            "TicketId": {
                "name": "ticketId",
                "in": "path",
                "required": True,
                "description": "The ticket's id.",
                "schema": {"type": "string", "format": "uuid"},
                "example": _TICKET_ID_EXAMPLE,
            },
            "IdempotencyKey": {
                "name": "Idempotency-Key",
                "in": "header",
                "required": False,
                "description": "Client-chosen key that makes retrying a purchase safe.",
                "schema": {"type": "string", "pattern": _anchored(IDEMPOTENCY_KEY)},
                "example": "order-2027-10-29-0001",
            },
            "IfNoneMatch": {
                "name": "If-None-Match",
                "in": "header",
                "required": False,
                "description": (
                    "An earlier response's `ETag` (or a list of them, or `*`); while one "
                    "matches, the answer is 304. An empty list matches nothing."
                ),
                "schema": {"type": "string"},
                "example": '"5d41402abc4b2a76"',
            },
        },
        "headers": {
            "CacheControlNoStore": {
                "description": "JSON responses are never cached.",
                "required": True,
                "schema": {"type": "string", "const": "no-store"},
            },
            "CacheControlPrivate": {
                "description": "The image may be kept by the client for a day.",
                "required": True,
                "schema": {"type": "string", "const": "private, max-age=86400"},
            },
            "Location": {
                "description": "The new resource; for a ticket `/v1.1/tickets/{ticketId}/qr`.",
                "required": True,
                "schema": {"type": "string", "format": "uri-reference"},
                "example": "/v1.1/special-events/" + _EVENT_ID_EXAMPLE,
            },
            "XTotalCount": {
                "description": "How many items match across all pages.",
                "required": True,
                "schema": {"type": "integer", "minimum": 0},
                "example": 42,
            },
            "Link": {
                "description": "RFC 8288 links to the `next` and `prev` pages, when there are any.",
                "required": False,
                "schema": {"type": "string"},
                "example": '<http://127.0.0.1:8080/v1.1/special-events?limit=10&page=3>; '
                'rel="next", <http://127.0.0.1:8080/v1.1/special-events?limit=10&page=1>; '
                'rel="prev"',
            },
            "ETag": {
                "description": "Strong validator of the image, for `If-None-Match`.",
                "required": True,
                "schema": {"type": "string"},
                "example": '"5d41402abc4b2a76"',
            },
            "WWWAuthenticate": {
                "description": "The authentication challenge.",
                "required": True,
                "schema": {"type": "string"},
                "example": 'Basic realm="museum", charset="UTF-8"',
            },
            "RetryAfter": {
                "description": "Seconds to wait before trying again.",
                "required": True,
                "schema": {"type": "integer", "minimum": 0},
                "example": 30,
            },
        },
        "schemas": {
            "Date": {
                "type": "string",
                "format": "date",
                "pattern": _anchored(DATE),
                "examples": ["2027-10-29"],
            },
            "Time": {
                "type": "string",
                "description": "Local time in the museum's time zone, 24-hour clock.",
                "pattern": r"^\d{2}:\d{2}$",
                "examples": ["09:00"],
            },
            "MuseumDailyHours": {
                "type": "object",
                "required": ["date", "timeOpen", "timeClose"],
                "properties": {
                    "date": {"$ref": _SCHEMAS + "Date"},
                    "timeOpen": {"$ref": _SCHEMAS + "Time"},
                    "timeClose": {"$ref": _SCHEMAS + "Time"},
                },
            },
            "MuseumHours": {
                "type": "array",
                "maxItems": PAGE_SIZE_MAX,
                "items": {"$ref": _SCHEMAS + "MuseumDailyHours"},
            },
            "EventName": _trimmed_text(NAME_MAX),
            "EventLocation": _trimmed_text(NAME_MAX),
            "EventDescription": _trimmed_text(DESCRIPTION_MAX),
            "EventDates": {
                "type": "array",
                "description": "The event's days; returned sorted, without duplicates.",
                "minItems": 1,
                "maxItems": EVENT_DATES_MAX,
                "items": {"$ref": _SCHEMAS + "Date"},
            },
            "EventPrice": {
                "type": "number",
                "description": (
                    "Price of one event ticket in the museum's currency, with at most 2 "
                    "decimals (more is refused, 400); kept exactly. A ticket keeps the "
                    "price it was sold at when the event's price changes later."
                ),
                "minimum": 0,
                "maximum": PRICE_MAX,
            },
            "TicketPrice": {
                "type": ["number", "null"],
                "description": (
                    "What the ticket was sold at: the event's price then, or the museum's "
                    "general entry price; null for tickets sold before prices were kept."
                ),
                "minimum": 0,
                "maximum": PRICE_MAX,
                "examples": [25],
            },
            "Currency": {
                "type": ["string", "null"],
                "description": (
                    "ISO 4217 code of the currency of `price`; null when `price` is."
                ),
                "pattern": _anchored(CURRENCY),
                "examples": ["EUR"],
            },
            "EventCapacity": {
                "type": "integer",
                "description": (
                    "Places on each of the event's dates; without it, unlimited. Returned "
                    "only when set."
                ),
                "minimum": 1,
                "maximum": CAPACITY_MAX,
            },
            "SpecialEventCreate": {
                "type": "object",
                "required": list(EVENT_REQUIRED),
                "properties": _EVENT_FIELDS,
                "additionalProperties": False,
            },
            "SpecialEventUpdate": {
                "type": "object",
                "description": "Any subset of the event's fields; other fields are rejected.",
                "properties": {**_EVENT_FIELDS, "capacity": {
                    "oneOf": [{"$ref": _SCHEMAS + "EventCapacity"}, {"type": "null"}],
                    "description": "`null` removes the capacity: unlimited again."}},
                "additionalProperties": False,
            },
            "SpecialEvent": {
                "type": "object",
                "required": ["eventId", "name", "location", "eventDescription", "dates", "price"],
                "properties": {"eventId": {"type": "string", "format": "uuid"}, **_EVENT_FIELDS},
            },
            "SpecialEventList": {
                "type": "array",
                "maxItems": PAGE_SIZE_MAX,
                "items": {"$ref": _SCHEMAS + "SpecialEvent"},
            },
            "TicketType": {"type": "string", "enum": list(TICKET_TYPES)},
            "BuyTicketRequest": {
                "type": "object",
                "description": "`eventId` is required for event tickets, refused for general ones.",
                "required": ["ticketType", "ticketDate", "email"],
                "properties": {
                    "ticketType": {"$ref": _SCHEMAS + "TicketType"},
                    "ticketDate": {
                        "$ref": _SCHEMAS + "Date",
                        "description": "The day of the visit: an open day, not before today.",
                    },
                    "email": {"type": "string", "format": "email", "maxLength": EMAIL_MAX},
                    "phone": {
                        "type": "string",
                        "description": "At least 7 of its characters are digits.",
                        "pattern": _anchored(PHONE),
                    },
                    "eventId": {"type": "string", "format": "uuid"},
                    "entryTime": {"$ref": _SCHEMAS + "EntryTime"},
                },
                "additionalProperties": False,
                "if": {
                    "properties": {"ticketType": {"const": "event"}},
                    "required": ["ticketType"],
                },
                "then": {"required": ["eventId"]},
                "else": {"not": {"required": ["eventId"]}},
            },
            "TicketPurchase": {
                "type": "object",
                "required": ["message", "ticketId", "ticketType", "ticketDate", "confirmationCode",
                             "price", "currency"],
                "properties": {
                    "message": {"type": "string"},
                    **_TICKET_FIELDS,
                    "price": {"$ref": _SCHEMAS + "TicketPrice"},
                    "currency": {"$ref": _SCHEMAS + "Currency"},
                    "eventId": {
                        "type": "string",
                        "format": "uuid",
                        "description": "Only on event tickets.",
                    },
                },
            },
            "Ticket": {
                "type": "object",
                "required": [*TICKET_VIEW_FIELDS, "status"],
                "properties": {
                    **_TICKET_FIELDS,
                    "price": {"$ref": _SCHEMAS + "TicketPrice"},
                    "currency": {"$ref": _SCHEMAS + "Currency"},
                    "status": {
                        "type": "string", "enum": list(TICKET_STATUSES),
                        "description": (
                            "`void` once voided, whatever else happened; `cancelled` when "
                            "its event was; `admitted` once admitted at the door."
                        ),
                    },
                    "eventId": {"type": "string", "format": "uuid",
                                "description": "Only on event tickets."},
                    **_ADMISSION_FIELDS,
                    "email": {"type": "string", "format": "email",
                              "description": f"Only for the {ADMIN_ROLE} role, until erased."},
                    "phone": {"type": "string",
                              "description": f"Only for the {ADMIN_ROLE} role, when given, "
                                             "until erased."},
                },
            },
            "EntryTime": {
                "type": "string",
                "description": (
                    "The entry slot of a general ticket when the museum has timed entry "
                    "(`[hours] slot_minutes`): one of its day's slots, every slot_minutes "
                    "from opening time, in the museum's time zone. Required then for general "
                    "tickets, refused for event tickets and without timed entry. The door "
                    "admits the ticket from `[door] early_minutes` (default 15) before it; "
                    "earlier is `too-early`."
                ),
                "pattern": _anchored(TIME_OF_DAY),
                "examples": ["10:30"],
            },
            "Places": {
                "type": "object",
                "required": ["capacity", "sold", "available"],
                "properties": {
                    "capacity": {"type": ["integer", "null"], "minimum": 1,
                                 "description": "`null`: unlimited."},
                    "sold": _COUNT,
                    "available": {"type": ["integer", "null"], "minimum": 0,
                                  "description": "`null`: unlimited."},
                },
            },
            "DayAvailability": {
                "type": "object",
                "required": ["date", "open", "general", "events"],
                "properties": {
                    "date": {"$ref": _SCHEMAS + "Date"},
                    "open": {"type": "boolean"},
                    "general": {"oneOf": [{"$ref": _SCHEMAS + "Places"}, {"type": "null"}],
                                "description": "General entry; `null` when closed."},
                    "slots": {
                        "type": "array",
                        "description": "Only with timed entry: the day's entry slots in "
                                       "order (none when closed), each with its places.",
                        "items": {"allOf": [
                            {"$ref": _SCHEMAS + "Places"},
                            {"type": "object", "required": ["time"],
                             "properties": {"time": {"$ref": _SCHEMAS + "EntryTime"}}}]},
                    },
                    "events": {
                        "type": "array",
                        "description": "The events taking place that day, by name.",
                        "items": {
                            "allOf": [
                                {"$ref": _SCHEMAS + "Places"},
                                {"type": "object", "required": ["eventId", "name"],
                                 "properties": {"eventId": {"type": "string", "format": "uuid"},
                                                "name": {"type": "string"}}},
                            ],
                        },
                    },
                },
            },
            "SalesRow": {
                "type": "object",
                "required": list(REPORT_COLUMNS),
                "properties": {
                    "date": {"$ref": _SCHEMAS + "Date"},
                    "ticketType": {"$ref": _SCHEMAS + "TicketType"},
                    "eventId": {"type": ["string", "null"], "format": "uuid",
                                "description": "`null` for general entry."},
                    "eventName": {"type": ["string", "null"],
                                  "description": "`null` for general entry."},
                    "sold": {**_COUNT, "description": "Tickets sold, void ones too."},
                    "void": {**_COUNT, "description": "Of those, voided."},
                    "admitted": {**_COUNT, "description": "Of those, admitted at the door."},
                    "revenue": {"type": "number", "minimum": 0,
                                "description": "The prices of the tickets not void."},
                    "currency": {"$ref": _SCHEMAS + "Currency"},
                },
            },
            "ConfirmationCode": {
                "type": "string",
                "pattern": _anchored(CONFIRMATION_CODE),
                "examples": [_CODE_EXAMPLE],
            },
            "AdmissionRequest": {
                "type": "object",
                "description": "Exactly one of the two fields.",
                "minProperties": 1,
                "maxProperties": 1,
                "properties": {
                    "code": _trimmed_text(
                        QR_TEXT_LIMIT, "The text of the ticket's QR code, as scanned. "),
                    "confirmationCode": _trimmed_text(
                        TYPED_CODE_LIMIT, "The confirmation code printed on the ticket, as "
                        "typed; letter case does not matter. "),
                },
                "additionalProperties": False,
            },
            "Admission": {
                "type": "object",
                "required": ["result", *DOOR_FIELDS, *_ADMISSION_FIELDS],
                "properties": {"result": {"type": "string", "const": "admitted"},
                               **_TICKET_FIELDS, **_ADMISSION_FIELDS},
            },
            "DoorProblem": {
                "description": (
                    "Problem details with the door's `result`. Where a ticket was found "
                    "(`already-admitted`, `wrong-date`, `cancelled`, `void`) they show it, for "
                    "`already-admitted` when and by whom it was first admitted, and for "
                    "`wrong-date` whether it is `early` or `past` (the detail says its day), "
                    "for `too-early` its `entryTime` (the detail says from when it is "
                    "admitted); never the buyer's email or phone."
                ),
                # The members in a schema of their own: openapi-python-client reads an allOf
                # of one `$ref` as that schema alone and drops the members beside it.
                "allOf": [
                    {"$ref": _SCHEMAS + "Problem"},
                    {
                        "type": "object",
                        "required": ["result"],
                        "properties": {"result": {"type": "string", "enum": list(DOOR_OUTCOMES)},
                                       **_TICKET_FIELDS, **_ADMISSION_FIELDS,
                                       "when": {"type": "string", "enum": ["early", "past"],
                                                "description": "Only on `wrong-date`: the "
                                                "ticket's day is still to come, or gone."}},
                    },
                ],
            },
            "LookupRequest": {
                "type": "object",
                "description": "Exactly one of `email` and `code`; `date` defaults to today "
                               "at the museum.",
                "oneOf": [{"required": ["email"]}, {"required": ["code"]}],
                "properties": {
                    "email": {"type": "string", "format": "email", "maxLength": EMAIL_MAX,
                              "description": "The buyer's whole email address."},
                    "code": _trimmed_text(
                        TYPED_CODE_LIMIT, "A confirmation code, whole "
                        "(ticket-event-792d82-891fc) or only its random part (792d82-891fc); "
                        "letter case does not matter. "),
                    "date": {"$ref": _SCHEMAS + "Date"},
                },
                "additionalProperties": False,
            },
            "FoundTicket": {
                "type": "object",
                "required": [*DOOR_FIELDS, "status", "admitted"],
                "properties": {
                    **_TICKET_FIELDS,
                    "eventId": {"type": "string", "format": "uuid",
                                "description": "Only on event tickets."},
                    "status": {"type": "string", "enum": list(TICKET_STATUSES),
                               "description": "`cancelled`: its event was; `void`: refunded at the desk."},
                    "admitted": {"type": "boolean"},
                    **_ADMISSION_FIELDS,
                },
            },
            "LookupResult": {
                "type": "object",
                "required": ["date", "tickets"],
                "properties": {
                    "date": {"$ref": _SCHEMAS + "Date"},
                    "tickets": {"type": "array", "maxItems": LOOKUP_LIMIT,
                                "items": {"$ref": _SCHEMAS + "FoundTicket"}},
                },
            },
            "AdmissionHistory": {
                "type": "object",
                "required": ["ticketId", "admitted", "history"],
                "properties": {
                    "ticketId": {"type": "string", "format": "uuid"},
                    "admitted": {"type": "boolean", "description": "Admitted now."},
                    **_ADMISSION_FIELDS,
                    "history": {
                        "type": "array",
                        "description": "Every admission and undo, oldest first.",
                        "items": {
                            "type": "object",
                            "required": ["action", "at", "by"],
                            "properties": {
                                "action": {"type": "string", "enum": ["admitted", "undone"]},
                                "at": {"type": "string", "format": "date-time"},
                                "by": {"type": "string",
                                       "description": "The user (device) who did it."},
                            },
                        },
                    },
                },
            },
            "DoorCounts": {
                "type": "object",
                "required": list(TICKET_TYPES),
                "properties": {kind: _COUNT for kind in TICKET_TYPES},
            },
            "EventDoorCounts": {
                "type": "object",
                "required": ["eventId", "name", "sold", "admitted"],
                "properties": {"eventId": {"type": "string", "format": "uuid"},
                               "name": {"type": "string"}, "sold": _COUNT, "admitted": _COUNT},
            },
            "AdmissionSummary": {
                "type": "object",
                "description": "Cancelled events and their tickets are not counted.",
                "required": ["date", "sold", "admitted", "events", "devices"],
                "properties": {
                    "date": {"$ref": _SCHEMAS + "Date"},
                    "sold": {"$ref": _SCHEMAS + "DoorCounts",
                             "description": "Tickets for the day, by kind."},
                    "admitted": {"$ref": _SCHEMAS + "DoorCounts",
                                 "description": "Those of them admitted so far."},
                    "events": {
                        "type": "array",
                        "description": "The events with tickets for the day, by name.",
                        "items": {"$ref": _SCHEMAS + "EventDoorCounts"},
                    },
                    "devices": {
                        "type": "array",
                        "description": "Each entrance: the users (devices) that admitted "
                                       "the day's tickets, by name, with how many each "
                                       "admitted (of those not undone).",
                        "items": {"type": "object", "required": ["name", "admitted"],
                                  "properties": {"name": {"type": "string"},
                                                 "admitted": _COUNT}},
                    },
                },
            },
            "Problem": {
                "type": "object",
                "description": "RFC 9457 problem details.",
                "required": ["type", "title", "status", "detail"],
                "properties": {
                    "type": {"type": "string", "const": "about:blank"},
                    "title": {"type": "string", "description": "The HTTP status phrase."},
                    "status": {"type": "integer", "minimum": 400, "maximum": 599},
                    "detail": {"type": "string"},
                    "errors": {
                        "type": "array",
                        "description": "Only when fields are at fault: one entry per field.",
                        "minItems": 1,
                        "items": {"$ref": _SCHEMAS + "FieldError"},
                    },
                },
            },
            "PurchaseProblem": {
                "description": (
                    "Problem details; a sale refused for want of places has `reason` "
                    "`sold-out` and names what is full."
                ),
                "allOf": [
                    {"$ref": _SCHEMAS + "Problem"},
                    {
                        "type": "object",
                        "properties": {
                            "reason": {"type": "string", "const": "sold-out"},
                            "date": {"$ref": _SCHEMAS + "Date"},
                            "eventId": {"type": "string", "format": "uuid",
                                        "description": "Only when an event date is full."},
                            "entryTime": {"$ref": _SCHEMAS + "EntryTime",
                                          "description": "Only when an entry slot is full."},
                        },
                    },
                ],
            },
            "FieldError": {
                "type": "object",
                "required": ["field", "message"],
                "properties": {"field": {"type": "string"}, "message": {"type": "string"}},
            },
        },
        "responses": {
            "SpecialEvent": _response("The event.", "application/json",
                                      {"$ref": _SCHEMAS + "SpecialEvent"}, _EVENT_EXAMPLE),
            # Each example detail is the service's own; tests/test_openapi_examples.py
            # provokes each case and compares.
            "BadRequest": _problem(
                400, "The request is invalid; `errors` names every bad field. Malformed "
                "framing gets the HTTP server's text/plain answer instead.",
                "A query parameter is not valid; see errors.",
                errors=[{"field": "limit",
                         "message": f"must be a whole number from 1 to {PAGE_SIZE_MAX}"}],
                server_text=True),
            "Unauthorized": _problem(
                401, "Credentials are missing or wrong.", "Valid credentials are required.",
                headers={"WWW-Authenticate": {"$ref": "#/components/headers/WWWAuthenticate"}}),
            "Forbidden": _problem(
                403, f"The credentials are valid but lack the {ADMIN_ROLE} role.",
                f"This needs the {ADMIN_ROLE} role."),
            "NeedsGateRole": _problem(
                403, f"The credentials are valid but lack the {GATE_ROLE} role.",
                f"This needs the {GATE_ROLE} role."),
            "NotFound": _problem(
                404, "The event or ticket does not exist, or the event was cancelled.",
                "No such record (it may have been cancelled)."),
            "UndoNotAllowed": _problem(
                403, f"A gate undoing another user's admission, or its own after "
                f"{_UNDO_MINUTES} minutes (an admin may); or credentials without the "
                f"{GATE_ROLE} role.", UNDO_RULE),
            "NotAdmitted": _problem(
                404, "The ticket has not been admitted, or does not exist.",
                "This ticket has not been admitted."),
            "UnknownTicket": _door_problem(
                "No ticket was sold with this genuine QR code or typed confirmation code.",
                "unknown"),
            "PurchaseConflict": _named_problems(
                "The `Idempotency-Key` was used before with a different body, or the "
                "ticket's day or event date is sold out; nothing was sold.",
                "PurchaseProblem", {
                    "key-reused": _problem_body(
                        409, "This Idempotency-Key was already used with a different request."),
                    "sold-out": _problem_body(
                        409, "Sold out: no places are left for this event on 2027-10-30.",
                        reason="sold-out", date="2027-10-30", eventId=_EVENT_ID_EXAMPLE),
                }),
            "EventChangeRefused": _named_problems(
                "The new dates leave out dates for which tickets were sold, or the new "
                "capacity is below the tickets sold for a date; nothing was changed. "
                "`errors` names each such date.", "Problem", {
                    "dates-sold": _problem_body(
                        409, "Tickets were sold for dates this change removes: 2027-10-31 "
                        "(2 sold). Keep those dates, or cancel the event.",
                        errors=[{"field": "dates",
                                 "message": "must keep 2027-10-31: 2 ticket(s) sold for it"}]),
                    "capacity-below-sold": _problem_body(
                        409, "More tickets were sold than this capacity allows: 2027-10-31 "
                        "(2 sold). Keep a capacity of at least the tickets sold.",
                        errors=[{"field": "capacity", "message": "must be at least 2: 2 "
                                 "ticket(s) sold for 2027-10-31"}]),
                }),
            "NotAdmittable": _door_problem(
                "The ticket was admitted before (and when, by whom), is for another day, or "
                "its entry time has not come.", "already-admitted", "wrong-date", "too-early"),
            "DeadTicket": _door_problem("The ticket's event was cancelled, or the ticket was "
                                        "voided.", "cancelled", "void"),
            "ForgedTicket": _door_problem(
                "The QR text is not one this museum made, or is not a ticket's at all.",
                "forged"),
            "Gone": _named_problems(
                "The ticket's event was cancelled, or the ticket was voided.", "Problem", {
                    "cancelled": _problem_body(410, DOOR_OUTCOMES["cancelled"][1]),
                    "void": _problem_body(410, DOOR_OUTCOMES["void"][1]),
                }),
            "ContentTooLarge": _problem(
                413, f"The body is larger than {BODY_LIMIT} bytes. Bodies over the HTTP "
                "server's buffer get its text/plain answer instead.",
                f"The body is larger than {BODY_LIMIT} bytes.", server_text=True),
            "UnsupportedMediaType": _problem(
                415, "The body is not of a JSON media type.", "Send the body as application/json."),
            "TooManyRequests": _problem(
                429, "Too many wrong passwords for this user name from this address (or from "
                "this address for any name), too many logins at once for one name, or, at "
                "the door, too many unknown ticket codes or lookups from this user. "
                "Credentials verified "
                "before are never refused for failed logins.",
                "Too many failed logins; wait and retry.",
                headers={"Retry-After": {"$ref": "#/components/headers/RetryAfter"}}),
            "RequestHeaderFieldsTooLarge": {
                "description": (
                    f"The request line and headers are over {_HEADER_LIMIT} bytes (the "
                    "server's `max_request_header_size` by default); answered by the HTTP "
                    "server itself."
                ),
                "content": _SERVER_TEXT,
            },
            "ServiceUnavailable": _problem(
                503, "The database is unavailable.",
                "The database is unavailable; try again shortly.",
                headers={"Retry-After": {"$ref": "#/components/headers/RetryAfter"}}),
        },
    },
}

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
    CONFIRMATION_CODE,
    DESCRIPTION_MAX,
    EMAIL_MAX,
    EVENT_DATES_MAX,
    HOURS_HORIZON_DAYS,
    IDEMPOTENCY_KEY,
    NAME_MAX,
    PAGE_MAX,
    PAGE_SIZE_DEFAULT,
    PAGE_SIZE_MAX,
    PHONE,
    PRICE_MAX,
    TICKET_TYPES,
    __version__,
)
from museum_config import DATE, ROLES, SCHEMA

_SCHEMAS = "#/components/schemas/"
_NO_STORE = {"$ref": "#/components/headers/CacheControlNoStore"}
_CREATED = {"Location": {"$ref": "#/components/headers/Location"}}
_ADMIN_ONLY = f"Needs the {ADMIN_ROLE} role."
_HEADER_LIMIT = SCHEMA["server"]["max_request_header_size"].default
_EVENT_ID_EXAMPLE = "3f1c9a52-7d4e-4b8a-9c61-2e5f0d8b7a14"
_TICKET_ID_EXAMPLE = "a8e2d6c0-51b7-4f3e-8d92-6c4b1e0f7a35"
_EVENT_EXAMPLE = {
    "eventId": _EVENT_ID_EXAMPLE,
    "name": "Pirate Coding Workshop",
    "location": "Seven Seas Gallery",
    "eventDescription": "Learn to code like a pirate: treasure maps, loops and parrots.",
    "dates": ["2030-10-30", "2030-10-31"],
    "price": 25,
}
# The five writable fields of an event: the create and update bodies and the event itself.
_EVENT_FIELDS = {
    "name": {"$ref": _SCHEMAS + "EventName"},
    "location": {"$ref": _SCHEMAS + "EventLocation"},
    "eventDescription": {"$ref": _SCHEMAS + "EventDescription"},
    "dates": {"$ref": _SCHEMAS + "EventDates"},
    "price": {"$ref": _SCHEMAS + "EventPrice"},
}
# The names under components/responses of the error responses, by status.
_ERROR_NAMES = {
    400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound",
    409: "Conflict", 410: "Gone", 413: "ContentTooLarge", 415: "UnsupportedMediaType",
    429: "TooManyRequests", 431: "RequestHeaderFieldsTooLarge", 503: "ServiceUnavailable",
}
# What any API operation may answer: a bad parameter or request, no credentials, a locked-out
# address, headers over the server's limit, an unavailable database.
_ANY_OPERATION = (400, 401, 429, 431, 503)
# The HTTP server itself answers malformed framing (400) and bodies over its buffer (413)
# with a short text; the application never sees those requests.
_SERVER_TEXT = {"text/plain": {"schema": {"type": "string"}}}
_PNG = {"schema": {"type": "string", "format": "binary"}}


def _errors(*statuses):
    """The responses of an API operation for `statuses` and those every one may answer."""
    return {str(status): {"$ref": "#/components/responses/" + _ERROR_NAMES[status]}
            for status in sorted({*_ANY_OPERATION, *statuses})}


def _response(description, media_type, schema, example, headers=None):
    """A response with a body of `media_type`; like every JSON answer, never cached."""
    return {"description": description,
            "headers": {**(headers or {}), "Cache-Control": _NO_STORE},
            "content": {media_type: {"schema": schema, "example": example}}}


def _problem(status, description, detail, errors=None, headers=None, server_text=False):
    """A problem+json error response whose example is what the service answers."""
    example = {"type": "about:blank", "title": HTTPStatus(status).phrase, "status": status,
               "detail": detail}
    if errors:
        example["errors"] = errors
    response = _response(description, "application/problem+json",
                         {"$ref": _SCHEMAS + "Problem"}, example, headers)
    if server_text:
        response["content"].update(_SERVER_TEXT)
    return response


def _trimmed_text(max_length):
    """A string that is 1..max_length characters once trimmed of surrounding whitespace."""
    return {
        "type": "string",
        "description": f"Trimmed of surrounding whitespace, then 1-{max_length} characters.",
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
        "version": __version__,
        "license": {"name": "MIT", "identifier": "MIT"},
        "description": (
            "Opening hours, special events and tickets of the museum. Every operation "
            "except fetching this description needs HTTP Basic credentials; creating, "
            f"changing and cancelling special events needs the {ADMIN_ROLE} role. Requests "
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
                        [{"date": "2030-10-29", "timeOpen": "09:00", "timeClose": "18:00"},
                         {"date": "2030-10-30", "timeOpen": "09:00", "timeClose": "21:00"}]),
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
                    "`application/merge-patch+json`."
                ),
                "tags": ["Events"],
                # One media type: several for one body defeat some client generators.
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {"$ref": _SCHEMAS + "SpecialEventUpdate"},
                            "example": {"price": 30, "dates": ["2030-10-30"]},
                        },
                    },
                },
                "responses": {
                    "200": {"$ref": "#/components/responses/SpecialEvent"},
                    **_errors(403, 404, 413, 415),
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
                    "special event. The date must be an open day, not before today, and "
                    "for an event one of its dates. Repeating a request with the same "
                    "`Idempotency-Key` and body buys nothing new; the same key with a "
                    "different body is a conflict."
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
                                        "ticketDate": "2030-10-29",
                                        "email": "visitor@example.com",
                                    },
                                },
                                "event": {
                                    "summary": "Event ticket",
                                    "value": {
                                        "ticketType": "event",
                                        "ticketDate": "2030-10-30",
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
                         "ticketDate": "2030-10-30",
                         "confirmationCode": "ticket-event-a1b2c3-d4e5f",
                         "eventName": "Pirate Coding Workshop", "eventId": _EVENT_ID_EXAMPLE},
                        _CREATED),
                    **_errors(404, 409, 413, 415),
                },
            }
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
                         "info": {"title": "Museum API", "version": __version__}}),
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
                    f"role: {', '.join(ROLES)}."
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
                "example": "2030-10-29",
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
                "example": "order-2030-10-29-0001",
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
                "examples": ["2030-10-29"],
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
                "description": "Price of one event ticket.",
                "minimum": 0,
                "maximum": PRICE_MAX,
            },
            "SpecialEventCreate": {
                "type": "object",
                "required": ["name", "location", "eventDescription", "dates", "price"],
                "properties": _EVENT_FIELDS,
                "additionalProperties": False,
            },
            "SpecialEventUpdate": {
                "type": "object",
                "description": "Any subset of the event's fields; other fields are rejected.",
                "properties": _EVENT_FIELDS,
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
                "required": ["message", "ticketId", "ticketType", "ticketDate", "confirmationCode"],
                "properties": {
                    "message": {"type": "string"},
                    "ticketId": {"type": "string", "format": "uuid"},
                    "ticketType": {"$ref": _SCHEMAS + "TicketType"},
                    "ticketDate": {"$ref": _SCHEMAS + "Date"},
                    "confirmationCode": {
                        "type": "string",
                        "pattern": _anchored(CONFIRMATION_CODE),
                    },
                    "eventName": {"type": "string", "description": "Only on event tickets."},
                    "eventId": {
                        "type": "string",
                        "format": "uuid",
                        "description": "Only on event tickets.",
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
                        "description": "Only on validation failures: one entry per bad field.",
                        "minItems": 1,
                        "items": {"$ref": _SCHEMAS + "FieldError"},
                    },
                },
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
            "NotFound": _problem(
                404, "The event or ticket does not exist, or the event was cancelled.",
                "No such record (it may have been cancelled)."),
            "Conflict": _problem(
                409, "The `Idempotency-Key` was used before with a different body.",
                "This Idempotency-Key was already used with a different request."),
            "Gone": _problem(
                410, "The ticket's event was cancelled.",
                "The event of this ticket was cancelled."),
            "ContentTooLarge": _problem(
                413, f"The body is larger than {BODY_LIMIT} bytes. Bodies over the HTTP "
                "server's buffer get its text/plain answer instead.",
                f"The body is larger than {BODY_LIMIT} bytes.", server_text=True),
            "UnsupportedMediaType": _problem(
                415, "The body is not of a JSON media type.", "Send the body as application/json."),
            "TooManyRequests": _problem(
                429, "Too many failed logins from this address.",
                "Too many failed logins from this address; wait and retry.",
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

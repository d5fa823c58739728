"""The museum service's OpenAPI 3.1 description, kept by hand.

`DOCUMENT` is plain JSON data (dicts, lists, strings, numbers, booleans, None). It is
served at `GET /v1.1/openapi.json` and printed by `museum openapi`; paths are relative
to the server URL `/v1.1`. When the service's behaviour changes, change this file with it.
Reused pieces live under `components` and are referenced with `$ref`; the constants
below only shorten those references.
"""

_SCHEMAS = "#/components/schemas/"
_PROBLEM = {"$ref": _SCHEMAS + "Problem"}
_NO_STORE = {"$ref": "#/components/headers/CacheControlNoStore"}
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
# References to the shared problem responses, by name.
_ERROR = {
    name: {"$ref": "#/components/responses/" + name}
    for name in (
        "BadRequest", "Unauthorized", "Forbidden", "NotFound", "Conflict", "Gone",
        "ContentTooLarge", "UnsupportedMediaType", "TooManyRequests", "ServiceUnavailable",
    )
}


DOCUMENT = {
    "openapi": "3.1.0",
    "info": {
        "title": "Museum API",
        "version": "1.1.1",
        "license": {"name": "MIT", "identifier": "MIT"},
        "description": (
            "Opening hours, special events and tickets of the museum. Every operation "
            "except fetching this description needs HTTP Basic credentials; creating, "
            "changing and cancelling special events needs the admin role. Requests and "
            "responses are JSON, errors are RFC 9457 problem details "
            "(application/problem+json), and dates are ISO calendar dates in the "
            "museum's time zone. Requests that the HTTP server refuses before they reach "
            "the application (malformed framing, headers over 64 KiB, bodies over its "
            "buffer limit) get its short text/plain answer instead (400, 413, 431)."
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
                    "366 days after `startDate` are never listed, so a page past the end "
                    "is an empty array."
                ),
                "tags": ["Operations"],
                "parameters": [
                    {"$ref": "#/components/parameters/StartDate"},
                    {"$ref": "#/components/parameters/Page"},
                    {"$ref": "#/components/parameters/Limit"},
                ],
                "responses": {
                    "200": {
                        "description": "One page of open days.",
                        "headers": {"Cache-Control": _NO_STORE},
                        "content": {
                            "application/json": {
                                "schema": {"$ref": _SCHEMAS + "MuseumHours"},
                                "example": [
                                    {"date": "2030-10-29", "timeOpen": "09:00",
                                     "timeClose": "18:00"},
                                    {"date": "2030-10-30", "timeOpen": "09:00",
                                     "timeClose": "21:00"},
                                ],
                            }
                        },
                    },
                    "400": _ERROR["BadRequest"],
                    "401": _ERROR["Unauthorized"],
                    "429": _ERROR["TooManyRequests"],
                    "503": _ERROR["ServiceUnavailable"],
                },
            }
        },
        "/special-events": {
            "post": {
                "operationId": "createSpecialEvent",
                "summary": "Create a special event",
                "description": "Needs the admin role. Dates are stored sorted, without duplicates.",
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
                    "201": {
                        "description": "The event was created.",
                        "headers": {
                            "Location": {"$ref": "#/components/headers/Location"},
                            "Cache-Control": _NO_STORE,
                        },
                        "content": {
                            "application/json": {
                                "schema": {"$ref": _SCHEMAS + "SpecialEvent"},
                                "example": _EVENT_EXAMPLE,
                            }
                        },
                    },
                    "400": _ERROR["BadRequest"],
                    "401": _ERROR["Unauthorized"],
                    "403": _ERROR["Forbidden"],
                    "413": _ERROR["ContentTooLarge"],
                    "415": _ERROR["UnsupportedMediaType"],
                    "429": _ERROR["TooManyRequests"],
                    "503": _ERROR["ServiceUnavailable"],
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
                    "200": {
                        "description": "One page of events.",
                        "headers": {
                            "X-Total-Count": {"$ref": "#/components/headers/XTotalCount"},
                            "Link": {"$ref": "#/components/headers/Link"},
                            "Cache-Control": _NO_STORE,
                        },
                        "content": {
                            "application/json": {
                                "schema": {"$ref": _SCHEMAS + "SpecialEventList"},
                                "example": [_EVENT_EXAMPLE],
                            }
                        },
                    },
                    "400": _ERROR["BadRequest"],
                    "401": _ERROR["Unauthorized"],
                    "429": _ERROR["TooManyRequests"],
                    "503": _ERROR["ServiceUnavailable"],
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
                    "400": _ERROR["BadRequest"],
                    "401": _ERROR["Unauthorized"],
                    "404": _ERROR["NotFound"],
                    "429": _ERROR["TooManyRequests"],
                    "503": _ERROR["ServiceUnavailable"],
                },
            },
            "patch": {
                "operationId": "updateSpecialEvent",
                "summary": "Update a special event",
                "description": (
                    "Needs the admin role. Changes only the fields given; `{}` changes "
                    "nothing. Each field follows the same rules as on creation."
                ),
                "tags": ["Events"],
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {"$ref": _SCHEMAS + "SpecialEventUpdate"},
                            "example": {"price": 30, "dates": ["2030-10-30"]},
                        },
                        "application/merge-patch+json": {
                            "schema": {"$ref": _SCHEMAS + "SpecialEventUpdate"},
                            "example": {"location": "Pirate Cove Hall"},
                        },
                    },
                },
                "responses": {
                    "200": {"$ref": "#/components/responses/SpecialEvent"},
                    "400": _ERROR["BadRequest"],
                    "401": _ERROR["Unauthorized"],
                    "403": _ERROR["Forbidden"],
                    "404": _ERROR["NotFound"],
                    "413": _ERROR["ContentTooLarge"],
                    "415": _ERROR["UnsupportedMediaType"],
                    "429": _ERROR["TooManyRequests"],
                    "503": _ERROR["ServiceUnavailable"],
                },
            },
            "delete": {
                "operationId": "deleteSpecialEvent",
                "summary": "Cancel a special event",
                "description": (
                    "Needs the admin role. The event is no longer listed or found, and "
                    "its tickets' codes answer 410 Gone."
                ),
                "tags": ["Events"],
                "responses": {
                    "204": {"description": "The event was cancelled."},
                    "400": _ERROR["BadRequest"],
                    "401": _ERROR["Unauthorized"],
                    "403": _ERROR["Forbidden"],
                    "404": _ERROR["NotFound"],
                    "429": _ERROR["TooManyRequests"],
                    "503": _ERROR["ServiceUnavailable"],
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
                    "201": {
                        "description": "The ticket was bought.",
                        "headers": {
                            "Location": {"$ref": "#/components/headers/Location"},
                            "Cache-Control": _NO_STORE,
                        },
                        "content": {
                            "application/json": {
                                "schema": {"$ref": _SCHEMAS + "TicketPurchase"},
                                "example": {
                                    "message": "Museum special event ticket purchased",
                                    "ticketId": _TICKET_ID_EXAMPLE,
                                    "ticketType": "event",
                                    "ticketDate": "2030-10-30",
                                    "confirmationCode": "ticket-event-a1b2c3-d4e5f",
                                    "eventName": "Pirate Coding Workshop",
                                    "eventId": _EVENT_ID_EXAMPLE,
                                },
                            }
                        },
                    },
                    "400": _ERROR["BadRequest"],
                    "401": _ERROR["Unauthorized"],
                    "404": _ERROR["NotFound"],
                    "409": _ERROR["Conflict"],
                    "413": _ERROR["ContentTooLarge"],
                    "415": _ERROR["UnsupportedMediaType"],
                    "429": _ERROR["TooManyRequests"],
                    "503": _ERROR["ServiceUnavailable"],
                },
            }
        },
        "/tickets/{ticketId}/qr": {
            "get": {
                "operationId": "getTicketCode",
                "summary": "Get a ticket's scannable code",
                "description": "Returns the ticket's QR code as a PNG image.",
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
                            "image/png": {"schema": {"type": "string", "format": "binary"}}
                        },
                    },
                    "304": {
                        "description": "`If-None-Match` matched: the cached image is current.",
                        "headers": {"ETag": {"$ref": "#/components/headers/ETag"}},
                    },
                    "400": _ERROR["BadRequest"],
                    "401": _ERROR["Unauthorized"],
                    "404": _ERROR["NotFound"],
                    "410": _ERROR["Gone"],
                    "429": _ERROR["TooManyRequests"],
                    "503": _ERROR["ServiceUnavailable"],
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
                    "200": {
                        "description": "This document.",
                        "headers": {"Cache-Control": _NO_STORE},
                        "content": {
                            "application/json": {
                                "schema": {"type": "object"},
                                "example": {
                                    "openapi": "3.1.0",
                                    "info": {"title": "Museum API", "version": "1.1.1"},
                                },
                            }
                        },
                    }
                },
            }
        },
    },
    "components": {
        "securitySchemes": {
            "MuseumPlaceholderAuth": {
                "type": "http",
                "scheme": "basic",
                "description": "Placeholder user credentials; some users have the admin role.",
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
                "schema": {"type": "integer", "minimum": 1, "maximum": 1000000, "default": 1},
            },
            "Limit": {
                "name": "limit",
                "in": "query",
                "required": False,
                "description": "Items per page.",
                "schema": {"type": "integer", "minimum": 1, "maximum": 30, "default": 10},
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
                "schema": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 200,
                    "pattern": r"^[\x21-\x7E]{1,200}$",
                },
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
                "pattern": r"^\d{4}-\d{2}-\d{2}$",
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
                "maxItems": 30,
                "items": {"$ref": _SCHEMAS + "MuseumDailyHours"},
            },
            "EventName": {
                "type": "string",
                "description": "Trimmed of surrounding whitespace, then 1-200 characters.",
                "minLength": 1,
                "pattern": r"^\s*\S(?:[\s\S]{0,198}\S)?\s*$",
            },
            "EventLocation": {
                "type": "string",
                "description": "Trimmed of surrounding whitespace, then 1-200 characters.",
                "minLength": 1,
                "pattern": r"^\s*\S(?:[\s\S]{0,198}\S)?\s*$",
            },
            "EventDescription": {
                "type": "string",
                "description": "Trimmed of surrounding whitespace, then 1-5000 characters.",
                "minLength": 1,
                "pattern": r"^\s*\S(?:[\s\S]{0,4998}\S)?\s*$",
            },
            "EventDates": {
                "type": "array",
                "description": "The event's days; returned sorted, without duplicates.",
                "minItems": 1,
                "maxItems": 366,
                "items": {"$ref": _SCHEMAS + "Date"},
            },
            "EventPrice": {
                "type": "number",
                "description": "Price of one event ticket.",
                "minimum": 0,
                "maximum": 1000000,
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
                "maxItems": 30,
                "items": {"$ref": _SCHEMAS + "SpecialEvent"},
            },
            "TicketType": {"type": "string", "enum": ["general", "event"]},
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
                    "email": {"type": "string", "format": "email", "maxLength": 254},
                    "phone": {
                        "type": "string",
                        "minLength": 7,
                        "maxLength": 20,
                        "pattern": r"^[0-9 +\-().]{7,20}$",
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
                        "pattern": r"^ticket-(general|event)-[0-9a-f]{6}-[0-9a-f]{5}$",
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
            "SpecialEvent": {
                "description": "The event.",
                "headers": {"Cache-Control": _NO_STORE},
                "content": {
                    "application/json": {
                        "schema": {"$ref": _SCHEMAS + "SpecialEvent"},
                        "example": _EVENT_EXAMPLE,
                    }
                },
            },
            "BadRequest": {
                "description": "The request is invalid; `errors` names every bad field.",
                "headers": {"Cache-Control": _NO_STORE},
                "content": {
                    "application/problem+json": {
                        "schema": _PROBLEM,
                        "example": {
                            "type": "about:blank",
                            "title": "Bad Request",
                            "status": 400,
                            "detail": "A query parameter is not valid; see errors.",
                            "errors": [
                                {"field": "limit", "message": "must be a whole number from 1 to 30"}
                            ],
                        },
                    }
                },
            },
            "Unauthorized": {
                "description": "Credentials are missing or wrong.",
                "headers": {
                    "WWW-Authenticate": {"$ref": "#/components/headers/WWWAuthenticate"},
                    "Cache-Control": _NO_STORE,
                },
                "content": {
                    "application/problem+json": {
                        "schema": _PROBLEM,
                        "example": {
                            "type": "about:blank",
                            "title": "Unauthorized",
                            "status": 401,
                            "detail": "Valid credentials are required.",
                        },
                    }
                },
            },
            "Forbidden": {
                "description": "The credentials are valid but lack the admin role.",
                "headers": {"Cache-Control": _NO_STORE},
                "content": {
                    "application/problem+json": {
                        "schema": _PROBLEM,
                        "example": {
                            "type": "about:blank",
                            "title": "Forbidden",
                            "status": 403,
                            "detail": "This operation needs the admin role.",
                        },
                    }
                },
            },
            "NotFound": {
                "description": "The event or ticket does not exist, or the event was cancelled.",
                "headers": {"Cache-Control": _NO_STORE},
                "content": {
                    "application/problem+json": {
                        "schema": _PROBLEM,
                        "example": {
                            "type": "about:blank",
                            "title": "Not Found",
                            "status": 404,
                            "detail": "No such special event.",
                        },
                    }
                },
            },
            "Conflict": {
                "description": "The `Idempotency-Key` was used before with a different body.",
                "headers": {"Cache-Control": _NO_STORE},
                "content": {
                    "application/problem+json": {
                        "schema": _PROBLEM,
                        "example": {
                            "type": "about:blank",
                            "title": "Conflict",
                            "status": 409,
                            "detail": "The Idempotency-Key was used with a different request.",
                        },
                    }
                },
            },
            "Gone": {
                "description": "The ticket's event was cancelled.",
                "headers": {"Cache-Control": _NO_STORE},
                "content": {
                    "application/problem+json": {
                        "schema": _PROBLEM,
                        "example": {
                            "type": "about:blank",
                            "title": "Gone",
                            "status": 410,
                            "detail": "The ticket's event was cancelled.",
                        },
                    }
                },
            },
            "ContentTooLarge": {
                "description": "The body is larger than 64 KiB.",
                "headers": {"Cache-Control": _NO_STORE},
                "content": {
                    "application/problem+json": {
                        "schema": _PROBLEM,
                        "example": {
                            "type": "about:blank",
                            "title": "Content Too Large",
                            "status": 413,
                            "detail": "The body must not exceed 65536 bytes.",
                        },
                    }
                },
            },
            "UnsupportedMediaType": {
                "description": "The body is not of a JSON media type.",
                "headers": {"Cache-Control": _NO_STORE},
                "content": {
                    "application/problem+json": {
                        "schema": _PROBLEM,
                        "example": {
                            "type": "about:blank",
                            "title": "Unsupported Media Type",
                            "status": 415,
                            "detail": "The body must be application/json.",
                        },
                    }
                },
            },
            "TooManyRequests": {
                "description": "Too many failed logins from this address.",
                "headers": {
                    "Retry-After": {"$ref": "#/components/headers/RetryAfter"},
                    "Cache-Control": _NO_STORE,
                },
                "content": {
                    "application/problem+json": {
                        "schema": _PROBLEM,
                        "example": {
                            "type": "about:blank",
                            "title": "Too Many Requests",
                            "status": 429,
                            "detail": "Too many failed logins; try again later.",
                        },
                    }
                },
            },
            "ServiceUnavailable": {
                "description": "The database is unavailable.",
                "headers": {
                    "Retry-After": {"$ref": "#/components/headers/RetryAfter"},
                    "Cache-Control": _NO_STORE,
                },
                "content": {
                    "application/problem+json": {
                        "schema": _PROBLEM,
                        "example": {
                            "type": "about:blank",
                            "title": "Service Unavailable",
                            "status": 503,
                            "detail": "The database is unavailable; try again later.",
                        },
                    }
                },
            },
        },
    },
}

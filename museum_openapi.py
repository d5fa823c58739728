"""The museum service's OpenAPI 3.1 description, assembled from what the app hands it.

Each resource class (in the area modules museum.py assembles) carries its operations as
`Operation` data (summary, parameters, answers) and declares the roles each method needs,
which museum_auth enforces and each operation states (its text's first sentence and
`x-roles`); the body fields come from their modules' declarations, which also check them;
every limit, pattern and rule is one of the service's own constants: the door's read from
museum_door, the resources' handed over by museum.py in `facts`. What lives here, once: the
shared components (parameters, headers, schemas, answers), each operation's prose and the
examples. `document()` returns plain JSON data, served at `GET /v1.1/openapi.json`, printed
by `museum openapi` and committed as docs/openapi.json (docs/make_openapi.py writes it; a
test fails while it differs); this module imports nothing of museum.py, which imports it.
"""

import typing
from http import HTTPStatus

from museum_config import SCHEMA
from museum_door import (
    CONFIRMATION_CODE,
    ORDER_CODE,
    DOOR_FIELDS,
    DOOR_OUTCOMES,
    LIST_COLUMNS,
    QR_TEXT,
    SAME_DEVICE_WINDOW,
    TICKET_STATUSES,
    UNDO_RULE,
    UNDO_WINDOW,
    TypedCodeLimit,
    UndoLimit,
)
from museum_codes import CONFLICT_REASONS, FIELD_CODES
from museum_http import KEY_REUSED
from museum_sales import (
    SHOP_ADDRESS_LIMITED,
    SHOP_EMAIL_LIMITED,
    DESK_READS_TODAY,
    DESK_VOIDS_TODAYS,
    AVAILABILITY_DAYS_DEFAULT,
    AVAILABILITY_DAYS_MAX,
    PURCHASE_LIMIT_RULE,
    REPORT_COLUMNS,
    REPORT_DAYS_MAX,
    SOLD_ALONE,
    TICKET_VIEW_FIELDS,
    report_csv,
)
from museum_vocabulary import (
    ADMIN_ROLE,
    CURRENCY,
    DATE,
    DESK_ROLE,
    EMAIL_MAX,
    GATE_ROLE,
    MESSAGE_BUSY,
    PRICE_MAX,
    ROLES,
    TICKET_TYPES,
    VISITOR_ROLE,
    admitted_roles,
    needs_role,
    open_in_shop,
)

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
_NO_STORE = {"$ref": "#/components/headers/CacheControlNoStore"}
_HEADER_NAMES = {"Location": "Location", "XTotalCount": "X-Total-Count", "Link": "Link",
                 "ETag": "ETag"}
_HEADER_LIMIT = SCHEMA["server"]["max_request_header_size"].default
# What any API operation may answer: a bad parameter or request, no credentials, a locked-out
# name or address, headers over the server's limit, an unavailable database.
_ANY_OPERATION = {400: "BadRequest", 401: "Unauthorized", 429: "TooManyRequests",
                  431: "RequestHeaderFieldsTooLarge", 503: "ServiceUnavailable"}
# Who may not: the answer to credentials without the role a method needs.
_ROLE_REFUSED = {ADMIN_ROLE: "Forbidden", DESK_ROLE: "NeedsDeskRole",
                 GATE_ROLE: "NeedsGateRole"}
_BODY_REFUSED = {413: "ContentTooLarge", 415: "UnsupportedMediaType"}  # wherever a body is read
# The HTTP server itself answers malformed framing (400) and bodies over its buffer (413)
# with a short text; the application never sees those requests.
_SERVER_TEXT = {"text/plain": {"schema": {"type": "string"}}}
_PNG = {"schema": {"type": "string", "format": "binary"}}  # an image: a PNG, an SVG
_COUNT = {"type": "integer", "minimum": 0}
UNDO_MINUTES = UNDO_WINDOW.seconds // 60
SAME_DEVICE_MINUTES = SAME_DEVICE_WINDOW.seconds // 60
DOOR_RESULTS = ", ".join(f"`{result}` ({status})" for result, (status, _) in DOOR_OUTCOMES.items())
UUID_SCHEMA = {"type": "string", "format": "uuid"}
DATE_SCHEMA = {"$ref": "#/components/schemas/Date"}
EMAIL_SCHEMA = {"type": "string", "format": "email", "maxLength": EMAIL_MAX}
PAGED = ("XTotalCount", "Link")  # the headers an answer with a page of a listing has
# The facts of the service this module reads itself, beside those museum.py hands over.
OWN_FACTS = {"ADMIN_ROLE": ADMIN_ROLE, "DESK_ROLE": DESK_ROLE, "VISITOR_ROLE": VISITOR_ROLE,
             "UNDO_MINUTES": UNDO_MINUTES, "SAME_DEVICE_MINUTES": SAME_DEVICE_MINUTES,
             "DOOR_RESULTS": DOOR_RESULTS, "TypedCodeLimit": TypedCodeLimit,
             "UndoLimit": UndoLimit, "AVAILABILITY_DAYS_LATER": AVAILABILITY_DAYS_DEFAULT - 1,
             "AVAILABILITY_DAYS_MAX": AVAILABILITY_DAYS_MAX, "REPORT_DAYS_MAX": REPORT_DAYS_MAX}


class Operation(typing.NamedTuple):
    """One operation of a resource, as data beside it: `parameters` name shared ones
    (components/parameters) or are `query(...)` dicts; `answers` map a status to the name
    of a shared answer (components/responses) or to an Answer; `body` names the request
    body's schema, made from its declared fields, which a request may leave out when
    `body_required` is False."""

    operation_id: str
    tag: str
    summary: str
    parameters: tuple = ()
    answers: dict = {}
    body: str = None
    body_required: bool = True


class Answer(typing.NamedTuple):
    """An operation's own answer: what it means, the name of its body's schema (or the
    schema itself; None: no body) and the names of its headers."""

    meaning: str
    schema: object = None
    headers: tuple = ()


def query(name, description, schema, example=None, required=False):
    """A query parameter described in place."""
    parameter = {"name": name, "in": "query", "required": required,
                 "description": description, "schema": schema}
    return parameter if example is None else {**parameter, "example": example}


def ref(kind, name):
    return {"$ref": f"#/components/{kind}/{name}"}


def document(resources, facts, webhooks=None):
    """The OpenAPI document of `resources` ({path under the API: resource class}) and
    `facts` (museum.py's constants by name: limits, patterns, the body fields), with the
    `webhooks` a receiver is sent (the document's own section, as described)."""
    facts = {**facts, **OWN_FACTS}
    return {
        "openapi": "3.1.0",
        "info": {"title": "Museum API", "version": facts["INTERFACE_VERSION"],
                 "license": {"name": "MIT", "identifier": "MIT"},
                 "description": INFO},
        "servers": [{"url": facts["API"]}],
        "security": [{"MuseumPlaceholderAuth": []}],
        "tags": [{"name": name, "description": text} for name, text in TAGS.items()],
        "paths": {path: _path_item(resource, facts) for path, resource in resources.items()},
        "webhooks": webhooks or {},
        "components": {
            "securitySchemes": {"MuseumPlaceholderAuth": SECURITY},
            "parameters": _parameters(facts), "headers": HEADERS,
            "schemas": {**_field_schemas(facts), **_ticket_schemas(facts),
                        **_order_schemas(facts),
                        **_door_schemas(), **_device_schemas(facts), **SCHEMAS_FIXED},
            "responses": {**_responses(facts), **_door_responses(), **_order_answers(facts),
                          **_device_responses(facts), **ANSWERS_FIXED},
        },
    }


def _path_item(resource, facts):
    return {method: _operation(resource, method, operation, facts)
            for method, operation in resource.described.items()}


def _operation(resource, method, operation, facts):
    public = not getattr(resource, "auth_required", True)
    admitted = admitted_roles(resource, method.upper())
    if not admitted:  # the app would answer 405: deny by default (museum_auth)
        raise ValueError(f"{resource.__name__} describes {method} without a role for it")
    prose = PROSE.get(operation.operation_id, "").format_map(facts)
    shop = open_in_shop(resource, method.upper())
    described = {"operationId": operation.operation_id, "summary": operation.summary,
                 "description": " ".join(filter(None, (
                     _who_may(public, admitted), shop and OPEN_IN_SHOP, prose))),
                 "x-roles": list(admitted), "tags": [operation.tag]}
    if shop:
        described["x-shop"] = True
    if operation.parameters:
        described["parameters"] = [ref("parameters", parameter) if isinstance(parameter, str)
                                   else parameter for parameter in operation.parameters]
    if operation.body:
        described["requestBody"] = {
            "required": operation.body_required, "content": {"application/json": {
                "schema": ref("schemas", operation.body),
                **_request_examples(facts)[operation.operation_id]}}}
    answers = {431: _ANY_OPERATION[431]} if public else dict(_ANY_OPERATION)
    if not public and admitted[0] in _ROLE_REFUSED:  # the least of the roles admitted
        answers[403] = _ROLE_REFUSED[admitted[0]]
    if operation.body:
        answers.update(_BODY_REFUSED)
    answers.update(operation.answers)
    described["responses"] = {
        str(status): _answer(answer, _answer_examples(facts).get(operation.operation_id))
        for status, answer in sorted(answers.items())}
    if public:
        described["security"] = []
    return described


def _who_may(public, admitted):
    """The sentence that begins an operation's description: the roles it admits."""
    if public:
        return "Needs no credentials."
    named = [f"the {role}" for role in admitted]
    if len(named) > 1:  # "the visitor, the gate or the admin"
        named = [", ".join(named[:-1]), named[-1]]
    return f"Needs {' or '.join(named)} role."


def _answer(answer, example):
    if isinstance(answer, str):
        return ref("responses", answer)
    if answer.schema is None:
        return {"description": answer.meaning}
    headers = {_HEADER_NAMES[name]: ref("headers", name) for name in answer.headers}
    schema = ref("schemas", answer.schema) if isinstance(answer.schema, str) else answer.schema
    return json_answer(answer.meaning, schema, example, headers)


def json_answer(meaning, schema, example, headers=None, media_type="application/json",
                named=False):
    """An answer with a body of `media_type`; like every JSON answer, never cached. With
    `named`, `example` is a dict of named examples."""
    return {"description": meaning, "headers": {**(headers or {}), "Cache-Control": _NO_STORE},
            "content": {media_type: {"schema": schema,
                                     ("examples" if named else "example"): example}}}


def body_schema(fields, change=False):
    """The JSON schema of a body of `fields` (museum_validation.Field by name): as created, or as a
    `change` (all optional, null where a field may be cleared)."""
    properties = {name: {**field.schema, "type": [field.schema["type"], "null"]}
                  if change and field.nullable_in_patch else field.schema
                  for name, field in fields.items()}
    schema = {"type": "object", "properties": properties, "additionalProperties": False}
    required = [name for name, field in fields.items() if field.required is True]
    if required and not change:
        schema["required"] = required
    for name, field in fields.items():
        if not change and hasattr(field.required, "value"):  # a condition on another field
            schema.update({"if": {"properties": {field.required.field: {
                "const": field.required.value}}, "required": [field.required.field]},
                "then": {"required": [name]}, "else": {"not": {"required": [name]}}})
    return schema


def example_of(fields, **changes):
    """A body of every field's example, with `changes` (None leaves a field out)."""
    body = {name: field.example for name, field in fields.items()}
    body.update(changes)
    return {name: value for name, value in body.items() if value is not None}


def problem_body(status, detail, **members):
    return {"type": "about:blank", "title": HTTPStatus(status).phrase, "status": status,
            "detail": detail, **members}


def problem(status, meaning, detail, errors=None, headers=None, server_text=False):
    """A problem+json answer whose example is what the service answers."""
    example = problem_body(status, detail, **({"errors": errors} if errors else {}))
    answer = json_answer(meaning, ref("schemas", "Problem"), example, headers,
                         "application/problem+json")
    if server_text:
        answer["content"].update(_SERVER_TEXT)
    return answer


def named_problems(meaning, schema_name, examples):
    """A problem+json answer with named examples ({name: the service's problem body})."""
    return json_answer(meaning, ref("schemas", schema_name),
                       {name: {"value": body} for name, body in examples.items()},
                       media_type="application/problem+json", named=True)


def trimmed_text(max_length, what=""):
    """The JSON schema of museum_validation.Validator.text: 1..max_length characters once trimmed of
    surrounding whitespace; `what` begins its description."""
    return {"type": "string", "minLength": 1,
            "description": f"{what}Trimmed of surrounding whitespace, then 1-{max_length} "
                           "characters.",
            "pattern": rf"^\s*\S(?:[\s\S]{{0,{max_length - 2}}}\S)?\s*$"}


def anchored(regex):
    """A Python regex used with fullmatch, as a JSON Schema pattern (which searches)."""
    return f"^{regex.pattern}$"


# -- the prose --------------------------------------------------------------------------------

INFO = (
    "Opening hours, special events and tickets of the museum. Every operation except "
    "fetching this description and pairing a door device (its one-time code is its "
    "credential) needs HTTP Basic credentials; each names the roles whose "
    f"credentials it accepts (of {', '.join(ROLES)}) in its first sentence and in its "
    "`x-roles` list. Requests and responses are JSON, errors are RFC 9457 "
    "problem details (application/problem+json), and dates are ISO calendar dates in the "
    "museum's time zone. Requests that the HTTP server refuses before they reach the "
    "application (malformed framing, a request line and headers over "
    f"{_HEADER_LIMIT} bytes by default, bodies over its buffer limit) get its short "
    "text/plain answer instead (400, 431, 413). Only with `[shop] enabled` on the server "
    "(off by default) do the operations marked `x-shop` (reading the hours, events, places, "
    "prices and the museum's settings) need no credentials, and the pages of `[shop] "
    "allowed_origins` may call them from a browser (CORS).")
OPEN_IN_SHOP = ("With `[shop] enabled` on the server, anyone may call it without credentials, "
                "from the pages of `[shop] allowed_origins` too (CORS).")
TAGS = {"Operations": "The museum's opening hours, and the days an admin changed.",
        "Events": "Special events and their dates.",
        "Tickets": "Buying tickets and fetching their codes.",
        "Door": "Admitting tickets at the entrance; the day's counts.",
        "Orders": "Several tickets bought together, all or nothing; quotes and holds.",
        "Reports": "What was sold.", "Description": "This OpenAPI description.",
        "Webhooks": "What the service posts to the receivers an admin registered, signed.",
        "Outbox": "The mails and webhook deliveries kept to send: the failed ones sent "
                  "again or dropped."}
SECURITY = {"type": "http", "scheme": "basic", "description": (
    "Credentials of a user configured on the server. Each user has one role: "
    f"{', '.join(ROLES)}; each role may do all that the ones before it may. A password "
    "sign-in answers a device cookie (`Set-Cookie: museum_device=...; Path=/v1.1; "
    "HttpOnly; SameSite=Strict`, `Secure` over TLS), good for 30 days and renewed at most "
    "daily: a client that sends it back with the same user's credentials passes the "
    "lock-outs of failed logins and has its password checked in a turn of its own. It "
    "signs nobody in by itself.")}
# What an operation's description says after the roles it admits; each `{NAME}` is one of
# the facts (`{{` a brace).
PROSE = {
    "getMuseumHours": "Lists the open days from `startDate` on, oldest first, with their "
    "opening and closing times. Closed days are left out; days more than "
    "{HOURS_HORIZON_DAYS} days after `startDate` are never listed, so a page past the end "
    "is an empty array.",
    "createSpecialEvent": "Dates are stored sorted, without duplicates.",
    "listSpecialEvents": "Lists the events with at least one date between `startDate` and "
    "`endDate` (inclusive), ordered by their first date in that window, then by name. "
    "Cancelled events are not listed, except in a listing of changes (`updatedSince`). The "
    "`ETag` changes with every event created, changed or cancelled (and with the day): "
    "`If-None-Match` answers 304 while it holds.",
    "getSpecialEvent": "A cancelled event answers 410 with what it was; its `ETag` changes "
    "with every change of the event.",
    "updateSpecialEvent": "Changes only the fields given; `{{}}` changes "
    "nothing. Each field follows the same rules as on creation. The body is a JSON merge "
    "patch (RFC 7396) without nulls, so it may also be sent as "
    "`application/merge-patch+json`; only `\"capacity\": null` removes the capacity "
    "(unlimited again). Dates for which tickets were sold cannot be removed "
    "(409); cancel the event instead. A `capacity` below the tickets already sold for one "
    "of its dates is refused too (409).",
    "deleteSpecialEvent": "The event is no longer listed or changed, its read answers 410 "
    "Gone, and so do its tickets' codes; a listing of changes shows it cancelled.",
    "buyMuseumTickets": "Buys a general admission ticket, or a ticket for one date of a "
    "special event. The date must be an open day, not before today nor more than "
    "{SALE_HORIZON_DAYS} days ahead, and for an event one of its dates. Repeating a "
    "request with the same `Idempotency-Key` and body buys nothing new: it answers the "
    "ticket bought first, before any rule on the date or the hours is checked again, so a "
    "retry after midnight still gets it, and a retry after the day sold out too. The same "
    "key with a different body is a conflict. A sale past a capacity (the day's general "
    "entry, `[capacity]` in the server's configuration, or the event's `capacity` on that "
    "date) is refused with 409 and `\"reason\": \"sold-out\"`, naming the `date` and, for "
    "an event, its `eventId`; nothing is sold then. With timed entry (`[hours] "
    "slot_minutes`), a general ticket names its `entryTime`, one of the day's slots (see "
    "the availability), and a full slot (`[capacity] general_per_slot`) is sold out naming "
    "the `entryTime`. With `[auth] visitor_tickets_per_hour` set, a credential of the "
    "{VISITOR_ROLE} role buys at most that many tickets within any hour, on all "
    "instances together (then 429 with `Retry-After`; a replayed key is no new purchase). "
    "An optional `category` (`GET /price-categories`; default: the first) sets the price: "
    "general entry's in that category, or the event's `prices` entry for it, else the "
    "event's `price`. The answer carries the ticket's QR code text (`qrText`) and its "
    "page's link (`ticketPage`), made in the sale's own transaction: hand the link to the "
    "buyer alone.",
    "listEventTickets": "The tickets of one event (a cancelled one too), "
    "with their buyers' email and phone, to tell them of a cancellation or a change: by "
    "date, then in the order they were sold, in pages like the event listing.",
    "admitTicket": "The ticket is presented by the text of its QR code "
    "or by its typed confirmation code. A ticket is admitted once, on its date; otherwise "
    "the answer is a problem whose `result` says why: {DOOR_RESULTS}. A ticket of an order "
    "not paid yet (held while the visitor pays) is refused as `unpaid` (409); one of an "
    "order cancelled, voided or whose hold ended unpaid is `void` (410).\n\n"
    "An order's code (`order-792d82-891fc`, typed as `confirmationCode`, whole or its "
    "random part) or the text of the order's QR code (as `code`) admits, in one scan, "
    "every ticket of the order that would be admitted alone: 201 with `orderCode`, "
    "`admitted` (how many) and `tickets`, each with its `result` (`admitted`, or why not: "
    "another day's, admitted before...), category, label and door note. When none could "
    "be, the refusal is the order's (`unpaid`, `void`) or that of its tickets, today's "
    "first: `already-admitted`, `too-early`, `wrong-date`, `cancelled`, `void`, with the "
    "`tickets`. Typed digits that end both a ticket's and an order's code are `ambiguous` "
    "(409). An order to be paid at the desk and not paid yet (`payment` `due`: booked on "
    "the shop with `[shop] pay_at_desk`) is admitted all the same, and the admission that "
    "lets in the first of its tickets of the day (the order's code, or one of its tickets "
    "alone, at any gate) carries `collect`: the whole order's price, to take before "
    "letting them in; its other tickets' admissions that day carry none. An order's scan records no double entry: the door's page decides offline only "
    "the tickets of its list. Anything that is not "
    "shaped like a museum QR text (`MUSEUM1:` ticket id `:` code `:` 20 hex digits: a "
    "misread, a URL, a Wi-Fi code), or a typed code not shaped like a confirmation code, "
    "is `unreadable` (scan again); a well-formed QR text whose tag or code does not match "
    "is `forged`. Only typed codes shaped like a confirmation code count toward the limit "
    "of {TypedCodeLimit.LIMIT} unknown codes or lookups per user (device) within "
    "{TypedCodeLimit.WINDOW} s, on all instances together (then 429); a QR text never counts and is decided even while "
    "the limit holds, and `unreadable` is never refused with 429.\n\n"
    "Each scan may carry an `Idempotency-Key` (the scan's id, per user, kept at least a "
    "day): the same key again answers what it did the first time, 201 with the same body "
    "for the admission it made (a refusal is decided afresh); the same key with another "
    "body is refused (422). A scan of a ticket that the same user admitted within the "
    "last {SAME_DEVICE_MINUTES} minutes answers `already-admitted` with `\"sameDevice\": "
    "true`.\n\n"
    "`scannedAt` marks a scan the door's page admitted offline at that time: if admittable, "
    "it is admitted at `scannedAt` (checked against the date and entry time of that "
    "moment); if another admission admitted the ticket meanwhile, a double entry is "
    "recorded (in the ticket's admission history, the summary's `doubleEntries` and the "
    "sales report) and the answer is `already-admitted` with `\"doubleEntry\": true`.",
    "listAdmissions": "The day's tickets, for the door's page to decide "
    "without the service: each as a row of `columns` (rows of tickets not admitted end "
    "before `admittedAt`), never an email or phone. `codeDigest` is the first 16 hex "
    "digits of the SHA-256 of the confirmation code (UTF-8, lowercase), `event` an index "
    "into `events` (`null`: general entry), `category` `null`, `status` `unpaid` for a "
    "ticket of an order on hold (refused at the door until paid); `admittedAt` in the "
    "museum's zone (`timeZone`), as is `now`, the museum's clock. A gate may ask for today "
    "and tomorrow only (400 otherwise). With `since`, a `cursor` of an earlier answer for "
    "the same day, only the tickets changed after it (sold, admitted, undone, voided, "
    "their event cancelled, their order paid) with `complete: false`; a ticket of an order "
    "to be paid at the desk and not paid yet has two more places, `orderId` and `collect` "
    "(the whole order's price, as an admission's `collect`), after `admittedAt` and "
    "`admittedBy` (`null` while not admitted): the page asks for it offline with the first "
    "of the order's tickets it admits, as the service would; a change committed after a cursor "
    "was handed out is never missed. The `ETag` changes with every such change (and with "
    "any change of an event): `If-None-Match` answers 304 while it holds.",
    "getAdmissionSummary": "Tickets sold and admitted for one day, by "
    "kind, by event and by the device (user) that admitted them, and the double entries "
    "recorded at the door.",
    "lookupTickets": "Finds the tickets of one day (today at the museum "
    "unless `date` is given) by the buyer's email address, the whole address with ASCII "
    "letters in any case, or by the confirmation code, whole or only its random part "
    "(`792d82-891fc`), in any case, or an order's tickets of the day by the order's code "
    "(`order-792d82-891fc`, or its random part). Each ticket of an order names its "
    "`orderCode`, which admits them all in one scan. The email is sent in the body so that no URL or log "
    "holds it. At most {LOOKUP_LIMIT} tickets, ordered by code; never the buyer's email or "
    "phone. Every lookup counts toward the limit of {TypedCodeLimit.LIMIT} unknown codes or "
    "lookups per user (device) within {TypedCodeLimit.WINDOW} s (then 429). A gate looks an email "
    "up among today's and tomorrow's tickets only (another `date`: 400).",
    "getAdmissionHistory": "Whether the ticket is admitted now, and "
    "its admissions, undos and double entries, oldest first, in pages like the event "
    "listing (`X-Total-Count` counts them all).",
    "undoAdmission": "For an admission made by mistake: the ticket may be "
    "admitted again. A gate may undo only the admissions it made (as the same user or "
    "device), within {UNDO_MINUTES} minutes; an admin any admission at any time. The undo "
    "is kept in the ticket's admission history. A gate undoes one ticket's admission at "
    "most {UndoLimit.MOST} times a day at the museum (then 429 until the day ends).",
    "getAvailability": "For each day from `startDate` (default today) to `endDate` "
    "(default {AVAILABILITY_DAYS_LATER} days later; at most {AVAILABILITY_DAYS_MAX} "
    "days in all): whether the museum is open, the general entry places (`null` when "
    "closed) and each event taking place that day, with their capacity, the tickets sold "
    "(void ones give their place back) and the places left; `capacity` and `available` "
    "are `null` when unlimited. With timed entry, each day's entry `slots` too.",
    "getSalesReport": "For each day from `startDate` to `endDate` (both "
    "default to today; at most {REPORT_DAYS_MAX} days), general entry and then each event "
    "by name: the tickets sold for that day (void ones too), those voided, those admitted, "
    "the revenue (the prices of those not void), per currency they were sold in, and the "
    "double entries recorded at the door (`doubleEntries`; a day's total is the sum of its "
    "rows); with `breakdown=true`, also the same tickets by price category (`categories`) "
    "and by channel (`channels`: `web` and `desk` for an order's tickets, `single` for a "
    "ticket sold alone), each with its sold, void and revenue. Days "
    "without tickets are left out. With `Accept: text/csv` the same rows come as CSV, with "
    "a header line: the columns above, then (with `breakdown=true`) for each category and "
    "each channel found its `category:NAME:sold`, `:void` and `:revenue` (a ticket of no "
    "category: `(none)`), then `channel:NAME:...`; a cell that begins with `=`, `+`, `-`, "
    "`@`, a tab or a carriage return is prefixed with `'` so that no spreadsheet runs it. "
    "The {DESK_ROLE} role reads today's report only (no dates, or today as both; 403 for "
    "another window); the {ADMIN_ROLE} role reads any.",
    "getSalesChart": "The sales report's window (as `getSalesReport` reads it, with its "
    "roles) drawn by the service as an SVG bar chart: the tickets sold and not void on "
    "each day, for a page to show as an image with no chart library. Sent as "
    "`image/svg+xml`; `application/octet-stream` is listed too, as for `getTicketCode`.",
    "getArrivalsChart": "The admissions of the tickets dated in the window (as "
    "`getSalesReport` reads it, with its roles), void tickets and cancelled events left "
    "out, counted per hour of the day at the museum and drawn as an SVG bar chart, one bar "
    "an hour from the first to the last with arrivals. For one day with timed entry and a "
    "capacity per slot, a dashed line marks each hour's places (its slots'); otherwise the "
    "chart's `desc` says why none is marked. The `desc` lists every bar, as a text "
    "alternative. Sent as `image/svg+xml`; `application/octet-stream` is listed too.",
    "listOutboxMessages": "The mails and webhook deliveries the outbox keeps, the newest "
    "first: each with its kind, its recipient (a mail's address, personal data, is the "
    "reason only an admin reads this), its state, attempts and the last answer. A message "
    "given up on is `failed`; `GET /healthz` counts them. Its payload is not shown.",
    "retryOutboxMessage": "As `museum outbox --retry`: a queued or failed message is due "
    "again now, its attempts counted from 0; the outbox's sender delivers it at its next "
    "look (every few seconds under `museum serve`, or `museum send`).",
    "dropOutboxMessage": "As `museum outbox --drop`: the message is forgotten, never sent.",
    "getTicket": "The ticket as sold, its `status` and its admission, its QR code's text "
    "(`qrText`) and its page's link (`ticketPage`); the {ADMIN_ROLE} role also sees the "
    "buyer's `email` and `phone` until they are erased.",
    "voidTicket": "A refund at the desk: the ticket's place is free again at "
    "once, its image and its page answer 410 and the door refuses it (`void`). It stays stored, reads "
    "as `status: void` and is counted in the sales report. Voiding a void ticket answers "
    "204 again (the first void's reason stays). The {DESK_ROLE} role voids only tickets "
    "dated today at the museum (403 for another day); the {ADMIN_ROLE} role voids any. The "
    "body is optional: its `reason` is kept with the void and shown to the staff as "
    "`voidReason` in the ticket's reads; a request without a body voids as before.",
    "getTicketCode": "Returns the ticket's QR code as a PNG image, sent as `image/png`. "
    "`application/octet-stream` is listed too, for client generators that hand back the "
    "bytes of that type only.",
    "pairDevice": "Needs no credentials: the one-time code is the credential. `museum "
    "add-device` makes a gate device with a code valid for {PAIRING_MINUTES} minutes, in "
    "the pairing link `/scan#pair=CODE` (the code in the fragment, which no browser sends). "
    "The scanner page sends the code here, in the body, and gets the device's name and a "
    "key made now, which it keeps: the key is never in an address. A code pairs once; a "
    "used or expired one answers 410, an unknown one 404. {PAIRING_FAILURES} unknown, used "
    "or expired codes from one client address within {PAIRING_WINDOW} s make it wait "
    "(429).",
    "startDeviceSession": "A gate or desk device's key, or a gate or desk user's password; "
    "not an admin's, as the door's and the desk's pages sign in staff devices only. A "
    "user's password is exchanged for a device session of the user's role: a new device "
    "named for the user and the moment (listed by `museum devices`, revoked like any "
    "device), and its key, which the page keeps instead of the password. A device's key "
    "answers 204: it signs in as it is.",
    "endDeviceSession": "The credentials of a device of the database (a device session, "
    "or a paired device): the page's sign-out revokes the device it signed in as, so its "
    "key signs in nowhere from then on. A user's password, or a device of `[users]`, "
    "revokes nothing (409).",
    "listPriceCategories": "The price categories a ticket is sold in (`category` "
    "of a purchase), the first being the default, each with general entry's price in it, "
    "the places a ticket of it takes and the note the door checks. An event's ticket costs "
    "the event's `prices` entry for its category, or else the event's `price`.",
    "getMuseum": "What a shop shows beside its prices: the museum's name, its "
    "time zone and clock (dates and entry times are the museum's), its currency, how many "
    "minutes before its entry slot a timed ticket is admitted, the entry slots' length "
    "(`null` without timed entry) and the price categories.",
    "changeMuseumDay": "Closes one day (a storm, a strike), or gives it "
    "other opening hours or another general entry capacity, over the configured ones; "
    "the day must be today or later. Stored in the database: the opening hours, the "
    "availability and the sales of every instance follow at once. General tickets are not "
    "sold for a closed day (event tickets follow their event); the answer lists the sold "
    "tickets the day as changed no longer admits, with their buyers' contacts.",
    "createOrder": "Buys several tickets in one order, all or nothing: each item is a "
    "ticket as `POST /tickets` sells it (the same rules of its date, event, entry time and "
    "`category`) times its `quantity`, {ORDER_TICKETS_MAX} tickets at most in all. The "
    "service computes every price (a `price`, `total` or `currency` in the body is refused "
    "with `assigned-by-service`): general entry at its category's price, an event's ticket "
    "at the event's `prices` entry for its category, else the event's `price`. If any "
    "place is short (the day's general entry, an entry slot, an event's date, each ticket "
    "counting its category's `persons`), the answer is 409 `\"reason\": \"sold-out\"` "
    "naming the first place found full, and nothing is written. The `web` channel (the "
    "{WEB_ROLES} role) needs the buyer's `email`; the `desk` channel (the {DESK_ROLES} "
    "role; another role: 403) takes an optional email and a `payment`. With `\"hold\": "
    "true` the order is `pending`: its places are held until `expiresAt` (`[orders] "
    "hold_minutes` from now) while the visitor pays, its tickets not admitted; confirm it "
    "before then, or the places are free again. `Idempotency-Key` replays as for a ticket: "
    "the same key and body answer the order made first, before any rule is checked again; "
    "another body is 409 `key-reused`. `?simulate=true` is a quote: the same checks and "
    "the prices and total as the order would have now, answered 200 without ids, codes or "
    "status, writing nothing and holding no place (whether the places are left is known "
    "only when ordering; an `Idempotency-Key` is not used), and it needs no `email`. A "
    "visitor credential's `[auth] visitor_tickets_per_hour` counts every ticket of the "
    "order (then 429). An order without credentials (the booking page, `[shop] enabled`) "
    "is free, or, with `[shop] pay_at_desk`, paid at the desk: its `payment` is then "
    "`due`; one with a price is refused otherwise (400 `not-allowed` on `items`).",
    "getOrder": "The account that made the order, a gate, a desk and an admin read it; to "
    "any other account it does not exist (404, never 403, so ids cannot be probed). A gate "
    "does not see the buyer's `email` and `phone`. `status` is `pending` while held until "
    "`expiresAt`, then `expired` (its tickets read `void`: their places are free) unless "
    "confirmed; `cancelled` by its creator, `voided` by an admin or the desk. The staff (gate, desk, "
    "admin) also see a void's `voidReason`.",
    "cancelOrder": "The account that made a `pending` order cancels it: its tickets are "
    "void and their places free at once (a confirmed order is 409 `not-pending`, an ended "
    "hold 409 `expired`; to any other account but the staff the order does not exist: "
    "404). An admin voids any order instead, a refund: every ticket `void`, its place free, "
    "kept in the sales report; voiding a void order answers 204 again. The desk voids an "
    "order whose tickets are all dated today (403 otherwise), as it voids tickets. The body "
    "is optional: the voider's `reason` is kept with the void (the order's and its tickets' "
    "`voidReason`, shown to the staff only); a cancel keeps none, and a `reason` sent with "
    "one is refused (400: `reason` {CANCEL_KEEPS_NO_REASON}).",
    "markOrderPaid": "An order booked on the booking page with `[shop] pay_at_desk` reads "
    "`payment: due`; the desk takes the money and marks it paid, `cash` or `card`: the "
    "answer is the order with that `payment` and `paidAt`, and the `order.paid` webhook is "
    "queued with it. The same call again answers the order unchanged (a desk whose answer "
    "was lost may retry). Any order without a payment due (free, paid another way, "
    "pending, expired, cancelled or voided) is 409 `not-due`, nothing changed. The sales "
    "report counted its tickets when they were booked, as every sale's: marking it paid "
    "changes no count.",
    "confirmOrder": "Makes a `pending` order `confirmed` once its payment went through: "
    "its places are kept and its tickets admitted at the door. Confirming a confirmed order "
    "answers it again; after `expiresAt` the answer is 409 `expired` (the places were "
    "given back), for a cancelled or voided order 409 `not-pending`. The account that made "
    "the order and an admin may; to another account the order does not exist (404).",
    "getOrderCode": "The order's QR code as a PNG image: one scan at the door admits all "
    "of the order's tickets valid that day. Readers as for the order; an order expired, "
    "cancelled or voided answers 410.",
    "restoreMuseumDay": "Forgets the day's change: its hours and capacity "
    "are the configured ones again. A day without a change answers 204 too; a day before "
    "today is refused.",
}


# -- the examples -----------------------------------------------------------------------------

_EVENT_ID = "3f1c9a52-7d4e-4b8a-9c61-2e5f0d8b7a14"
_TICKET_ID = "a8e2d6c0-51b7-4f3e-8d92-6c4b1e0f7a35"
_CODE = "ticket-general-3fa85f-64571"
_EVENT_CODE = "ticket-event-a1b2c3-d4e5f"
_WORKSHOP = "Pirate Coding Workshop"
_SALES_ROW = {"date": "2027-10-30", "ticketType": "event", "eventId": _EVENT_ID,
              "eventName": _WORKSHOP, "sold": 20, "void": 2, "admitted": 15, "revenue": 450,
              "currency": "EUR", "doubleEntries": 1,
              "categories": [{"category": "adult", "sold": 14, "void": 2, "revenue": 300},
                             {"category": "child", "sold": 6, "void": 0, "revenue": 150}],
              "channels": [{"channel": "desk", "sold": 3, "void": 0, "revenue": 75},
                           {"channel": "single", "sold": 5, "void": 2, "revenue": 75},
                           {"channel": "web", "sold": 12, "void": 0, "revenue": 300}]}
# A general ticket at the door, and what the door adds to it: the examples of its answers.
_DOOR_TICKET = {"ticketId": _TICKET_ID, "ticketType": "general", "ticketDate": "2027-10-29",
                "confirmationCode": _CODE, "category": "adult", "categoryLabel": "Adult"}
_ORDER_CODE = "order-5c7e21-9ab04"
# A family's order at the door: the tickets and what the door made of each.
_CHILD_AT_DOOR = {**_DOOR_TICKET, "ticketId": "5b0e7c1d-2f4a-4e8b-9a3c-7d6e5f4a3b21",
                  "confirmationCode": "ticket-general-0d4e6a-1c2b3", "category": "child",
                  "categoryLabel": "Child under 14", "doorNote": "Check the child's age"}
_ADMITTED = {"admittedAt": "2027-10-29T09:14:05Z", "admittedBy": "gate"}
_EVENT_TICKET = {"ticketId": _TICKET_ID, "ticketType": "event", "ticketDate": "2027-10-30",
                 "confirmationCode": _EVENT_CODE, "price": 25, "currency": "EUR"}
# What a sold ticket carries for the visitor and a shop (_LINKS), for that ticket.
_EVENT_TICKET_LINKS = {
    "qrText": f"MUSEUM1:{_TICKET_ID}:{_EVENT_CODE}:4be0c1f5a2d93e6b7c18",
    "ticketPage": "https://museum.example.org/t/q3Zx8uV2bT0mYc5RkN1wJg"}
# The ticket members of each refusal's example; only those that find a ticket show it.
_DOOR_REFUSALS = {
    "already-admitted": {**_DOOR_TICKET, **_ADMITTED},
    "wrong-date": {**_DOOR_TICKET, "ticketDate": "2027-10-31", "when": "early"},
    "too-early": {**_DOOR_TICKET, "entryTime": "14:30"},
    "cancelled": {**_DOOR_TICKET, "ticketType": "event", "confirmationCode": _EVENT_CODE,
                  "eventName": _WORKSHOP},
    "void": _DOOR_TICKET, "forged": {}, "unreadable": {}, "unknown": {},
    "unpaid": _DOOR_TICKET,
}
# The door's refusals that show how a ticket came to be admitted before: named examples
# beside the result's own, {name: (result, members)}.
_DOOR_REFUSAL_KINDS = {
    "same-device": ("already-admitted", {**_DOOR_TICKET, **_ADMITTED, "sameDevice": True}),
    "double-entry": ("already-admitted", {**_DOOR_TICKET, **_ADMITTED, "doubleEntry": True}),
}
# A wrong date's detail says early or past (museum_door.wrong_date), for the example's ticket.
_DOOR_REFUSAL_DETAILS = {"wrong-date": "early: ticket for 2027-10-31 (in 2 days)",
                         "too-early": "too early: entry at 14:30, admitted from 14:15"}


_CATEGORIES = [
    {"name": "adult", "label": "Adult", "price": 12, "currency": "EUR", "persons": 1,
     "note": ""},
    {"name": "reduced", "label": "Reduced", "price": 8.5, "currency": "EUR", "persons": 1,
     "note": "Check student or senior ID"},
    {"name": "child", "label": "Child under 14", "price": 0, "currency": "EUR",
     "persons": 1, "note": ""}]
_ORDER_ID = "6d0f4b7e-2a91-4c3d-8e5f-1b7a9c2d4e60"
_ORDER_TICKETS = [
    {"ticketId": f"0c5e8a1f-7b3d-4e2a-9f61-5d8c2b4a7e{number:02}", "ticketType": "general",
     "ticketDate": "2027-10-29", "confirmationCode": f"ticket-general-3fa85f-6457{number}",
     "price": price, "currency": "EUR", "category": category, "status": "valid"}
    for number, (category, price) in enumerate(
        [("adult", 12), ("adult", 12), ("child", 0), ("child", 0)], 1)]
_QUOTE = {"channel": "web", "total": 24, "currency": "EUR", "tickets": [
    {name: value for name, value in ticket.items()
     if name not in ("ticketId", "confirmationCode", "status")} for ticket in _ORDER_TICKETS]}
# The example of each operation's answer with a body.
_FAILED_MAIL = {"messageId": "6f1c2b7e-0d3a-4e5f-9a8b-1c2d3e4f5a6b", "kind": "email",
                "target": "visitor@example.com", "state": "failed", "attempts": 35,
                "lastAnswer": "550 5.1.1 no such user", "createdAt": "2027-10-20T14:02:11Z",
                "nextAttemptAt": "2027-10-23T14:07:11Z", "sentAt": None}
EXAMPLES = {
    "listOutboxMessages": [_FAILED_MAIL],
    "retryOutboxMessage": {**_FAILED_MAIL, "state": "queued", "attempts": 0,
                           "nextAttemptAt": "2027-10-23T15:00:00Z"},
    "createOrder": {"orderId": _ORDER_ID, "orderCode": "order-792d82-891fc", "status": "pending",
                    "channel": "web", "total": 24, "currency": "EUR",
                    "createdAt": "2027-10-20T14:02:11Z", "expiresAt": "2027-10-20T14:17:11Z",
                    "email": "visitor@example.com", "tickets": _ORDER_TICKETS},
    "confirmOrder": {"orderId": _ORDER_ID, "orderCode": "order-792d82-891fc",
                     "status": "confirmed", "channel": "web", "total": 24, "currency": "EUR",
                     "createdAt": "2027-10-20T14:02:11Z", "email": "visitor@example.com",
                     "tickets": _ORDER_TICKETS},
    "getOrder": {"orderId": _ORDER_ID, "orderCode": "order-792d82-891fc",
                 "status": "confirmed", "channel": "desk", "total": 24, "currency": "EUR",
                 "createdAt": "2027-10-29T09:42:00Z", "payment": "cash",
                 "tickets": _ORDER_TICKETS},
    "markOrderPaid": {"orderId": _ORDER_ID, "orderCode": "order-792d82-891fc",
                      "status": "confirmed", "channel": "web", "total": 24, "currency": "EUR",
                      "createdAt": "2027-10-20T14:02:11Z", "payment": "cash",
                      "paidAt": "2027-10-29T09:50:12Z", "email": "visitor@example.com",
                      "tickets": _ORDER_TICKETS},
    "getMuseumHours": [{"date": "2027-10-29", "timeOpen": "09:00", "timeClose": "18:00"},
                       {"date": "2027-10-30", "timeOpen": "09:00", "timeClose": "21:00"}],
    "buyMuseumTickets": {"message": "Museum special event ticket purchased", **_EVENT_TICKET,
                         **_EVENT_TICKET_LINKS, "eventName": _WORKSHOP, "eventId": _EVENT_ID},
    "listEventTickets": [{**_EVENT_TICKET, **_EVENT_TICKET_LINKS, "status": "valid",
                          "eventId": _EVENT_ID, "eventName": _WORKSHOP,
                          "email": "visitor@example.com"}],
    "admitTicket": {"result": "admitted", **_DOOR_TICKET, **_ADMITTED},
    "getAdmissionSummary": {
        "date": "2027-10-30", "sold": {"general": 120, "event": 35},
        "admitted": {"general": 87, "event": 30},
        "events": [{"eventId": _EVENT_ID, "name": _WORKSHOP, "sold": 35, "admitted": 30}],
        "devices": [{"name": "door-north", "admitted": 70},
                    {"name": "door-south", "admitted": 47}], "doubleEntries": 1},
    "listAdmissions": {
        "date": "2027-10-29", "timeZone": "Europe/Berlin", "now": "2027-10-29T10:00:00+02:00",
        "cursor": "2027-10-29.41", "complete": True,
        "events": [{"eventId": _EVENT_ID, "eventName": _WORKSHOP}],
        "columns": list(LIST_COLUMNS), "tickets": [
            [_TICKET_ID, "1f3a9c0d4e5b6a7f", None, "10:30", None, "valid"],
            ["5b0e7c1d-2f4a-4e8b-9a3c-7d6e5f4a3b21", "77aa0c3e91b2d4f5", 0, None, None,
             "admitted", "2027-10-29T09:12:03+02:00", "door-north"],
            ["8c3d2a1f-6e5b-4d7c-9f80-1a2b3c4d5e6f", "3c9e0a7b5d1f2e48", None, "10:30", None,
             "valid", None, None, "c41f7d2e-9b3a-4e65-8d17-2f0a6b9c3e58",
             {"amount": "25.00", "currency": "EUR"}]]},
    "lookupTickets": {"date": "2027-10-29", "tickets": [
        {**_DOOR_TICKET, "status": "admitted", "admitted": True, **_ADMITTED},
        {**_DOOR_TICKET, "ticketId": "5b0e7c1d-2f4a-4e8b-9a3c-7d6e5f4a3b21",
         "ticketType": "event", "confirmationCode": _EVENT_CODE, "eventId": _EVENT_ID,
         "eventName": _WORKSHOP, "status": "valid", "admitted": False},
        {**_CHILD_AT_DOOR, "orderCode": _ORDER_CODE, "orderId": _ORDER_ID,
         "status": "unpaid", "admitted": False}]},
    "getAdmissionHistory": {
        "ticketId": _TICKET_ID, "admitted": True, "admittedAt": "2027-10-29T09:20:41Z",
        "admittedBy": "door-south", "history": [
            {"action": "admitted", "at": "2027-10-29T09:14:05Z", "by": "door-north"},
            {"action": "undone", "at": "2027-10-29T09:15:12Z", "by": "door-north"},
            {"action": "admitted", "at": "2027-10-29T09:20:41Z", "by": "door-south"},
            {"action": "double-entry", "at": "2027-10-29T09:19:58Z", "by": "door-east"}]},
    "getAvailability": [
        {"date": "2027-10-28", "open": False, "general": None, "events": []},
        {"date": "2027-10-29", "open": True,
         "general": {"capacity": 500, "sold": 120, "available": 380},
         "events": [{"eventId": _EVENT_ID, "name": _WORKSHOP, "capacity": 20, "sold": 20,
                     "available": 0}]}],
    "changeMuseumDay": {
        "date": "2027-10-29", "closed": True, "note": "Storm warning",
        "changedAt": "2027-10-28T16:02:11Z", "changedBy": "admin", "affectedTickets": [
            {**_DOOR_TICKET, "price": 12, "currency": "EUR", "status": "valid",
             "email": "visitor@example.com", "phone": "+1 555-0100"}]},
    "listPriceCategories": _CATEGORIES,
    "getMuseum": {"name": "City Museum", "timeZone": "Europe/Berlin",
                  "now": "2027-10-29T10:00:00+02:00", "currency": "EUR", "earlyMinutes": 15,
                  "slotMinutes": 30, "categories": _CATEGORIES},
    "getTicket": {**_EVENT_TICKET, **_EVENT_TICKET_LINKS, "category": "adult",
                  "status": "admitted",
                  "eventId": _EVENT_ID,
                  "eventName": _WORKSHOP, **_ADMITTED, "email": "visitor@example.com",
                  "phone": "+1 555-0100"},
}


def _named(**examples):
    return {"examples": {name: {"summary": summary, "value": value}
                         for name, (summary, value) in examples.items()}}


def _request_examples(facts):
    """The request body examples, made from the fields' own examples where they serve."""
    events, tickets = facts["EVENT_FIELDS"], facts["TICKET_FIELDS"]
    admission, lookup = facts["ADMISSION_FIELDS"], facts["LOOKUP_FIELDS"]
    return {
        "createSpecialEvent": {"example": example_of(events, capacity=None)},
        "updateSpecialEvent": {"example": {"price": 30, "dates": ["2027-10-30"]}},
        "buyMuseumTickets": _named(
            general=("General admission", example_of(
                tickets, phone=None, eventId=None, ticketType="general",
                ticketDate="2027-10-29")),
            event=("Event ticket", example_of(tickets))),
        "admitTicket": _named(
            scanned=("The scanned QR code", example_of(admission, confirmationCode=None,
                                                       scannedAt=None)),
            typed=("The confirmation code, typed", example_of(admission, code=None,
                                                              scannedAt=None)),
            order=("An order's code, typed: all its tickets of today",
                   {"confirmationCode": _ORDER_CODE}),
            offline=("A scan admitted offline, sent later",
                     example_of(admission, confirmationCode=None))),
        "changeMuseumDay": _named(
            closed=("Closed for the day", {"closed": True, "note": "Storm warning"}),
            hours=("Other hours and capacity", example_of(
                facts["DAY_FIELDS"], closed=None, note=None))),
        "pairDevice": {"example": example_of(facts["PAIRING_FIELDS"])},
        "createOrder": _named(
            web=("A family's order, held while they pay", example_of(facts["ORDER_FIELDS"])),
            desk=("A walk-in at the desk, without email", {
                "items": [{"ticketType": "general", "ticketDate": "2027-10-29",
                           "category": "adult", "quantity": 1}],
                "channel": "desk", "payment": "cash"})),
        "voidTicket": {"example": example_of(facts["VOID_FIELDS"])},
        "cancelOrder": {"example": {"reason": "Booked twice; the other order is kept"}},
        "markOrderPaid": {"example": example_of(facts["PAYMENT_FIELDS"])},
        "lookupTickets": _named(
            email=("By the buyer's email address", example_of(lookup, code=None, date=None)),
            code=("By the random part of the code, on a day",
                  example_of(lookup, email=None))),
    }


_DEVICE_KEY = {"name": "gate-20271029-091405", "role": GATE_ROLE,
               "key": "cOq8mR2k5lI_7bW0xYz1vT3nA9sD4fGh"}


def _answer_examples(facts):
    """EXAMPLES, and those of the answers made from the facts."""
    event = {"eventId": _EVENT_ID, **example_of(facts["EVENT_FIELDS"], capacity=None)}
    return {**EXAMPLES, "createSpecialEvent": event, "getSpecialEvent": event,
            "listSpecialEvents": [event],
            "pairDevice": {**_DEVICE_KEY, "name": "door-north"},
            "startDeviceSession": _DEVICE_KEY,
            "getOpenApiDescription": {"openapi": "3.1.0", "info": {
                "title": "Museum API", "version": facts["INTERFACE_VERSION"]}}}


# -- the shared components --------------------------------------------------------------------

def _parameters(facts):
    date = ref("schemas", "Date")
    return {
        "StartDate": query("startDate", "First date to include; defaults to today at the "
                           "museum.", date, "2027-10-29"),
        "EndDate": query("endDate", "Last date to include. Without it the range is "
                         "open-ended.", date, "2030-11-30"),
        "Page": query("page", "Page number, from 1; a page past the end is empty.", {
            "type": "integer", "minimum": 1, "maximum": facts["PAGE_MAX"], "default": 1}),
        "Limit": query("limit", "Items per page.", {
            "type": "integer", "minimum": 1, "maximum": facts["PAGE_SIZE_MAX"],
            "default": facts["PAGE_SIZE_DEFAULT"]}),
        "EventId": {**query("eventId", "The event's id.", UUID_SCHEMA, _EVENT_ID, True),
                    "in": "path"},
        "TicketId": {**query("ticketId", "The ticket's id.", UUID_SCHEMA, _TICKET_ID, True),
                     "in": "path"},
        "OrderId": {**query("orderId", "The order's id.", UUID_SCHEMA, _ORDER_ID, True),
                    "in": "path"},
        "IdempotencyKey": {**query(
            "Idempotency-Key", "Client-chosen key that makes retrying a purchase or a scan "
            "safe; kept per user.",
            {"type": "string", "pattern": anchored(facts["IDEMPOTENCY_KEY"])},
            "order-2027-10-29-0001"), "in": "header"},
        "IfNoneMatch": {**query(
            "If-None-Match", "An earlier response's `ETag` (or a list of them, or `*`); while "
            "one matches, the answer is 304. An empty list matches nothing.",
            {"type": "string"}, '"5d41402abc4b2a76"'), "in": "header"},
    }


def _header(description, schema, example=None, required=True):
    header = {"description": description, "required": required, "schema": schema}
    return header if example is None else {**header, "example": example}


HEADERS = {
    "CacheControlNoStore": _header("JSON responses are never cached.",
                                   {"type": "string", "const": "no-store"}),
    "CacheControlPrivate": _header("The image may be kept by the client for a day.",
                                   {"type": "string", "const": "private, max-age=86400"}),
    "Location": _header("The new resource; for a ticket `/v1.1/tickets/{ticketId}/qr`.",
                        {"type": "string", "format": "uri-reference"},
                        "/v1.1/special-events/" + _EVENT_ID),
    "XTotalCount": _header("How many items match across all pages.", _COUNT, 42),
    "Link": _header("RFC 8288 links to the `next` and `prev` pages, when there are any.",
                    {"type": "string"}, '<http://127.0.0.1:8080/v1.1/special-events?limit=10'
                    '&page=3>; rel="next", <http://127.0.0.1:8080/v1.1/special-events?'
                    'limit=10&page=1>; rel="prev"', required=False),
    "ETag": _header("Strong validator of the answer, for `If-None-Match`.", {"type": "string"},
                    '"5d41402abc4b2a76"'),
    "WWWAuthenticate": _header("The authentication challenge.", {"type": "string"},
                               'Basic realm="museum", charset="UTF-8"'),
    "RetryAfter": _header("Seconds to wait before trying again.", _COUNT, 30),
}

# What a ticket's receipt and the door show of it: never the buyer's email or phone.
_TICKET = {"ticketId": UUID_SCHEMA, "ticketType": ref("schemas", "TicketType"),
           "ticketDate": ref("schemas", "Date"),
           "confirmationCode": ref("schemas", "ConfirmationCode"),
           "eventName": {"type": "string", "description": "Only on event tickets."},
           "entryTime": {**ref("schemas", "Time"), "description": "Only with timed entry: the entry slot."}}
# A ticket's price category at the door (museum_door.door_details).
_DOOR_CATEGORY = {
    "category": {"type": "string", "description": "The price category it was sold in; "
                 "absent on tickets sold before categories were kept."},
    "categoryLabel": {"type": "string", "description": "The category's label, as "
                      "`[categories]` has it now (absent for a category no longer there)."},
    "doorNote": {"type": "string", "description": "What the door checks for this category "
                 "(\"check student ID\"); absent when it has no note."}}
_ORDER_CODE_SCHEMA = {"type": "string", "pattern": "^order-[0-9a-f]{6}-[0-9a-f]{5}$",
                      "examples": ["order-5c7e21-9ab04"]}
_ADMISSION = {"admittedAt": {"type": "string", "format": "date-time",
                             "description": "When the ticket was admitted, in UTC (RFC 3339)."},
              "admittedBy": {"type": "string", "description": "The user who admitted it."}}
_EVENT_ONLY = {**UUID_SCHEMA, "description": "Only on event tickets."}
_PRICED = {"price": ref("schemas", "TicketPrice"), "currency": ref("schemas", "Currency")}
# What a sold ticket carries for the visitor and a shop (museum_ticket_page.TicketLinks).
_LINKS = {
    "qrText": {"type": "string", "pattern": anchored(QR_TEXT), "description": (
        "The exact text of the ticket's QR code, for a shop that prints or mails tickets of "
        "its own: encode it as a QR code (model 2, not Micro QR) and the door admits it.")},
    "ticketPage": {"type": "string", "format": "uri-reference", "description": (
        "The ticket's own page, for the visitor: its QR code large, the museum, the date, "
        "entry time, category and code; it prints on one page and keeps working offline "
        "once opened. It needs no credentials: whoever has the link sees the ticket, as "
        "whoever holds the printed ticket does, so give it to the buyer alone. Its token "
        "is 128 random bits; on a void (of the ticket or its order) it answers 410. "
        "Absolute on `[server] public_url`; a path from the service's root while that is "
        "unset.")},
}


def _object(required, properties, **more):
    return {"type": "object", "required": list(required), "properties": properties, **more}


def _breakdown(name, meaning):
    """A sales row's counts for one `name` (a category, a channel)."""
    return _object([name, "sold", "void", "revenue"], {
        name: {"type": ["string", "null"], "description": meaning},
        "sold": _COUNT, "void": _COUNT, "revenue": {"type": "number", "minimum": 0}})


def _field_schemas(facts):
    """The bodies made from the declared fields, and the event they make."""
    events = facts["EVENT_FIELDS"]
    page_of = {"type": "array", "maxItems": facts["PAGE_SIZE_MAX"]}
    return {
        "Date": {"type": "string", "format": "date", "pattern": anchored(DATE),
                 "examples": ["2027-10-29"]},
        "MuseumHours": {**page_of, "items": ref("schemas", "MuseumDailyHours")},
        "SpecialEventCreate": body_schema(events),
        "SpecialEventUpdate": {**body_schema(events, change=True), "description":
                               "Any subset of the event's fields; other fields are rejected."},
        "SpecialEvent": _object(["eventId", *body_schema(events)["required"]], {
            "eventId": UUID_SCHEMA, **body_schema(events)["properties"],
            "cancelled": {"type": "boolean", "const": True, "description": "Only on a "
                          "cancelled event: in a listing of changes, or a 410 answer."},
            "updatedAt": {"type": "string", "format": "date-time", "description": "Only in "
                          "a listing of changes (`updatedSince`): the event's last change, "
                          "UTC, to the millisecond."}}),
        "SpecialEventList": {**page_of, "items": ref("schemas", "SpecialEvent")},
        "TicketType": {"type": "string", "enum": list(TICKET_TYPES)},
        "BuyTicketRequest": {**body_schema(facts["TICKET_FIELDS"]), "description":
                             "`eventId` is required for event tickets, refused for general "
                             "ones."},
        # Not a oneOf of the two: generated clients would make two request classes of it.
        "AdmissionRequest": {**body_schema(facts["ADMISSION_FIELDS"]), "minProperties": 1,
                             "maxProperties": 2,
                             "description": "Exactly one of `code` and `confirmationCode`; "
                                            "`scannedAt` only for a scan admitted offline."},
        "LookupRequest": {**body_schema(facts["LOOKUP_FIELDS"]),
                          "oneOf": [{"required": ["email"]}, {"required": ["code"]}],
                          "description": "Exactly one of `email` and `code`; `date` defaults "
                                         "to today at the museum."},
        "ConfirmationCode": {"type": "string", "pattern": anchored(CONFIRMATION_CODE),
                             "examples": [_CODE]},
        "MuseumDayChange": {**body_schema(facts["DAY_FIELDS"]), "description": (
            "`closed: true` alone (a `note` beside it), or `timeOpen` and `timeClose`, or "
            "`capacity`, or both of those; a field left out follows the configuration. It "
            "replaces whatever was set for the day before.")},
        "MuseumDay": _object(["date", "closed", "changedAt", "changedBy", "affectedTickets"], {
            "date": ref("schemas", "Date"),
            **body_schema(facts["DAY_FIELDS"])["properties"],
            "changedAt": {"type": "string", "format": "date-time"},
            "changedBy": {"type": "string", "description": "The admin who changed it."},
            "affectedTickets": {"type": "array", "items": ref("schemas", "Ticket"),
                                "description": (
                "The tickets of that day, not void nor of a cancelled event, that the day "
                "as changed no longer admits, in the order they were sold, with their "
                "buyers' email and phone (until erased) so the museum can tell them: every "
                "one on a closed day; with timed entry, those whose entry slot the new "
                "hours no longer have.")}},
            description="The day's change as stored: only the fields it sets."),
    }


def _ticket_schemas(facts):
    statuses = list(TICKET_STATUSES)
    return {
        "TicketPurchase": _object(
            ["message", "ticketId", "ticketType", "ticketDate", "confirmationCode", "price",
             "currency", *_LINKS],
            {"message": {"type": "string"}, **_TICKET, **_PRICED, **_LINKS,
             "eventId": _EVENT_ONLY}),
        "Ticket": _object([*TICKET_VIEW_FIELDS, "status"], {
            **_TICKET, **_PRICED, **{name: {**schema, "description": schema["description"] +
                                            " In the ticket read and the list of an event's "
                                            "buyers; not in a changed day's tickets."}
                                     for name, schema in _LINKS.items()},
            "status": {"type": "string", "enum": statuses, "description": (
                "`void` once voided, whatever else happened; `cancelled` when its event "
                "was; `admitted` once admitted at the door.")},
            "category": {"type": "string", "description": "The price category it was sold "
                         "in (`GET /price-categories`); absent on tickets sold before "
                         "categories were kept."},
            "eventId": _EVENT_ONLY, **_ADMISSION,
            "email": {"type": "string", "format": "email",
                      "description": f"Only for the {ADMIN_ROLE} role, until erased (then "
                                     "absent)."},
            "voidReason": _VOID_REASON,
            "phone": {"type": "string", "description": f"Only for the {ADMIN_ROLE} role, "
                      "when given, until erased (then absent)."}}),
        "FoundTicket": _object([*DOOR_FIELDS, "status", "admitted"], {
            **_TICKET, **_DOOR_CATEGORY, "eventId": _EVENT_ONLY,
            "orderCode": {**_ORDER_CODE_SCHEMA, "description": "Only for a ticket of an "
                          "order: the order's code, which admits all its tickets valid "
                          "today in one scan (Admit all)."},
            "orderId": {**UUID_SCHEMA, "description": "Only for a ticket of an order: the "
                        "order's id (`GET /orders/{orderId}`)."},
            "voidReason": _VOID_REASON,
            "status": {"type": "string", "enum": statuses, "description": (
                "`cancelled`: its event was; `void`: refunded at the desk, or its order "
                "cancelled, voided or its hold ended unpaid; `unpaid`: its order is on hold, "
                "not paid yet.")},
            "admitted": {"type": "boolean"}, **_ADMISSION}),
        "LookupResult": _object(["date", "tickets"], {
            "date": ref("schemas", "Date"),
            "tickets": {"type": "array", "maxItems": facts["LOOKUP_LIMIT"],
                        "items": ref("schemas", "FoundTicket")}}),
        "DoorCounts": _object(TICKET_TYPES,
                              {kind: _COUNT for kind in TICKET_TYPES}),
    }


_VOID_REASON = {"type": "string", "description": (
    "Only once voided with a reason (`DELETE` with a body), and only for the museum's staff "
    "(gate, desk, admin): why it was voided. Never mailed nor sent to a webhook.")}


def _order_schemas(facts):
    order_fields = body_schema(facts["ORDER_FIELDS"])
    tickets = {"type": "array", "minItems": 1, "maxItems": facts["ORDER_TICKETS_MAX"],
               "items": ref("schemas", "Ticket"), "description": "Each ticket as `GET "
               "/tickets/{ticketId}` reads it, by date, event, entry time and category."}
    priced = {"total": {**ref("schemas", "TicketPrice"), "description": "The sum of the "
                        "tickets' prices."}, "currency": ref("schemas", "Currency"),
              "channel": order_fields["properties"]["channel"],
              "payment": {**order_fields["properties"]["payment"],
                          "enum": list(facts["ORDER_PAYMENTS"]), "description": (
                              "How the desk was paid, or `due`: to be paid at the desk "
                              "(an order of the booking page).")}}
    return {
        "OrderItem": {**body_schema(facts["ORDER_ITEM_FIELDS"]), "description": (
            "`quantity` tickets alike; `eventId` is required for event tickets, refused for "
            "general ones.")},
        "OrderRequest": {**order_fields, "description": (
            "`email` is required for the `web` channel; `payment` for the `desk` channel "
            "only.")},
        "Order": _object(["orderId", "orderCode", "status", "channel", "total", "currency",
                          "createdAt", "tickets"], {
            "orderId": UUID_SCHEMA,
            "orderCode": {"type": "string", "pattern": anchored(ORDER_CODE), "description": (
                "Typed at the door like a confirmation code: admits all the order's tickets "
                "valid that day.")},
            "status": {"type": "string", "enum": list(facts["ORDER_STATUSES"])},
            **priced,
            "createdAt": {"type": "string", "format": "date-time"},
            "expiresAt": {"type": "string", "format": "date-time", "description": (
                "Only while `pending` or once `expired`: when the hold ends.")},
            "email": {"type": "string", "format": "email", "description": (
                "For the account that made the order and an admin, when given, until "
                "erased.")},
            "phone": {"type": "string", "description": "As `email`."},
            "paidAt": {"type": "string", "format": "date-time", "description": (
                "Only once the desk marked a payment `due` paid (`POST "
                "/orders/{orderId}/payment`): when."), "examples": ["2027-10-29T09:50:12Z"]},
            "voidReason": _VOID_REASON,
            "tickets": tickets}),
        "OrderPaymentRequest": body_schema(facts["PAYMENT_FIELDS"]),
        "VoidRequest": {**body_schema(facts["VOID_FIELDS"]), "description": (
            "Optional: a void without a body keeps no reason.")},
        "OrderQuote": _object(["channel", "total", "currency", "tickets"], {
            **priced, "tickets": {**tickets, "items": {"description": (
                "A ticket as it would be sold: without `ticketId`, `confirmationCode` or "
                "`status`."), "type": "object"}}}),
    }


def _order_answers(facts):
    return {
        "ChannelRefused": problem(403, "The role may not sell on this channel (the desk "
                                  f"needs the {facts['DESK_ROLES']} role).",
                                  facts["DESK_REFUSED"]),
        "OrderConflict": named_problems(
            "The hold ended before the order was confirmed (`expired`: its places are free "
            "again), or the order is no longer pending (`not-pending`); nothing changed.",
            "Problem", {"expired": problem_body(409, facts["EXPIRED"], reason="expired"),
                        "not-pending": problem_body(409, facts["NOT_PENDING"],
                                                    reason="not-pending")}),
        "OrderNotDue": named_problems(
            "The order has no payment due (`not-due`): it is free, was paid another way, "
            "or is pending, expired, cancelled or voided; nothing changed.", "Problem", {
                "paid": problem_body(409, facts["NOT_DUE_PAID"], reason="not-due"),
                "voided": problem_body(409, facts["NOT_DUE_VOIDED"], reason="not-due")}),
        "OrderGone": problem(410, "The order expired, was cancelled or voided: its code "
                             "admits nobody.", facts["ORDER_GONE"]),
        "OrderQuote": json_answer("A quote (`simulate=true`): what the order would cost "
                                  "now; nothing was bought or held.",
                                  ref("schemas", "OrderQuote"), _QUOTE),
    }


def _door_schemas():
    order_tickets = {"type": "array", "description": "Only for an order's code: each of the "
                     "order's tickets, with what this scan made of it (`result`).",
                     "items": ref("schemas", "TicketAtTheDoor")}
    order_members = {
        "orderCode": {**_ORDER_CODE_SCHEMA, "description": "Only for an order's code or QR: "
                      "the order."},
        "admitted": {**_COUNT, "description": "Only for an order's code: how many of its "
                     "tickets this scan admitted."},
        "tickets": order_tickets}
    return {
        "Admission": _object(["result"], {
            "result": {"type": "string", "const": "admitted"}, **_TICKET, **_DOOR_CATEGORY,
            **_ADMISSION, **order_members, "collect": {
                **ref("schemas", "Collect"), "description": "Only when this admission let in "
                "the first of the day's tickets of an order to be paid at the desk and not "
                "paid yet: what to collect, the whole order's price."}}, description=(
                f"A ticket's admission ({', '.join(DOOR_FIELDS)}, admittedAt, admittedBy, "
                "and its category), or an order's: `orderCode`, `admitted` and `tickets`; "
                "`collect` when the door takes the order's payment.")),
        "Collect": _object(["amount", "currency"], {
            "amount": {"type": "string", "pattern": r"^\d+\.\d{2}$", "examples": ["25.00"],
                       "description": "The amount, exact, with two decimals."},
            "currency": ref("schemas", "Currency")}, description=(
                "What the door collects for an order to be paid at the desk: the prices of "
                "its tickets not void, on every day of the order.")),
        "TicketAtTheDoor": _object(["result", *DOOR_FIELDS], {
            "result": {"type": "string", "enum": ["admitted", *DOOR_OUTCOMES],
                       "description": "`admitted` by this scan, or why not, as the ticket "
                                      "alone would be refused."},
            **_TICKET, **_DOOR_CATEGORY, **_ADMISSION,
            "sameDevice": {"type": "boolean", "const": True, "description": (
                "Only on `already-admitted`: this same user admitted it moments ago.")}}),
        "DoorProblem": {
            "description": (
                "Problem details with the door's `result`. Where a ticket was found "
                "(`already-admitted`, `wrong-date`, `unpaid`, `cancelled`, `void`) they "
                "show it and its category, for "
                "`already-admitted` when and by whom it was first admitted, and for "
                "`wrong-date` whether it is `early` or `past` (the detail says its day), "
                "and its `entryTime` when it has one (for `too-early` the detail says from "
                "when it is admitted); never the buyer's email or phone. For an order's "
                "code, `orderCode`, `admitted` 0 and each of its `tickets` with its own "
                "`result` instead. Only a reused `Idempotency-Key` (422) has no `result`."),
            # The members in a schema of their own: openapi-python-client reads an allOf
            # of one `$ref` as that schema alone and drops the members beside it.
            "allOf": [ref("schemas", "Problem"), _object([], {
                "result": {"type": "string", "enum": list(DOOR_OUTCOMES)},
                **_TICKET, **_DOOR_CATEGORY, **_ADMISSION, **order_members,
                "when": {"type": "string", "enum": ["early", "past"], "description": (
                    "Only on `wrong-date`: the ticket's day is still to come, or gone.")},
                "sameDevice": {"type": "boolean", "const": True, "description": (
                    f"Only on `already-admitted`: this same user admitted the ticket within "
                    f"the last {SAME_DEVICE_MINUTES} minutes.")},
                "doubleEntry": {"type": "boolean", "const": True, "description": (
                    "Only on `already-admitted` for a scan admitted offline (`scannedAt`): "
                    "another admission came first, and a double entry was recorded.")}})],
        },
        "AdmissionList": _object(["date", "timeZone", "now", "cursor", "complete", "events",
                                  "columns", "tickets"], {
            "date": ref("schemas", "Date"),
            "timeZone": {"type": "string", "description": "The museum's IANA time zone."},
            "now": {"type": "string", "format": "date-time",
                    "description": "The museum's clock, in its zone."},
            "cursor": {"type": "string", "description": "Opaque: `since` for the next call."},
            "complete": {"type": "boolean", "description": "`false`: only the changes since "
                         "the cursor given."},
            "events": {"type": "array", "description": "The events of the rows, indexed by "
                       "their `event`.", "items": _object(["eventId", "eventName"], {
                           "eventId": UUID_SCHEMA, "eventName": {"type": "string"}})},
            "columns": {"type": "array", "items": {"type": "string", "enum": list(LIST_COLUMNS)},
                        "description": f"Always {', '.join(LIST_COLUMNS)}: what the places "
                                       f"of each row hold."},
            "tickets": {"type": "array", "description": "One row per ticket, in the order of "
                        "`columns`; rows of tickets not admitted stop after `status`, unless "
                        "their order is to be paid at the desk (`orderId`, `collect`).",
                        "items": {"type": "array", "minItems": 6,
                                  "maxItems": len(LIST_COLUMNS),
                                  "prefixItems": [
                                      UUID_SCHEMA,
                                      {"type": "string", "pattern": "^[0-9a-f]{16}$"},
                                      {"type": ["integer", "null"], "minimum": 0},
                                      {"oneOf": [ref("schemas", "Time"), {"type": "null"}]},
                                      {"type": "null"},
                                      {"type": "string", "enum": list(TICKET_STATUSES)},
                                      {"type": ["string", "null"], "format": "date-time"},
                                      {"type": ["string", "null"]},
                                      UUID_SCHEMA, ref("schemas", "Collect")]}}}),
    }


def _device_schemas(facts):
    return {"PairingRequest": body_schema(facts["PAIRING_FIELDS"]),
            "DeviceKey": facts["KEY_ANSWER"]}


def _device_responses(facts):
    """The refusals of pairing and of a door device's sign-in (museum_devices)."""
    spent = facts["SPENT_CODE"]
    return {
        "UnknownPairingCode": problem(404, "No pairing code is this one, or its device was "
                                      "revoked.", facts["UNKNOWN_CODE"]),
        "PairingCodeSpent": named_problems(
            "The pairing code paired a device before, or expired; nothing was changed.",
            "Problem", {why: problem_body(410, spent[why]) for why in ("used", "expired")}),
        "PairingLimited": problem(
            429, "Too many unknown, used or expired pairing codes from this client "
            "address: `Retry-After` says when it may try again.", facts["PAIRING_LIMITED"],
            headers=_RETRY),
        "NotAStoredDevice": problem(
            409, "The credentials are a user's password or a device of `[users]`, not a "
            "device of the database; nothing was revoked.", facts["NOT_A_STORED_DEVICE"]),
    }


_NULL_WHEN_GENERAL = "`null` for general entry."
_UNLIMITED = "`null`: unlimited."
SCHEMAS_FIXED = {  # the schemas no fact of the service shapes
    "PriceCategory": _object(["name", "label", "price", "currency", "persons", "note"], {
        "name": {"type": "string", "description": "What a sale's `category` names."},
        "label": {"type": "string", "description": "What a person reads."},
        "price": {"type": "number", "minimum": 0, "maximum": PRICE_MAX,
                  "description": "General entry's price in this category (an event's "
                  "ticket costs the event's `price`, or its `prices` entry)."},
        "currency": {"type": "string", "pattern": anchored(CURRENCY)},
        "persons": {"type": "integer", "minimum": 1,
                    "description": "The places one ticket of it takes."},
        "note": {"type": "string", "description": "What the door checks (such as a "
                 "student card); empty for none."}}),
    "Museum": _object(["name", "timeZone", "now", "currency", "earlyMinutes", "slotMinutes",
                       "categories"], {
        "name": {"type": "string"},
        "timeZone": {"type": "string", "description": "IANA name of the museum's zone, "
                     "which its dates and times are in."},
        "now": {"type": "string", "format": "date-time",
                "description": "The museum's clock, in its zone."},
        "currency": {"type": "string", "pattern": anchored(CURRENCY)},
        "earlyMinutes": {"type": "integer", "minimum": 0, "description": "Minutes before its "
                         "entry slot that a timed ticket is admitted."},
        "slotMinutes": {"type": ["integer", "null"], "minimum": 1, "description": (
            "Length of an entry slot; `null` without timed entry.")},
        "categories": {"type": "array", "minItems": 1, "items": ref(
            "schemas", "PriceCategory"), "description": "As `GET /price-categories` "
            "lists them, the default first."}}),
    "Time": {"type": "string", "description": "Local time in the museum's time zone, 24-hour "
             "clock.", "pattern": r"^\d{2}:\d{2}$", "examples": ["09:00"]},
    "MuseumDailyHours": _object(["date", "timeOpen", "timeClose"], {
        "date": ref("schemas", "Date"), "timeOpen": ref("schemas", "Time"),
        "timeClose": ref("schemas", "Time")}),
    "TicketPrice": {"type": ["number", "null"], "minimum": 0, "maximum": PRICE_MAX,
                    "examples": [25], "description": (
                        "What the ticket was sold at: the event's price then (for its price "
                        "category, if the event has one), or general entry's price in its "
                        "category; null for tickets sold before prices were kept.")},
    "Currency": {"type": ["string", "null"], "pattern": anchored(CURRENCY), "examples": ["EUR"],
                 "description": "ISO 4217 code of the currency of `price`; null when `price` is."},
    "Places": _object(["capacity", "sold", "available"], {
        "capacity": {"type": ["integer", "null"], "minimum": 1, "description": _UNLIMITED},
        "sold": _COUNT,
        "available": {"type": ["integer", "null"], "minimum": 0, "description": _UNLIMITED}}),
    "DayAvailability": _object(["date", "open", "general", "events"], {
        "date": ref("schemas", "Date"), "open": {"type": "boolean"},
        "general": {"oneOf": [ref("schemas", "Places"), {"type": "null"}],
                    "description": "General entry; `null` when closed."},
        "slots": {"type": "array", "description": "Only with timed entry: the day's entry "
                  "slots in order (none when closed), each with its places.",
                  "items": {"allOf": [ref("schemas", "Places"), _object(["time"], {
                      "time": ref("schemas", "Time"), "ended": {
                          "type": "boolean", "const": True, "description": "Only on a "
                          "slot of today that has ended: no longer sold, `available` 0."}})]}},
        "events": {"type": "array", "description": "The events taking place that day, by name.",
                   "items": {"allOf": [ref("schemas", "Places"), _object(["eventId", "name"], {
                       "eventId": UUID_SCHEMA, "name": {"type": "string"}})]}}}),
    "SalesRow": _object(REPORT_COLUMNS, {
        "date": ref("schemas", "Date"), "ticketType": ref("schemas", "TicketType"),
        "eventId": {"type": ["string", "null"], "format": "uuid",
                    "description": _NULL_WHEN_GENERAL},
        "eventName": {"type": ["string", "null"], "description": _NULL_WHEN_GENERAL},
        "sold": {**_COUNT, "description": "Tickets sold, void ones too."},
        "void": {**_COUNT, "description": "Of those, voided."},
        "admitted": {**_COUNT, "description": "Of those, admitted at the door."},
        "revenue": {"type": "number", "minimum": 0,
                    "description": "The prices of the tickets not void."},
        "currency": ref("schemas", "Currency"),
        "doubleEntries": {**_COUNT, "description": "Of those, double entries recorded at the "
                          "door (admitted offline after another admission)."},
        "categories": {"type": "array", "description": "Only with `breakdown=true`: the "
                       "row's tickets by price category, by name: sold, void and revenue "
                       "as above.",
                       "items": _breakdown("category", "The price category; `null` for "
                                           "tickets sold before categories were kept.")},
        "channels": {"type": "array", "description": "Only with `breakdown=true`: the row's "
                     "tickets by how they were sold, by name: sold, void and revenue as "
                     "above.",
                     "items": _breakdown("channel", f"`web` or `desk`: an order's channel; "
                                         f"`{SOLD_ALONE}`: sold alone, one ticket per "
                                         f"`POST /tickets`.")}}),
    "AdmissionHistory": _object(["ticketId", "admitted", "history"], {
        "ticketId": UUID_SCHEMA, "admitted": {"type": "boolean", "description": "Admitted now."},
        **_ADMISSION,
        "history": {"type": "array", "description": "Every admission and undo, oldest first.",
                    "items": _object(["action", "at", "by"], {
                        "action": {"type": "string", "enum": [
                            "admitted", "undone", "double-entry"], "description": (
                            "`double-entry`: admitted again, offline, by `by` at `at`.")},
                        "at": {"type": "string", "format": "date-time"},
                        "by": {"type": "string",
                               "description": "The user (device) who did it."}})}}),
    "EventDoorCounts": _object(["eventId", "name", "sold", "admitted"], {
        "eventId": UUID_SCHEMA, "name": {"type": "string"}, "sold": _COUNT, "admitted": _COUNT}),
    "AdmissionSummary": _object(["date", "sold", "admitted", "events", "devices",
                                 "doubleEntries"], {
        "date": ref("schemas", "Date"),
        "sold": {**ref("schemas", "DoorCounts"), "description": "Tickets for the day, by kind."},
        "admitted": {**ref("schemas", "DoorCounts"),
                     "description": "Those of them admitted so far."},
        "events": {"type": "array", "description": "The events with tickets for the day, by "
                   "name.", "items": ref("schemas", "EventDoorCounts")},
        "devices": {"type": "array", "description": "Each entrance: the users (devices) that "
                    "admitted the day's tickets, by name, with how many each admitted (of "
                    "those not undone).", "items": _object(["name", "admitted"], {
                        "name": {"type": "string"}, "admitted": _COUNT})},
        "doubleEntries": {**_COUNT, "description": "Double entries recorded for the day's "
                          "tickets: admitted offline after another admission."}},
        description="Cancelled events and their tickets are not counted."),
    "Problem": _object(["type", "title", "status", "detail"], {
        "type": {"type": "string", "const": "about:blank"},
        "title": {"type": "string", "description": "The HTTP status phrase."},
        "status": {"type": "integer", "minimum": 400, "maximum": 599},
        "detail": {"type": "string"},
        "errors": {"type": "array", "minItems": 1, "items": ref("schemas", "FieldError"),
                   "description": "Only when fields are at fault: one entry per field."},
        "reason": {**ref("schemas", "Reason"), "description": "On every 409 but the "
                   "door's (whose `result` says why): why the request conflicts."}},
        description="RFC 9457 problem details."),
    "EventProblem": {
        "description": "Problem details of a cancelled event: `event` is what it was.",
        "allOf": [ref("schemas", "Problem"), {
            "type": "object", "required": ["event"],
            "properties": {"event": ref("schemas", "SpecialEvent")}}]},
    "PurchaseProblem": {
        "description": "Problem details; a sale refused for want of places has `reason` "
                       "`sold-out` and names what is full.",
        "allOf": [ref("schemas", "Problem"), {"type": "object", "properties": {
            "date": ref("schemas", "Date"),
            "eventId": {**UUID_SCHEMA, "description": "Only when an event date is full."},
            "entryTime": {**ref("schemas", "Time"), "description": "Only when an entry slot is full."}}}]},
    "FieldError": _object(["field", "code", "message"], {
        "field": {"type": "string"},
        "code": {"type": "string", "enum": list(FIELD_CODES), "description": (
            "The rule that refused the field, stable for a client to translate:\n\n"
            + "\n".join(f"- `{code}`: {meaning}" for code, meaning in FIELD_CODES.items()))},
        "message": {"type": "string", "description": "The rule in English, for a person."}}),
    "Reason": {"type": "string", "enum": list(CONFLICT_REASONS), "description": (
        "Why a 409 refused the request, stable for a client to translate:\n\n"
        + "\n".join(f"- `{reason}`: {meaning}"
                     for reason, meaning in CONFLICT_REASONS.items()))},
}


# -- the shared answers -----------------------------------------------------------------------
# Each problem example is the service's own answer: tests/test_openapi_examples.py provokes
# each case and compares.

_RETRY = {"Retry-After": ref("headers", "RetryAfter")}
_LOGINS_REFUSED = problem_body(429, "Too many failed logins; wait and retry.")
ANSWERS_FIXED = {  # the shared answers no fact of the service shapes
    "SalesChart": {"description": "The chart, as SVG.", "headers": {
        "Cache-Control": _NO_STORE}, "content": {"image/svg+xml": _PNG,
                                                 "application/octet-stream": _PNG}},
    "SalesReport": {"description": "The report's rows.",
                    "headers": {"Cache-Control": _NO_STORE}, "content": {
                        "application/json": {"schema": {"type": "array", "items": ref(
                            "schemas", "SalesRow")}, "example": [_SALES_ROW]},
                        "text/csv": {"schema": {"type": "string"},
                                     "example": report_csv([_SALES_ROW])}}},
    "TicketImage": {"description": "The code as a PNG image.", "headers": {
        "ETag": ref("headers", "ETag"), "Cache-Control": ref("headers", "CacheControlPrivate")},
        "content": {"image/png": _PNG, "application/octet-stream": _PNG}},
    "NotModified": {"description": "`If-None-Match` matched: the cached image is current.",
                    "headers": {"ETag": ref("headers", "ETag")}},
    "ListNotModified": {"description": "`If-None-Match` matched: the list the client holds "
                        "is current.", "headers": {"ETag": ref("headers", "ETag"),
                                                   "Cache-Control": _NO_STORE}},
    "Unauthorized": problem(401, "Credentials are missing or wrong. The `WWW-Authenticate` "
                            "challenge is left out of the answer to a page's script (a "
                            "request with `Sec-Fetch-Mode: cors` or `same-origin`, or with "
                            "`X-Requested-With`), so that no browser shows its login box.",
                            "Valid credentials are required.", headers={
                                "WWW-Authenticate": ref("headers", "WWWAuthenticate")}),
    "Forbidden": problem(403, f"The credentials are valid but lack the {ADMIN_ROLE} role.",
                         needs_role(ADMIN_ROLE)),
    "NeedsGateRole": problem(403, f"The credentials are valid but lack the {GATE_ROLE} "
                             "role.", needs_role(GATE_ROLE)),
    "NeedsDeskRole": problem(403, f"The credentials are valid but lack the {DESK_ROLE} "
                             "role.", needs_role(DESK_ROLE)),
    "NotTodaysTicket": problem(
        403, f"The {DESK_ROLE} role voiding a ticket not dated today at the museum, or an "
        f"order with such a ticket (an admin may void any); or credentials without the "
        f"{DESK_ROLE} role.",
        DESK_VOIDS_TODAYS),
    "NotTodaysReport": problem(
        403, f"The {DESK_ROLE} role asking for a window other than today at the museum (an "
        f"admin may ask for any); or credentials without the {DESK_ROLE} role.",
        DESK_READS_TODAY),
    "MessageBusy": problem(409, "The message is being sent (its claim may still deliver "
                           "it), or, to send it again, was sent.", MESSAGE_BUSY),
    "NotFound": problem(404, "The event or ticket does not exist, or the event was "
                        "cancelled.", "No such record (it may have been cancelled)."),
    "UnsupportedMediaType": problem(415, "The body is not of a JSON media type.",
                                    "Send the body as application/json."),
    "TooManyRequests": problem(
        429, "Too many wrong passwords for this user name from this address (or from "
        "this address for any name), another login's password being checked "
        "(`Retry-After: 1`), or, at the "
        "door, too many unknown ticket codes or lookups from this user. Credentials "
        "verified before are never refused for failed logins.",
        _LOGINS_REFUSED["detail"], headers=_RETRY),
    "RequestHeaderFieldsTooLarge": {"description": (
        f"The request line and headers are over {_HEADER_LIMIT} bytes (the server's "
        "`max_request_header_size` by default); answered by the HTTP server itself."),
        "content": _SERVER_TEXT},
    "ServiceUnavailable": problem(503, "The database is unavailable.",
                                  "The database is unavailable; try again shortly.",
                                  headers=_RETRY),
    "PurchaseLimitReached": json_answer(
        "Too many failed logins (as for any operation), or a visitor credential bought as "
        "many tickets within the last hour as `[auth] visitor_tickets_per_hour` allows "
        "(counted on every instance together; nothing was sold): `Retry-After` says when "
        "the first of them leaves the hour.", ref("schemas", "Problem"), {
            "too-many-logins": {"value": _LOGINS_REFUSED},
            "purchase-limit": {"value": problem_body(429, PURCHASE_LIMIT_RULE)}},
        _RETRY, "application/problem+json", named=True),
    "OrderLimitReached": json_answer(
        "Too many failed logins (as for any operation); a visitor credential bought as many "
        "tickets within the last hour as `[auth] visitor_tickets_per_hour` allows; or, "
        "without credentials ([shop] enabled), this client address made `[shop] "
        "orders_per_hour` orders within the hour (counted by each instance), or this email "
        "has `[shop] orders_per_email_per_day` orders within 24 hours (counted on every "
        "instance together). Nothing was sold; `Retry-After` says when to retry.",
        ref("schemas", "Problem"), {
            "too-many-logins": {"value": _LOGINS_REFUSED},
            "purchase-limit": {"value": problem_body(429, PURCHASE_LIMIT_RULE)},
            "address-limit": {"value": problem_body(429, SHOP_ADDRESS_LIMITED)},
            "email-limit": {"value": problem_body(429, SHOP_EMAIL_LIMITED)}},
        _RETRY, "application/problem+json", named=True),
    "UndoLimitReached": json_answer(
        "Too many failed logins (as for any operation), or this gate undid this ticket's "
        f"admission {UndoLimit.MOST} times today at the museum (an admin has no limit; "
        "nothing was changed): `Retry-After` says when the museum's day ends.",
        ref("schemas", "Problem"), {
            "too-many-logins": {"value": _LOGINS_REFUSED},
            "undo-limit": {"value": problem_body(429, UndoLimit.RULE)}},
        _RETRY, "application/problem+json", named=True),
    "NotAdmitted": problem(404, "The ticket has not been admitted, or does not exist.",
                           "This ticket has not been admitted."),
    "PurchaseConflict": named_problems(
        "The `Idempotency-Key` was used before with a different body, or the ticket's day "
        "or event date is sold out; nothing was sold.", "PurchaseProblem", {
            "key-reused": problem_body(409, KEY_REUSED, reason="key-reused"),
            "sold-out": problem_body(409, "Sold out: no places are left for this event "
                                     "on 2027-10-30.", reason="sold-out",
                                     date="2027-10-30", eventId=_EVENT_ID)}),
    "EventChangeRefused": named_problems(
        "The new dates leave out dates for which tickets were sold, or the new capacity "
        "is below the tickets sold for a date; nothing was changed. `errors` names each "
        "such date.", "Problem", {
            "dates-sold": problem_body(
                409, "Tickets were sold for dates this change removes: 2027-10-31 (2 "
                "sold). Keep those dates, or cancel the event.", errors=[{
                    "field": "dates", "code": "dates-sold",
                    "message": "must keep 2027-10-31: 2 ticket(s) sold for it"}],
                reason="dates-sold"),
            "capacity-below-sold": problem_body(
                409, "More tickets were sold than this capacity allows: 2027-10-31 (2 "
                "sold). Keep a capacity of at least the tickets sold.", errors=[{
                    "field": "capacity", "code": "below-sold",
                    "message": "must be at least 2: 2 ticket(s) sold for 2027-10-31"}],
                reason="capacity-below-sold")}),
}


def _responses(facts):
    return {
        "SpecialEvent": json_answer("The event.", ref("schemas", "SpecialEvent"),
                                    _answer_examples(facts)["createSpecialEvent"]),
        "EventCancelled": json_answer(
            "The event was cancelled: `event` is what it was, marked `cancelled`.",
            ref("schemas", "EventProblem"),
            problem_body(410, facts["EVENT_CANCELLED"], event={
                **_answer_examples(facts)["createSpecialEvent"], "cancelled": True}),
            media_type="application/problem+json"),
        "BadRequest": problem(
            400, "The request is invalid; `errors` names every bad field. Malformed framing "
            "gets the HTTP server's text/plain answer instead.", facts["BAD_QUERY"],
            errors=[{"field": "limit", "code": "out-of-range",
                     "message": "must be a whole number from 1 to "
                     f"{facts['PAGE_SIZE_MAX']}"}], server_text=True),
        "ContentTooLarge": problem(
            413, f"The body is larger than {facts['BODY_LIMIT']} bytes. Bodies over the HTTP "
            "server's buffer get its text/plain answer instead.",
            f"The body is larger than {facts['BODY_LIMIT']} bytes.", server_text=True),
    }


def _door_problem(meaning, *results, more=None):
    """The door's refusal for `results` (of one status), with an example of each: what the
    service answers, its `result` and what it shows of the ticket; `more` adds named
    examples of those results ({name: (result, members)}) or other problems ({name: body})."""
    examples = {}
    kinds = {result: (result, _DOOR_REFUSALS[result]) for result in results}
    for name, (result, members) in {**kinds, **_DOOR_REFUSAL_KINDS}.items():
        if result in results:
            status, detail = DOOR_OUTCOMES[result]
            examples[name] = problem_body(status, _DOOR_REFUSAL_DETAILS.get(result, detail),
                                          result=result, **members)
    return named_problems(meaning, "DoorProblem", {**examples, **(more or {})})


def _door_responses():
    return {
        "UndoNotAllowed": problem(
            403, "A gate undoing another user's admission, or its own after "
            f"{UNDO_MINUTES} minutes (an admin may); or credentials without the "
            f"{GATE_ROLE} role.", UNDO_RULE),
        "UnknownTicket": _door_problem("No ticket was sold with this genuine QR code "
                                       "or typed confirmation code.", "unknown"),
        "NotAdmittable": _door_problem("The ticket was admitted before (and when, by "
                                       "whom; by this same user moments ago, or a double "
                                       "entry recorded), is for another day, or its entry "
                                       "time has not come; or its order is not paid yet "
                                       "(`unpaid`: on hold); or typed digits end both a "
                                       "ticket's code and an order's (`ambiguous`: type it "
                                       "whole). For an order's code: none of its tickets "
                                       "could be admitted, each says why.",
                                       "already-admitted", "wrong-date", "too-early",
                                       "unpaid"),
        "DeadTicket": _door_problem("The ticket's event was cancelled, or the ticket "
                                    "was voided, or its order was cancelled or voided, or "
                                    "the order's hold ended unpaid.", "cancelled", "void"),
        "ForgedTicket": _door_problem(
            "The QR text is well formed but not one this museum made (`forged`); or the "
            "input is not a museum ticket's QR text or code at all (`unreadable`: scan "
            "again); or the `Idempotency-Key` was used before with another body (no "
            "`result`).", "forged", "unreadable",
            more={"key-reused": problem_body(422, KEY_REUSED)}),
        "Gone": named_problems("The ticket's event was cancelled, or the ticket was voided.",
                               "Problem", {result: problem_body(410, DOOR_OUTCOMES[result][1])
                                           for result in ("cancelled", "void")}),
    }

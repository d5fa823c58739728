"""Special events over HTTP: create, list, read, update and cancel.

Each test reads as a short transcript of requests against a fresh database, with the clock
fixed at 2026-11-22 (conftest.NOW). Bodies in the validation tables are JSON text, so that
values Python cannot write (huge integers, `1e400`, `NaN`) go over the wire as given.
"""

import json
import re
import sqlite3
import uuid
from datetime import date, timedelta
from urllib.parse import parse_qs, urlsplit

import pytest

from conftest import ADMIN, TODAY, VISITOR, assert_problem, basic
from ticketing import EVENTS, TICKETS, UNKNOWN_ID

FIELDS = ("name", "location", "eventDescription", "dates", "price")
LINK = re.compile(r'<([^>]*)>\s*;\s*rel="([^"]+)"')


# -- helpers ---------------------------------------------------------------------------

def event_body(**changes):
    """A valid event body, with `changes`."""
    body = {"name": "Night at the Museum", "location": "Main hall",
            "eventDescription": "A guided tour by torchlight.", "dates": ["2026-12-05"],
            "price": 25}
    return {**body, **changes}


def json_with(base, name, literal):
    """`base` as JSON text with member `name` set to the JSON text `literal`."""
    rest = json.dumps({key: value for key, value in base.items() if key != name})[1:-1]
    member = f"{json.dumps(name)}: {literal}"
    return "{" + (f"{rest}, {member}" if rest else member) + "}"


def days(count, start="2027-01-01"):
    first = date.fromisoformat(start)
    return [(first + timedelta(days=offset)).isoformat() for offset in range(count)]


def send(client, method, path, body, status, headers=ADMIN, content_type="application/json"):
    """`body` (a dict, or JSON text/bytes sent as given) with `method` to `path`."""
    data = body if isinstance(body, (str, bytes)) else json.dumps(body)
    data = data.encode() if isinstance(data, str) else data
    return getattr(client, method.lower())(path, data, headers=headers, status=status,
                                           content_type=content_type)


def post(client, body, status, **options):
    return send(client, "POST", EVENTS, body, status, **options)


def patch(client, event, body, status, **options):
    return send(client, "PATCH", url(event), body, status, **options)


def create(client, **changes):
    return post(client, event_body(**changes), 201).json


def url(event):
    return f"{EVENTS}/{event['eventId']}"


def get(client, event, status=200, headers=VISITOR):
    return client.get(url(event), headers=headers, status=status)


def listing(client, params=(), status=200, headers=VISITOR):
    return client.get(EVENTS, params=params, headers=headers, status=status)


def names(res):
    return [event["name"] for event in res.json]


def total(res):
    return int(res.headers["X-Total-Count"])


def links(res):
    """{rel: absolute URL} from the RFC 8288 Link header."""
    return {rel: target for target, rel in LINK.findall(res.headers.get("Link", ""))}


def query(link):
    return {name: values[0] for name, values in parse_qs(urlsplit(link).query).items()}


def assert_event(body):
    """`body` is a full event: exactly the six fields, each of its type."""
    assert set(body) == {"eventId", *FIELDS}
    assert str(uuid.UUID(body["eventId"])) == body["eventId"]
    assert all(isinstance(body[name], str) for name in ("name", "location", "eventDescription"))
    assert body["dates"] == sorted(set(body["dates"])) and body["dates"]
    assert isinstance(body["price"], (int, float)) and not isinstance(body["price"], bool)


def stored_row(db_path, event_id):
    with sqlite3.connect(db_path) as conn:
        return conn.execute("SELECT name, cancelled FROM events WHERE id = ?",
                            (event_id,)).fetchone()


def buy_ticket(client, event, status):
    body = {"ticketType": "event", "eventId": event["eventId"], "ticketDate": event["dates"][0],
            "email": "visitor@example.org"}
    return client.post_json(TICKETS, body, headers=VISITOR, status=status)


@pytest.fixture
def event(client):
    return create(client)


# -- validation tables -----------------------------------------------------------------

# (case id, field, JSON text of its value, the field the error names)
INVALID_VALUES = [
    ("name-empty", "name", '""', "name"),
    ("name-blank", "name", '" \\t\\n "', "name"),
    ("name-201-chars", "name", json.dumps("n" * 201), "name"),
    ("name-number", "name", "42", "name"),
    ("name-null", "name", "null", "name"),
    ("location-empty", "location", '""', "location"),
    ("location-blank", "location", '"   "', "location"),
    ("location-201-chars", "location", json.dumps(" " + "l" * 201 + " "), "location"),
    ("location-list", "location", '["Main hall"]', "location"),
    ("location-null", "location", "null", "location"),
    ("description-empty", "eventDescription", '""', "eventDescription"),
    ("description-blank", "eventDescription", '"\\n\\n"', "eventDescription"),
    ("description-5001-chars", "eventDescription", json.dumps("d" * 5001), "eventDescription"),
    ("description-object", "eventDescription", '{"text": "x"}', "eventDescription"),
    ("description-null", "eventDescription", "null", "eventDescription"),
    ("dates-empty", "dates", "[]", "dates"),
    ("dates-not-a-list", "dates", '"2026-12-05"', "dates"),
    ("dates-367-entries", "dates", json.dumps(days(367)), "dates"),
    ("dates-null", "dates", "null", "dates"),
    ("date-february-30", "dates", '["2026-12-05", "2026-12-06", "2023-02-30"]', "dates[2]"),
    ("date-unpadded", "dates", '["2023-2-3"]', "dates[0]"),
    ("date-basic-format", "dates", '["2026-12-05", "20230203"]', "dates[1]"),
    ("date-with-time", "dates", '["2026-12-05T10:00:00"]', "dates[0]"),
    ("date-number", "dates", "[20230203]", "dates[0]"),
    ("date-null", "dates", "[null]", "dates[0]"),
    ("price-true", "price", "true", "price"),
    ("price-false", "price", "false", "price"),
    ("price-string", "price", '"25"', "price"),
    ("price-negative", "price", "-0.01", "price"),
    ("price-over-a-million", "price", "1000000.01", "price"),
    ("price-overflows-to-infinity", "price", "1e400", "price"),
    ("price-huge-integer", "price", "1" + "0" * 400, "price"),
    ("price-list", "price", "[25]", "price"),
    ("price-null", "price", "null", "price"),
    ("price-three-decimals", "price", "9.999", "price"),
    ("price-a-tenth-of-a-cent", "price", "0.001", "price"),
    ("unknown-field", "colour", '"red"', "colour"),
    ("event-id-in-body", "eventId", json.dumps(UNKNOWN_ID), "eventId"),
]

# Not JSON at all, so the body is malformed rather than one field.
NON_JSON_NUMBERS = ["NaN", "Infinity", "-Infinity"]

MALFORMED_JSON = [
    pytest.param(b"", id="empty"),
    pytest.param(b'{"name": ', id="truncated"),
    pytest.param(b"{'name': 'Night'}", id="single-quotes"),
    pytest.param(b'{"name": "Night",}', id="trailing-comma"),
    pytest.param(b'{"name": "\xff"}', id="invalid-utf8"),
]

NOT_AN_OBJECT = [
    pytest.param("[]", id="empty-array"),
    pytest.param(json.dumps([event_body()]), id="array-of-an-event"),
    pytest.param('"Night at the Museum"', id="string"),
    pytest.param("42", id="number"),
    pytest.param("true", id="boolean"),
    pytest.param("null", id="null"),
]

# (case id, fields sent, fields expected back): values at the edges of every rule.
ACCEPTED = [
    ("outer-white-space-trimmed",
     {"name": "  Night  ", "location": "\tHall A\n", "eventDescription": " A tour. "},
     {"name": "Night", "location": "Hall A", "eventDescription": "A tour."}),
    ("name-200-chars-after-trim", {"name": " " + "n" * 200 + " "}, {"name": "n" * 200}),
    ("name-200-non-ascii-chars", {"name": "é" * 200}, {"name": "é" * 200}),
    ("location-200-chars", {"location": "l" * 200}, {"location": "l" * 200}),
    ("name-and-location-one-char", {"name": "N", "location": "L"}, {"name": "N", "location": "L"}),
    ("description-5000-chars", {"eventDescription": "d" * 5000}, {"eventDescription": "d" * 5000}),
    ("description-one-char", {"eventDescription": "d"}, {"eventDescription": "d"}),
    ("dates-366-entries", {"dates": days(366)}, {"dates": days(366)}),
    ("dates-sorted-and-deduplicated",
     {"dates": ["2026-12-24", "2026-12-05", "2026-12-24", "2026-12-06"]},
     {"dates": ["2026-12-05", "2026-12-06", "2026-12-24"]}),
    ("date-leap-day", {"dates": ["2028-02-29"]}, {"dates": ["2028-02-29"]}),
    ("price-zero", {"price": 0}, {"price": 0}),
    ("price-one-million", {"price": 1_000_000}, {"price": 1_000_000}),
    ("price-fraction", {"price": 12.5}, {"price": 12.5}),
    ("price-two-decimals", {"price": 9.99}, {"price": 9.99}),
    ("price-whole-as-a-fraction", {"price": 25.0}, {"price": 25}),
    ("price-one-cent", {"price": 0.01}, {"price": 0.01}),
]


def table(rows):
    return [pytest.param(*row[1:], id=row[0]) for row in rows]


# -- POST /special-events --------------------------------------------------------------

def test_create_answers_201_with_the_event_and_its_location(client):
    res = post(client, event_body(), 201)
    assert_event(res.json)
    assert res.json == {"eventId": res.json["eventId"], **event_body()}
    assert res.headers["Location"] == f"{EVENTS}/{res.json['eventId']}"
    assert client.get(res.headers["Location"], headers=VISITOR, status=200).json == res.json


def test_each_created_event_gets_its_own_id(client):
    assert create(client)["eventId"] != create(client)["eventId"]


@pytest.mark.parametrize("sent, expected", table(ACCEPTED))
def test_create_accepts_values_at_the_edges(client, sent, expected):
    res = post(client, event_body(**sent), 201)
    assert_event(res.json)
    assert res.json == {**event_body(**sent), **expected, "eventId": res.json["eventId"]}
    assert get(client, res.json).json == res.json


@pytest.mark.parametrize("name, literal, field", table(INVALID_VALUES))
def test_create_rejects_an_invalid_value(client, name, literal, field):
    res = post(client, json_with(event_body(), name, literal), 400)
    assert_problem(res, 400, field)
    assert total(listing(client)) == 0


@pytest.mark.parametrize("name", FIELDS)
def test_create_requires_every_field(client, name):
    body = {key: value for key, value in event_body().items() if key != name}
    assert_problem(post(client, body, 400), 400, name)


def test_create_reports_every_violation_at_once(client):
    body = json_with({"name": "", "location": 7, "dates": ["2026-12-05", "2023-02-30"],
                      "price": True, "colour": "red", "eventId": UNKNOWN_ID},
                     "eventDescription", "null")
    problem = assert_problem(post(client, body, 400), 400)
    assert {error["field"] for error in problem["errors"]} == {
        "name", "location", "eventDescription", "dates[1]", "price", "colour", "eventId"}


def test_create_with_an_empty_object_names_all_five_missing_fields(client):
    problem = assert_problem(post(client, {}, 400), 400)
    assert {error["field"] for error in problem["errors"]} == set(FIELDS)


@pytest.mark.parametrize("literal", NON_JSON_NUMBERS)
def test_create_rejects_non_json_number_literals(client, literal):
    assert_problem(post(client, json_with(event_body(), "price", literal), 400), 400)


@pytest.mark.parametrize("raw", MALFORMED_JSON)
def test_create_rejects_malformed_json(client, raw):
    assert_problem(post(client, raw, 400), 400)


@pytest.mark.parametrize("raw", NOT_AN_OBJECT)
def test_create_rejects_a_body_that_is_not_an_object(client, raw):
    assert_problem(post(client, raw, 400), 400)


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded",
                                          "application/xml", "application/jsonp"])
def test_create_rejects_a_non_json_media_type(client, content_type):
    assert_problem(post(client, event_body(), 415, content_type=content_type), 415)
    assert total(listing(client)) == 0


def test_create_accepts_json_with_a_charset(client):
    post(client, event_body(), 201, content_type="application/json; charset=utf-8")


def test_create_rejects_a_body_over_64_kib(client):
    body = json.dumps(event_body(eventDescription="d" * 70_000))
    assert_problem(post(client, body, 413), 413)
    assert total(listing(client)) == 0


def test_create_accepts_a_body_of_exactly_64_kib_and_not_a_byte_more(client):
    body = json.dumps(event_body()).ljust(64 * 1024)  # trailing white space is valid JSON
    assert_problem(post(client, body + " ", 413), 413)
    post(client, body, 201)


# -- GET /special-events ---------------------------------------------------------------

def test_listing_returns_full_events_with_the_total(client, event):
    res = listing(client)
    assert res.json == [event]
    assert total(res) == 1


def test_listing_starts_today_by_default_and_is_open_ended(client):
    yesterday = (date.fromisoformat(TODAY) - timedelta(days=1)).isoformat()
    create(client, name="Yesterday", dates=[yesterday])
    create(client, name="Today", dates=[TODAY])
    create(client, name="Yesterday and 2099", dates=[yesterday, "2099-12-31"])
    assert names(listing(client)) == ["Today", "Yesterday and 2099"]


def test_listing_window_includes_both_edge_days_and_nothing_outside(client):
    for day in ("2026-11-30", "2026-12-01", "2026-12-10", "2026-12-11"):
        create(client, name=f"On {day}", dates=[day])
    create(client, name="Around", dates=["2026-11-30", "2026-12-11"])
    res = listing(client, {"startDate": "2026-12-01", "endDate": "2026-12-10"})
    assert names(res) == ["On 2026-12-01", "On 2026-12-10"]
    assert total(res) == 2


def test_listing_a_single_day_window(client):
    create(client, name="First", dates=["2026-12-01"])
    create(client, name="Second", dates=["2026-12-02"])
    assert names(listing(client, {"startDate": "2026-12-02", "endDate": "2026-12-02"})) == [
        "Second"]


def test_listing_orders_by_first_date_in_window_then_name_then_id(client):
    zebra = create(client, name="Zebra talk", dates=["2026-11-25", "2026-12-20"])
    create(client, name="Yak evening", dates=["2026-12-05"])
    create(client, name="Lantern walk", dates=["2026-12-10"])
    create(client, name="Lantern walk", dates=["2026-12-10", "2026-12-11"])
    create(client, name="Apple tasting", dates=["2026-12-10"])
    res = listing(client, {"startDate": "2026-12-01"})
    assert names(res) == ["Yak evening", "Apple tasting", "Lantern walk", "Lantern walk",
                          "Zebra talk"]
    lanterns = [event["eventId"] for event in res.json if event["name"] == "Lantern walk"]
    assert lanterns == sorted(lanterns)
    assert listing(client, {"startDate": "2026-11-25"}).json[0] == zebra


def test_listing_pages_carry_total_and_links_keeping_other_parameters(client):
    for number in range(5):
        create(client, name=f"Event {number}", dates=[f"2026-12-0{number + 1}"])
    params = {"startDate": "2026-12-01", "endDate": "2026-12-31", "limit": "2"}
    pages = [listing(client, {**params, "page": str(page)}) for page in (1, 2, 3)]
    assert [names(res) for res in pages] == [
        ["Event 0", "Event 1"], ["Event 2", "Event 3"], ["Event 4"]]
    assert [total(res) for res in pages] == [5, 5, 5]
    assert [sorted(links(res)) for res in pages] == [["next"], ["next", "prev"], ["prev"]]
    for page, res in enumerate(pages, start=1):
        for rel, target in links(res).items():
            assert urlsplit(target).scheme in ("http", "https") and urlsplit(target).netloc
            assert urlsplit(target).path == EVENTS
            assert query(target) == {**params, "page": str(page + (1 if rel == "next" else -1))}


def test_following_next_links_visits_every_event_once_in_order(client):
    for number in range(7):  # ties on date and name, so the order falls back to eventId
        create(client, name=f"Talk {number % 2}", dates=[f"2026-12-0{1 + number % 3}"])
    everything = listing(client, {"limit": "30"}).json
    seen, res = [], listing(client, {"limit": "2"})
    while True:
        seen += res.json
        if "next" not in links(res):
            break
        res = client.get(links(res)["next"], headers=VISITOR, status=200)
    assert seen == everything and len(everything) == 7
    expected = sorted(everything, key=lambda e: (e["dates"][0], e["name"], e["eventId"]))
    assert everything == expected


def test_page_past_the_end_is_an_empty_list(client):
    for number in range(3):
        create(client, name=f"Event {number}")
    res = listing(client, {"limit": "2", "page": "3"})
    assert res.json == []
    assert total(res) == 3
    assert "next" not in links(res)
    assert int(query(links(res)["prev"])["page"]) <= 2


def test_listing_defaults_to_ten_per_page(client):
    for number in range(11):
        create(client, name=f"Event {number:02d}")
    res = listing(client)
    assert len(res.json) == 10 and total(res) == 11
    assert query(links(res)["next"]) == {"page": "2"}
    assert names(listing(client, {"page": "2"})) == ["Event 10"]


@pytest.mark.parametrize("limit", [1, 30])
def test_listing_accepts_limits_at_the_edges(client, limit):
    for number in range(31):
        create(client, name=f"Event {number:02d}")
    res = listing(client, {"limit": str(limit)})
    assert len(res.json) == limit and total(res) == 31


def test_empty_listing_has_no_links(client):
    res = listing(client, {"startDate": "2030-01-01"})
    assert res.json == [] and total(res) == 0
    assert "Link" not in res.headers


BAD_QUERIES = [
    ("start-february-30", {"startDate": "2023-02-30"}, "startDate"),
    ("start-unpadded", {"startDate": "2023-2-3"}, "startDate"),
    ("start-basic-format", {"startDate": "20230203"}, "startDate"),
    ("start-blank", {"startDate": ""}, "startDate"),
    ("start-twice", [("startDate", "2026-12-01"), ("startDate", "2026-12-02")], "startDate"),
    ("end-february-30", {"endDate": "2027-02-30"}, "endDate"),
    ("end-word", {"endDate": "tomorrow"}, "endDate"),
    ("end-before-start", {"startDate": "2026-12-10", "endDate": "2026-12-09"}, "endDate"),
    ("end-before-today", {"endDate": "2026-11-21"}, "endDate"),
    ("page-zero", {"page": "0"}, "page"),
    ("page-negative", {"page": "-1"}, "page"),
    ("page-fraction", {"page": "1.5"}, "page"),
    ("page-word", {"page": "two"}, "page"),
    ("page-blank", {"page": ""}, "page"),
    ("limit-zero", {"limit": "0"}, "limit"),
    ("limit-31", {"limit": "31"}, "limit"),
    ("limit-word", {"limit": "ten"}, "limit"),
    ("limit-blank", {"limit": ""}, "limit"),
]


@pytest.mark.parametrize("params, field", table(BAD_QUERIES))
def test_listing_rejects_a_malformed_parameter(client, event, params, field):
    assert_problem(listing(client, params, status=400), 400, field)


def test_listing_names_every_malformed_parameter_at_once(client):
    res = listing(client, {"startDate": "soon", "page": "0", "limit": "99"}, status=400)
    problem = assert_problem(res, 400)
    assert {error["field"] for error in problem["errors"]} == {"startDate", "page", "limit"}


# -- GET /special-events/{eventId} -----------------------------------------------------

def test_read_an_event(client, event):
    assert get(client, event).json == event


@pytest.mark.parametrize("event_id", ["not-a-uuid", "12345", UNKNOWN_ID[:-1],
                                      UNKNOWN_ID + "0", UNKNOWN_ID[:-2] + "zz"])
def test_read_with_a_malformed_id_is_400(client, event_id):
    assert_problem(client.get(f"{EVENTS}/{event_id}", headers=VISITOR, status=400), 400,
                   "eventId")


def test_read_an_unknown_event_is_404(client, event):
    assert_problem(get(client, {"eventId": UNKNOWN_ID}, 404), 404)


# -- PATCH /special-events/{eventId} ---------------------------------------------------

@pytest.mark.parametrize("sent, expected", table(ACCEPTED))
def test_patch_changes_only_the_fields_sent(client, event, sent, expected):
    res = patch(client, event, sent, 200)
    assert res.json == {**event, **expected}
    assert get(client, event).json == res.json


def test_patch_with_every_field(client, event):
    changes = {"name": "Late opening", "location": "Atrium", "eventDescription": "Music.",
               "dates": ["2027-01-02", "2027-01-01"], "price": 9.5}
    res = patch(client, event, changes, 200)
    assert res.json == {**changes, "dates": ["2027-01-01", "2027-01-02"],
                        "eventId": event["eventId"]}


def test_patch_with_an_empty_object_changes_nothing(client, event):
    assert patch(client, event, {}, 200).json == event
    assert get(client, event).json == event


@pytest.mark.parametrize("content_type", ["application/json", "application/merge-patch+json",
                                          "application/merge-patch+json; charset=utf-8"])
def test_patch_accepts_json_and_merge_patch(client, event, content_type):
    res = patch(client, event, {"price": 30}, 200, content_type=content_type)
    assert res.json == {**event, "price": 30}


def test_patch_of_dates_moves_the_event_in_listings(client, event):
    patch(client, event, {"dates": ["2027-03-01"]}, 200)
    old_day = event["dates"][0]
    assert listing(client, {"startDate": old_day, "endDate": old_day}).json == []
    assert names(listing(client, {"startDate": "2027-03-01"})) == [event["name"]]


@pytest.mark.parametrize("name, literal, field", table(INVALID_VALUES))
def test_patch_rejects_an_invalid_value(client, event, name, literal, field):
    assert_problem(patch(client, event, json_with({}, name, literal), 400), 400, field)
    assert get(client, event).json == event


def test_rejected_patch_changes_nothing(client, event):
    res = patch(client, event, {"name": "Renamed", "dates": ["2027-03-01"], "price": -1}, 400)
    problem = assert_problem(res, 400, "price")
    assert [error["field"] for error in problem["errors"]] == ["price"]
    assert get(client, event).json == event
    assert listing(client, {"startDate": "2027-03-01"}).json == []
    assert listing(client).json == [event]


def test_patch_reports_every_violation_at_once(client, event):
    body = json_with({"name": " ", "dates": ["2023-2-3"], "price": "25", "eventId": UNKNOWN_ID},
                     "location", "null")
    problem = assert_problem(patch(client, event, body, 400), 400)
    assert {error["field"] for error in problem["errors"]} == {
        "name", "location", "dates[0]", "price", "eventId"}


@pytest.mark.parametrize("literal", NON_JSON_NUMBERS)
def test_patch_rejects_non_json_number_literals(client, event, literal):
    assert_problem(patch(client, event, json_with({}, "price", literal), 400), 400)
    assert get(client, event).json == event


@pytest.mark.parametrize("raw", MALFORMED_JSON)
def test_patch_rejects_malformed_json(client, event, raw):
    assert_problem(patch(client, event, raw, 400), 400)


@pytest.mark.parametrize("raw", NOT_AN_OBJECT)
def test_patch_rejects_a_body_that_is_not_an_object(client, event, raw):
    assert_problem(patch(client, event, raw, 400), 400)


def test_patch_rejects_a_non_json_media_type(client, event):
    assert_problem(patch(client, event, {"price": 1}, 415, content_type="text/plain"), 415)
    assert get(client, event).json == event


def test_patch_rejects_a_body_over_64_kib(client, event):
    assert_problem(patch(client, event, {"eventDescription": "d" * 70_000}, 413), 413)
    assert get(client, event).json == event


def test_patch_of_an_unknown_event_is_404(client):
    assert_problem(patch(client, {"eventId": UNKNOWN_ID}, {"price": 1}, 404), 404)


def test_patch_with_a_malformed_id_is_400(client):
    assert_problem(patch(client, {"eventId": "not-a-uuid"}, {"price": 1}, 400), 400, "eventId")


# -- DELETE /special-events/{eventId} --------------------------------------------------

def test_cancel_answers_204_with_an_empty_body(client, event):
    res = client.delete(url(event), headers=ADMIN, status=204)
    assert res.body == b""


def test_cancelled_event_is_gone_from_the_api(client, event):
    client.delete(url(event), headers=ADMIN, status=204)
    assert_problem(get(client, event, 410), 410)
    assert listing(client).json == [] and total(listing(client)) == 0
    assert_problem(patch(client, event, {}, 404), 404)
    assert_problem(patch(client, event, {"price": 1}, 404), 404)
    assert_problem(client.delete(url(event), headers=ADMIN, status=404), 404)


def test_cancelled_event_sells_no_tickets(client, event):
    buy_ticket(client, event, 201)
    client.delete(url(event), headers=ADMIN, status=204)
    assert_problem(buy_ticket(client, event, 404), 404)


def test_cancelled_event_stays_stored_marked_cancelled(client, event, db_path):
    assert stored_row(db_path, event["eventId"]) == (event["name"], 0)
    client.delete(url(event), headers=ADMIN, status=204)
    assert stored_row(db_path, event["eventId"]) == (event["name"], 1)


def test_cancel_leaves_other_events_listed(client, event):
    other = create(client, name="Other")
    client.delete(url(event), headers=ADMIN, status=204)
    assert listing(client).json == [other]


def test_cancel_of_an_unknown_event_is_404(client):
    assert_problem(client.delete(f"{EVENTS}/{UNKNOWN_ID}", headers=ADMIN, status=404), 404)


def test_cancel_with_a_malformed_id_is_400(client):
    assert_problem(client.delete(f"{EVENTS}/not-a-uuid", headers=ADMIN, status=400), 400,
                   "eventId")


# -- authentication and roles ----------------------------------------------------------

def call(client, method, target, event, headers, status):
    """One request to `target` ("list" or "one") with a valid body where one is needed."""
    path = EVENTS if target == "list" else url(event)
    if method in ("POST", "PATCH"):
        return send(client, method, path, event_body(name="Changed"), status, headers=headers)
    return getattr(client, method.lower())(path, headers=headers, status=status)


ENDPOINTS = [("GET", "list"), ("POST", "list"), ("GET", "one"), ("PATCH", "one"),
             ("DELETE", "one")]
WRITES = [("POST", "list"), ("PATCH", "one"), ("DELETE", "one")]


@pytest.mark.parametrize("method, target", ENDPOINTS)
@pytest.mark.parametrize("headers", [{}, basic("admin", "wrong"), basic("nobody", "x"),
                                     {"Authorization": "Bearer abc"}],
                         ids=["none", "wrong-password", "unknown-user", "not-basic"])
def test_every_endpoint_needs_credentials(client, event, method, target, headers):
    res = call(client, method, target, event, headers, 401)
    assert_problem(res, 401)
    assert res.headers["WWW-Authenticate"].startswith("Basic")
    assert listing(client).json == [event]


@pytest.mark.parametrize("method, target", WRITES)
def test_writes_need_the_admin_role(client, event, method, target):
    assert_problem(call(client, method, target, event, VISITOR, 403), 403)
    assert listing(client).json == [event]


@pytest.mark.parametrize("method, target", [("GET", "list"), ("GET", "one")])
def test_visitors_may_read(client, event, method, target):
    call(client, method, target, event, VISITOR, 200)


def test_a_price_is_answered_as_sent_not_as_a_float(client):
    created = post(client, event_body(price=25), 201)
    assert b'"price":25}' in created.body or b'"price":25,' in created.body
    assert client.get(f"{EVENTS}/{created.json['eventId']}", headers=ADMIN,
                      status=200).body.count(b'"price":25') == 1


def test_more_than_two_decimals_are_refused_naming_price(client):
    problem = assert_problem(post(client, event_body(price=9.999), 400), 400, "price")
    assert {"field": "price", "code": "too-many-decimals",
            "message": "must have at most 2 decimals"} in problem["errors"]

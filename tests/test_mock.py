"""`museum mock`: the same application on demo data in memory, for any Basic credentials,
keeping nothing; it answers every operation like the real service does."""

import json
import os
import subprocess
import sys
import uuid
from datetime import date, datetime, timedelta, timezone

import pytest

import museum_mock
from conftest import ADMIN, basic
from described import SERVER, assert_described
from serving import ROOT, running_mock, running_server

ANYONE = basic("anyone", "any password")
# Far enough ahead to miss the demo events, and a Tuesday: open with the default hours.
DAY = date.today() + timedelta(days=70 - date.today().weekday() + 1)
EVENT = {"name": "Late Opening", "location": "Atrium", "eventDescription": "Music and talks.",
         "dates": [DAY.isoformat(), (DAY + timedelta(days=1)).isoformat()], "price": 12.5}
# Headers whose presence differs between two runs for reasons other than the interface (a
# device cookie answers the request that ran a password check: the real service's first).
INCIDENTAL_HEADERS = {"date", "content-length", "x-museum-mock", "set-cookie"}


@pytest.fixture
def mock(tmp_path):
    with running_mock(tmp_path) as server:
        yield server


def exchange(server, method, path, body, headers):
    """(status, headers by lower-case name, body bytes) of one request under the API prefix."""
    status, response_headers, raw = server.request(method, SERVER + path, body, headers)
    return status, {name.lower(): value for name, value in response_headers.items()}, raw


def call(server, method, path, body=None, headers=ANYONE):
    """(status, headers by lower-case name, parsed JSON or raw body) of one request."""
    status, response_headers, raw = exchange(server, method, path, body, headers)
    is_json = response_headers.get("content-type", "").endswith("json")
    return status, response_headers, json.loads(raw) if is_json else raw


def shape(value):
    """`value` with every leaf replaced by its type name: what must agree between servers."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(item) for item in value]
    return type(value).__name__


class Walk:
    """Requests to one server, each checked against the description and kept as its shape."""

    def __init__(self, server, credentials):
        self.server = server
        self.credentials = credentials
        self.shapes = []
        self.marks = set()

    def __call__(self, operation_id, method, path, body=None, auth=True, headers=None):
        sent = {**(self.credentials if auth else {}), **(headers or {})}
        status, response_headers, raw = exchange(self.server, method, path, body, sent)
        value = assert_described(operation_id, status, response_headers, raw)
        names = sorted(response_headers.keys() - INCIDENTAL_HEADERS)
        self.shapes.append((operation_id, status, names, shape(value)))
        self.marks.add(response_headers.get("x-museum-mock"))
        return value, response_headers


def walk_every_operation(walk, today):
    """Each operation with its success and its typical errors, in one fixed order; `today`
    is the server's."""
    walk("getOpenApiDescription", "GET", "/openapi.json", auth=False)
    walk("getMuseumHours", "GET", "/museum-hours?limit=3")
    walk("getMuseumHours", "GET", "/museum-hours?limit=31")
    walk("getMuseumHours", "GET", "/museum-hours", auth=False)
    walk("listPriceCategories", "GET", "/price-categories")
    walk("getMuseum", "GET", "/museum")
    event, _ = walk("createSpecialEvent", "POST", "/special-events",
                    {**EVENT, "dates": [today.isoformat(), *EVENT["dates"]]})
    walk("createSpecialEvent", "POST", "/special-events", {**EVENT, "eventId": str(uuid.uuid4())})
    walk("createSpecialEvent", "POST", "/special-events", "text",
         headers={"Content-Type": "text/plain"})
    walk("listSpecialEvents", "GET", f"/special-events?startDate={DAY}&endDate={DAY}")
    walk("listSpecialEvents", "GET", f"/special-events?startDate={DAY}&endDate=2000-01-01")
    path = f"/special-events/{event['eventId']}"
    walk("getSpecialEvent", "GET", path)
    walk("getSpecialEvent", "GET", "/special-events/not-a-uuid")
    walk("getSpecialEvent", "GET", f"/special-events/{uuid.uuid4()}")
    walk("updateSpecialEvent", "PATCH", path, {"price": 15})
    walk("updateSpecialEvent", "PATCH", path, {"price": -1})
    ticket, _ = walk("buyMuseumTickets", "POST", "/tickets", {
        "ticketType": "event", "eventId": event["eventId"], "ticketDate": DAY.isoformat(),
        "email": "ada@example.org"})
    general = {"ticketType": "general", "ticketDate": DAY.isoformat(), "email": "ada@example.org"}
    general_ticket, _ = walk("buyMuseumTickets", "POST", "/tickets", general,
                             headers={"Idempotency-Key": "walk-1"})
    walk("buyMuseumTickets", "POST", "/tickets", {**general, "email": "bob@example.org"},
         headers={"Idempotency-Key": "walk-1"})
    walk("buyMuseumTickets", "POST", "/tickets", {**general, "category": "nobody"})
    tonight, _ = walk("buyMuseumTickets", "POST", "/tickets", {
        "ticketType": "event", "eventId": event["eventId"], "ticketDate": today.isoformat(),
        "email": "ada@example.org"})
    walk("updateSpecialEvent", "PATCH", path, {"dates": [EVENT["dates"][1]]})
    walk("updateSpecialEvent", "PATCH", path, {"capacity": 1})
    walk("buyMuseumTickets", "POST", "/tickets", {
        "ticketType": "event", "eventId": event["eventId"], "ticketDate": DAY.isoformat(),
        "email": "bob@example.org"})
    walk("getTicket", "GET", f"/tickets/{ticket['ticketId']}")
    walk("getAvailability", "GET", f"/availability?startDate={DAY}")
    walk("getSalesReport", "GET", f"/reports/sales?startDate={today}&endDate={DAY}")
    walk("getSalesReport", "GET", f"/reports/sales?startDate={DAY}",
         headers={"Accept": "text/csv"})
    walk("getAvailability", "GET", f"/availability?startDate={DAY}&endDate=2000-01-01")
    walk("getTicket", "GET", f"/tickets/{uuid.uuid4()}")
    walk_orders(walk)
    walk("listEventTickets", "GET", f"/tickets?eventId={event['eventId']}&limit=1")
    walk("listEventTickets", "GET", f"/tickets?eventId={uuid.uuid4()}")
    presented = {"confirmationCode": tonight["confirmationCode"]}
    walk("admitTicket", "POST", "/admissions", presented)
    walk("admitTicket", "POST", "/admissions", presented)
    walk("admitTicket", "POST", "/admissions", {"confirmationCode": ticket["confirmationCode"]})
    walk("admitTicket", "POST", "/admissions", {"code": "hello"})
    walk("admitTicket", "POST", "/admissions", {"code": "hello", **presented})
    walk("getAdmissionSummary", "GET", f"/admissions/summary?date={today}")
    walk("getAdmissionSummary", "GET", "/admissions/summary?date=today")
    walk("lookupTickets", "POST", "/admissions/lookup", {"email": "ada@example.org"})
    walk("lookupTickets", "POST", "/admissions/lookup",
         {"code": tonight["confirmationCode"][-12:], "date": today.isoformat()})
    walk("lookupTickets", "POST", "/admissions/lookup", {"code": "x"})
    walk("undoAdmission", "DELETE", f"/admissions/{tonight['ticketId']}")
    walk("undoAdmission", "DELETE", f"/admissions/{tonight['ticketId']}")
    walk("getAdmissionHistory", "GET", f"/admissions/{tonight['ticketId']}")
    walk("getAdmissionHistory", "GET", f"/admissions/{uuid.uuid4()}")
    code = f"/tickets/{ticket['ticketId']}/qr"
    _, image_headers = walk("getTicketCode", "GET", code)
    walk("getTicketCode", "GET", code, headers={"If-None-Match": image_headers["etag"]})
    walk("getTicketCode", "GET", f"/tickets/{uuid.uuid4()}/qr")
    walk("voidTicket", "DELETE", f"/tickets/{general_ticket['ticketId']}")
    walk("voidTicket", "DELETE", f"/tickets/{general_ticket['ticketId']}")
    walk("voidTicket", "DELETE", f"/tickets/{uuid.uuid4()}")
    walk("getTicketCode", "GET", f"/tickets/{general_ticket['ticketId']}/qr")
    walk("deleteSpecialEvent", "DELETE", path)
    walk("deleteSpecialEvent", "DELETE", path)
    walk("admitTicket", "POST", "/admissions", presented)
    walk("getTicketCode", "GET", code)


def walk_orders(walk):
    """An order's life: quoted, held, confirmed, read with its code; a desk's, voided."""
    items = [{"ticketType": "general", "ticketDate": DAY.isoformat(), "category": "adult",
              "quantity": 2}, {"ticketType": "general", "ticketDate": DAY.isoformat(),
                               "category": "child"}]
    walk("createOrder", "POST", "/orders?simulate=true", {"items": items,
                                                          "email": "ada@example.org"})
    held, _ = walk("createOrder", "POST", "/orders", {"items": items, "hold": True,
                                                      "email": "ada@example.org"})
    walk("createOrder", "POST", "/orders", {"items": items})
    path = f"/orders/{held['orderId']}"
    walk("confirmOrder", "POST", f"{path}/confirm")
    walk("getOrder", "GET", path)
    walk("getOrder", "GET", f"/orders/{uuid.uuid4()}")
    walk("getOrderCode", "GET", f"{path}/qr")
    desk, _ = walk("createOrder", "POST", "/orders", {"items": items, "channel": "desk",
                                                      "payment": "card"})
    walk("cancelOrder", "DELETE", f"/orders/{desk['orderId']}")
    walk("confirmOrder", "POST", f"/orders/{desk['orderId']}/confirm")
    walk("getOrderCode", "GET", f"/orders/{desk['orderId']}/qr")


def test_mock_answers_every_operation_with_the_shapes_of_the_real_service(
        tmp_path, mock, config_text):
    """The same requests get the same statuses, headers and body shapes from both, and every
    answer is one the description lists; only the mock marks its answers."""
    (tmp_path / "real").mkdir()
    with running_server(tmp_path / "real", config_text + museum_mock.DEMO_CONFIG) as real:
        real_walk = Walk(real, ADMIN)
        walk_every_operation(real_walk, datetime.now(timezone.utc).date())  # its zone: UTC
    mock_walk = Walk(mock, ANYONE)
    walk_every_operation(mock_walk, date.today())  # the mock's zone: this machine's
    answered = {(operation, status) for operation, status, *_ in mock_walk.shapes}
    assert {("admitTicket", status) for status in (201, 400, 409, 410, 422)} | {
        ("getAdmissionSummary", 200), ("getAdmissionSummary", 400), ("undoAdmission", 204),
        ("undoAdmission", 404), ("updateSpecialEvent", 409), ("lookupTickets", 200),
        ("lookupTickets", 400), ("getAdmissionHistory", 200),
        ("getAdmissionHistory", 404),
        ("buyMuseumTickets", 409),
        ("getTicket", 200), ("getTicket", 404), ("voidTicket", 204),
        ("voidTicket", 404)} <= answered
    assert mock_walk.shapes[-1][:2] == ("getTicketCode", 410)
    assert mock_walk.shapes == real_walk.shapes
    assert (mock_walk.marks, real_walk.marks) == ({"true"}, {None})


def test_mock_says_so_at_startup_and_on_every_answer(mock):
    """The startup line names the mock and that nothing is kept; successes and errors alike
    carry `X-Museum-Mock: true`."""
    assert "MOCK" in mock.log() and "nothing is kept" in mock.log()
    for path, headers, expected in [("/museum-hours", ANYONE, 200), ("/museum-hours", {}, 401),
                                    ("/no-such-path", ANYONE, 404), ("/openapi.json", {}, 200)]:
        status, response_headers, _ = call(mock, "GET", path, headers=headers)
        assert status == expected
        assert response_headers["x-museum-mock"] == "true"


@pytest.mark.parametrize("credentials", [
    basic("visitor", "x"), basic("someone", ""), basic("ünïcødé", "p:w")])
def test_mock_takes_any_well_formed_basic_credentials_as_an_admin(mock, credentials):
    """Whatever the name and password, the caller may do what only admins may."""
    status, _, event = call(mock, "POST", "/special-events", EVENT, credentials)
    assert status == 201
    assert call(mock, "DELETE", f"/special-events/{event['eventId']}",
                headers=credentials)[0] == 204


def test_mock_refuses_malformed_credentials_without_ever_locking_out(mock):
    """No credentials, another scheme or bad base64 are 401 with the challenge, however
    often; well-formed ones still pass afterwards."""
    for headers in [{}, {"Authorization": "Bearer token"}, {"Authorization": "Basic !!"},
                    {"Authorization": "Basic bm8tY29sb24="}] * 5:
        status, response_headers, _ = call(mock, "GET", "/museum-hours", headers=headers)
        assert status == 401 and response_headers["www-authenticate"].startswith("Basic ")
    assert call(mock, "GET", "/museum-hours")[0] == 200


def test_mock_serves_demo_events_near_today_and_the_default_hours(mock):
    """A handful of events with dates in the coming weeks, and the shipped weekly hours."""
    today = date.today()
    status, _, events = call(mock, "GET", "/special-events?limit=30")
    assert status == 200 and 3 <= len(events) <= 10
    for event in events:
        days = [date.fromisoformat(day) for day in event["dates"]]
        assert all(today <= day <= today + timedelta(days=31) for day in days), event
        assert event["name"] and event["location"] and event["eventDescription"]
    _, _, hours = call(mock, "GET", "/museum-hours?limit=12")
    by_weekday = {date.fromisoformat(day["date"]).weekday(): (day["timeOpen"], day["timeClose"])
                  for day in hours}
    assert by_weekday == {1: ("09:00", "18:00"), 2: ("09:00", "18:00"), 3: ("09:00", "18:00"),
                          4: ("10:00", "16:00"), 5: ("09:00", "18:00"), 6: ("09:00", "18:00")}


def test_a_restarted_mock_forgets_what_was_written_and_keeps_no_file(tmp_path):
    """An event and a ticket written to one mock are unknown to the next one, which starts
    from fresh demo data; neither leaves anything but its log in its directory."""
    with running_mock(tmp_path) as first:
        _, _, demo = call(first, "GET", "/special-events")
        _, _, event = call(first, "POST", "/special-events", EVENT)
        _, _, ticket = call(first, "POST", "/tickets", {
            "ticketType": "general", "ticketDate": DAY.isoformat(), "email": "a@example.org"})
        assert call(first, "GET", f"/special-events/{event['eventId']}")[0] == 200
    with running_mock(tmp_path) as second:
        assert call(second, "GET", f"/special-events/{event['eventId']}")[0] == 404
        assert call(second, "GET", f"/tickets/{ticket['ticketId']}/qr")[0] == 404
        _, _, fresh = call(second, "GET", "/special-events")
    assert [e["name"] for e in fresh] == [e["name"] for e in demo]
    assert not {e["eventId"] for e in fresh} & {e["eventId"] for e in demo}
    assert all(path.suffix == ".log" for path in tmp_path.iterdir()), list(tmp_path.iterdir())


def test_mock_refuses_a_public_address(tmp_path):
    """Any credentials are an admin on the mock, so like a demo password it stays local."""
    result = subprocess.run([sys.executable, "-m", "museum_cli", "mock", "--host", "0.0.0.0"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=60,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 2
    assert "refusing to listen on 0.0.0.0" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_mock_sells_in_demo_price_categories_and_says_what_a_shop_shows(mock):
    """A shop tried against the mock meets categories, an event's prices and the museum."""
    status, _, categories = call(mock, "GET", "/price-categories")
    assert status == 200
    assert [(each["name"], each["price"]) for each in categories] == [
        ("adult", 14), ("reduced", 9.5), ("child", 0)]
    status, _, museum = call(mock, "GET", "/museum")
    assert (status, museum["categories"]) == (200, categories)
    status, _, events = call(mock, "GET", "/special-events?limit=30")
    assert {"child": 4} in [event.get("prices") for event in events]

"""The arrivals per hour as a chart (`GET /v1.1/reports/arrivals/chart`): the admissions of
the window's tickets counted by the museum's own hour, drawn as SVG with each hour's places
marked for one day of timed entry; the sales report's window and roles. The SVG is parsed
and its bars read. Dates follow conftest's NOW (Sunday 2026-11-22, 12:00 UTC)."""

import uuid
from xml.etree import ElementTree

import pytest

import museum
from conftest import ADMIN, DESK, GATE, TODAY, assert_problem
from ticketing import fresh_code

CHART = "/v1.1/reports/arrivals/chart"
SVG = "{http://www.w3.org/2000/svg}"
# The night Europe's clocks went back: 03:00 CEST was 02:00 CET again, at 01:00 UTC.
CLOCKS_BACK = "2026-10-25"


def admitted(store, day, *times):
    """A general ticket of `day` for each UTC time of `times`, admitted then."""
    for time in times:
        ticket = {"ticketId": str(uuid.uuid4()), "ticketType": "general", "ticketDate": day,
                  "eventId": None, "confirmationCode": fresh_code("general"), "email": "",
                  "phone": None, "price": 0, "currency": "EUR"}
        store.create_ticket(ticket)
        store.admit(ticket["ticketId"], "gate", f"{time}Z")


def bars(res):
    """{label under the bar: its count} and {label: places marked} of an SVG chart."""
    assert res.content_type == "image/svg+xml"
    assert res.headers["Cache-Control"] == "no-store"
    svg = ElementTree.fromstring(res.body)
    drawn = {}
    for rect in svg.iter(f"{SVG}rect"):
        label, _, said = rect.find(f"{SVG}title").text.partition(": ")
        drawn[label] = int(said.split()[0])
    marks = {}
    for line in svg.iter(f"{SVG}line"):
        if line.get("class") == "capacity":
            label, _, said = line.find(f"{SVG}title").text.partition(": ")
            marks[label] = int(said.split()[0])
    return drawn, marks, svg.find(f"{SVG}desc").text


def test_todays_arrivals_are_drawn_one_bar_an_hour(client, store):
    """Every hour from the first arrival to the last has its bar, those without any at 0;
    general entry without slots marks no places, and the description says why."""
    admitted(store, TODAY, f"{TODAY}T09:05:00", f"{TODAY}T09:55:00", f"{TODAY}T11:30:00")
    drawn, marks, description = bars(client.get(CHART, headers=DESK, status=200))
    assert drawn == {"09:00": 2, "10:00": 0, "11:00": 1}
    assert marks == {}
    assert description.startswith("09:00 2 arrived; 10:00 0 arrived; 11:00 1 arrived.")
    assert "no entry slots with a capacity" in description


def test_with_timed_entry_each_hours_places_are_marked(make_client, config_text, store):
    """Slots of 30 minutes with 2 places each: 4 places an hour, from 09:00 to 17:30."""
    timed = make_client(museum.parse_config(
        config_text + "[hours]\nslot_minutes = 30\n[capacity]\ngeneral_per_slot = 2\n"))
    admitted(store, TODAY, f"{TODAY}T10:10:00")
    drawn, marks, description = bars(timed.get(CHART, headers=ADMIN, status=200))
    assert list(drawn) == [f"{hour:02d}:00" for hour in range(9, 18)]
    assert drawn["10:00"] == 1 and sum(drawn.values()) == 1
    assert marks == {label: 4 for label in drawn}
    assert "10:00 1 arrived of 4 places" in description


def test_on_the_day_the_clocks_go_back_arrivals_count_by_the_museums_hour(
        make_client, config_text, store):
    """01:30 CEST, 02:30 CEST, 02:30 CET (the hour 02 comes twice) and 09:15 CET: each
    counted by the hour the museum's clock showed."""
    berlin = make_client(museum.parse_config(
        config_text.replace("timezone = UTC", "timezone = Europe/Berlin")))
    admitted(store, CLOCKS_BACK, "2026-10-24T23:30:00", "2026-10-25T00:30:00",
             "2026-10-25T01:30:00", "2026-10-25T08:15:00")
    drawn, _, _ = bars(berlin.get(CHART, params={"startDate": CLOCKS_BACK},
                                  headers=ADMIN, status=200))
    assert drawn == {"01:00": 1, "02:00": 2, **{f"{hour:02d}:00": 0 for hour in range(3, 9)},
                     "09:00": 1}


def test_a_window_of_days_adds_their_hours_and_marks_no_places(client, store):
    admitted(store, "2026-11-20", "2026-11-20T14:00:00")
    admitted(store, "2026-11-21", "2026-11-21T14:59:00")
    res = client.get(CHART, params={"startDate": "2026-11-20", "endDate": "2026-11-21"},
                     headers=ADMIN, status=200)
    drawn, marks, description = bars(res)
    assert (drawn, marks) == ({"14:00": 2}, {})
    assert "several days" in description
    assert "Arrivals per hour, 2026-11-20 to 2026-11-21" in res.text


def test_no_arrivals_draws_an_empty_chart(client):
    res = client.get(CHART, headers=DESK, status=200)
    assert ElementTree.fromstring(res.body).findall(f"{SVG}rect") == []
    assert "No arrivals" in res.text


@pytest.mark.parametrize("params, headers, status", [
    ({"startDate": "2026-11-21"}, DESK, 403),  # the desk reads today's only
    ({}, GATE, 403),
    ({"startDate": "2026-11-31"}, ADMIN, 400),
    ({"startDate": "2026-11-22", "endDate": "2026-11-21"}, ADMIN, 400),
])
def test_the_window_and_roles_are_the_sales_reports(client, params, headers, status):
    assert_problem(client.get(CHART, params=params, headers=headers, status=status), status)
    assert client.get(CHART, status=401).status_int == 401

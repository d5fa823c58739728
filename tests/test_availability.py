"""GET /v1.1/availability: the places left on each day, for any role, from the counts kept
with each sale and void. Dates follow conftest's NOW (Sunday 2026-11-22): Monday 23 is
closed, Friday 27 has short hours."""

import pytest

import museum
from conftest import ADMIN, VISITOR, assert_problem
from ticketing import EVENTS, body, buy, cancel_event

AVAILABILITY = "/v1.1/availability"


@pytest.fixture
def limited(make_client, config_text):
    return make_client(museum.parse_config(
        config_text + "[capacity]\ngeneral_per_day = 3\n[capacity_dates]\n2026-11-25 = 1\n"))


def days(client, **params):
    return client.get(AVAILABILITY, params=params, headers=VISITOR, status=200).json


def test_the_default_window_is_today_and_six_days_after(client):
    answer = days(client)
    assert [day["date"] for day in answer] == [f"2026-11-{day}" for day in range(22, 29)]
    monday = answer[1]
    assert monday == {"date": "2026-11-23", "open": False, "general": None, "events": []}
    assert answer[0]["general"] == {"capacity": None, "sold": 0, "available": None}


def test_general_places_count_sales_and_voids_against_the_capacity(limited):
    sold = [buy(limited, body()).json for _ in range(2)]
    buy(limited, body(ticketDate="2026-11-25"))
    limited.delete(f"/v1.1/tickets/{sold[0]['ticketId']}", headers=ADMIN, status=204)
    answer = {day["date"]: day for day in days(limited, startDate="2026-11-24",
                                                endDate="2026-11-26")}
    assert answer["2026-11-24"]["general"] == {"capacity": 3, "sold": 1, "available": 2}
    assert answer["2026-11-25"]["general"] == {"capacity": 1, "sold": 1, "available": 0}
    assert answer["2026-11-26"]["general"] == {"capacity": 3, "sold": 0, "available": 3}


def test_each_event_of_a_day_has_its_places(client):
    small = client.post_json(EVENTS, {
        "name": "A small tour", "location": "Crypt", "eventDescription": "Few.",
        "dates": ["2026-11-24", "2026-11-25"], "price": 5, "capacity": 2},
        headers=ADMIN, status=201).json
    open_ended = client.post_json(EVENTS, {
        "name": "B lecture", "location": "Hall", "eventDescription": "Many.",
        "dates": ["2026-11-24"], "price": 0}, headers=ADMIN, status=201).json
    buy(client, body("event", eventId=small["eventId"], ticketDate="2026-11-24"))
    buy(client, body("event", eventId=open_ended["eventId"], ticketDate="2026-11-24"))
    answer = days(client, startDate="2026-11-24", endDate="2026-11-25")
    assert answer[0]["events"] == [
        {"eventId": small["eventId"], "name": "A small tour", "capacity": 2, "sold": 1,
         "available": 1},
        {"eventId": open_ended["eventId"], "name": "B lecture", "capacity": None, "sold": 1,
         "available": None}]
    assert [entry["sold"] for entry in answer[1]["events"]] == [0]
    cancel_event(client, small["eventId"])
    assert [entry["name"] for entry in days(client, startDate="2026-11-24",
                                            endDate="2026-11-24")[0]["events"]] == ["B lecture"]


def test_a_window_of_31_days_is_the_most(client):
    assert len(days(client, startDate="2026-12-01", endDate="2026-12-31")) == 31
    res = client.get(AVAILABILITY, params={"startDate": "2026-12-01", "endDate": "2027-01-01"},
                     headers=VISITOR, status=400)
    assert_problem(res, 400, "endDate")


@pytest.mark.parametrize("params, field", [
    ({"startDate": "2026-12-05", "endDate": "2026-12-04"}, "endDate"),
    ({"startDate": "tomorrow"}, "startDate"),
    ({"endDate": "2026-02-30"}, "endDate"),
])
def test_a_bad_window_is_refused_naming_the_parameter(client, params, field):
    assert_problem(client.get(AVAILABILITY, params=params, headers=VISITOR, status=400), 400,
                   field)


def test_availability_needs_credentials(client):
    assert_problem(client.get(AVAILABILITY, status=401), 401)

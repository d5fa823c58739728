"""GET /v1.1/museum-hours: open days from the weekly schedule and its dated exceptions."""

import pytest

import museum
import museum_config
from conftest import TODAY, VISITOR, assert_problem

HOURS = "/v1.1/museum-hours"


def hours(client, query="", status=200):
    return client.get(f"{HOURS}{query}", headers=VISITOR, status=status)


def test_default_is_ten_open_days_from_today(client):
    days = hours(client).json
    assert len(days) == 10
    assert days[0] == {"date": TODAY, "timeOpen": "09:00", "timeClose": "18:00"}  # a Sunday
    assert "2026-11-23" not in [day["date"] for day in days]  # Mondays are closed
    assert {"date": "2026-11-27", "timeOpen": "10:00", "timeClose": "16:00"} in days  # Friday


def test_days_are_consecutive_open_days_ascending(client):
    dates = [day["date"] for day in hours(client, "?startDate=2026-11-23&limit=12").json]
    assert dates == ["2026-11-24", "2026-11-25", "2026-11-26", "2026-11-27", "2026-11-28",
                     "2026-11-29", "2026-12-01", "2026-12-02", "2026-12-03", "2026-12-04",
                     "2026-12-05", "2026-12-06"]


def test_exceptions_close_a_day_and_change_hours(make_client, config_text):
    client = make_client(museum.parse_config(
        config_text + "[exceptions]\n2026-11-25 = closed\n2026-11-30 = 12:00-16:30\n"))
    days = hours(client, "?startDate=2026-11-24&limit=6").json
    assert [day["date"] for day in days] == ["2026-11-24", "2026-11-26", "2026-11-27",
                                             "2026-11-28", "2026-11-29", "2026-11-30"]
    assert days[-1] == {"date": "2026-11-30", "timeOpen": "12:00", "timeClose": "16:30"}


def test_pages_continue_where_the_last_one_ended(client):
    every = hours(client, "?limit=30").json
    pages = [hours(client, f"?limit=10&page={page}").json for page in (1, 2, 3)]
    assert pages[0] + pages[1] + pages[2] == every


def test_the_horizon_is_366_days(make_client, config_text):
    open_every_day = "".join(f"{day} = 08:00-20:00\n" for day in museum_config.WEEKDAYS)
    client = make_client(museum.parse_config(config_text + "[hours]\n" + open_every_day))
    last_page = hours(client, "?startDate=2026-01-01&limit=30&page=13").json
    assert [day["date"] for day in last_page] == [  # days 361 to 366
        "2026-12-27", "2026-12-28", "2026-12-29", "2026-12-30", "2026-12-31", "2027-01-01"]
    assert hours(client, "?startDate=2026-01-01&limit=30&page=14").json == []


def test_a_page_past_the_horizon_is_empty(client):
    assert hours(client, "?page=1000").json == []


def test_the_end_of_the_calendar_is_not_an_error(client):
    assert hours(client, "?startDate=9999-12-31").json == [
        {"date": "9999-12-31", "timeOpen": "10:00", "timeClose": "16:00"}]


@pytest.mark.parametrize("query, field", [
    ("?startDate=2026-02-30", "startDate"),
    ("?startDate=2026-2-3", "startDate"),
    ("?startDate=20260203", "startDate"),
    ("?startDate=", "startDate"),
    ("?startDate=2026-11-22&startDate=2026-11-23", "startDate"),
    ("?page=0", "page"),
    ("?page=-1", "page"),
    ("?page=1.5", "page"),
    ("?page=abc", "page"),
    ("?page=", "page"),
    ("?limit=0", "limit"),
    ("?limit=31", "limit"),
    ("?limit=%EF%BC%91", "limit"),  # a full-width digit is not a number here
])
def test_malformed_parameters_are_400_naming_them(client, query, field):
    assert_problem(hours(client, query, status=400), 400, field)


def test_every_bad_parameter_is_named_at_once(client):
    body = assert_problem(hours(client, "?startDate=x&page=0&limit=99", status=400), 400)
    assert [error["field"] for error in body["errors"]] == ["startDate", "page", "limit"]

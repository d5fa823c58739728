"""The desk role (docs/security.md, "Roles"): it sells, admits as a gate does, voids the
tickets dated today (an admin voids any), reads the door's day and today's sales report
(an admin reads any window), and signs a shared desk computer in as a device; it manages
no event, day or buyer list. `tests/test_openapi_roles.py` holds every operation's x-roles
to what the app admits; these are the desk's own rules behind them."""

import re

import pytest

from commands import museum_command
from conftest import ADMIN, DESK, GATE, TODAY, VISITOR, assert_problem, basic
from museum_sales import DESK_READS_TODAY, DESK_VOIDS_TODAYS
from museum_vocabulary import needs_role
from ticketing import EVENTS, OPEN_DAY, TICKETS, body, buy, create_event

REPORT = "/v1.1/reports/sales"
ADMISSIONS = "/v1.1/admissions"


def test_the_desk_sells_and_admits(client):
    sold = buy(client, body(ticketDate=TODAY), headers=DESK).json
    admitted = client.post_json(ADMISSIONS, {"confirmationCode": sold["confirmationCode"]},
                                headers=DESK, status=201).json
    assert admitted["ticketId"] == sold["ticketId"]
    listed = client.get(f"{ADMISSIONS}/list", headers=DESK, status=200).json
    assert sold["ticketId"] in str(listed)
    client.get(f"{ADMISSIONS}/summary", headers=DESK, status=200)
    ticket = client.get(f"{TICKETS}/{sold['ticketId']}", headers=DESK, status=200).json
    assert "email" not in ticket  # the buyer's contacts are an admin's


def test_the_desk_reads_the_doors_day_as_a_gate_does(client):
    client.get(f"{ADMISSIONS}/list?date={OPEN_DAY}", headers=DESK, status=400)
    client.get(f"{ADMISSIONS}/list?date={OPEN_DAY}", headers=ADMIN, status=200)


def test_the_desk_voids_todays_tickets_and_an_admin_any(client):
    today = buy(client, body(ticketDate=TODAY), headers=DESK).json
    later = buy(client, body(ticketDate=OPEN_DAY), headers=DESK).json
    client.delete(f"{TICKETS}/{today['ticketId']}", headers=DESK, status=204)
    refused = client.delete(f"{TICKETS}/{later['ticketId']}", headers=DESK, status=403)
    assert assert_problem(refused, 403)["detail"] == DESK_VOIDS_TODAYS
    client.delete(f"{TICKETS}/{later['ticketId']}", headers=ADMIN, status=204)
    gate = client.delete(f"{TICKETS}/{today['ticketId']}", headers=GATE, status=403)
    assert gate.json["detail"] == needs_role("desk")


def test_the_desk_reads_todays_report_and_an_admin_any_window(client):
    buy(client, body(ticketDate=TODAY), headers=DESK)
    rows = client.get(REPORT, headers=DESK, status=200).json
    assert [row["sold"] for row in rows] == [1]
    named = client.get(REPORT, params={"startDate": TODAY, "endDate": TODAY}, headers=DESK,
                       status=200)
    assert named.json == rows
    csv = client.get(REPORT, headers={**DESK, "Accept": "text/csv"}, status=200)
    assert csv.content_type == "text/csv"
    for window in ({"startDate": OPEN_DAY}, {"endDate": OPEN_DAY},
                   {"startDate": "2026-11-21", "endDate": TODAY}):
        refused = client.get(REPORT, params=window, headers=DESK, status=403)
        assert assert_problem(refused, 403)["detail"] == DESK_READS_TODAY
        client.get(REPORT, params=window, headers=ADMIN, status=200)
    client.get(REPORT, headers=GATE, status=403)


@pytest.mark.parametrize("method, path, payload", [
    ("POST", EVENTS, {"name": "Night"}),
    ("PUT", f"/v1.1/museum-hours/{OPEN_DAY}", {"closed": True}),
    ("DELETE", f"/v1.1/museum-hours/{OPEN_DAY}", None),
    ("GET", f"{TICKETS}?eventId=3fa85f64-5717-4562-b3fc-2c963f66afa6", None),
])
def test_the_desk_manages_no_event_day_nor_buyer_list(client, method, path, payload):
    res = client.request(path, method=method, headers=DESK, expect_errors=True,
                         **({"json": payload} if payload else {}))
    assert (res.status_int, res.json["detail"]) == (403, needs_role("admin"))


def test_the_desk_changes_no_event(client):
    event = create_event(client)
    client.patch_json(f"{EVENTS}/{event['eventId']}", {"name": "Other"}, headers=DESK,
                      status=403)
    client.delete(f"{EVENTS}/{event['eventId']}", headers=DESK, status=403)


def test_a_desk_password_becomes_a_desk_device(client):
    started = client.post("/v1.1/devices/session", headers=DESK, status=201).json
    assert started["role"] == "desk" and started["name"].startswith("desk-")
    device = basic(started["name"], started["key"])
    sold = buy(client, body(ticketDate=TODAY), headers=device).json
    client.delete(f"{TICKETS}/{sold['ticketId']}", headers=device, status=204)
    client.get(REPORT, headers=device, status=200)
    client.post_json(EVENTS, {"name": "Night"}, headers=device, status=403)
    client.delete("/v1.1/devices/session", headers=device, status=204)
    client.get(REPORT, headers=device, status=401)
    # Neither an admin nor a visitor signs a device in.
    for headers in (ADMIN, VISITOR):
        client.post("/v1.1/devices/session", headers=headers, status=403)


def test_add_device_gives_a_desk_device_its_key(tmp_path, config_text):
    assert museum_command(tmp_path, config_text, "init").status == 0
    done = museum_command(tmp_path, config_text, "add-device", "desk-front", "--role", "desk")
    assert done.status == 0, done.err
    assert re.search(r"^  [A-Za-z0-9_-]{32}$", done.out, re.MULTILINE)
    listed = museum_command(tmp_path, config_text, "devices")
    assert re.search(r"^desk-front +desk ", listed.out, re.MULTILINE), listed.out

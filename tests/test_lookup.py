"""Finding a visitor's lost ticket at the door: by the buyer's whole email address or by
the confirmation code, whole or only its random part, among one day's tickets.

Today is conftest's NOW, Sunday 2026-11-22; tickets are bought through the API.
"""

import logging
import re

import pytest

from conftest import ADMIN, GATE, TODAY, VISITOR, assert_problem
from ticketing import OPEN_DAY, buy, cancel_event, create_event

ADMISSIONS = "/v1.1/admissions"
LOOKUP = f"{ADMISSIONS}/lookup"
EMAIL = "Ada.Lovelace@example.org"
LOOKUP_FIELDS = {"ticketId", "ticketType", "ticketDate", "confirmationCode", "status",
                 "admitted"}


def sell(client, email=EMAIL, day=TODAY, event=None):
    payload = {"ticketType": "general", "ticketDate": day, "email": email,
               "phone": "+44 20 7946 0958"}
    if event:
        payload.update(ticketType="event", eventId=event["eventId"])
    return buy(client, payload, headers=VISITOR).json


def lookup(client, body, status=200, headers=GATE):
    return client.post_json(LOOKUP, body, headers=headers, status=status)


def found_ids(res):
    return [ticket["ticketId"] for ticket in res.json["tickets"]]


def test_tickets_are_found_by_the_whole_email_of_today_with_their_status(client):
    event = create_event(client, name="Night at the Museum", dates=[TODAY])
    general, admitted, evening = sell(client), sell(client), sell(client, event=event)
    sell(client, email="lovelace@example.org")
    sell(client, day=OPEN_DAY)  # another day
    client.post_json(ADMISSIONS, {"confirmationCode": admitted["confirmationCode"]},
                     headers=GATE, status=201)
    answer = lookup(client, {"email": "ada.lovelace@EXAMPLE.org"}).json
    assert answer["date"] == TODAY
    by_id = {ticket["ticketId"]: ticket for ticket in answer["tickets"]}
    assert set(by_id) == {general["ticketId"], admitted["ticketId"], evening["ticketId"]}
    assert by_id[general["ticketId"]] == {
        "ticketId": general["ticketId"], "ticketType": "general", "ticketDate": TODAY,
        "confirmationCode": general["confirmationCode"], "category": "adult",
        "categoryLabel": "Adult", "status": "valid", "admitted": False}
    assert by_id[admitted["ticketId"]] == {
        **by_id[admitted["ticketId"]], "status": "admitted", "admitted": True,
        "admittedAt": "2026-11-22T12:00:00Z", "admittedBy": "gate"}
    assert by_id[evening["ticketId"]] == {
        **by_id[evening["ticketId"]], "eventId": event["eventId"],
        "eventName": "Night at the Museum", "status": "valid"}
    codes = [ticket["confirmationCode"] for ticket in answer["tickets"]]
    assert codes == sorted(codes)
    cancel_event(client, event["eventId"])
    [cancelled] = [ticket for ticket in lookup(client, {"email": EMAIL}).json["tickets"]
                   if ticket["ticketId"] == evening["ticketId"]]
    assert cancelled["status"] == "cancelled"


@pytest.mark.parametrize("near_miss", ["ada.lovelace@example.or", "lovelace@example.org",
                                       "ada.lovelace@example.org.uk", "ada@example.org"])
def test_only_the_exact_email_finds_a_ticket(client, near_miss):
    sell(client)
    assert lookup(client, {"email": near_miss}).json == {"date": TODAY, "tickets": []}


def test_a_date_looks_on_that_day(client):
    ticket = sell(client, day=OPEN_DAY)
    res = lookup(client, {"email": EMAIL, "date": OPEN_DAY}, headers=ADMIN)
    assert res.json["date"] == OPEN_DAY and found_ids(res) == [ticket["ticketId"]]
    assert lookup(client, {"email": EMAIL}).json["tickets"] == []


@pytest.mark.parametrize("typed", [
    lambda code: code,
    lambda code: code.upper(),
    lambda code: code[-12:],  # the random part only, as a visitor reads it out
    lambda code: f"  {code[-12:].upper()} ",
])
def test_a_ticket_is_found_by_its_code_whole_or_its_random_part(client, typed):
    ticket = sell(client)
    sell(client)
    assert found_ids(lookup(client, {"code": typed(ticket["confirmationCode"])})) == [
        ticket["ticketId"]]


def test_a_voided_ticket_is_found_as_void(client):
    ticket = sell(client)
    client.delete(f"/v1.1/tickets/{ticket['ticketId']}", headers=ADMIN, status=204)
    [found] = lookup(client, {"code": ticket["confirmationCode"]}).json["tickets"]
    assert (found["status"], found["admitted"]) == ("void", False)


def test_an_event_ticket_is_found_by_its_random_part(client):
    event = create_event(client, dates=[TODAY])
    ticket = sell(client, event=event)
    assert ticket["confirmationCode"].startswith("ticket-event-")
    assert found_ids(lookup(client, {"code": ticket["confirmationCode"][-12:]})) == [
        ticket["ticketId"]]


def test_at_most_20_tickets_are_answered(client):
    for _ in range(21):
        sell(client)
    assert len(lookup(client, {"email": EMAIL}).json["tickets"]) == 20


def test_the_answer_and_the_logs_never_hold_the_email_or_phone(client, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    sell(client, email="secret.visitor@example.org")
    res = lookup(client, {"email": "secret.visitor@example.org"})
    lookup(client, {"email": "nobody@example.org"})
    lookup(client, {"email": "secret.visitor@example.org", "code": "x"}, status=400)
    assert len(res.json["tickets"]) == 1
    assert b"example.org" not in res.body and b"7946" not in res.body
    logged = capsys.readouterr().err + "\n".join(record.getMessage()
                                                  for record in caplog.records)
    # The access log (a line may be both on stderr and among the records): path only.
    assert len(set(re.findall(r"POST /v1\.1/admissions/lookup \d+ \S+ (\S+)", logged))) == 3
    assert "example.org" not in logged and "visitor@" not in logged


@pytest.mark.parametrize(("body", "field"), [
    ({}, "email"),
    ({"email": EMAIL, "code": "792d82-891fc"}, "code"),
    ({"email": "not an email"}, "email"),
    ({"email": None}, "email"),
    ({"code": "792d82"}, "code"),
    ({"code": "ticket-museum-792d82-891fc"}, "code"),
    ({"code": 792}, "code"),
    ({"email": EMAIL, "date": "2026-02-30"}, "date"),
    ({"email": EMAIL, "phone": "+44 20 7946 0958"}, "phone"),
])
def test_a_malformed_lookup_is_400_naming_the_field(client, body, field):
    assert_problem(lookup(client, body, status=400), 400, field)


def test_a_lookup_needs_the_gate_role_and_a_json_body(client):
    assert_problem(lookup(client, {"email": EMAIL}, status=403, headers=VISITOR), 403)
    assert_problem(client.post_json(LOOKUP, {"email": EMAIL}, status=401), 401)
    assert_problem(client.post(LOOKUP, "email=x", headers=GATE, status=415), 415)
    assert_problem(client.get(f"{LOOKUP}?email={EMAIL}", headers=GATE, status=405), 405)


def test_every_lookup_counts_toward_the_typed_code_limit_shared_with_the_door(client, caplog):
    ticket = sell(client)
    for _ in range(20):
        lookup(client, {"code": ticket["confirmationCode"]})  # found or not, each counts
    for number in range(10):
        client.post_json(ADMISSIONS, {"confirmationCode": f"ticket-general-{number:06x}-00000"},
                         headers=GATE, status=404)
    res = lookup(client, {"email": EMAIL}, status=429)  # the 31st guess in a minute
    assert_problem(res, 429)
    assert 0 < int(res.headers["Retry-After"]) <= 60
    assert_problem(client.post_json(ADMISSIONS, {"confirmationCode": ticket["confirmationCode"]},
                                    headers=GATE, status=429), 429)
    assert lookup(client, {"email": EMAIL}, headers=ADMIN).json["tickets"]  # another user
    [warning] = [record for record in caplog.records if "refused" in record.getMessage()]
    assert "to gate " in warning.getMessage() and "example.org" not in warning.getMessage()

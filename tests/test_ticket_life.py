"""A ticket's life after its sale: read back (GET /v1.1/tickets/{ticketId}) at the door and
the desk, and voided by an admin (DELETE), which frees its place, stops its image and its
admission, and keeps it for the report. Dates follow conftest's NOW (Sunday 2026-11-22)."""

from datetime import date

import pytest

import museum
import museum_door
import museum_services
from conftest import ADMIN, ENTRY_TIMES, GATE, TODAY, VISITOR, assert_problem
from ticketing import UNKNOWN_ID, body, buy, cancel_event, create_event, qr_path, query

TICKETS = "/v1.1/tickets"
RECEIPT_FIELDS = ("ticketId", "ticketType", "ticketDate", "confirmationCode", "price",
                  "currency", "qrText", "ticketPage")


def path(ticket):
    return f"{TICKETS}/{ticket['ticketId']}"


def present(client, ticket, status):
    return client.post_json("/v1.1/admissions", {"confirmationCode": ticket["confirmationCode"]},
                            headers=GATE, status=status)


def test_the_gate_reads_a_ticket_without_its_buyers_contacts(client):
    sold = buy(client, body(phone="+44 20 7946 0958")).json
    read = client.get(path(sold), headers=GATE, status=200).json
    assert read == {**{name: sold[name] for name in RECEIPT_FIELDS}, "category": "adult",
                    "status": "valid"}


def test_an_admin_also_sees_the_email_and_phone(client):
    sold = buy(client, body(phone="+44 20 7946 0958")).json
    read = client.get(path(sold), headers=ADMIN, status=200).json
    assert (read["email"], read["phone"]) == ("ada@example.org", "+44 20 7946 0958")
    assert "phone" not in client.get(path(buy(client, body()).json), headers=ADMIN,
                                     status=200).json


def test_an_event_ticket_names_its_event_and_is_cancelled_with_it(client):
    event = create_event(client)
    sold = buy(client, body("event", eventId=event["eventId"])).json
    read = client.get(path(sold), headers=GATE, status=200).json
    assert (read["eventId"], read["eventName"], read["price"]) == (
        event["eventId"], event["name"], 12.5)
    cancel_event(client, event["eventId"])
    assert client.get(path(sold), headers=GATE, status=200).json["status"] == "cancelled"


def test_an_admitted_ticket_says_when_and_by_whom(client):
    sold = buy(client, body(ticketDate=TODAY)).json
    present(client, sold, 201)
    read = client.get(path(sold), headers=GATE, status=200).json
    assert read["status"] == "admitted"
    assert read["admittedBy"] == "gate" and read["admittedAt"].startswith(TODAY)


def test_erased_contacts_are_no_longer_shown(client, store):
    sold = buy(client, body(ticketDate=TODAY, phone="+44 20 7946 0958")).json
    store.erase_contacts("2027-01-01", 10)
    read = client.get(path(sold), headers=ADMIN, status=200).json
    assert "email" not in read and "phone" not in read


@pytest.mark.parametrize("method", ["get", "delete"])
def test_reading_and_voiding_need_their_roles(client, method):
    sold = buy(client, body()).json
    assert_problem(getattr(client, method)(path(sold), headers=VISITOR, status=403), 403)
    if method == "delete":
        assert_problem(client.delete(path(sold), headers=GATE, status=403), 403)
        assert client.get(path(sold), headers=ADMIN).json["status"] == "valid"


@pytest.mark.parametrize("method", ["get", "delete"])
def test_unknown_and_malformed_ids(client, method):
    assert_problem(getattr(client, method)(f"{TICKETS}/{UNKNOWN_ID}", headers=ADMIN,
                                           status=404), 404)
    assert_problem(getattr(client, method)(f"{TICKETS}/not-a-uuid", headers=ADMIN,
                                           status=400), 400, "ticketId")


def test_a_voided_ticket_frees_its_place_and_is_refused_everywhere(make_client, config_text,
                                                                   db_path):
    client = make_client(museum.parse_config(
        config_text + "[capacity]\ngeneral_per_day = 1\n"))
    sold = buy(client, body(ticketDate=TODAY)).json
    assert_problem(buy(client, body(ticketDate=TODAY), status=409), 409)
    client.delete(path(sold), headers=ADMIN, status=204)
    assert client.get(path(sold), headers=GATE, status=200).json["status"] == "void"
    problem = assert_problem(client.get(qr_path(sold["ticketId"]), headers=ADMIN, status=410),
                             410)
    assert problem["detail"] == "This ticket was voided."
    refused = assert_problem(present(client, sold, 410), 410)
    assert refused["result"] == "void" and refused["ticketId"] == sold["ticketId"]
    client.delete(path(sold), headers=ADMIN, status=204)  # void already: the same answer
    buy(client, body(ticketDate=TODAY))  # the place is free again
    assert_problem(buy(client, body(ticketDate=TODAY), status=409), 409)
    summary = client.get("/v1.1/admissions/summary", headers=GATE, status=200).json
    assert summary["sold"]["general"] == 1
    assert query(db_path, "SELECT count(*) FROM tickets WHERE voided_at IS NOT NULL") == [(1,)]


def test_an_admitted_ticket_voided_reads_void_and_leaves_the_counts(client):
    sold = buy(client, body(ticketDate=TODAY)).json
    present(client, sold, 201)
    client.delete(path(sold), headers=ADMIN, status=204)
    read = client.get(path(sold), headers=GATE, status=200).json
    assert read["status"] == "void" and read["admittedBy"] == "gate"
    summary = client.get("/v1.1/admissions/summary", headers=GATE, status=200).json
    assert summary["sold"] == summary["admitted"] == {"general": 0, "event": 0}


def test_the_verdict_of_verify_ticket_on_a_void_ticket(client, store):
    sold = buy(client, body(ticketDate=TODAY)).json
    client.delete(path(sold), headers=ADMIN, status=204)
    # The app's secret, kept in the store.
    secret = museum_services.qr_secret(museum.parse_config(""), store)
    text = museum_door.qr_text(secret, sold["ticketId"], sold["confirmationCode"])
    assert museum_door.verify_ticket(text, secret, store, date.fromisoformat(TODAY),
                                     ENTRY_TIMES) == "void"



# -- the buyers of an event ----------------------------------------------------------------

def buyers(client, status=200, headers=ADMIN, **params):
    return client.get(TICKETS, params=params, headers=headers, status=status)


def test_an_events_buyers_are_listed_with_their_contacts_in_pages(client):
    event = create_event(client)
    sold = [buy(client, body("event", eventId=event["eventId"], ticketDate=day,
                             email=f"buyer.{number}@example.org")).json
            for number, day in enumerate(["2026-12-06", "2026-12-05", "2026-12-05"])]
    buy(client, body())  # general entry: not the event's
    first = buyers(client, eventId=event["eventId"], limit="2")
    assert first.headers["X-Total-Count"] == "3"
    # By date first; two sales within one millisecond may come in either order.
    assert {ticket["ticketId"] for ticket in first.json} == {sold[1]["ticketId"],
                                                             sold[2]["ticketId"]}
    assert {ticket["email"] for ticket in first.json} == {"buyer.1@example.org",
                                                          "buyer.2@example.org"}
    assert first.json[0]["status"] == "valid" and first.json[0]["eventName"] == event["name"]
    assert 'rel="next"' in first.headers["Link"] and "page=2" in first.headers["Link"]
    second = buyers(client, eventId=event["eventId"], limit="2", page="2")
    assert [ticket["ticketId"] for ticket in second.json] == [sold[0]["ticketId"]]
    assert "Link" in second.headers and 'rel="prev"' in second.headers["Link"]
    one_day = buyers(client, eventId=event["eventId"], date="2026-12-06")
    assert (one_day.headers["X-Total-Count"], len(one_day.json)) == ("1", 1)


def test_a_cancelled_events_buyers_are_still_listed(client):
    event = create_event(client)
    sold = buy(client, body("event", eventId=event["eventId"])).json
    cancel_event(client, event["eventId"])
    listed = buyers(client, eventId=event["eventId"]).json
    assert [(ticket["ticketId"], ticket["status"]) for ticket in listed] == [
        (sold["ticketId"], "cancelled")]


@pytest.mark.parametrize("headers", [VISITOR, GATE])
def test_only_admins_list_buyers(client, headers):
    event = create_event(client)
    assert_problem(buyers(client, 403, headers, eventId=event["eventId"]), 403)
    res = client.head(TICKETS, params={"eventId": event["eventId"]}, headers=headers,
                      status=403)
    assert "X-Total-Count" not in res.headers


@pytest.mark.parametrize("params, field", [
    ({}, "eventId"), ({"eventId": "x"}, "eventId"),
    ({"eventId": UNKNOWN_ID, "date": "soon"}, "date"),
    ({"eventId": UNKNOWN_ID, "limit": "31"}, "limit"),
])
def test_a_bad_buyers_query_is_refused_naming_it(client, params, field):
    assert_problem(buyers(client, 400, **params), 400, field)


def test_the_buyers_of_an_unknown_event_are_not_found(client):
    assert_problem(buyers(client, 404, eventId=UNKNOWN_ID), 404)

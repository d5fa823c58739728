"""Undo at the door, and the admission history that keeps every admission and undo.

A gate (device or user) may undo its own admissions for 10 minutes; an admin any
admission at any time. The clock is the test's: it starts at conftest's NOW and is moved
forward by hand.
"""

import pytest
import webtest

import museum
from conftest import ADMIN, GATE, TODAY, VISITOR, assert_problem, basic, quick_hash
from ticketing import UNKNOWN_ID, buy, query

ADMISSIONS = "/v1.1/admissions"
GATE2 = basic("gate2", "gate2-pass")



@pytest.fixture
def client(store, config_text, clock):
    """The app with a second gate user, `gate2`, on the test's clock."""
    config = museum.parse_config(config_text + f"gate2 = gate:{quick_hash('gate2-pass')}\n",
                                 "test.ini")
    return webtest.TestApp(museum.create_app(config, store=store, clock=clock), lint=True)


@pytest.fixture
def admitted(client):
    """A ticket for today, admitted by `gate` at NOW."""
    ticket = buy(client, {"ticketType": "general", "ticketDate": TODAY,
                          "email": "ada@example.org"}, headers=VISITOR).json
    client.post_json(ADMISSIONS, {"confirmationCode": ticket["confirmationCode"]},
                     headers=GATE, status=201)
    return ticket


def undo(client, ticket, headers, status):
    return client.delete(f"{ADMISSIONS}/{ticket['ticketId']}", headers=headers, status=status)


def history(client, ticket, headers=GATE):
    return client.get(f"{ADMISSIONS}/{ticket['ticketId']}", headers=headers, status=200).json


def admit_again(client, ticket, headers=GATE, status=201):
    return client.post_json(ADMISSIONS, {"confirmationCode": ticket["confirmationCode"]},
                            headers=headers, status=status)


def test_the_gate_that_admitted_may_undo_within_10_minutes(client, clock, admitted, db_path):
    clock.advance(minutes=10)  # the last moment allowed
    undo(client, admitted, GATE, 204)
    assert query(db_path, "SELECT count(*) FROM admissions") == [(0,)]
    admit_again(client, admitted)  # the next scan admits it again


def test_the_gate_that_admitted_may_not_undo_after_10_minutes(client, clock, admitted,
                                                             db_path):
    clock.advance(minutes=10, seconds=1)
    body = assert_problem(undo(client, admitted, GATE, 403), 403)
    assert body["detail"] == ("A gate may undo only its own admissions, within 10 minutes; "
                              "ask an admin.")
    assert history(client, admitted)["admitted"] is True  # nothing changed
    assert query(db_path, "SELECT action FROM admission_events") == [("admitted",)]


def test_another_gate_may_not_undo_an_admission(client, admitted):
    body = assert_problem(undo(client, admitted, GATE2, 403), 403)
    assert "only its own admissions" in body["detail"]
    assert history(client, admitted, GATE2)["admitted"] is True


def test_an_admin_may_undo_any_admission_at_any_time(client, clock, admitted):
    clock.advance(days=1)
    undo(client, admitted, ADMIN, 204)
    assert history(client, admitted)["admitted"] is False


def test_undoing_what_is_not_admitted_is_404(client, admitted):
    undo(client, admitted, GATE, 204)
    assert_problem(undo(client, admitted, GATE, 404), 404)
    assert_problem(undo(client, admitted, ADMIN, 404), 404)
    assert_problem(client.delete(f"{ADMISSIONS}/{UNKNOWN_ID}", headers=GATE, status=404), 404)
    assert_problem(client.delete(f"{ADMISSIONS}/not-a-uuid", headers=GATE, status=400), 400,
                   "ticketId")
    assert_problem(undo(client, admitted, VISITOR, 403), 403)


def test_the_history_keeps_every_admission_and_undo_oldest_first(client, clock, admitted):
    clock.advance(minutes=2)
    undo(client, admitted, GATE, 204)
    clock.advance(minutes=1)
    admit_again(client, admitted, headers=GATE2)
    clock.advance(hours=2)
    undo(client, admitted, ADMIN, 204)
    clock.advance(minutes=1)
    admit_again(client, admitted)
    assert history(client, admitted) == {
        "ticketId": admitted["ticketId"], "admitted": True,
        "admittedAt": "2026-11-22T14:04:00Z", "admittedBy": "gate",
        "history": [
            {"action": "admitted", "at": "2026-11-22T12:00:00Z", "by": "gate"},
            {"action": "undone", "at": "2026-11-22T12:02:00Z", "by": "gate"},
            {"action": "admitted", "at": "2026-11-22T12:03:00Z", "by": "gate2"},
            {"action": "undone", "at": "2026-11-22T14:03:00Z", "by": "admin"},
            {"action": "admitted", "at": "2026-11-22T14:04:00Z", "by": "gate"},
        ]}


def test_a_refused_scan_or_undo_leaves_no_trace_in_the_history(client, clock, admitted):
    admit_again(client, admitted, status=409)  # already admitted: not an admission
    undo(client, admitted, GATE2, 403)
    assert [entry["action"] for entry in history(client, admitted)["history"]] == ["admitted"]


def test_the_history_of_a_ticket_never_admitted_is_empty(client):
    ticket = buy(client, {"ticketType": "general", "ticketDate": TODAY,
                          "email": "ada@example.org"}, headers=VISITOR).json
    assert history(client, ticket, ADMIN) == {"ticketId": ticket["ticketId"], "admitted": False,
                                              "history": []}
    res = client.head(f"{ADMISSIONS}/{ticket['ticketId']}", headers=GATE, status=200)
    assert res.body == b""


def test_the_history_of_an_unknown_ticket_is_404(client):
    assert_problem(client.get(f"{ADMISSIONS}/{UNKNOWN_ID}", headers=GATE, status=404), 404)
    assert_problem(client.get(f"{ADMISSIONS}/x", headers=GATE, status=400), 400, "ticketId")
    assert_problem(client.get(f"{ADMISSIONS}/{UNKNOWN_ID}", headers=VISITOR, status=403), 403)


def test_the_history_never_shows_the_buyers_contacts(client, admitted):
    raw = client.get(f"{ADMISSIONS}/{admitted['ticketId']}", headers=GATE, status=200).body
    assert b"ada@example.org" not in raw

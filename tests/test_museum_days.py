"""PUT and DELETE /v1.1/museum-hours/{date}: an admin closes a day, or changes its hours or
capacity, over the config's rule; the hours, the availability and the sales follow at once.
Dates follow conftest's NOW (Sunday 2026-11-22): Monday 23 is closed by the config,
Tuesday 24 is open 09:00-18:00."""

import re

import pytest
import webtest

import museum
import museum_auth
import museum_config
import museum_credentials
from conftest import ADMIN, GATE, NOW, TODAY, VISITOR, assert_problem, basic, quick_hash
from ticketing import TICKETS, body, buy, create_event

HOURS = "/v1.1/museum-hours"
AVAILABILITY = "/v1.1/availability"
TUESDAY, MONDAY = "2026-11-24", "2026-11-23"


def change(client, day, payload, status=200, headers=ADMIN):
    return client.put_json(f"{HOURS}/{day}", payload, headers=headers, status=status)


def restore(client, day, status=204, headers=ADMIN):
    return client.delete(f"{HOURS}/{day}", headers=headers, status=status)


def hours_of(client, day):
    """The day's entry in the opening hours, or None when it is not listed (closed)."""
    listed = client.get(HOURS, params={"startDate": day, "limit": "1"}, headers=VISITOR,
                        status=200).json
    return listed[0] if listed and listed[0]["date"] == day else None


def availability_of(client, day):
    return client.get(AVAILABILITY, params={"startDate": day, "endDate": day},
                      headers=VISITOR, status=200).json[0]


def test_a_closed_day_leaves_the_hours_and_sells_no_general_ticket(client):
    answer = change(client, TUESDAY, {"closed": True, "note": " Storm warning "}).json
    assert answer == {"date": TUESDAY, "closed": True, "note": "Storm warning",
                      "changedAt": "2026-11-22T12:00:00Z", "changedBy": "admin",
                      "affectedTickets": []}
    assert hours_of(client, TUESDAY) is None
    assert availability_of(client, TUESDAY) == {"date": TUESDAY, "open": False,
                                                 "general": None, "events": []}
    refused = assert_problem(buy(client, body(ticketDate=TUESDAY), status=400), 400,
                             "ticketDate")
    assert refused["errors"] == [{"field": "ticketDate", "code": "closed",
                                  "message": f"the museum is closed on {TUESDAY}"}]


def test_closing_a_day_answers_the_tickets_sold_for_it_with_their_buyers(client):
    night = create_event(client, dates=[TUESDAY])
    first = buy(client, body(ticketDate=TUESDAY, email="ada@example.org",
                             phone="+44 20 7946 0958")).json
    event_ticket = buy(client, body("event", eventId=night["eventId"], ticketDate=TUESDAY,
                                    email="bo@example.org")).json
    void = buy(client, body(ticketDate=TUESDAY)).json
    client.delete(f"{TICKETS}/{void['ticketId']}", headers=ADMIN, status=204)
    buy(client, body(ticketDate="2026-11-25"))
    affected = change(client, TUESDAY, {"closed": True}).json["affectedTickets"]
    assert [(each["ticketId"], each["ticketType"], each["confirmationCode"], each["email"])
            for each in affected] == [
        (first["ticketId"], "general", first["confirmationCode"], "ada@example.org"),
        (event_ticket["ticketId"], "event", event_ticket["confirmationCode"],
         "bo@example.org")]
    assert affected[0]["phone"] == "+44 20 7946 0958"
    assert affected[1]["eventName"] == night["name"]
    # Event tickets follow their event, as on a day the config closes.
    buy(client, body("event", eventId=night["eventId"], ticketDate=TUESDAY))


def test_other_hours_open_a_closed_day_and_are_listed_and_sold(client):
    answer = change(client, MONDAY, {"timeOpen": "12:00", "timeClose": "15:30"}).json
    assert (answer["timeOpen"], answer["timeClose"], answer["affectedTickets"]) == (
        "12:00", "15:30", [])
    assert hours_of(client, MONDAY) == {"date": MONDAY, "timeOpen": "12:00",
                                        "timeClose": "15:30"}
    assert availability_of(client, MONDAY)["open"] is True
    buy(client, body(ticketDate=MONDAY))


def test_a_days_capacity_limits_its_sales_and_shows_in_the_availability(client):
    buy(client, body(ticketDate=TUESDAY))
    change(client, TUESDAY, {"capacity": 2})
    assert availability_of(client, TUESDAY)["general"] == {"capacity": 2, "sold": 1,
                                                           "available": 1}
    assert hours_of(client, TUESDAY) == {"date": TUESDAY, "timeOpen": "09:00",
                                         "timeClose": "18:00"}
    buy(client, body(ticketDate=TUESDAY))
    assert buy(client, body(ticketDate=TUESDAY), status=409).json["reason"] == "sold-out"
    change(client, TUESDAY, {"capacity": 1})  # below what is sold: sales stop, tickets stay
    assert availability_of(client, TUESDAY)["general"] == {"capacity": 1, "sold": 2,
                                                           "available": 0}


def test_a_new_change_replaces_the_last_and_delete_gives_the_day_back(client):
    change(client, TUESDAY, {"closed": True})
    change(client, TUESDAY, {"capacity": 5})
    assert hours_of(client, TUESDAY) is not None  # open again: the closure was replaced
    restore(client, TUESDAY)
    assert availability_of(client, TUESDAY)["general"]["capacity"] is None
    restore(client, TUESDAY)  # nothing left to undo: 204 all the same


def test_new_hours_list_the_timed_tickets_whose_slot_is_gone(make_client, config_text):
    timed = make_client(museum.parse_config(config_text + "[hours]\nslot_minutes = 60\n"))
    early = buy(timed, body(ticketDate=TUESDAY, entryTime="09:00")).json
    buy(timed, body(ticketDate=TUESDAY, entryTime="13:00"))
    affected = change(timed, TUESDAY, {"timeOpen": "12:00", "timeClose": "16:00"}).json
    assert [each["ticketId"] for each in affected["affectedTickets"]] == [early["ticketId"]]
    assert availability_of(timed, TUESDAY)["slots"][0]["time"] == "12:00"


def test_today_may_be_changed(client):
    change(client, TODAY, {"closed": True})
    assert hours_of(client, TODAY) is None


@pytest.mark.parametrize("headers, status", [(VISITOR, 403), (GATE, 403), ({}, 401)])
def test_only_an_admin_changes_a_day(client, headers, status):
    assert_problem(change(client, TUESDAY, {"closed": True}, status, headers), status)
    assert_problem(restore(client, TUESDAY, status, headers), status)
    assert hours_of(client, TUESDAY) is not None


@pytest.mark.parametrize("day, payload, fields", [
    ("2026-11-21", {"closed": True}, ["date"]),  # yesterday
    ("2026-02-30", {"closed": True}, ["date"]),
    ("tomorrow", {"closed": True}, ["date"]),
    (TUESDAY, {}, ["closed"]),
    (TUESDAY, {"closed": False}, ["closed"]),
    (TUESDAY, {"closed": "yes"}, ["closed"]),
    (TUESDAY, {"closed": True, "timeOpen": "10:00", "timeClose": "12:00"},
     ["timeOpen", "timeClose"]),
    (TUESDAY, {"closed": True, "capacity": 5}, ["capacity"]),
    (TUESDAY, {"timeOpen": "10:00"}, ["timeClose"]),
    (TUESDAY, {"timeClose": "10:00", "capacity": 3}, ["timeOpen"]),
    (TUESDAY, {"timeOpen": "16:00", "timeClose": "10:00"}, ["timeClose"]),
    (TUESDAY, {"timeOpen": "9:00", "timeClose": "24:00"}, ["timeOpen", "timeClose"]),
    (TUESDAY, {"capacity": 0}, ["capacity"]),
    (TUESDAY, {"capacity": 2.5}, ["capacity"]),
    (TUESDAY, {"capacity": None}, ["capacity", "closed"]),
    (TUESDAY, {"closed": True, "note": "x" * 201}, ["note"]),
    (TUESDAY, {"closed": True, "reason": "storm"}, ["reason"]),
])
def test_a_bad_change_is_400_naming_every_bad_field_and_changes_nothing(
        client, day, payload, fields):
    answer = assert_problem(change(client, day, payload, 400), 400)
    assert [error["field"] for error in answer["errors"]] == fields
    assert hours_of(client, TUESDAY) == {"date": TUESDAY, "timeOpen": "09:00",
                                         "timeClose": "18:00"}


def test_a_past_day_cannot_be_given_back_either(client):
    assert_problem(restore(client, "2026-11-21", 400), 400, "date")


# -- a reload: the live config ---------------------------------------------------------------

class CountedUsers(museum_auth.ConfiguredUsers):
    """The configured users, counting the password checks they make."""

    checks = 0

    def check(self, name, password):
        CountedUsers.checks += 1
        return super().check(name, password)


def reloadable_app(store, config_text):
    """A client over a LiveConfig of `config_text`, and that LiveConfig."""
    live = museum_config.LiveConfig(museum.parse_config(config_text))
    config = live.config
    authenticator = museum_auth.authenticator_for(config, CountedUsers(config.users))
    live.follow(lambda new: authenticator.logins.use_accounts(CountedUsers(new.users)))
    app = museum.create_app(live, store=store, clock=lambda: NOW, authenticator=authenticator)
    return webtest.TestApp(app, lint=True), live


def test_a_reload_serves_the_new_hours_prices_and_users_at_once(store, config_text):
    client, live = reloadable_app(store, config_text)
    hours_of(client, TUESDAY)
    buy(client, body(ticketDate=TUESDAY), headers=VISITOR)
    checks = CountedUsers.checks
    new_gate = "gate-pass-2"
    text = (re.sub(r"(?m)^gate = .*$", f"gate = gate:{quick_hash(new_gate)}", config_text)
            + "[hours]\ntuesday = 11:00-13:00\n[tickets]\ngeneral_price = 7.5\n"
        "[server]\nport = 9999\n")
    assert live.replace(museum.parse_config(text), None) == ["[server] port"]
    assert hours_of(client, TUESDAY)["timeOpen"] == "11:00"
    assert buy(client, body(ticketDate=TUESDAY), headers=VISITOR).json["price"] == 7.5
    assert CountedUsers.checks == checks  # the visitor's login was kept: no new check
    assert_problem(client.get(HOURS, headers=GATE, status=401), 401)  # its old password
    client.get(HOURS, headers=basic("gate", new_gate), status=200)


def test_a_reload_refused_keeps_the_config_in_use(store, config_text):
    client, live = reloadable_app(store, config_text)
    demo = config_text + "demo = admin:" + next(iter(museum_credentials.DEMO_PASSWORD_HASHES)) + "\n"
    with pytest.raises(museum_config.ConfigError, match="demo password"):
        live.replace(museum.parse_config(demo + "[hours]\ntuesday = closed\n"), "on 0.0.0.0")
    assert hours_of(client, TUESDAY) is not None
    assert live.config.users.keys() == {"admin", "desk", "gate", "visitor"}
    client.get(HOURS, headers=ADMIN, status=200)  # the users in use still sign in

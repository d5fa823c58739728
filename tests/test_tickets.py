"""Buying tickets: POST /v1.1/tickets.

Every rule of a purchase, read as HTTP exchanges: the body's fields, the opening hours and
events a ticket date must fit, the receipt and its Location, what is stored (and what is
never logged), and replays under an Idempotency-Key. Dates are relative to the fixed NOW of
conftest (Sunday 2026-11-22, UTC); see `ticketing` for the calendar.
"""

import logging
import re
import uuid

import pytest

import museum
import museum_door
import museum_tickets
from conftest import ADMIN, TODAY, VISITOR, assert_problem
from ticketing import (CODE, EVENT_DATES, EVENTS, OMIT, OPEN_DAY, TICKETS, UNKNOWN_ID, body, buy,
    cancel_event, create_event, qr_path, query, ticket_count)

GENERAL_SOLD = "Museum general entry ticket purchased"
EVENT_SOLD = "Museum special event ticket purchased"
MONDAY = "2026-11-23"  # closed every week
YESTERDAY = "2026-11-21"


def error_fields(problem):
    return sorted({error["field"] for error in problem["errors"]})


def error_messages(problem, field):
    return [error["message"] for error in problem["errors"] if error["field"] == field]


def stored_ticket(db_path, ticket_id):
    """The ticket's row in the sqlite file: (type, date, event_id, code, email, phone)."""
    rows = query(db_path, "SELECT type, date, event_id, confirmation_code, email, phone "
                          "FROM tickets WHERE id = ?", ticket_id)
    assert len(rows) == 1, rows
    return rows[0]


def assert_receipt(res, payload, event=None):
    """`res` is the 201 receipt for `payload`: exactly the promised fields, a fresh UUID, a
    well-formed code, the QR's text naming both, the ticket page's link and the Location of
    the ticket's image."""
    receipt = res.json
    expected = {
        "message": EVENT_SOLD if event else GENERAL_SOLD,
        "ticketId": receipt.get("ticketId"),
        "ticketType": payload["ticketType"],
        "ticketDate": payload["ticketDate"],
        "confirmationCode": receipt.get("confirmationCode"),
        "price": event["price"] if event else 0,
        "currency": "EUR",
        "qrText": receipt.get("qrText"),
        "ticketPage": receipt.get("ticketPage"),
    }
    if event:
        expected.update(eventName=event["name"], eventId=event["eventId"])
    assert receipt == expected
    assert str(uuid.UUID(receipt["ticketId"])) == receipt["ticketId"]
    assert CODE.fullmatch(receipt["confirmationCode"])
    assert receipt["confirmationCode"].startswith(f"ticket-{payload['ticketType']}-")
    assert res.headers["Location"] == qr_path(receipt["ticketId"])
    shown = museum_door.QR_TEXT.fullmatch(receipt["qrText"])
    assert shown and shown.group(1, 2) == (receipt["ticketId"], receipt["confirmationCode"])
    assert re.fullmatch(r"/t/[A-Za-z0-9_-]{22}", receipt["ticketPage"])
    return receipt


# -- the body ---------------------------------------------------------------------------

INVALID = [
    pytest.param(body(ticketType=OMIT), ["ticketType"], id="type-missing"),
    pytest.param(body(ticketType="vip"), ["ticketType"], id="type-unknown"),
    pytest.param(body(ticketType="General"), ["ticketType"], id="type-wrong-case"),
    pytest.param(body(ticketType=None), ["ticketType"], id="type-null"),
    pytest.param(body(ticketType=["general"]), ["ticketType"], id="type-list"),
    pytest.param(body(ticketDate=OMIT), ["ticketDate"], id="date-missing"),
    pytest.param(body(ticketDate="2027-02-29"), ["ticketDate"], id="date-not-in-calendar"),
    pytest.param(body(ticketDate="2026-13-01"), ["ticketDate"], id="date-month-13"),
    pytest.param(body(ticketDate="24/11/2026"), ["ticketDate"], id="date-other-format"),
    pytest.param(body(ticketDate="2026-11-24T10:00:00"), ["ticketDate"], id="date-with-time"),
    pytest.param(body(ticketDate="2026-11-4"), ["ticketDate"], id="date-short-day"),
    pytest.param(body(ticketDate=20261124), ["ticketDate"], id="date-number"),
    pytest.param(body(ticketDate=""), ["ticketDate"], id="date-empty"),
    # 366 days ahead sell (next-year above); a day more would outlive the contact's erasure.
    pytest.param(body(ticketDate="2027-11-24"), ["ticketDate"], id="date-367-days-ahead"),
    pytest.param(body(ticketDate="9999-12-31"), ["ticketDate"], id="date-far-ahead"),
    pytest.param(body(email=OMIT), ["email"], id="email-missing"),
    pytest.param(body(email="ada.example.org"), ["email"], id="email-no-at"),
    pytest.param(body(email="ada@lovelace@example.org"), ["email"], id="email-two-ats"),
    pytest.param(body(email="@example.org"), ["email"], id="email-empty-local-part"),
    pytest.param(body(email="ada@localhost"), ["email"], id="email-domain-without-dot"),
    pytest.param(body(email="ada@"), ["email"], id="email-empty-domain"),
    pytest.param(body(email="ada lovelace@example.org"), ["email"], id="email-space"),
    pytest.param(body(email="ada@example.org\n"), ["email"], id="email-newline"),
    pytest.param(body(email="a" * 243 + "@example.org"), ["email"], id="email-255-chars"),
    pytest.param(body(email=42), ["email"], id="email-number"),
    pytest.param(body(email=None), ["email"], id="email-null"),
    pytest.param(body(phone="123456"), ["phone"], id="phone-6-chars"),
    pytest.param(body(phone="+" + "1" * 20), ["phone"], id="phone-21-chars"),
    pytest.param(body(phone="+1 (55) 5-- 12"), ["phone"], id="phone-6-digits"),
    pytest.param(body(phone="555-CALL-NOW"), ["phone"], id="phone-letters"),
    pytest.param(body(phone="555/123/4567"), ["phone"], id="phone-slash"),
    pytest.param(body(phone="\u0665\u0665\u0665\u0661\u0662\u0663\u0664"), ["phone"],
                 id="phone-non-ascii-digits"),
    pytest.param(body(phone=5551234), ["phone"], id="phone-number"),
    pytest.param(body(phone=""), ["phone"], id="phone-empty"),
    pytest.param(body(eventId=UNKNOWN_ID), ["eventId"], id="general-with-event"),
    pytest.param(body("event", eventId=OMIT), ["eventId"], id="event-without-event"),
    pytest.param(body("event", eventId="night-at-the-museum"), ["eventId"], id="event-id-not-uuid"),
    pytest.param(body("event", eventId=UNKNOWN_ID + "0"), ["eventId"], id="event-id-too-long"),
    pytest.param(body("event", eventId=7), ["eventId"], id="event-id-number"),
    pytest.param(body(seat="A12"), ["seat"], id="unknown-field"),
    pytest.param(body(ticketId=UNKNOWN_ID), ["ticketId"], id="ticket-id-given"),
    pytest.param(body(confirmationCode="ticket-general-000000-00000"), ["confirmationCode"],
                 id="code-given"),
]


@pytest.mark.parametrize("payload, fields", INVALID)
def test_an_invalid_purchase_is_refused_naming_the_field(client, db_path, payload, fields):
    res = buy(client, payload, status=400)
    assert error_fields(assert_problem(res, 400)) == fields
    assert ticket_count(db_path) == 0


@pytest.mark.parametrize("payload, fields", [
    pytest.param({"ticketType": "vip", "ticketDate": "tomorrow", "email": "nobody",
                  "phone": "12", "eventId": "x", "seat": 1},
                 ["email", "eventId", "phone", "seat", "ticketDate", "ticketType"],
                 id="every-field-wrong"),
    pytest.param(body(ticketDate=YESTERDAY, email=OMIT, eventId=UNKNOWN_ID),
                 ["email", "eventId", "ticketDate"], id="past-general-with-event-no-email"),
    pytest.param(body("event", ticketDate=YESTERDAY, eventId=OMIT, phone="1"),
                 ["eventId", "phone", "ticketDate"], id="past-event-without-event"),
])
def test_every_violation_is_reported_at_once(client, payload, fields):
    res = buy(client, payload, status=400)
    assert error_fields(assert_problem(res, 400)) == fields


@pytest.mark.parametrize("raw, content_type, status", [
    pytest.param(b"[]", "application/json", 400, id="array"),
    pytest.param(b'"general"', "application/json", 400, id="string"),
    pytest.param(b"null", "application/json", 400, id="null"),
    pytest.param(b'{"ticketType": "general",', "application/json", 400, id="truncated"),
    pytest.param(b'{"ticketType": NaN}', "application/json", 400, id="nan"),
    pytest.param(b'{"ticketType": "general"}', "text/plain", 415, id="not-json-media-type"),
])
def test_a_body_that_is_not_a_json_object_is_refused(client, db_path, raw, content_type, status):
    res = client.post(TICKETS, raw, headers=ADMIN, content_type=content_type, status=status)
    assert_problem(res, status)
    assert ticket_count(db_path) == 0


def test_buying_needs_credentials(client, db_path):
    res = client.post_json(TICKETS, body(), status=401)
    assert_problem(res, 401)
    assert ticket_count(db_path) == 0


# -- a general ticket ---------------------------------------------------------------------

@pytest.mark.parametrize("payload", [
    pytest.param(body(), id="minimal"),
    pytest.param(body(ticketDate=TODAY), id="today"),
    pytest.param(body(ticketDate="2026-11-27"), id="friday-short-hours"),
    pytest.param(body(ticketDate="2027-11-23"), id="next-year"),
    pytest.param(body(phone="1234567"), id="phone-7-digits"),
    pytest.param(body(phone="+" + "1" * 19), id="phone-20-chars"),
    pytest.param(body(phone="+44 (20) 7946-0958"), id="phone-punctuated"),
    pytest.param(body(phone="555.123.4567"), id="phone-dotted"),
    pytest.param(body(email="a" * 242 + "@example.org"), id="email-254-chars"),
    pytest.param(body(email="ada+museum@mail.example.org"), id="email-plus-subdomain"),
])
@pytest.mark.parametrize("who", [ADMIN, VISITOR], ids=["admin", "visitor"])
def test_a_general_ticket_is_sold_and_stored(client, db_path, payload, who):
    res = buy(client, payload, headers=who)
    receipt = assert_receipt(res, payload)
    assert stored_ticket(db_path, receipt["ticketId"]) == (
        "general", payload["ticketDate"], None, receipt["confirmationCode"],
        payload["email"], payload.get("phone"))


@pytest.mark.parametrize("day", [YESTERDAY, "2026-11-01", "1999-12-31"])
def test_a_general_ticket_for_a_past_day_is_refused(client, db_path, day):
    res = buy(client, body(ticketDate=day), status=400)
    problem = assert_problem(res, 400, "ticketDate")
    assert error_messages(problem, "ticketDate") == ["must not be in the past"]
    assert ticket_count(db_path) == 0


@pytest.mark.parametrize("zone, day, status", [
    pytest.param("UTC", TODAY, 201, id="utc-noon-is-sunday"),
    pytest.param("Pacific/Kiritimati", TODAY, 400, id="utc+14-is-already-monday"),
    pytest.param("Pacific/Kiritimati", "2026-11-24", 201, id="utc+14-tuesday"),
])
def test_today_is_the_date_in_the_museums_time_zone(make_client, config_text, zone, day,
                                                     status):
    config = museum.parse_config(config_text.replace("timezone = UTC", f"timezone = {zone}"))
    res = buy(make_client(config), body(ticketDate=day), status=status)
    if status == 400:
        problem = assert_problem(res, 400, "ticketDate")
        assert error_messages(problem, "ticketDate") == ["must not be in the past"]


@pytest.mark.parametrize("extra_config, day, status", [
    pytest.param("", MONDAY, 400, id="weekly-closed-monday"),
    pytest.param("", "2026-12-01", 201, id="ordinary-tuesday"),
    pytest.param("[exceptions]\n2026-12-01 = closed\n", "2026-12-01", 400,
                 id="exception-closes-a-tuesday"),
    pytest.param("[exceptions]\n2026-12-01 = closed\n", "2026-12-02", 201,
                 id="exception-leaves-the-next-day-open"),
    pytest.param("[exceptions]\n2026-11-30 = 10:00-12:00\n", "2026-11-30", 201,
                 id="special-hours-open-a-monday"),
    pytest.param("[exceptions]\n2026-11-30 = 10:00-12:00\n", MONDAY, 400,
                 id="special-hours-leave-other-mondays-closed"),
    pytest.param("[hours]\ntuesday = closed\n", OPEN_DAY, 400, id="hours-close-tuesdays"),
    pytest.param("[hours]\nmonday = 12:00-13:00\n", MONDAY, 201, id="hours-open-mondays"),
])
def test_a_general_ticket_needs_the_museum_open_that_day(make_client, config_text, db_path,
                                                         extra_config, day, status):
    client = make_client(museum.parse_config(config_text + extra_config, "test.ini"))
    res = buy(client, body(ticketDate=day), status=status)
    if status == 400:
        problem = assert_problem(res, 400, "ticketDate")
        assert error_messages(problem, "ticketDate") == [f"the museum is closed on {day}"]
        assert ticket_count(db_path) == 0
    else:
        assert_receipt(res, body(ticketDate=day))


# -- an event ticket ------------------------------------------------------------------------

@pytest.mark.parametrize("day", EVENT_DATES)
def test_an_event_ticket_is_sold_for_one_of_its_dates(client, db_path, day):
    event = create_event(client)
    payload = body("event", eventId=event["eventId"], ticketDate=day, phone="+33 1 40 20 50 50")
    res = buy(client, payload, headers=VISITOR)
    receipt = assert_receipt(res, payload, event)
    assert stored_ticket(db_path, receipt["ticketId"]) == (
        "event", day, event["eventId"], receipt["confirmationCode"], payload["email"],
        payload["phone"])


def test_an_event_may_sell_tickets_on_a_day_the_museum_is_closed(client):
    event = create_event(client, dates=[MONDAY])
    payload = body("event", eventId=event["eventId"], ticketDate=MONDAY)
    assert_receipt(buy(client, payload), payload, event)


def test_an_event_ticket_for_another_date_lists_the_valid_dates(client, db_path):
    event = create_event(client)
    res = buy(client, body("event", eventId=event["eventId"], ticketDate=OPEN_DAY), status=400)
    problem = assert_problem(res, 400, "ticketDate")
    assert "2026-12-05, 2026-12-06" in problem["detail"]
    assert error_messages(problem, "ticketDate") == ["must be one of 2026-12-05, 2026-12-06"]
    assert ticket_count(db_path) == 0


def test_an_event_ticket_for_a_past_date_of_the_event_is_refused(client, db_path):
    event = create_event(client, dates=[YESTERDAY, *EVENT_DATES])
    res = buy(client, body("event", eventId=event["eventId"], ticketDate=YESTERDAY), status=400)
    problem = assert_problem(res, 400, "ticketDate")
    assert error_messages(problem, "ticketDate") == ["must not be in the past"]
    assert ticket_count(db_path) == 0


@pytest.mark.parametrize("cancelled", [False, True], ids=["unknown-event", "cancelled-event"])
def test_an_event_ticket_needs_a_listed_event(client, db_path, cancelled):
    event_id = UNKNOWN_ID
    if cancelled:
        event_id = create_event(client)["eventId"]
        cancel_event(client, event_id)
    res = buy(client, body("event", eventId=event_id), status=404)
    assert_problem(res, 404)
    assert ticket_count(db_path) == 0


# -- the receipt -------------------------------------------------------------------------

def test_every_ticket_gets_its_own_id_and_code(client, db_path):
    event = create_event(client)
    receipts = [buy(client, body()).json for _ in range(15)]
    receipts += [buy(client, body("event", eventId=event["eventId"])).json for _ in range(15)]
    assert len({receipt["ticketId"] for receipt in receipts}) == 30
    assert len({receipt["confirmationCode"] for receipt in receipts}) == 30
    assert ticket_count(db_path) == 30


def test_a_code_already_taken_is_drawn_again(client, db_path, monkeypatch):
    drawn = iter(["ticket-general-aaaaaa-00001", "ticket-general-aaaaaa-00001",
                  "ticket-general-bbbbbb-00002"])
    monkeypatch.setattr(museum_tickets, "new_confirmation_code", lambda kind: next(drawn))
    first, second = buy(client, body()).json, buy(client, body()).json
    assert first["confirmationCode"] == "ticket-general-aaaaaa-00001"
    assert second["confirmationCode"] == "ticket-general-bbbbbb-00002"
    assert ticket_count(db_path) == 2


def test_the_location_leads_to_the_tickets_image(client):
    res = buy(client, body())
    image = client.get(res.headers["Location"], headers=VISITOR, status=200)
    assert image.content_type == "image/png"


def test_email_and_phone_are_stored_but_never_logged(client, db_path, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    email, phone = "grace.hopper@navy.example.org", "+1 (202) 555-0173"
    receipt = buy(client, body(email=email, phone=phone)).json
    buy(client, body(email=email, phone=phone, ticketDate=MONDAY), status=400)
    client.get(qr_path(receipt["ticketId"]), headers=ADMIN, status=200)
    assert stored_ticket(db_path, receipt["ticketId"])[4:] == (email, phone)
    access = capsys.readouterr().err.splitlines()  # the access log's default place
    assert [line.split()[5:8] for line in access] == [
        ["POST", TICKETS, "201"], ["POST", TICKETS, "400"],
        ["GET", qr_path(receipt["ticketId"][:8]), "200"]]
    for secret in (email, "grace.hopper", phone, "555-0173", receipt["ticketId"]):
        assert secret not in caplog.text and secret not in "\n".join(access)


# -- Idempotency-Key ---------------------------------------------------------------------

def reordered(payload):
    return dict(reversed(payload.items()))


@pytest.mark.parametrize("again", [body, lambda: reordered(body())],
                         ids=["same-body", "same-body-other-key-order"])
def test_a_replayed_key_returns_the_same_ticket_without_a_second_sale(client, db_path, again):
    first = buy(client, body(), key="order-2026-0001")
    replay = buy(client, again(), key="order-2026-0001")
    assert replay.json == first.json
    assert replay.headers["Location"] == first.headers["Location"]
    assert ticket_count(db_path) == 1


def test_a_replayed_event_ticket_survives_the_event_being_cancelled(client, db_path):
    event = create_event(client)
    payload = body("event", eventId=event["eventId"])
    first = buy(client, payload, key="event-order")
    cancel_event(client, event["eventId"])
    assert buy(client, payload, key="event-order").json == first.json
    assert ticket_count(db_path) == 1


@pytest.mark.parametrize("changes", [
    pytest.param({"ticketDate": "2026-11-25"}, id="other-date"),
    pytest.param({"email": "someone.else@example.org"}, id="other-email"),
    pytest.param({"phone": "+44 20 7946 0958"}, id="added-phone"),
])
def test_a_key_reused_for_another_purchase_is_a_conflict(client, db_path, changes):
    first = buy(client, body(), key="order-2026-0002")
    res = buy(client, body(**changes), key="order-2026-0002", status=409)
    assert_problem(res, 409)
    assert ticket_count(db_path) == 1
    assert buy(client, body(), key="order-2026-0002").json == first.json


def test_a_refused_purchase_does_not_spend_its_key(client, db_path):
    buy(client, body(ticketDate=MONDAY), key="order-2026-0003", status=400)
    first = buy(client, body(), key="order-2026-0003")
    assert buy(client, body(), key="order-2026-0003").json == first.json
    assert ticket_count(db_path) == 1


@pytest.mark.parametrize("visitors_body", [body(), body(email="visitor@example.org")],
                         ids=["same-body", "other-body"])
def test_keys_belong_to_their_user(client, db_path, visitors_body):
    admins = buy(client, body(), headers=ADMIN, key="shared-key").json
    visitors = buy(client, visitors_body, headers=VISITOR, key="shared-key").json
    assert visitors["ticketId"] != admins["ticketId"]
    assert ticket_count(db_path) == 2


def test_without_a_key_the_same_purchase_twice_is_two_tickets(client, db_path):
    first, second = buy(client, body()).json, buy(client, body()).json
    assert first["ticketId"] != second["ticketId"]
    assert ticket_count(db_path) == 2


@pytest.mark.parametrize("key", [
    pytest.param("", id="empty"),
    pytest.param("k" * 201, id="201-chars"),
    pytest.param("two words", id="space"),
    pytest.param("tab\there", id="tab"),
    pytest.param("del\x7f", id="control"),
    pytest.param("caf\u00e9", id="latin-1"),
])
def test_a_malformed_key_is_refused(client, db_path, key):
    res = buy(client, body(), key=key, status=400)
    assert_problem(res, 400, "Idempotency-Key")
    assert ticket_count(db_path) == 0


@pytest.mark.parametrize("key", ["!", "~", "k" * 200, "3fa85f64-5717-4562-b3fc-2c963f66afa6",
                                 "order:42/retry=1"])
def test_a_well_formed_key_is_accepted_and_replays(client, db_path, key):
    first = buy(client, body(), key=key)
    assert buy(client, body(), key=key).json == first.json
    assert ticket_count(db_path) == 1


# -- prices -----------------------------------------------------------------------------

def test_a_ticket_keeps_the_price_and_currency_it_was_sold_at(make_client, config_text):
    client = make_client(museum.parse_config(
        config_text.replace("[museum]\n", "[museum]\ncurrency = GBP\n")
        + "[tickets]\ngeneral_price = 9.5\n"))
    general = buy(client, body()).json
    assert (general["price"], general["currency"]) == (9.5, "GBP")
    event = create_event(client)
    sold = buy(client, body("event", eventId=event["eventId"])).json
    assert (sold["price"], sold["currency"]) == (12.5, "GBP")
    client.patch_json(f"{EVENTS}/{event['eventId']}", {"price": 30}, headers=ADMIN, status=200)
    later = buy(client, body("event", eventId=event["eventId"])).json
    assert later["price"] == 30
    assert b'"price":30,' in buy(client, body("event", eventId=event["eventId"])).body
    replayed = buy(client, body("event", eventId=event["eventId"]), key="k1").json
    assert buy(client, body("event", eventId=event["eventId"]), key="k1").json == replayed


def test_prices_are_stored_in_hundredths_never_as_floats(client, db_path):
    event = create_event(client)
    buy(client, body("event", eventId=event["eventId"]))
    assert query(db_path, "SELECT price_minor, typeof(price_minor) FROM events") == [
        (1250, "integer")]
    assert query(db_path, "SELECT price_minor, typeof(price_minor), currency FROM tickets") \
        == [(1250, "integer", "EUR")]

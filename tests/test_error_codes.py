"""Errors a client can translate: every field error has the stable `code` of its rule,
every 409 (but the door's, which has its `result`) a `reason`.

The source is walked for every place a field error is made: each names a code of
museum_codes.FIELD_CODES where it is made, and every code is made somewhere. Then a table
provokes each code through the API, and each 409 reason; the description and docs/api.md
list them all."""

import ast
import typing
from pathlib import Path

import pytest

import museum
import museum_validation
from conftest import ADMIN, GATE, TODAY, assert_problem
from museum_codes import CONFLICT_REASONS, FIELD_CODES
from ticketing import (EVENT_DATES, EVENTS, OPEN_DAY, OMIT, TICKETS, body, buy, create_event,
                       ended_hold)

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted(ROOT.glob("museum*.py"))


def codes_made_in(tree):
    """(line, code) of each field error the module makes: a Validator's `error(name, code,
    message)` or `field_error(name, code, message)`; code None where it is not written at
    the call (a literal, or a choice of two). Validator.error itself hands on its
    caller's."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        named = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        receiver = getattr(getattr(func, "value", None), "id", None)
        if named == "field_error" or named == "error" and receiver in ("self", "validator"):
            code = node.args[1] if len(node.args) > 1 else None
            if isinstance(code, ast.Name) and code.id == "code":
                continue  # Validator.error handing its caller's code on
            choices = [code.body, code.orelse] if isinstance(code, ast.IfExp) else [code]
            for choice in choices:
                yield node.lineno, choice.value if isinstance(choice, ast.Constant) else None


def test_every_field_error_is_made_with_a_known_code_written_where_it_is_decided():
    made = set()
    for source in SOURCES:
        for line, code in codes_made_in(ast.parse(source.read_text(encoding="utf-8"))):
            assert code in FIELD_CODES, f"{source.name}:{line}: code {code!r}"
            made.add(code)
    assert made == set(FIELD_CODES), "codes no rule makes: " + ", ".join(
        sorted(set(FIELD_CODES) - made))


def test_an_unknown_code_is_a_programming_error():
    with pytest.raises(ValueError, match="unknown field error code 'wrong'"):
        museum_validation.Validator().error("name", "wrong", "is wrong")


def test_the_description_and_the_api_page_list_every_code_and_reason():
    schemas = museum.openapi_description()["components"]["schemas"]
    assert schemas["FieldError"]["properties"]["code"]["enum"] == list(FIELD_CODES)
    assert schemas["FieldError"]["required"] == ["field", "code", "message"]
    assert schemas["Reason"]["enum"] == list(CONFLICT_REASONS)
    page = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    missing = [name for name in [*FIELD_CODES, *CONFLICT_REASONS] if f"`{name}`" not in page]
    assert not missing, f"docs/api.md lists no {missing}"


# -- each code, provoked -------------------------------------------------------------------

TIMED = "[hours]\nslot_minutes = 30\n"
WEEK_AGO = "2026-11-15T12:00:00Z"


class Case(typing.NamedTuple):
    """A request refused by one rule: `EVENT` in its path or body is the event's id."""

    code: str
    field: str
    method: str
    path: str
    body: object = None
    headers: dict = ADMIN
    timed: bool = False
    status: int = 400


CASES = [
    Case("required", "email", "POST", TICKETS, body(email=OMIT)),
    Case("unknown-field", "colour", "POST", TICKETS, body(colour="red")),
    Case("assigned-by-service", "ticketId", "POST", TICKETS, body(ticketId="x")),
    Case("null", "email", "POST", TICKETS, body(email=None)),
    Case("not-allowed", "eventId", "POST", TICKETS, body(eventId="EVENT")),
    Case("conflicts", "confirmationCode", "POST", "/v1.1/admissions",
         {"code": "x", "confirmationCode": "y"}),
    Case("not-a-string", "name", "PATCH", f"{EVENTS}/EVENT", {"name": 5}),
    Case("empty", "name", "PATCH", f"{EVENTS}/EVENT", {"name": "  "}),
    Case("too-long", "name", "PATCH", f"{EVENTS}/EVENT", {"name": "x" * 201}),
    Case("control-characters", "name", "PATCH", f"{EVENTS}/EVENT", {"name": "a\x01b"}),
    Case("not-a-date", "ticketDate", "POST", TICKETS, body(ticketDate="2026-02-30")),
    Case("not-a-moment", "scannedAt", "POST", "/v1.1/admissions",
         {"confirmationCode": "x", "scannedAt": "yesterday"}),
    Case("not-a-time", "entryTime", "POST", TICKETS, body(entryTime="25:00"), timed=True),
    Case("not-a-uuid", "eventId", "POST", TICKETS, body("event", eventId="x")),
    Case("not-an-email", "email", "POST", TICKETS, body(email="nobody")),
    Case("not-a-phone", "phone", "POST", TICKETS, body(phone="12")),
    Case("not-a-boolean", "closed", "PUT", f"/v1.1/museum-hours/{OPEN_DAY}", {"closed": "yes"}),
    Case("out-of-range", "limit", "GET", f"{EVENTS}?limit=0"),
    Case("not-a-price", "price", "PATCH", f"{EVENTS}/EVENT", {"price": -1}),
    Case("too-many-decimals", "price", "PATCH", f"{EVENTS}/EVENT", {"price": 9.999}),
    Case("not-one-of", "ticketType", "POST", TICKETS, body(ticketType="vip")),
    Case("not-a-list", "items", "POST", "/v1.1/orders", {"items": [], "email": "a@b.org"}),
    Case("not-a-date-list", "dates", "PATCH", f"{EVENTS}/EVENT", {"dates": []}),
    Case("not-a-price-list", "prices", "PATCH", f"{EVENTS}/EVENT", {"prices": [1]}),
    Case("unknown-category", "category", "POST", TICKETS, body(category="student")),
    Case("past", "ticketDate", "POST", TICKETS, body(ticketDate="2026-11-21")),
    Case("beyond-horizon", "ticketDate", "POST", TICKETS, body(ticketDate="2028-01-04")),
    Case("closed", "ticketDate", "POST", TICKETS, body(ticketDate="2026-11-23")),
    Case("not-an-event-date", "ticketDate", "POST", TICKETS,
         body("event", eventId="EVENT", ticketDate=OPEN_DAY)),
    Case("not-a-slot", "entryTime", "POST", TICKETS, body(entryTime="10:15"), timed=True),
    Case("slot-ended", "entryTime", "POST", TICKETS, body(ticketDate=TODAY, entryTime="09:00"),
         timed=True),
    Case("before-start", "endDate", "GET", f"/v1.1/availability?startDate={OPEN_DAY}"
         f"&endDate={TODAY}"),
    Case("window-too-long", "endDate", "GET", "/v1.1/availability?endDate=2027-01-31"),
    Case("given-twice", "limit", "GET", f"{EVENTS}?limit=1&limit=2"),
    Case("malformed", "Idempotency-Key", "POST", TICKETS, body(),
         {**ADMIN, "Idempotency-Key": "a b"}),
    Case("not-a-code", "code", "POST", "/v1.1/admissions/lookup", {"code": "x"}),
    Case("not-a-cursor", "since", "GET", "/v1.1/admissions/list?since=x"),
    Case("not-today-or-tomorrow", "date", "GET", "/v1.1/admissions/list?date=2026-12-30",
         headers=GATE),
    Case("out-of-window", "scannedAt", "POST", "/v1.1/admissions",
         {"confirmationCode": "x", "scannedAt": WEEK_AGO}),
    Case("hours-order", "timeClose", "PUT", f"/v1.1/museum-hours/{OPEN_DAY}",
         {"timeOpen": "12:00", "timeClose": "10:00"}),
    Case("no-change", "closed", "PUT", f"/v1.1/museum-hours/{OPEN_DAY}", {"closed": False}),
    Case("dates-sold", "dates", "PATCH", f"{EVENTS}/EVENT", {"dates": [EVENT_DATES[1]]},
         status=409),
    Case("below-sold", "capacity", "PATCH", f"{EVENTS}/EVENT", {"capacity": 1}, status=409),
]


def test_the_table_provokes_every_code():
    assert sorted(case.code for case in CASES) == sorted(FIELD_CODES)


def with_event(value, event_id):
    """`value` with every "EVENT" in its texts the event's id."""
    if isinstance(value, str):
        return value.replace("EVENT", event_id)
    if isinstance(value, dict):
        return {name: with_event(item, event_id) for name, item in value.items()}
    return value


@pytest.fixture
def museums(make_client, config_text):
    """{timed: a client and the id of an event with two tickets sold on its first date}."""
    clients = {}
    for timed in (False, True):
        client = make_client(museum.parse_config(config_text + (TIMED if timed else "")))
        event = create_event(client)
        for _ in range(2):
            buy(client, body("event", eventId=event["eventId"]))
        clients[timed] = client, event["eventId"]
    return clients


@pytest.mark.parametrize("case", CASES, ids=[case.code for case in CASES])
def test_each_rule_answers_its_code(museums, case):
    client, event_id = museums[case.timed]
    path = with_event(case.path, event_id)
    if case.body is None:
        res = client.request(path, method=case.method, headers=case.headers,
                             expect_errors=True)
    else:
        send = getattr(client, f"{case.method.lower()}_json")
        res = send(path, with_event(case.body, event_id), headers=case.headers,
                   expect_errors=True)
    problem = assert_problem(res, case.status)
    assert {"field": case.field, "code": case.code} in [
        {"field": error["field"], "code": error["code"]} for error in problem["errors"]]
    assert all(error["code"] in FIELD_CODES for error in problem["errors"])


# -- each 409's reason ---------------------------------------------------------------------

def test_every_409_but_the_doors_carries_its_reason(client, store):
    event = create_event(client)
    path = f"{EVENTS}/{event['eventId']}"
    sale = body("event", eventId=event["eventId"])
    later = {**sale, "ticketDate": EVENT_DATES[1]}
    buy(client, sale, key="k1")
    answers = [buy(client, {**sale, "email": "bo@example.org"}, status=409, key="k1")]
    buy(client, later)
    buy(client, later)
    answers.append(client.patch_json(path, {"capacity": 1}, headers=ADMIN, status=409))
    answers.append(client.patch_json(path, {"dates": [EVENT_DATES[1]]}, headers=ADMIN,
                                     status=409))
    client.patch_json(path, {"capacity": 2}, headers=ADMIN, status=200)
    answers.append(buy(client, later, status=409))
    held = client.post_json("/v1.1/orders", {
        "items": [{"ticketType": "general", "ticketDate": OPEN_DAY}], "email": "bo@example.org",
        "hold": True}, headers=ADMIN, status=201).json
    client.delete(f"/v1.1/orders/{held['orderId']}", headers=ADMIN, status=204)
    answers.append(client.post(f"/v1.1/orders/{held['orderId']}/confirm", headers=ADMIN,
                               status=409))
    answers.append(client.post(f"/v1.1/orders/{ended_hold(store)}/confirm", headers=ADMIN,
                               status=409))
    answers.append(client.post_json(f"/v1.1/orders/{held['orderId']}/payment",
                                    {"payment": "cash"}, headers=ADMIN, status=409))
    reasons = [assert_problem(answer, 409)["reason"] for answer in answers]
    assert reasons == ["key-reused", "capacity-below-sold", "dates-sold", "sold-out",
                       "not-pending", "expired", "not-due"]
    assert set(reasons) == set(CONFLICT_REASONS)


"""The hand-written validator, called directly: each check with a table of good values and
what it gives back, and of bad values and the one message it records; `check_fields` with
a table of bodies and the errors they make. The HTTP tests show the same messages reach the
client; these show every edge of every check."""

from datetime import date

import json

import pytest

import museum
import museum_validation
import museum_http

UUID = "3fa85f64-5717-4562-b3fc-2c963f66afa6"
UUID_MESSAGE = "must be a UUID like 3fa85f64-5717-4562-b3fc-2c963f66afa6"
DATE_MESSAGE = "must be a real calendar date YYYY-MM-DD"
EMAIL_MESSAGE = "must be an email address like visitor@example.org"
PHONE_MESSAGE = "must be 7 to 20 digits, spaces or +-() with at least 7 digits"
PRICE_MESSAGE = "must be a number from 0 to 1000000"
PLACES_MESSAGE = "must be a whole number from 1 to 1000000"


def check(method, value, *args, **kwargs):
    """(what `Validator.method` gave back for `value`, the messages it recorded)."""
    validator = museum_validation.Validator()
    given = getattr(validator, method)("field", value, *args, **kwargs)
    assert all(error["field"] == "field" for error in validator.errors)
    return given, [error["message"] for error in validator.errors]


# (check, value, extra arguments, value given back)
GOOD = [
    ("date", "2026-11-24", (), date(2026, 11, 24)),
    ("date", "2028-02-29", (), date(2028, 2, 29)),
    ("uuid", UUID, (), UUID),
    ("uuid", UUID.upper(), (), UUID),
    ("text", "  Night at the Museum \n", (200,), "Night at the Museum"),
    ("text", "x" * 200, (200,), "x" * 200),
    ("text", "Café, 東京 ✓", (20,), "Café, 東京 ✓"),
    ("integer", "1", (1, 30), 1),
    ("integer", "30", (1, 30), 30),
    ("integer", "007", (1, 30), 7),
    ("places", 1, (), 1),
    ("places", 5.0, (), 5),
    ("places", 1_000_000, (), 1_000_000),
    ("price", 0, (), 0),
    ("price", 25, (), 25),
    ("price", 12.5, (), 12.5),
    ("price", 0.1, (), 0.1),
    ("price", 19.99, (), 19.99),
    ("price", 25.0, (), 25),
    ("price", 1_000_000, (), 1_000_000),
    ("choice", "event", (("general", "event"),), "event"),
    ("email", "ada@example.org", (), "ada@example.org"),
    ("email", "a.b+c@mail.example.co.uk", (), "a.b+c@mail.example.co.uk"),
    ("phone", "+44 20 7946 0958", (), "+44 20 7946 0958"),
    ("phone", "(020) 7946-0958", (), "(020) 7946-0958"),
    ("phone", "1234567", (), "1234567"),
]

# (check, value, extra arguments, the message recorded)
BAD = [
    ("date", "2026-02-30", (), DATE_MESSAGE),
    ("date", "2026-13-01", (), DATE_MESSAGE),
    ("date", "2026-1-5", (), DATE_MESSAGE),
    ("date", "20261124", (), DATE_MESSAGE),
    ("date", "2026-11-24T10:00", (), DATE_MESSAGE),
    ("date", "２０２６-１１-２４", (), DATE_MESSAGE),  # digits, but not ASCII ones
    ("date", 20261124, (), DATE_MESSAGE),
    ("date", None, (), DATE_MESSAGE),
    ("uuid", UUID[:-1], (), UUID_MESSAGE),
    ("uuid", UUID.replace("-", ""), (), UUID_MESSAGE),
    ("uuid", "{" + UUID + "}", (), UUID_MESSAGE),
    ("uuid", UUID.replace("f", "g"), (), UUID_MESSAGE),
    ("uuid", 42, (), UUID_MESSAGE),
    ("text", "   ", (200,), "must be 1 to 200 characters long"),
    ("text", "", (200,), "must be 1 to 200 characters long"),
    ("text", "x" * 201, (200,), "must be 1 to 200 characters long"),
    ("text", "two\nlines", (200,), "must not contain control characters or invalid Unicode"),
    ("text", "bell\x07", (200,), "must not contain control characters or invalid Unicode"),
    ("text", "lone \ud800", (200,), "must not contain control characters or invalid Unicode"),
    ("text", 5, (200,), "must be a string"),
    ("text", ["a"], (200,), "must be a string"),
    ("integer", "0", (1, 30), "must be a whole number from 1 to 30"),
    ("integer", "31", (1, 30), "must be a whole number from 1 to 30"),
    ("integer", "-1", (1, 30), "must be a whole number from 1 to 30"),
    ("integer", "1.0", (1, 30), "must be a whole number from 1 to 30"),
    ("integer", "", (1, 30), "must be a whole number from 1 to 30"),
    ("integer", "٣", (1, 30), "must be a whole number from 1 to 30"),  # an Arabic-Indic 3
    ("integer", "9" * 10, (1, 10**12), "must be a whole number from 1 to 1000000000000"),
    ("places", 0, (), PLACES_MESSAGE),
    ("places", 1_000_001, (), PLACES_MESSAGE),
    ("places", 2.5, (), PLACES_MESSAGE),
    ("places", float("inf"), (), PLACES_MESSAGE),
    ("places", float("nan"), (), PLACES_MESSAGE),
    ("places", True, (), PLACES_MESSAGE),
    ("places", "5", (), PLACES_MESSAGE),
    ("price", -0.01, (), PRICE_MESSAGE),
    ("price", 1_000_000.01, (), PRICE_MESSAGE),
    ("price", 10**400, (), PRICE_MESSAGE),
    ("price", float("nan"), (), PRICE_MESSAGE),
    ("price", float("inf"), (), PRICE_MESSAGE),
    ("price", True, (), PRICE_MESSAGE),
    ("price", "25", (), PRICE_MESSAGE),
    ("price", 9.999, (), "must have at most 2 decimals"),
    ("price", 0.001, (), "must have at most 2 decimals"),
    ("choice", "student", (("general", "event"),), "must be one of general, event"),
    ("choice", "General", (("general", "event"),), "must be one of general, event"),
    ("email", "ada.example.org", (), EMAIL_MESSAGE),
    ("email", "@example.org", (), EMAIL_MESSAGE),
    ("email", "ada@", (), EMAIL_MESSAGE),
    ("email", "ada@localhost", (), EMAIL_MESSAGE),
    ("email", "ada@example..org", (), EMAIL_MESSAGE),
    ("email", "ada@b@example.org", (), EMAIL_MESSAGE),
    ("email", "ada lovelace@example.org", (), EMAIL_MESSAGE),
    ("email", "ada@example.org\n", (), EMAIL_MESSAGE),
    ("email", "a" * 243 + "@example.org", (), EMAIL_MESSAGE),  # 255 characters
    ("email", 42, (), EMAIL_MESSAGE),
    ("phone", "123456", (), PHONE_MESSAGE),
    ("phone", "+() --- 123456", (), PHONE_MESSAGE),  # 7 to 20 characters, 6 digits
    ("phone", "1" * 21, (), PHONE_MESSAGE),
    ("phone", "0207946095x", (), PHONE_MESSAGE),
    ("phone", 2079460958, (), PHONE_MESSAGE),
]


def case_id(case):
    return f"{case[0]}-{case[1]!r}"[:60]


@pytest.mark.parametrize("method, value, args, expected", GOOD, ids=map(case_id, GOOD))
def test_a_good_value_is_given_back_checked(method, value, args, expected):
    given, messages = check(method, value, *args)
    assert messages == []
    assert given == expected and type(given) is type(expected)


@pytest.mark.parametrize("method, value, args, message", BAD, ids=map(case_id, BAD))
def test_a_bad_value_records_one_message(method, value, args, message):
    assert check(method, value, *args) == (None, [message])


# The same number as museum.ini's text and as a client's JSON: one rule answers both.
PRICES = ["0", "25", "12.5", "0.1", "19.99", "25.00", "1000000", "9.999", "0.001", "-0.01",
          "1000000.01", "1e3"]
PLACES = ["1", "250", "1000000", "0", "1000001"]


def configured(section, option, text):
    """museum.ini's `option` of `section` read from `text`; None when the config refuses it."""
    try:
        return museum.parse_config(f"[{section}]\n{option} = {text}\n")[section][option]
    except museum.ConfigError:
        return None


@pytest.mark.parametrize("text", PRICES)
def test_the_settings_and_the_validator_take_the_same_prices(text):
    given, messages = check("price", json.loads(text))
    hundredths = configured("tickets", "general_price", text)
    assert (hundredths is None) == bool(messages)
    assert given is None or hundredths == round(given * 100)


@pytest.mark.parametrize("text", PLACES)
def test_the_settings_and_the_validator_take_the_same_numbers_of_places(text):
    given, _ = check("places", json.loads(text))
    assert configured("capacity", "general_per_day", text) == given


def test_multiline_text_keeps_tabs_and_line_breaks_inside():
    assert check("text", " a\tb\r\nc ", 20, multiline=True) == ("a\tb\r\nc", [])
    assert check("text", "a\x00b", 20, multiline=True) == (
        None, ["must not contain control characters or invalid Unicode"])


def test_every_error_is_collected_and_raised_once():
    validator = museum_validation.Validator()
    validator.raise_if_invalid()  # nothing recorded: nothing raised
    validator.date("ticketDate", "tomorrow")
    validator.email("email", "nobody")
    with pytest.raises(museum_http.Problem) as raised:
        validator.raise_if_invalid()
    assert raised.value.status_code == 400
    assert raised.value.errors == [
        {"field": "ticketDate", "code": "not-a-date", "message": DATE_MESSAGE},
        {"field": "email", "code": "not-an-email", "message": EMAIL_MESSAGE}]


# -- check_fields: which fields a body may have ----------------------------------------------

FIELDS = {
    "name": museum_validation.Field(museum_validation.checked_by(museum_validation.Validator.text, 10), {"type": "string"}, "Ada",
                         required=True),
    "email": museum_validation.Field(museum_validation.checked_by(museum_validation.Validator.email), {"type": "string"},
                          "ada@example.org"),
}

# (body, the checked values, the errors as (field, message))
BODIES = [
    ({"name": " Ada ", "email": "ada@example.org"},
     {"name": "Ada", "email": "ada@example.org"}, []),
    ({"name": "Ada"}, {"name": "Ada"}, []),
    ({"name": "Ada", "colour": "red"}, {"name": "Ada"}, [("colour", "is not a known field")]),
    ({"name": "Ada", "ticketId": UUID}, {"name": "Ada"},
     [("ticketId", "is assigned by the service")]),
    ({"name": "Ada", "eventId": UUID}, {"name": "Ada"},
     [("eventId", "is assigned by the service")]),
    ({"name": "Ada", "confirmationCode": "x"}, {"name": "Ada"},
     [("confirmationCode", "is assigned by the service")]),
    ({"name": None}, {}, [("name", "must not be null")]),
    ({"email": "ada@example.org"}, {"email": "ada@example.org"}, [("name", "is required")]),
    ({}, {}, [("name", "is required")]),
    ({"name": "", "email": "x"}, {"name": None, "email": None},
     [("name", "must be 1 to 10 characters long"), ("email", EMAIL_MESSAGE)]),
]


@pytest.mark.parametrize("body, values, errors", BODIES)
def test_check_fields(body, values, errors):
    validator = museum_validation.Validator()
    assert museum_validation.check_fields(body, FIELDS, validator) == values
    assert [(error["field"], error["message"]) for error in validator.errors] == errors


@pytest.mark.parametrize("body", [[], "name", 5, None])
def test_check_fields_wants_a_json_object(body):
    with pytest.raises(museum_http.Problem) as raised:
        museum_validation.check_fields(body, FIELDS, museum_validation.Validator())
    assert raised.value.status_code == 400
    assert raised.value.description == "The request body must be a JSON object."

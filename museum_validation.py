"""Checking what clients send: a `Validator` collects every bad field of one input and
raises them together as one 400 problem, and body fields declared once as `Field`s are
checked by `check_fields` (the OpenAPI description is made from the same declarations).
Knows HTTP only through museum_http's `Problem`.
"""

import re
import typing
import unicodedata
from datetime import date, datetime

import storage
from museum_codes import field_error
from museum_http import INVALID_BODY, Problem, read_json
from museum_vocabulary import (CAPACITY_MAX, DATE, EMAIL_MAX, PRICE_MAX, TIME_OF_DAY, UUID_TEXT,
                               TooManyDecimals, number_of_places, price_in_hundredths)

PHONE = re.compile(r"[0-9 +\-().]{7,20}")
MOMENT = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,6})?([Zz]|[+-]\d{2}:\d{2})")


class Validator:
    """Collects every (field, code, message) of one input and raises them together."""

    def __init__(self):
        self.errors = []

    def error(self, name, code, message):
        """Refuse field `name` by the rule `code` (museum_codes.FIELD_CODES), saying
        `message` to a person."""
        self.errors.append(field_error(name, code, message))

    def within(self, prefix):
        """A validator for a part of this input (an order's item), naming its fields after
        `prefix` (`items[2].`) and collecting its errors here."""
        return _Within(self.errors, prefix)

    def raise_if_invalid(self, detail=INVALID_BODY):
        if self.errors:
            raise Problem(400, detail, errors=self.errors)

    def date(self, name, value):
        if isinstance(value, str) and DATE.fullmatch(value):
            try:
                return date.fromisoformat(value)
            except ValueError:
                pass
        self.error(name, "not-a-date", "must be a real calendar date YYYY-MM-DD")
        return None

    def moment(self, name, value):
        """An RFC 3339 date-time with its offset, as an aware datetime."""
        if isinstance(value, str) and MOMENT.fullmatch(value):
            try:
                return datetime.fromisoformat(value.upper())
            except ValueError:
                pass
        self.error(name, "not-a-moment", "must be an RFC 3339 date-time with offset, such as "
                         "2027-10-29T09:14:05+01:00")
        return None

    def uuid(self, name, value):
        if isinstance(value, str) and UUID_TEXT.fullmatch(value):
            return value.lower()
        self.error(name, "not-a-uuid", "must be a UUID like 3fa85f64-5717-4562-b3fc-2c963f66afa6")
        return None

    def text(self, name, value, max_length, multiline=False):
        """A trimmed string of 1..max_length characters: valid Unicode, no control characters
        (but tabs and line breaks where `multiline`)."""
        if not isinstance(value, str):
            self.error(name, "not-a-string", "must be a string")
            return None
        value = value.strip()
        if not 1 <= len(value) <= max_length:
            self.error(name, "too-long" if value else "empty",
                       f"must be 1 to {max_length} characters long")
        elif not _printable(value, multiline):
            self.error(name, "control-characters",
                       "must not contain control characters or invalid Unicode")
        else:
            return value
        return None

    def integer(self, name, value, low, high):
        if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 10:
            number = int(value)
            if low <= number <= high:
                return number
        self.error(name, "out-of-range", f"must be a whole number from {low} to {high}")
        return None

    def places(self, name, value):
        """A number of places, such as a capacity (museum_vocabulary.number_of_places)."""
        try:
            return number_of_places(value)
        except ValueError:
            self.error(name, "out-of-range", f"must be a whole number from 1 to {CAPACITY_MAX}")
            return None

    def price(self, name, value):
        """A price (museum_vocabulary.price_in_hundredths), as the store gives it back."""
        try:
            return storage.price_value(price_in_hundredths(value))
        except TooManyDecimals:  # 9.999: kept in hundredths, it would change
            self.error(name, "too-many-decimals", "must have at most 2 decimals")
        except ValueError:
            self.error(name, "not-a-price", f"must be a number from 0 to {PRICE_MAX}")
        return None

    def boolean(self, name, value):
        if isinstance(value, bool):
            return value
        self.error(name, "not-a-boolean", "must be true or false")
        return None

    def time_of_day(self, name, value):
        if isinstance(value, str) and TIME_OF_DAY.fullmatch(value):
            return value
        self.error(name, "not-a-time", "must be a time of day HH:MM, such as 10:30")
        return None

    def choice(self, name, value, choices):
        if value in choices:
            return value
        self.error(name, "not-one-of", f"must be one of {', '.join(choices)}")
        return None

    def email(self, name, value):
        if isinstance(value, str) and _plausible_email(value):
            return value
        self.error(name, "not-an-email", "must be an email address like visitor@example.org")
        return None

    def phone(self, name, value):
        if isinstance(value, str) and PHONE.fullmatch(value) \
                and sum(c.isdigit() for c in value) >= 7:
            return value
        self.error(name, "not-a-phone",
                   "must be 7 to 20 digits, spaces or +-() with at least 7 digits")
        return None


class _Within(Validator):
    def __init__(self, errors, prefix):
        super().__init__()
        self.errors, self.prefix = errors, prefix

    def error(self, name, code, message):
        super().error(self.prefix + name, code, message)


def _printable(text, multiline):
    allowed = "\t\n\r" if multiline else ""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from a JSON escape
        return False
    return not any(unicodedata.category(c) == "Cc" and c not in allowed for c in text)


def _plausible_email(value):
    local, at, domain = value.partition("@")
    labels = domain.split(".")
    return (at and local and len(value) <= EMAIL_MAX and "@" not in domain and len(labels) > 1
            and all(labels) and value.isprintable() and not any(c.isspace() for c in value)
            and _printable(value, False))


SERVICE_FIELDS = ("eventId", "ticketId", "confirmationCode")


class When(typing.NamedTuple):
    """A field required when the body's `field` is `value`, refused when it is another."""

    field: str
    value: str


class Field(typing.NamedTuple):
    """One body field, declared once: the validator checks it and the OpenAPI document
    describes it from this. `check(validator, name, value)` gives the checked value;
    `required` is True, False or a When; `nullable_in_patch` lets a change clear it."""

    check: object
    schema: dict
    example: object
    required: object = False
    nullable_in_patch: bool = False


def checked_by(method, *args):
    """A field's check: the Validator `method`, given `args` after the name and value."""
    return lambda validator, name, value: method(validator, name, value, *args)


def check_fields(body, fields, validator, change=False):
    """Check a JSON object against `fields` ({name: Field}): unknown fields, nulls and
    missing required fields are errors, but a `change` requires none and may clear the
    fields nullable in a patch (to None); returns the checked values."""
    if not isinstance(body, dict):
        raise Problem(400, "The request body must be a JSON object.")
    for name in body:
        if name not in fields:
            if name in SERVICE_FIELDS:
                validator.error(name, "assigned-by-service", "is assigned by the service")
            else:
                validator.error(name, "unknown-field", "is not a known field")
    values = {}
    for name, field in fields.items():
        if name not in body:
            if field.required is True and not change:
                validator.error(name, "required", "is required")
        elif body[name] is None:
            if change and field.nullable_in_patch:
                values[name] = None  # cleared
            else:
                validator.error(name, "null", "must not be null")
        else:
            values[name] = field.check(validator, name, body[name])
    for name, field in fields.items():
        if isinstance(field.required, When) and values.get(field.required.field) is not None:
            _check_condition(name, field.required, values[field.required.field] ==
                             field.required.value, name in body, validator)
    return values


def _check_condition(name, when, holds, given, validator):
    if holds and not given:
        validator.error(name, "required", f"is required when {when.field} is {when.value}")
    elif given and not holds:
        validator.error(name, "not-allowed",
                        f"must not be given unless {when.field} is {when.value}")


def optional_body(req, fields):
    """The checked `fields` ({name: Field}) of a JSON body the request may leave out (a
    void's reason): {} when it sends none, so that such a request is answered as it was
    before the body existed; 400 naming every bad field, 415 or 413 as for any body."""
    if not req.content_length:
        return {}
    validator = Validator()
    values = check_fields(read_json(req), fields, validator)
    validator.raise_if_invalid()
    return values


def exactly_one(body, first, second, validator, missing):
    """The body gives `first` or `second`, not both; `missing` says what to give."""
    if first in body and second in body:
        validator.error(second, "conflicts", f"must not be given with {first}")
    elif first not in body and second not in body:
        validator.error(first, "required", missing)


def path_uuid(value, name):
    """The id `name` of a path, as a UUID; 400 saying so when it is none (Falcon's own
    `:uuid` converter would answer 404)."""
    validator = Validator()
    checked = validator.uuid(name, value)
    validator.raise_if_invalid(f"The {name} in the path is not a UUID.")
    return checked

"""The stable codes a client (a web shop) translates: one `code` per rule of a field error,
and one `reason` per kind of 409 conflict.

A field error's message is English for a person reading the answer; its code is the rule
that refused the field, and stays the same when the message's wording changes. Every
field error is made by `field_error`, so none exists without a code of FIELD_CODES. The
OpenAPI description and docs/api.md list both tables (tests/test_error_codes.py holds
them to it). The door's refusals keep their own `result` (museum_door.DOOR_OUTCOMES).
"""

# code: the rule it names (the OpenAPI description shows these words).
FIELD_CODES = {
    "required": "The field is missing (or is required with another field's value).",
    "unknown-field": "The body has no such field.",
    "assigned-by-service": "The field is the service's to set (an id, a code).",
    "null": "The field is `null`, which only some fields of a change take.",
    "not-allowed": "The field must not be given here (another field's value, or the "
                   "museum's settings, rule it out).",
    "conflicts": "The field must not be given together with another one named in the "
                 "message.",
    "not-a-string": "The value is not a string.",
    "empty": "The text is empty once trimmed of surrounding white space.",
    "too-long": "The text is longer than its limit.",
    "control-characters": "The text holds control characters or invalid Unicode.",
    "not-a-date": "The value is not a real calendar date YYYY-MM-DD.",
    "not-a-moment": "The value is not an RFC 3339 date-time with its offset.",
    "not-a-time": "The value is not a time of day HH:MM.",
    "not-a-uuid": "The value is not a UUID.",
    "not-an-email": "The value is not an email address.",
    "not-a-phone": "The value is not a phone number.",
    "not-a-boolean": "The value is not true or false.",
    "out-of-range": "The number is not a whole number within its bounds.",
    "not-a-price": "The price is not a number from 0 to the highest price.",
    "too-many-decimals": "The price has more than 2 decimals.",
    "not-one-of": "The value is not one of those the message lists.",
    "not-a-list": "The value is not a list of objects of the allowed length.",
    "not-a-date-list": "The value is not a list of dates of the allowed length.",
    "not-a-price-list": "The value is not an object of category names and prices.",
    "unknown-category": "No price category of this name is configured "
                        "(`GET /price-categories` lists them).",
    "past": "The date is before today at the museum.",
    "beyond-horizon": "The date is further ahead than tickets are sold.",
    "closed": "The museum is closed on that day.",
    "not-an-event-date": "The event does not take place on that date.",
    "not-a-slot": "The time is not one of the day's entry slots.",
    "slot-ended": "The entry slot is today's and has ended.",
    "before-start": "The end of the window is before its start.",
    "window-too-long": "The window spans more days than allowed.",
    "given-twice": "The query parameter is given more than once.",
    "malformed": "The header is not in its required form.",
    "not-a-code": "The text is not shaped like a confirmation code.",
    "not-a-cursor": "The cursor is not one of an earlier answer for that day.",
    "not-today-or-tomorrow": "A gate may ask about today and tomorrow only.",
    "out-of-window": "The moment is outside the window it must fall in.",
    "no-change": "A day's change that neither closes it nor gives hours or a capacity.",
    "hours-order": "The closing time is not after the opening time.",
    "dates-sold": "A date with tickets sold would be removed.",
    "below-sold": "The capacity is below the tickets sold for a date.",
}

# reason: when a 409 answers it.
CONFLICT_REASONS = {
    "sold-out": "No places are left for the day, the entry slot or the event date; the "
                "answer names what is full. Nothing was sold.",
    "key-reused": "The `Idempotency-Key` was used before with a different request.",
    "expired": "The order's hold ended before it was confirmed; its places are free "
               "again. Nothing was changed.",
    "not-pending": "The order is no longer pending: a cancelled or voided order cannot be "
                   "confirmed, and only a pending order can be cancelled by its creator.",
    "not-due": "The order has no payment due to mark paid: it is free, was paid otherwise, "
               "or is pending, expired, cancelled or voided. Nothing was changed.",
    "dates-sold": "A change of an event removes dates for which tickets were sold.",
    "capacity-below-sold": "A change of an event sets a capacity below the tickets "
                           "already sold for one of its dates.",
}


def field_error(field, code, message):
    """One entry of a problem's `errors`: the field, the code of the rule that refused it
    (one of FIELD_CODES) and a message for a person."""
    if code not in FIELD_CODES:  # a programming error, caught by the tests of each rule
        raise ValueError(f"unknown field error code {code!r}")
    return {"field": field, "code": code, "message": message}

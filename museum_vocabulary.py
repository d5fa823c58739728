"""The words the museum service's modules share: the roles (and which of them a resource's
method admits, and which methods the shop opens to anyone), the ticket types, the patterns
of dates, ids and times of day, the limits of prices, places and emails, and the rules of
a price and of a number of places, which the settings (from museum.ini's text) and the
validator (from JSON) both apply.

Imports nothing of the service, so any module may use it: a module that needs only one of
these words takes it from here rather than from the module that uses it most.
"""

import re
from decimal import Decimal

DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
TICKET_TYPES = ("general", "event")
# The kinds of outbox messages (storage's "kind"): a mail to a ticket's buyer, whose payload
# is {"ticketId"}.
EMAIL_MESSAGE = "email"
# The states of an outbox message (storage's "state"), and what refuses to send again or
# drop one being sent (or, for sending again, one sent).
MESSAGE_STATES = ("queued", "sending", "sent", "failed")
MESSAGE_BUSY = ("The message is being sent or was sent: only a queued or failed message is "
                "sent again, and one being sent is not dropped.")
# The languages of the shipped mail templates ([museum] language), English first.
MAIL_LANGUAGES = ("en", "de")
TICKET_LABELS = {"general": "General entry", "event": "Special event"}  # by TICKET_TYPES
UUID_TEXT = re.compile(r"[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")

VISITOR_ROLE = "visitor"  # reads hours and events, buys tickets
GATE_ROLE = "gate"  # also admits tickets at the door and reads its counters
DESK_ROLE = "desk"  # also sells at the desk, voids today's tickets, reads today's report
ADMIN_ROLE = "admin"  # also manages events, voids any ticket, reads any report
ROLES = (VISITOR_ROLE, GATE_ROLE, DESK_ROLE, ADMIN_ROLE)  # in order of power
# A request without credentials, where [shop] enabled opens the operation: not among ROLES,
# so no user or device is ever given it.
ANYONE_ROLE = "anyone"
# What the desk marks an order's payment due paid with (museum_orders; its webhook says it).
DESK_PAYMENTS = ("cash", "card")
TIME_OF_DAY = re.compile(r"([01]\d|2[0-3]):[0-5]\d")  # HH:MM, such as an entry time
CURRENCY = re.compile(r"[A-Z]{3}")
PRICE_MAX = 1_000_000
CAPACITY_MAX = 1_000_000
EMAIL_MAX = 254


class TooManyDecimals(ValueError):
    """A price refused only for having more than 2 decimals."""


def price_in_hundredths(number):
    """A price -> its whole hundredths, exact (8.5 is 850). `number` is a Decimal (read
    from text) or a JSON number (int or float). Raises TooManyDecimals for one of more than
    2 decimals, ValueError for anything else that is no number from 0 to PRICE_MAX."""
    amount = _decimal(number)
    if amount is None or not amount.is_finite() or not 0 <= amount <= PRICE_MAX:
        raise ValueError(f"not a number from 0 to {PRICE_MAX}")
    if amount != round(amount, 2):
        raise TooManyDecimals("more than 2 decimals")
    return int(amount * 100)


def _decimal(number):
    """A Decimal or JSON number as a Decimal, a float by its shortest text (0.1, not the
    binary fraction nearest it, so that a client's 19.99 keeps 2 decimals); None for any
    other value (True is no number)."""
    if isinstance(number, float):
        return Decimal(repr(number))
    if isinstance(number, (int, Decimal)) and not isinstance(number, bool):
        return Decimal(number)
    return None


def number_of_places(number):
    """A number of places (a capacity) -> the int: a whole number from 1 to CAPACITY_MAX,
    written as an int or, as JSON may write it, a float with no fraction such as 5.0.
    Raises ValueError for anything else."""
    # The range test comes before int(): int() of an infinite float raises OverflowError.
    if isinstance(number, bool) or not isinstance(number, (int, float)) \
            or not 1 <= number <= CAPACITY_MAX or number != int(number):
        raise ValueError(f"not a whole number from 1 to {CAPACITY_MAX}")
    return int(number)


def minute_of_day(text):
    """"HH:MM" -> the minutes since midnight."""
    return int(text[:2]) * 60 + int(text[3:])


def time_of_day(minute):
    """The minutes since midnight -> "HH:MM"."""
    return f"{minute // 60:02}:{minute % 60:02}"


def needs_role(role):
    """What a 403 says to credentials without `role`, the least of the roles admitted."""
    return f"This needs the {role} role."


def admitted_roles(resource, method):
    """The roles that may call `method` of `resource` (HEAD as GET), least powerful first:
    every role where the resource needs no credentials; else the role it declares in
    `needed_roles` for the method and those above it (ROLES is in order of power), or
    exactly the roles it declares as a tuple (the door's sign-in: gates, not admins); none
    for a method it does not declare. The Authenticator enforces it, the OpenAPI
    description states it."""
    if not getattr(resource, "auth_required", True):
        return ROLES
    needed = getattr(resource, "needed_roles", {}).get("GET" if method == "HEAD" else method)
    if needed is None or isinstance(needed, tuple):
        return needed or ()
    return ROLES[ROLES.index(needed):]


def open_in_shop(resource, method):
    """Whether `method` of `resource` (HEAD as GET) is one the shop opens to requests
    without credentials when `[shop] enabled` is true: those the resource lists in
    `shop_methods` (reading the hours, events and places, creating an order). The
    Authenticator lets them through, the shop's CORS answers them, the description says
    so."""
    return ("GET" if method == "HEAD" else method) in getattr(resource, "shop_methods", ())

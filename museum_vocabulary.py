"""The words the museum service's modules share: the roles (and which of them a resource's
method admits), the ticket types, the patterns of dates, ids and times of day, and the
limits of prices, places and emails.

Imports nothing of the service, so any module may use it: a module that needs only one of
these words takes it from here rather than from the module that uses it most.
"""

import re

DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
TICKET_TYPES = ("general", "event")
# The kinds of outbox messages (storage's "kind"): a mail to a ticket's buyer, whose payload
# is {"ticketId"}.
EMAIL_MESSAGE = "email"
TICKET_LABELS = {"general": "General entry", "event": "Special event"}  # by TICKET_TYPES
UUID_TEXT = re.compile(r"[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")

VISITOR_ROLE = "visitor"  # reads hours and events, buys tickets
GATE_ROLE = "gate"  # also admits tickets at the door and reads its counters
ADMIN_ROLE = "admin"  # also manages events and undoes admissions
ROLES = (VISITOR_ROLE, GATE_ROLE, ADMIN_ROLE)  # in order of power
TIME_OF_DAY = re.compile(r"([01]\d|2[0-3]):[0-5]\d")  # HH:MM, such as an entry time
CURRENCY = re.compile(r"[A-Z]{3}")
PRICE_MAX = 1_000_000
CAPACITY_MAX = 1_000_000
EMAIL_MAX = 254


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
    `needed_roles` for the method and those above it (ROLES is in order of power); none for
    a method it does not declare. The Authenticator enforces it, the OpenAPI description
    states it."""
    if not getattr(resource, "auth_required", True):
        return ROLES
    needed = getattr(resource, "needed_roles", {}).get("GET" if method == "HEAD" else method)
    return () if needed is None else ROLES[ROLES.index(needed):]

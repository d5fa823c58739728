"""Price categories (adult, reduced, child, ...) as the museum configures them.

A museum lists its categories in museum.ini's [categories], one line each:

    [categories]
    adult = Adult
    reduced = Reduced | 8.50 | note: check student or senior ID
    child = Child under 14 | 0
    family = Family | 30 | persons: 4

The line's name is the category's (what clients send); its value is the label, then the
price of general entry (left out: [tickets] general_price), then optional `persons: N`
(the places it takes, default 1) and `note: TEXT` (shown at the door), parted by `|`. The
first category is the default of a sale. Without the section there is one, `adult`, at
the general price, so an older config sells as before. An event's tickets cost the
event's price, or its `prices` entry for the ticket's category.

Here: parsing the section (museum_config calls `parse_categories`), and the rules a
request's category names meet, given the validator that collects the errors. Imports
nothing of the service: the settings build on it, the resources (museum_about,
museum_tickets, museum_events) use it.
"""

import re
import typing

NAME = re.compile(r"[a-z][a-z0-9-]{0,31}")  # a category's name: `adult`, `child-under-6`
LABEL_MAX = 60
NOTE_MAX = 120
PERSONS_MAX = 50
CATEGORIES_MAX = 20
DEFAULT_NAME = "adult"  # the one category of a config without [categories]
DEFAULT_LABEL = "Adult"


class Category(typing.NamedTuple):
    """One price category: general entry costs `price` hundredths; a ticket of it takes
    `persons` places; `note` is what the door checks ("" for none)."""

    name: str
    label: str
    price: int
    persons: int = 1
    note: str = ""


def parse_categories(entries, parse_price, general_price):
    """The categories of a [categories] section's `entries` ({name: value}, in the file's
    order), prices read by `parse_price` (text -> hundredths, ValueError if wrong), a price
    left out being `general_price`. Without entries: the one default category. Raises
    ValueError beginning with the name of the wrong line."""
    if not entries:
        return (Category(DEFAULT_NAME, DEFAULT_LABEL, general_price),)
    if len(entries) > CATEGORIES_MAX:
        raise ValueError(f"at most {CATEGORIES_MAX} categories, not {len(entries)}")
    return tuple(_category(name, value, parse_price, general_price)
                 for name, value in entries.items())


def _category(name, value, parse_price, general_price):
    def wrong(what):
        return ValueError(f"{name}: {what} (as 'LABEL | PRICE | persons: N | note: TEXT', "
                          f"all but the label optional)")

    if not NAME.fullmatch(name):
        raise wrong("the name must be 1 to 32 lowercase letters, digits or '-', beginning "
                    "with a letter")
    label, *parts = [part.strip() for part in value.split("|")]
    if not 1 <= len(label) <= LABEL_MAX:
        raise wrong(f"the label must be 1 to {LABEL_MAX} characters")
    price = general_price
    if parts and ":" not in parts[0]:
        try:
            price = parse_price(parts.pop(0))
        except ValueError as error:
            raise wrong(str(error)) from None
    extras = {}
    for part in parts:
        key, _, text = (piece.strip() for piece in part.partition(":"))
        if key not in ("persons", "note") or key in extras:
            raise wrong(f"{part!r} is not a price, persons: N or note: TEXT given once")
        extras[key] = text
    persons = extras.get("persons", "1")
    if not (persons.isascii() and persons.isdigit() and 1 <= int(persons) <= PERSONS_MAX):
        raise wrong(f"persons must be a whole number from 1 to {PERSONS_MAX}, "
                    f"not {persons!r}")
    note = extras.get("note", "")
    if len(note) > NOTE_MAX or "note" in extras and not note:
        raise wrong(f"the note must be 1 to {NOTE_MAX} characters")
    return Category(name, label, price, int(persons), note)


def names(config):
    """The names of the configured categories, the default first."""
    return [category.name for category in config.categories]


def by_name(config, name):
    """The configured category `name`; None if there is none."""
    return next((each for each in config.categories if each.name == name), None)


def sold_in(config, name):
    """The category a ticket is sold in: `name`'s, or by default the first."""
    return by_name(config, name) if name else config.categories[0]


def check_category(validator, config, name, field="category"):
    """Refuse a `name` that is no configured category (an error on `field`)."""
    if name is not None and by_name(config, name) is None:
        validator.error(field, "unknown-category",
                        f"must be one of the price categories: {', '.join(names(config))}")


def check_event_prices(validator, config, prices):
    """Refuse each category of an event's `prices` that is not configured."""
    for name in prices or {}:
        check_category(validator, config, name, f"prices.{name}")


def category_name(validator, name, value):
    """A category's name as a request gives it (whether configured is checked apart)."""
    if isinstance(value, str) and NAME.fullmatch(value):
        return value
    validator.error(name, "unknown-category", "must be the name of a price category")
    return None


def event_prices(validator, name, value):
    """{category: price}, each price checked as an event's `price` is."""
    if not isinstance(value, dict) or len(value) > CATEGORIES_MAX:
        validator.error(name, "not-a-price-list", f"must be an object of at most "
                        f"{CATEGORIES_MAX} category names and their prices")
        return None
    prices = {}
    for category, price in value.items():
        field = f"{name}.{category}"
        if category_name(validator, field, category) is not None:
            prices[category] = validator.price(field, price)
    return prices

"""What a client reads before a sale: the price categories (`GET /price-categories`) and
the museum's own settings (`GET /museum`): its name, clock and zone, currency, the door's
early admission, the entry slots' length. A shop shows these beside its prices.
"""

from museum_categories import CATEGORIES_MAX
from museum_http import json_response
from museum_openapi import Answer, Operation, ref
from museum_services import museum_now, museum_zone_name
from museum_vocabulary import VISITOR_ROLE
from storage import price_value


def category_view(category, config):
    """A category as the API shows it."""
    return {"name": category.name, "label": category.label,
            "price": price_value(category.price), "currency": config["museum"]["currency"],
            "persons": category.persons, "note": category.note}


class PriceCategories:
    """The price categories a ticket is sold in, with general entry's price in each."""

    needed_roles = {"GET": VISITOR_ROLE}
    shop_methods = ("GET",)  # [shop] enabled: anyone may read it
    described = {"get": Operation("listPriceCategories", "Tickets", "List the price categories",
                                  (), {200: Answer("The categories, the default first.", {
                                      "type": "array", "minItems": 1,
                                      "maxItems": CATEGORIES_MAX,
                                      "items": ref("schemas", "PriceCategory")})})}

    def __init__(self, live):
        self.live = live  # museum_config.LiveConfig: a reload changes the categories

    def on_get(self, req, resp):
        config = self.live.config
        json_response(resp, [category_view(each, config) for each in config.categories])


class Museum:
    """What a shop shows beside its prices: the museum's name, its clock and zone, its
    currency, the door's early admission and the entry slots' length, the categories."""

    needed_roles = {"GET": VISITOR_ROLE}
    shop_methods = ("GET",)  # [shop] enabled: anyone may read it
    described = {"get": Operation("getMuseum", "Operations", "The museum's settings", (), {
        200: Answer("The museum's settings.", "Museum")})}

    def __init__(self, live, clock):
        self.live = live
        self.clock = clock

    def on_get(self, req, resp):
        config = self.live.config
        now = museum_now(config, self.clock)
        json_response(resp, {
            "name": config["museum"]["name"], "timeZone": museum_zone_name(config, now),
            "now": now().isoformat(timespec="seconds"),
            "currency": config["museum"]["currency"],
            "earlyMinutes": config["door"]["early_minutes"],
            "slotMinutes": config["hours"]["slot_minutes"],
            "categories": [category_view(each, config) for each in config.categories]})

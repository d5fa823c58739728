"""The mock: the same app as the service, on demo data in memory, for trying the interface
(`museum mock`). Any well-formed credentials are an admin; nothing written is kept. Its
config is the built-in defaults with a general price and price categories, as a shop meets
them.
"""

from datetime import timedelta

import storage
from museum import create_app
from museum_auth import AnyCredentials, authenticator_for
from museum_services import museum_today, new_uuid


DEMO_CONFIG = ("[tickets]\ngeneral_price = 14\n[categories]\nadult = Adult\n"
               "reduced = Reduced | 9.50 | note: check student or senior ID\n"
               "child = Child under 14 | 0\n")


def create_mock_app(config):
    """The service's app for `config` on a fresh in-memory store seeded with demo events."""
    store = storage.open_store(":memory:")
    seed_demo_events(store, museum_today(config)())
    # Any well-formed credentials sign in: no check fails, so no lock-out ever counts.
    return create_app(config, store=store,
                      authenticator=authenticator_for(config, AnyCredentials()),
                      middleware=[MockMarker()])


class MockMarker:
    """Tells every client of the mock that nothing it writes is kept."""

    def process_response(self, req, resp, resource, req_succeeded):
        resp.set_header("X-Museum-Mock", "true")


DEMO_EVENTS = [
    ("Night at the Museum", "Great Hall", "A torchlit tour of the galleries after closing.",
     (4, 11, 18), 25, None),
    ("Dinosaur Discovery Day", "Fossil Gallery", "Hands-on fossils and talks for families.",
     (2, 9), 8.5, {"child": 4}),
    ("Impressionist Masters", "East Wing", "Guided tour of the visiting impressionist "
     "exhibition.", (1, 3, 5, 7, 14, 21), 15, {"reduced": 10, "child": 0}),
    ("Conservation Lab Open Day", "Lower Ground", "Meet the conservators restoring a 17th "
     "century altarpiece.", (10,), 0, None),
]


def seed_demo_events(store, today):
    """A handful of realistic events on days after `today`, for the mock."""
    store.create_events([{
        "eventId": new_uuid(), "name": name, "location": location,
        "eventDescription": description, "price": price, "prices": prices,
        "dates": [(today + timedelta(days=day)).isoformat() for day in days]}
        for name, location, description, days, price, prices in DEMO_EVENTS])

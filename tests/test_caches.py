"""Every cache gives way to a write: listings, ticket images and opening hours never show
stale data, on this instance or on another one sharing the database."""

import pytest
import webtest

import museum
import storage
from conftest import ADMIN, NOW, VISITOR

EVENTS = "/v1.1/special-events?startDate=2026-12-01&endDate=2026-12-31&limit=5"
NEW_EVENT = {"name": "Night tour", "location": "Hall", "eventDescription": "Torchlit.",
             "dates": ["2026-12-05"], "price": 10}


@pytest.fixture
def instances(config, db_path):
    """Two apps, each with its own caches and store, on one database file."""
    return [webtest.TestApp(museum.create_app(config, store=storage.open_store(db_path),
                                              clock=lambda: NOW)) for _ in range(2)]


def listed_names(client):
    return [event["name"] for event in client.get(EVENTS, headers=VISITOR, status=200).json]


def create(client, **changes):
    return client.post_json("/v1.1/special-events", {**NEW_EVENT, **changes}, headers=ADMIN,
                            status=201).json["eventId"]


def test_a_cached_listing_shows_a_new_event_at_once(client):
    create(client, name="First")
    assert listed_names(client) == ["First"]
    create(client, name="Second")
    assert listed_names(client) == ["First", "Second"]


def test_a_cached_listing_shows_a_patch_and_a_cancel(client):
    event_id = create(client)
    assert listed_names(client) == ["Night tour"]
    client.patch_json(f"/v1.1/special-events/{event_id}", {"name": "Day tour"}, headers=ADMIN,
                      status=200)
    assert listed_names(client) == ["Day tour"]
    client.delete(f"/v1.1/special-events/{event_id}", headers=ADMIN, status=204)
    assert listed_names(client) == []


def test_a_listing_cached_on_one_instance_shows_writes_made_on_another(instances):
    first, second = instances
    event_id = create(second)
    assert listed_names(first) == ["Night tour"]
    second.patch_json(f"/v1.1/special-events/{event_id}", {"dates": ["2027-01-01"]},
                      headers=ADMIN, status=200)
    assert listed_names(first) == []
    assert first.get(EVENTS, headers=VISITOR, status=200).headers["X-Total-Count"] == "0"


def test_a_ticket_image_follows_its_event_on_another_instance(instances):
    first, second = instances
    event_id = create(second)
    sale = first.post_json("/v1.1/tickets", {"ticketType": "event", "eventId": event_id,
                                             "ticketDate": "2026-12-05",
                                             "email": "a@example.org"},
                           headers=VISITOR, status=201)
    image = sale.headers["Location"]
    before = first.get(image, headers=VISITOR, status=200)
    second.patch_json(f"/v1.1/special-events/{event_id}", {"name": "Renamed"}, headers=ADMIN,
                      status=200)
    after = first.get(image, headers=VISITOR, status=200)
    assert after.headers["ETag"] != before.headers["ETag"]
    second.delete(f"/v1.1/special-events/{event_id}", headers=ADMIN, status=204)
    first.get(image, headers=VISITOR, status=410)


def test_opening_hours_follow_a_config_reload(make_client, config_text):
    before = make_client(museum.parse_config(config_text))
    assert before.get("/v1.1/museum-hours?startDate=2026-11-24&limit=1", headers=VISITOR,
                      status=200).json[0]["date"] == "2026-11-24"
    after = make_client(museum.parse_config(config_text + "[exceptions]\n2026-11-24 = closed\n"))
    assert after.get("/v1.1/museum-hours?startDate=2026-11-24&limit=1", headers=VISITOR,
                     status=200).json[0]["date"] == "2026-11-25"

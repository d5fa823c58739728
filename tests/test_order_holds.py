"""What the service already shows of orders' holds: the availability counts a held order's
places until its hold ends, at the injected clock, with nothing written at the end."""

import uuid

import museum
from conftest import VISITOR
from ticketing import OPEN_DAY, fresh_code


def held_order(expires_at):
    return {"orderId": str(uuid.uuid4()), "orderCode": fresh_code("general"),
            "status": "pending", "channel": "web", "email": "family@example.org",
            "createdAt": "2026-11-22T11:50:00Z", "expiresAt": expires_at,
            "createdBy": "visitor"}


def held_ticket(persons):
    return {"ticketId": str(uuid.uuid4()), "ticketType": "general", "ticketDate": OPEN_DAY,
            "confirmationCode": fresh_code("general"), "email": "family@example.org",
            "price": 12, "currency": "EUR", "persons": persons}


def general_sold(client):
    (day,) = client.get("/v1.1/availability", params={"startDate": OPEN_DAY,
                                                      "endDate": OPEN_DAY},
                        headers=VISITOR, status=200).json
    return day["general"]["sold"]


def test_the_availability_counts_a_hold_until_it_ends(make_client, store, config_text):
    client = make_client(museum.parse_config(config_text))
    # conftest's clock reads noon: one hold lasts past it, one ended a minute before.
    store.create_order(held_order("2026-11-22T12:05:00Z"), [held_ticket(3)],
                       "2026-11-22T11:50:00Z")
    store.create_order(held_order("2026-11-22T11:59:00Z"), [held_ticket(2)],
                       "2026-11-22T11:50:00Z")
    assert general_sold(client) == 3

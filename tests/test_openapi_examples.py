"""Every problem example in the OpenAPI description is what the service answers: each case is
provoked against the app and the whole problem compared with the example (the examples'
messages used to drift from the code's)."""

import json
import uuid

import pytest

import museum
import storage
from conftest import ADMIN, VISITOR, basic
from described import operations, resolve
from openapi_document import DOCUMENT

EVENTS = "/v1.1/special-events"
TICKETS = "/v1.1/tickets"
OPEN_DAY = "2026-11-24"  # a Tuesday after conftest's NOW
EVENT = {"name": "Night Tour", "location": "Great Hall", "eventDescription": "Torches.",
         "dates": [OPEN_DAY], "price": 25}


def bad_request(client, store):
    return client.get("/v1.1/museum-hours", params={"limit": "31"}, headers=ADMIN, status=400)


def unauthorized(client, store):
    return client.get("/v1.1/museum-hours", status=401)


def forbidden(client, store):
    return client.post_json(EVENTS, EVENT, headers=VISITOR, status=403)


def not_found(client, store):
    return client.get(f"{EVENTS}/{uuid.uuid4()}", headers=ADMIN, status=404)


def conflict(client, store):
    key = {**ADMIN, "Idempotency-Key": "order-1"}
    ticket = {"ticketType": "general", "ticketDate": OPEN_DAY, "email": "ada@example.org"}
    client.post_json(TICKETS, ticket, headers=key, status=201)
    return client.post_json(TICKETS, {**ticket, "email": "bob@example.org"}, headers=key,
                            status=409)


def gone(client, store):
    event = client.post_json(EVENTS, EVENT, headers=ADMIN, status=201).json
    ticket = client.post_json(TICKETS, {"ticketType": "event", "ticketDate": OPEN_DAY,
                                        "email": "ada@example.org",
                                        "eventId": event["eventId"]}, headers=ADMIN).json
    client.delete(f"{EVENTS}/{event['eventId']}", headers=ADMIN, status=204)
    return client.get(f"{TICKETS}/{ticket['ticketId']}/qr", headers=ADMIN, status=410)


def content_too_large(client, store):
    body = json.dumps({**EVENT, "eventDescription": "x" * museum.BODY_LIMIT}).encode()
    return client.post(EVENTS, body, headers=ADMIN, content_type="application/json",
                       status=413)


def unsupported_media_type(client, store):
    return client.post(EVENTS, json.dumps(EVENT).encode(), headers=ADMIN,
                       content_type="text/plain", status=415)


def too_many_requests(client, store):
    wrong = basic("admin", "wrong password")
    for _ in range(10):  # the default [auth] max_failures
        client.get("/v1.1/museum-hours", headers=wrong, status=401)
    return client.get("/v1.1/museum-hours", headers=ADMIN, status=429)


def service_unavailable(client, store):
    def unavailable(event_id):
        raise storage.Unavailable("the database is down")

    store.get_event = unavailable
    return client.get(f"{EVENTS}/{uuid.uuid4()}", headers=ADMIN, status=503)


CASES = {
    "BadRequest": bad_request,
    "Unauthorized": unauthorized,
    "Forbidden": forbidden,
    "NotFound": not_found,
    "Conflict": conflict,
    "Gone": gone,
    "ContentTooLarge": content_too_large,
    "UnsupportedMediaType": unsupported_media_type,
    "TooManyRequests": too_many_requests,
    "ServiceUnavailable": service_unavailable,
}


def problem_examples():
    """{name under components/responses: its problem+json example}."""
    return {name: response["content"]["application/problem+json"]["example"]
            for name, response in DOCUMENT["components"]["responses"].items()
            if "application/problem+json" in response.get("content", {})}


def test_every_problem_example_has_a_case():
    assert set(problem_examples()) == set(CASES)


@pytest.mark.parametrize("name", CASES)
def test_the_example_is_what_the_service_answers(name, make_client, config, store):
    client = make_client(config)
    res = CASES[name](client, store)
    assert res.content_type == "application/problem+json"
    assert res.json == problem_examples()[name]


def test_operations_refer_to_the_examples_checked_here():
    """Every error response of an operation is one of the shared ones, so checking those
    checks every error example the description shows."""
    shared = DOCUMENT["components"]["responses"]
    for _, _, operation in operations().values():
        for status, response in operation["responses"].items():
            if status[0] in "45":
                assert response["$ref"].rsplit("/", 1)[1] in shared
                assert resolve(response)["content"]

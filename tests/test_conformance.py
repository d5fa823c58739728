"""The service keeps to its description: schemathesis against the real process, and each
disagreement schemathesis or review found, pinned as a fast check."""

import re
import subprocess
import sys

import pytest

import storage
from conftest import ADMIN, PASSWORDS
from described import assert_described, operations, schema_errors
from serving import running_server

CHECKS = ("not_a_server_error", "status_code_conformance", "content_type_conformance",
          "response_schema_conformance", "response_headers_conformance",
          "negative_data_rejection")
SEED = 20261122
MAX_EXAMPLES = 100
EVENTS = "/v1.1/special-events"
OPEN_DAY = "2026-11-24"  # a Tuesday after conftest's NOW


def event(**changes):
    return {"name": "Night Tour", "location": "Great Hall", "eventDescription": "Torches.",
            "dates": ["2026-12-05"], "price": 25, **changes}


@pytest.mark.slow
def test_schemathesis_finds_nothing_wrong_with_the_real_service(tmp_path, config_text):
    """Every phase (examples, coverage, fuzzing, stateful) with a fixed seed and budget, as
    an admin (who may also use the door's operations), on a fresh database: zero failures
    on every operation but the description's own. Credentials come from `--auth` only:
    schemathesis does not yet know that `--auth` puts back an Authorization header it meant
    to leave out, and would count that as accepted negative data."""
    with running_server(tmp_path, config_text) as server:
        done = subprocess.run(
            [sys.executable, "-m", "schemathesis.cli", "run",
             f"http://127.0.0.1:{server.port}/v1.1/openapi.json",
             "--auth", f"admin:{PASSWORDS['admin']}", "--checks", ",".join(CHECKS),
             "--seed", str(SEED), "--max-examples", str(MAX_EXAMPLES),
             "--generation-with-security-parameters", "false",
             "--generation-database", "none", "--request-timeout", "10", "--no-color"],
            cwd=tmp_path, capture_output=True, text=True, timeout=170)
    report = done.stdout + done.stderr
    assert done.returncode == 0, report[-8000:]
    tested = re.search(r"Tested: (\d+)\b", report)
    assert tested and int(tested.group(1)) == len(operations()) - 1, report[-3000:]
    generated, passed = map(int, re.search(r"(\d+) generated, (\d+) passed", report).groups())
    assert generated == passed >= 1000, report[-3000:]


@pytest.mark.parametrize(("name", "accepted"), [
    ("n" * 200, True), (" " + "n" * 200 + " ", True), ("\t x \n", True),
    ("n" * 201, False), ("  ", False), ("", False)])
def test_event_names_the_description_allows_are_the_ones_the_service_takes(
        client, name, accepted):
    """The 200-character limit counts the trimmed name, in the description as in the
    service (the description used to cap the untrimmed length)."""
    described = not schema_errors({"$ref": "#/components/schemas/SpecialEventCreate/properties/name"}, name)
    res = client.post_json(EVENTS, event(name=name), headers=ADMIN, expect_errors=True)
    assert (described, res.status_int) == (accepted, 201 if accepted else 400)


@pytest.mark.parametrize(("page", "accepted"), [
    (1, True), (1_000_000, True), (0, False), (1_000_001, False)])
def test_pages_the_description_allows_are_the_ones_the_service_takes(client, page, accepted):
    """`page` is bounded above too (the description used to leave it open)."""
    parameter = {"$ref": "#/components/parameters/Page/schema"}
    described = not schema_errors(parameter, page)
    res = client.get(EVENTS, params={"page": str(page)}, headers=ADMIN, expect_errors=True)
    assert (described, res.status_int) == (accepted, 200 if accepted else 400)


def test_an_empty_if_none_match_is_described_and_answered_with_the_image(client):
    """An empty `If-None-Match` is an empty list of tags: it matches nothing, so the image
    comes back (the description used to demand a non-empty value)."""
    ticket = client.post_json("/v1.1/tickets", {"ticketType": "general", "ticketDate": OPEN_DAY,
                                                "email": "ada@example.org"}, headers=ADMIN).json
    header = {"$ref": "#/components/parameters/IfNoneMatch/schema"}
    assert schema_errors(header, "") == []
    res = client.get(f"/v1.1/tickets/{ticket['ticketId']}/qr",
                     headers={**ADMIN, "If-None-Match": ""}, status=200)
    assert_described("getTicketCode", res.status_int, dict(res.headers), res.body)


def test_running_out_of_confirmation_codes_is_a_described_503(make_client, config, store,
                                                               monkeypatch):
    """The rare 503 after three clashing codes carries the `Retry-After` the description
    promises for every 503 (it used to come without one)."""
    def always_taken(ticket, idempotency=None, general_capacity=None, slot_capacity=None,
                     purchase_limit=None, messages=()):
        raise storage.DuplicateCode()

    monkeypatch.setattr(store, "create_ticket", always_taken)
    res = make_client(config).post_json(
        "/v1.1/tickets", {"ticketType": "general", "ticketDate": OPEN_DAY,
                          "email": "ada@example.org"}, headers=ADMIN, status=503)
    assert res.headers["Retry-After"] == "1"
    assert_described("buyMuseumTickets", 503, dict(res.headers), res.body)

"""Checks of the OpenAPI description `museum.openapi_description()` assembles.

Needs the test-only packages pytest and openapi-spec-validator (which brings jsonschema).
"""

import collections
import json
import os
import re
import subprocess
import sys

import falcon.inspect
import jsonschema
import pytest
import referencing
import referencing.jsonschema
from openapi_spec_validator import validate

import museum
import museum_validation
from described import DOCUMENT, each_operation, resolve
import museum_devices
import museum_openapi
from museum_openapi import METHODS
from serving import ROOT

API_OPERATIONS = {
    "getMuseumHours", "changeMuseumDay", "restoreMuseumDay", "createSpecialEvent",
    "listSpecialEvents", "getSpecialEvent",
    "updateSpecialEvent", "deleteSpecialEvent", "buyMuseumTickets", "getTicketCode",
    "admitTicket", "getAdmissionSummary", "undoAdmission", "getAdmissionHistory",
    "lookupTickets", "listAdmissions",
    "getTicket", "voidTicket",
    "getAvailability", "listEventTickets", "getSalesReport", "getSalesChart",
    "pairDevice", "startDeviceSession", "endDeviceSession",
    "listPriceCategories", "getMuseum", "resendTicket", "resendOrder",
    "createOrder", "getOrder", "cancelOrder", "confirmOrder", "getOrderCode", "markOrderPaid",
    "getArrivalsChart", "listOutboxMessages", "retryOutboxMessage", "dropOutboxMessage",
}
# Operations that need no credentials: the description, and pairing (its code is one).
PUBLIC_OPERATIONS = {"getOpenApiDescription", "pairDevice"}
PROBLEM_REF = "#/components/schemas/Problem"
DOOR_PROBLEM_REF = "#/components/schemas/DoorProblem"
# Each body's declared fields, and the schemas made from them: request bodies (a change
# takes the same fields) and the event the service answers.
DECLARED = [
    (museum.EVENT_FIELDS, ["SpecialEventCreate", "SpecialEventUpdate", "SpecialEvent"]),
    (museum.TICKET_FIELDS, ["BuyTicketRequest"]),
    (museum.ADMISSION_FIELDS, ["AdmissionRequest"]),
    (museum.LOOKUP_FIELDS, ["LookupRequest"]),
    (museum.DAY_FIELDS, ["MuseumDayChange"]),
    (museum_devices.PAIRING_FIELDS, ["PairingRequest"]),
    (museum.ORDER_FIELDS, ["OrderRequest"]),
    (museum.ORDER_ITEM_FIELDS, ["OrderItem"]),
]


def all_operations():
    return [operation for _, _, operation in each_operation()]


def has_example(node):
    return "example" in node or bool(node.get("examples"))


@pytest.mark.parametrize(("fields", "schema_names"), DECLARED)
def test_each_declared_field_is_in_its_schemas_and_nothing_else(fields, schema_names):
    """A declared field missing from a schema made of its body, or a property no field
    declares, fails here; so do required fields that differ."""
    for name in schema_names:
        schema = DOCUMENT["components"]["schemas"][name]
        # An event as read has its id, and in a listing of changes its mark and moment.
        properties = set(schema["properties"]) - {"eventId", "cancelled", "updatedAt"} \
            if name == "SpecialEvent" else set(schema["properties"])
        assert properties == set(fields), name
        required = {field for field, declared in fields.items() if declared.required is True}
        assert set(schema.get("required", [])) - {"eventId"} == (
            set() if name.endswith("Update") else required), name


def test_the_event_ticket_condition_is_described():
    """`eventId` is declared required when the ticket is an event's; the schema says so."""
    schema = DOCUMENT["components"]["schemas"]["BuyTicketRequest"]
    assert museum.TICKET_FIELDS["eventId"].required == museum_validation.When("ticketType", "event")
    assert schema["if"]["properties"] == {"ticketType": {"const": "event"}}
    assert (schema["then"], schema["else"]) == (
        {"required": ["eventId"]}, {"not": {"required": ["eventId"]}})


def test_document_is_valid_openapi_3_1():
    assert DOCUMENT["openapi"] == "3.1.0"
    validate(DOCUMENT)  # raises on any error


def test_document_is_plain_json_and_round_trips():
    text = json.dumps(DOCUMENT, allow_nan=False)
    # Tuples, non-string keys and the like would not come back equal.
    assert json.loads(text) == DOCUMENT


def test_each_operation_id_exists_exactly_once():
    counts = collections.Counter(op.get("operationId") for op in all_operations())
    assert set(counts) == API_OPERATIONS | {"getOpenApiDescription"}
    assert all(count == 1 for count in counts.values()), counts


def test_api_operations_need_credentials_and_list_401():
    scheme = DOCUMENT["components"]["securitySchemes"]["MuseumPlaceholderAuth"]
    assert (scheme["type"], scheme["scheme"]) == ("http", "basic")
    top_level = DOCUMENT["security"]
    assert top_level == [{"MuseumPlaceholderAuth": []}]
    for op in all_operations():
        if op["operationId"] in PUBLIC_OPERATIONS:
            assert op["security"] == []
        else:
            assert op.get("security", top_level) == top_level, op["operationId"]
            assert "401" in op["responses"], op["operationId"]


# Statuses the HTTP server answers itself, in text/plain, for requests the app never sees:
# malformed framing, bodies over its buffer, and (only ever from it) oversized headers.
SERVER_TEXT = {"400": {"application/problem+json", "text/plain"},
               "413": {"application/problem+json", "text/plain"},
               "431": {"text/plain"}}


def test_error_responses_are_problem_details():
    checked = 0
    for op in all_operations():
        for status, response in op["responses"].items():
            if status[0] in "45":
                content = resolve(response)["content"]
                expected = SERVER_TEXT.get(status, {"application/problem+json"})
                assert set(content) == expected, (op["operationId"], status)
                if status == "431":
                    continue
                schema = content["application/problem+json"]["schema"]
                # A problem, or one with its extension members beside (the door's, a sale's).
                assert schema["$ref"] == PROBLEM_REF or \
                    resolve(schema)["allOf"][0] == {"$ref": PROBLEM_REF}, (
                        op["operationId"], status)
                checked += 1
    assert checked >= 11 * 4
    problem = resolve({"$ref": PROBLEM_REF})
    assert set(problem["required"]) == {"type", "title", "status", "detail"}
    assert resolve({"$ref": DOOR_PROBLEM_REF})["allOf"][0] == {"$ref": PROBLEM_REF}


def test_operations_have_summary_tags_and_their_own_example():
    # The shared error responses carry examples too; they do not count here.
    for path_item in DOCUMENT["paths"].values():
        for method, op in path_item.items():
            if method not in METHODS:
                continue
            assert op.get("summary") and op.get("tags"), op["operationId"]
            holders = [op.get("requestBody", {})] + [
                response for status, response in op["responses"].items() if status[0] == "2"
            ]
            media = [m for holder in holders for m in resolve(holder).get("content", {}).values()]
            parameters = path_item.get("parameters", []) + op.get("parameters", [])
            if not media + parameters:
                continue  # nothing to show (ending a device session: no body, no parameter)
            assert any(has_example(node) for node in media + [resolve(p) for p in parameters]), (
                op["operationId"]
            )


def _examples_with_schemas(node, pointer=""):
    """Yield (pointer to a schema, example) for every example beside a schema."""
    if isinstance(node, dict):
        if "schema" in node:
            examples = [node["example"]] if "example" in node else []
            examples += [e["value"] for e in node.get("examples", {}).values() if "value" in e]
            for example in examples:
                yield pointer + "/schema", example
        for key, value in node.items():
            escaped = key.replace("~", "~0").replace("/", "~1")
            yield from _examples_with_schemas(value, f"{pointer}/{escaped}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _examples_with_schemas(value, f"{pointer}/{index}")


def test_examples_match_their_schemas():
    uri = "urn:museum-openapi"
    resource = referencing.jsonschema.DRAFT202012.create_resource(DOCUMENT)
    registry = referencing.Registry().with_resource(uri, resource)
    found = list(_examples_with_schemas(DOCUMENT))
    assert len(found) >= 20
    for pointer, example in found:
        validator = jsonschema.Draft202012Validator(
            {"$ref": uri + "#" + pointer},
            registry=registry,
            format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER,
        )
        errors = [error.message for error in validator.iter_errors(example)]
        assert not errors, (pointer, errors)


def _routes(paths_and_methods):
    """{(path with every `{parameter}` as `{}`, METHOD)}."""
    return {(re.sub(r"\{[^}]*\}", "{}", path), method.upper())
            for path, method in paths_and_methods}


def test_description_and_app_route_the_same_paths_and_methods(config, store):
    """Each (path, method) of the description is a route of the app and the other way round;
    OPTIONS (answered by Falcon for every route), HEAD (answered wherever GET is, as HTTP
    has it) and the paths outside the API (`/healthz`, the scanner page) aside."""
    server = DOCUMENT["servers"][0]["url"]
    described = _routes((server + path, method) for path, item in DOCUMENT["paths"].items()
                        for method in item if method in METHODS)
    app = museum.create_app(config, store=store)
    routed = _routes((route.path, responder.method)
                     for route in falcon.inspect.inspect_app(app).routes
                     for responder in route.methods
                     if not responder.internal and route.path.startswith(museum.API)
                     and responder.method != "HEAD")
    assert ("/v1.1/special-events/{}", "PATCH") in routed
    assert described - routed == set(), "described but not routed"
    assert routed - described == set(), "routed but not described"


def test_description_is_served_without_credentials(client):
    """`GET /v1.1/openapi.json` answers the document itself, to anyone."""
    res = client.get("/v1.1/openapi.json", status=200)
    assert res.content_type == "application/json"
    assert res.json == DOCUMENT


def test_museum_openapi_prints_the_same_document(tmp_path):
    """`museum openapi` prints the served document as JSON, opening no file or database."""
    done = subprocess.run([sys.executable, "-m", "museum_cli", "openapi"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == DOCUMENT
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("module", ["museum_openapi", "museum_http", "museum_events"])
def test_the_modules_the_app_uses_import_nothing_of_it(tmp_path, module):
    """museum.py imports the description, its HTTP plumbing and its resources, never the
    other way round: no import circle."""
    done = subprocess.run([sys.executable, "-c", f"import sys, {module}; "
                           "print(sorted(name for name in sys.modules if name == 'museum'))"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_field_declared_nullable_in_a_change_is_cleared_and_described_so():
    """`nullable_in_patch` on a declaration is all a field needs to be cleared with null in
    a change: the validator takes the null and the change's schema allows it."""
    capacity = museum.EVENT_FIELDS["capacity"]._replace(nullable_in_patch=True)
    fields = {**museum.EVENT_FIELDS, "capacity": capacity}
    validator = museum_validation.Validator()
    assert museum_validation.check_fields({"capacity": None}, fields, validator, change=True) == {
        "capacity": None}
    assert validator.errors == []
    museum_validation.check_fields({**museum_openapi.example_of(fields), "capacity": None}, fields,
                        validator)
    assert validator.errors == [{"field": "capacity", "code": "null",
                                  "message": "must not be null"}]
    change = museum_openapi.body_schema(fields, change=True)["properties"]["capacity"]
    assert change["type"] == ["integer", "null"]
    assert museum_openapi.body_schema(fields)["properties"]["capacity"]["type"] == "integer"

"""The served OpenAPI description, walked (`operations`, `resolve`), and real responses checked
against what it says of their operation."""

import json

import jsonschema
import referencing
import referencing.jsonschema

import museum
from museum_openapi import METHODS

DOCUMENT = museum.openapi_description()
SERVER = DOCUMENT["servers"][0]["url"]
_URI = "urn:museum-openapi"
_REGISTRY = referencing.Registry().with_resource(
    _URI, referencing.jsonschema.DRAFT202012.create_resource(DOCUMENT))


def each_operation():
    """Yield (path under the server, method, operation) for every operation."""
    for path, item in DOCUMENT["paths"].items():
        for method, operation in item.items():
            if method in METHODS:
                yield path, method, operation


def operations():
    """{operationId: (path under the server, method, operation)} of the whole document."""
    return {operation["operationId"]: (path, method, operation)
            for path, method, operation in each_operation()}


def resolve(node):
    """Follow local `$ref`s to the object they name."""
    while "$ref" in node:
        target = DOCUMENT
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        node = target
    return node


def schema_errors(schema, value):
    """Messages of every way `value` breaks `schema` (which may `$ref` into the document)."""
    validator = jsonschema.Draft202012Validator(
        _absolute(schema), registry=_REGISTRY,
        format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    return [error.message for error in validator.iter_errors(value)]


def _absolute(node):
    """`node` with its document-local `$ref`s pointing into the registered document."""
    if isinstance(node, dict):
        return {key: _URI + value if key == "$ref" else _absolute(value)
                for key, value in node.items()}
    if isinstance(node, list):
        return [_absolute(item) for item in node]
    return node


def assert_described(operation_id, status, headers, body):
    """The response (status, headers dict, body bytes) is one the description lists for
    `operation_id`: a listed status, every required header with a value its schema allows, a
    listed media type and a body that matches the schema. Returns the parsed JSON body."""
    _, _, operation = operations()[operation_id]
    assert str(status) in operation["responses"], (operation_id, status, body[:300])
    response = resolve(operation["responses"][str(status)])
    headers = {name.lower(): value for name, value in headers.items()}
    for name, header in response.get("headers", {}).items():
        header = resolve(header)
        if name.lower() in headers:
            value = headers[name.lower()]
            if resolve(header["schema"]).get("type") == "integer":
                value = int(value)
            assert not schema_errors(header["schema"], value), (operation_id, name, value)
        else:
            assert not header.get("required"), (operation_id, status, f"no {name} header")
    content = response.get("content")
    if not content:
        assert body == b"", (operation_id, status, body[:300])
        return None
    media_type = headers["content-type"].partition(";")[0].strip()
    assert media_type in content, (operation_id, status, media_type)
    if not media_type.endswith("json"):
        return None
    value = json.loads(body)
    errors = schema_errors(content[media_type]["schema"], value)
    assert not errors, (operation_id, status, errors)
    return value

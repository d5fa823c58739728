"""Each operation of the description states the roles it admits, as an `x-roles` list and in
the first sentence of its text, and the app admits exactly those: every operation is called
through the app with each role's credentials, and only the roles listed get past the role
check (whatever the request then answers)."""

import re
import uuid

import pytest

from conftest import ADMIN, DESK, GATE, VISITOR
from described import SERVER, operations
from museum_vocabulary import needs_role
from museum_vocabulary import ROLES

CREDENTIALS = {"visitor": VISITOR, "gate": GATE, "desk": DESK, "admin": ADMIN}
# A value for each path parameter: well formed, naming nothing stored.
PATH_VALUES = {"eventId": str(uuid.uuid4()), "ticketId": str(uuid.uuid4()),
               "orderId": str(uuid.uuid4()), "messageId": str(uuid.uuid4()),
               "date": "2027-10-30"}


def call(client, path, method, headers):
    url = SERVER + re.sub(r"\{(\w+)\}", lambda match: PATH_VALUES[match.group(1)], path)
    return client.request(url, method=method.upper(), headers=headers, expect_errors=True)


def test_every_role_has_credentials_here():
    assert set(CREDENTIALS) == set(ROLES)


@pytest.mark.parametrize("operation_id", sorted(operations()))
def test_the_roles_listed_are_the_ones_the_app_admits(client, operation_id):
    path, method, operation = operations()[operation_id]
    listed = operation["x-roles"]
    assert listed, operation_id
    for role in ROLES:
        res = call(client, path, method, CREDENTIALS[role])
        if role in listed:
            assert res.status_int not in (401, 403, 405), (operation_id, role, res.status)
        else:
            assert (res.status_int, res.json["detail"]) == (
                403, needs_role(listed[0])), (operation_id, role)


@pytest.mark.parametrize("operation_id", sorted(operations()))
def test_the_text_names_the_roles_listed_once(operation_id):
    _, _, operation = operations()[operation_id]
    first, _, rest = operation["description"].partition(". ")
    if operation.get("security") == []:
        assert first.rstrip(".") == "Needs no credentials", operation_id
        assert operation["x-roles"] == list(ROLES), "anyone may call it, whatever their role"
        return
    assert first.startswith("Needs the ") and first.rstrip(".").endswith(" role"), operation_id
    assert re.findall(r"the (\w+)", first) == operation["x-roles"], operation_id
    assert "Needs the" not in rest, f"{operation_id}: state its roles once, in x-roles"


def test_the_description_needs_no_credentials_and_admits_every_role(client):
    for headers in [{}, *CREDENTIALS.values()]:
        client.get(f"{SERVER}/openapi.json", headers=headers, status=200)

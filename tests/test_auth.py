"""HTTP Basic auth, roles and the lock-out of addresses that keep failing."""

import base64
import json

import pytest

import museum
from conftest import ADMIN, VISITOR, assert_problem, basic, quick_hash

HOURS = "/v1.1/museum-hours"
CHALLENGE = 'Basic realm="museum", charset="UTF-8"'


def raw_basic(payload: bytes):
    return {"Authorization": "Basic " + base64.b64encode(payload).decode()}


@pytest.mark.parametrize("headers", [
    pytest.param({}, id="missing"),
    pytest.param({"Authorization": "Bearer abc"}, id="not-basic"),
    pytest.param({"Authorization": "Basic"}, id="no-credentials"),
    pytest.param({"Authorization": "Basic !!!not-base64"}, id="bad-base64"),
    pytest.param(raw_basic(b"admin-admin-pass"), id="no-colon"),
    pytest.param(raw_basic(b"admin:\xff\xfe"), id="not-utf8"),
    pytest.param(basic("admin", "wrong"), id="wrong-password"),
    pytest.param(basic("nobody", "admin-pass"), id="unknown-user"),
    pytest.param(basic("ADMIN", "admin-pass"), id="names-are-case-sensitive"),
])
def test_every_failed_authentication_is_the_same_401(client, headers):
    res = client.get(HOURS, headers=headers, status=401)
    body = assert_problem(res, 401)
    assert res.headers["WWW-Authenticate"] == CHALLENGE
    assert body["detail"] == "Valid credentials are required."


@pytest.mark.parametrize("path", [
    HOURS, "/v1.1/special-events", "/v1.1/special-events/3fa85f64-5717-4562-b3fc-2c963f66afa6",
    "/v1.1/tickets/3fa85f64-5717-4562-b3fc-2c963f66afa6/qr",
])
def test_every_api_path_needs_credentials(client, path):
    assert_problem(client.get(path, status=401), 401)


def test_health_needs_no_credentials(client):
    res = client.get("/healthz", status=200)
    assert res.json == json.loads(museum.Health.ANSWER)


@pytest.mark.parametrize("headers", [ADMIN, VISITOR])
def test_both_roles_read_hours(client, headers):
    client.get(HOURS, headers=headers, status=200)


@pytest.mark.parametrize("method, path", [
    ("post", "/v1.1/special-events"),
    ("patch", "/v1.1/special-events/3fa85f64-5717-4562-b3fc-2c963f66afa6"),
    ("delete", "/v1.1/special-events/3fa85f64-5717-4562-b3fc-2c963f66afa6"),
])
def test_visitors_may_not_manage_events(client, method, path):
    res = getattr(client, method)(path, headers=VISITOR, status=403)
    assert_problem(res, 403)


def test_a_changed_password_stops_working_after_reload(make_client, config_text, password_hashes):
    before = make_client(museum.parse_config(config_text))
    before.get(HOURS, headers=ADMIN, status=200)  # now remembered as verified
    changed = config_text.replace(password_hashes["admin"], quick_hash("new-pass"))
    after = make_client(museum.parse_config(changed))
    assert_problem(after.get(HOURS, headers=ADMIN, status=401), 401)
    after.get(HOURS, headers=basic("admin", "new-pass"), status=200)


def test_the_verified_cache_never_accepts_a_wrong_password(client):
    client.get(HOURS, headers=ADMIN, status=200)
    assert_problem(client.get(HOURS, headers=basic("admin", "admin-pas"), status=401), 401)
    assert_problem(client.get(HOURS, headers=basic("admin", "admin-pass "), status=401), 401)


@pytest.fixture
def strict_client(make_client, config_text):
    return make_client(museum.parse_config(
        config_text + "[auth]\nmax_failures = 3\nfailure_window = 60\nlockout = 120\n"))


def from_address(address, headers=None):
    return {"headers": headers or {}, "extra_environ": {"REMOTE_ADDR": address}}


def test_an_address_that_keeps_failing_gets_429(strict_client):
    attacker = "192.0.2.7"
    for _ in range(3):
        strict_client.get(HOURS, status=401, **from_address(attacker, basic("admin", "guess")))
    res = strict_client.get(HOURS, status=429, **from_address(attacker, ADMIN))
    assert_problem(res, 429)
    assert 0 < int(res.headers["Retry-After"]) <= 120
    # Others are unaffected, with or without a failure of their own.
    strict_client.get(HOURS, status=401, **from_address("192.0.2.8", basic("admin", "typo")))
    strict_client.get(HOURS, status=200, **from_address("192.0.2.8", ADMIN))


def test_failures_outside_the_window_do_not_add_up(make_client, config):
    now = [1000.0]
    auth = museum.Authenticator(config.users, max_failures=3, failure_window=60, lockout=120,
                                clock=lambda: now[0])
    for _ in range(5):
        auth._count_failure("192.0.2.9")
        now[0] += 31
    auth._refuse_if_locked("192.0.2.9")  # raises if locked
    auth._count_failure("192.0.2.9")
    auth._count_failure("192.0.2.9")
    with pytest.raises(museum.Problem) as locked:
        auth._refuse_if_locked("192.0.2.9")
    assert locked.value.status_code == 429
    now[0] += 121
    auth._refuse_if_locked("192.0.2.9")

"""HTTP Basic auth, roles and the lock-out of names and addresses that keep failing."""

import base64
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from conftest import ADMIN, VISITOR, assert_problem, basic, quick_hash
from serving import wait_until

import museum
import museum_auth

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
    assert res.json == {**museum.Health.ANSWER,
                       "outbox": {"failed": 0, "oldest": None}}


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
        config_text + "[auth]\nmax_failures = 3\nmax_address_failures = 5\n"
                      "failure_window = 60\nlockout = 120\n"))


def from_address(address, headers=None):
    return {"headers": headers or {}, "extra_environ": {"REMOTE_ADDR": address}}


def test_a_name_that_keeps_failing_from_an_address_gets_429_there_only(strict_client):
    attacker = "192.0.2.7"
    for number in range(3):
        strict_client.get(HOURS, status=401,
                          **from_address(attacker, basic("admin", f"guess {number}")))
    res = strict_client.get(HOURS, status=429, **from_address(attacker, ADMIN))
    assert_problem(res, 429)
    assert 0 < int(res.headers["Retry-After"]) <= 120
    # Another name from that address, and that name from another address, go on.
    strict_client.get(HOURS, status=200, **from_address(attacker, VISITOR))
    strict_client.get(HOURS, status=200, **from_address("192.0.2.8", ADMIN))
    # Verified now, the admin's credentials pass the lock-out too.
    strict_client.get(HOURS, status=200, **from_address(attacker, ADMIN))


def test_an_address_failing_across_names_gets_429_for_every_name_not_verified(strict_client):
    attacker = "192.0.2.9"
    strict_client.get(HOURS, status=200, **from_address(attacker, VISITOR))
    for number in range(5):
        strict_client.get(HOURS, status=401,
                          **from_address(attacker, basic(f"name-{number}", "guess")))
    assert_problem(strict_client.get(HOURS, status=429, **from_address(attacker, ADMIN)), 429)
    strict_client.get(HOURS, status=200, **from_address(attacker, VISITOR))


@pytest.mark.parametrize("headers", [
    pytest.param({}, id="missing"),
    pytest.param({"Authorization": "Bearer abc"}, id="not-basic"),
    pytest.param({"Authorization": "Basic !!!not-base64"}, id="bad-base64"),
    pytest.param(raw_basic(b"admin-admin-pass"), id="no-colon"),
    pytest.param(basic("admin", "the same wrong password"), id="one-wrong-password-repeated"),
])
def test_requests_that_guess_nothing_new_count_for_nothing(strict_client, headers):
    for _ in range(50):
        strict_client.get(HOURS, status=401, **from_address("192.0.2.10", headers))
    strict_client.get(HOURS, status=200, **from_address("192.0.2.10", ADMIN))


def test_failures_outside_the_window_do_not_add_up():
    now = [1000.0]
    counts = museum_auth.FailureCounts(limit=3, window=60, lockout=120, clock=lambda: now[0])
    for _ in range(5):
        assert not counts.count("192.0.2.9")
        now[0] += 31
    assert counts.locked_for("192.0.2.9") == 0
    counts.count("192.0.2.9")
    assert counts.count("192.0.2.9")  # the third within 60 s
    assert counts.locked_for("192.0.2.9") == 120
    now[0] += 121
    assert counts.locked_for("192.0.2.9") == 0


class CountedUsers(museum_auth.ConfiguredUsers):
    """The configured users, counting the checks they run."""

    checks = 0

    def check(self, account, password):
        self.checks += 1
        return super().check(account, password)


def test_a_wrong_password_is_remembered_for_the_failure_window_only(config):
    now = [1000.0]
    users = CountedUsers(config.users)
    logins = museum_auth.Logins(users, failure_window=60, clock=lambda: now[0])
    wrong = basic("admin", "wrong")["Authorization"]
    for _ in range(3):
        with pytest.raises(museum_auth.NotSignedIn):
            logins.sign_in("192.0.2.1", wrong)
    assert users.checks == 1
    now[0] += 61
    with pytest.raises(museum_auth.NotSignedIn):
        logins.sign_in("192.0.2.1", wrong)
    assert users.checks == 2
    assert logins.sign_in("192.0.2.1", ADMIN["Authorization"]).user == config.users["admin"]
    assert logins.sign_in("192.0.2.1", ADMIN["Authorization"]).user == config.users["admin"]
    assert users.checks == 3  # verified once, then remembered


class HeldUsers(museum_auth.ConfiguredUsers):
    """The configured users, whose password checks (counted) wait until `release` is set;
    `found` counts the requests that looked their name up."""

    def __init__(self, users):
        super().__init__(users)
        self.release = threading.Event()
        self.found = self.checks = 0
        self._lock = threading.Lock()

    def find(self, name):
        with self._lock:
            self.found += 1
        return super().find(name)

    def check(self, account, password):
        self.checks += 1  # one at a time: the name's queue runs one check
        self.release.wait(timeout=30)
        return super().check(account, password)


def test_the_same_credentials_at_once_are_checked_once_and_all_signed_in(config):
    users = HeldUsers(config.users)
    logins = museum_auth.Logins(users)
    with ThreadPoolExecutor(8) as pool:
        signing_in = [pool.submit(logins.sign_in, "192.0.2.1", ADMIN["Authorization"])
                      for _ in range(8)]
        wait_until(lambda: users.found == 8 and users.checks == 1, 10,
                   what="eight requests, one of them checking")
        users.release.set()
        signed_in = [each.result(timeout=30) for each in signing_in]
    assert [each.user for each in signed_in] == [config.users["admin"]] * 8
    assert users.checks == 1


def test_while_a_password_is_checked_another_is_refused_at_once_and_a_known_device_checks(
        config):
    users = HeldUsers(config.users)
    cookies = museum_auth.DeviceCookies("s" * 32)
    logins = museum_auth.Logins(users, cookies=cookies)
    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(logins.sign_in, "192.0.2.1",
                            basic("admin", "guess 1")["Authorization"])
        wait_until(lambda: users.checks == 1, 10, what="the first guess checking")
        with pytest.raises(museum_auth.TryLater) as later:  # at once: nothing to release
            logins.sign_in("192.0.2.2", basic("visitor", "guess 2")["Authorization"])
        assert later.value.seconds == 1
        owner = pool.submit(logins.sign_in, "192.0.2.3", ADMIN["Authorization"],
                            [cookies.issue("admin")])
        wait_until(lambda: users.checks == 2, 10, what="the known device checking beside")
        users.release.set()
        with pytest.raises(museum_auth.NotSignedIn):
            first.result(timeout=30)
        assert owner.result(timeout=30).user == config.users["admin"]


def test_after_a_wrong_password_the_same_credentials_at_once_do_not_wait(config):
    users = HeldUsers(config.users)
    logins = museum_auth.Logins(users)
    users.release.set()
    with pytest.raises(museum_auth.NotSignedIn):
        logins.sign_in("192.0.2.1", basic("admin", "guess 1")["Authorization"])
    users.release.clear()
    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(logins.sign_in, "192.0.2.1", ADMIN["Authorization"])
        wait_until(lambda: users.checks == 2, 10, what="the right password checking")
        with pytest.raises(museum_auth.TryLater):  # a flood's repeats hold no thread
            logins.sign_in("192.0.2.2", ADMIN["Authorization"])
        users.release.set()
        assert first.result(timeout=30).user == config.users["admin"]
    assert logins.sign_in("192.0.2.2", ADMIN["Authorization"]).user == config.users["admin"]


# -- device cookies -----------------------------------------------------------------------

def test_a_device_cookie_is_good_for_its_name_its_key_and_its_lifetime_only():
    now = [1_800_000_000.0]
    cookies = museum_auth.DeviceCookies("s" * 32, clock=lambda: now[0])
    cookie = cookies.issue("gate")
    expires = now[0] + cookies.LIFETIME
    assert cookies.expiry([cookie], "gate") == expires
    assert museum_auth.DeviceCookies("s" * 32).expiry([cookie], "gate") == expires  # instances
    encoded, stamp, mac = cookie.split(":")
    for not_one in [cookies.issue("gate2"), f"{encoded}:{int(stamp) + 86400}:{mac}",
                    f"{encoded}:{stamp}:{mac[:-2]}AA", "gate", "", "a:b:c:d",
                    museum_auth.DeviceCookies("t" * 32).issue("gate")]:
        assert cookies.expiry([not_one], "gate") is None, not_one
    assert cookies.expiry(["junk", cookie], "gate") == expires  # any valid one counts
    now[0] = expires
    assert cookies.expiry([cookie], "gate") is None  # expired


def test_a_device_cookie_is_renewed_once_a_day_at_most():
    now = [1_800_000_000.0]
    cookies = museum_auth.DeviceCookies("s" * 32, clock=lambda: now[0])
    cookie = cookies.issue("gate")
    assert cookies.renewal([], "gate") and cookies.renewal([cookies.issue("admin")], "gate")
    now[0] += cookies.RENEWED_AFTER - 1
    assert cookies.renewal([cookie], "gate") is None
    now[0] += 2
    renewed = cookies.renewal([cookie], "gate")
    assert cookies.expiry([renewed], "gate") == now[0] + cookies.LIFETIME


def test_a_password_check_answers_a_cookie_and_remembered_credentials_only_renew_one(config):
    now = [1_800_000_000.0]
    cookies = museum_auth.DeviceCookies("s" * 32, clock=lambda: now[0])
    logins = museum_auth.Logins(museum_auth.ConfiguredUsers(config.users), cookies=cookies)
    checked = logins.sign_in("192.0.2.1", ADMIN["Authorization"])
    assert cookies.expiry([checked.cookie], "admin") == now[0] + cookies.LIFETIME
    # A client that keeps no cookies is not signed a new one on every request.
    assert logins.sign_in("192.0.2.1", ADMIN["Authorization"]).cookie is None
    assert logins.sign_in("192.0.2.1", ADMIN["Authorization"], [checked.cookie]).cookie is None
    now[0] += cookies.RENEWED_AFTER + 1
    renewed = logins.sign_in("192.0.2.1", ADMIN["Authorization"], [checked.cookie]).cookie
    assert cookies.expiry([renewed], "admin") == now[0] + cookies.LIFETIME


def test_only_the_request_that_checked_the_password_is_answered_a_cookie(make_client, config):
    client = make_client(config)
    assert "museum_device=" in client.get(HOURS, headers=ADMIN).headers["Set-Cookie"]
    client.reset()  # a client that keeps no cookies
    assert "Set-Cookie" not in client.get(HOURS, headers=ADMIN).headers


def test_a_device_cookie_skips_the_lock_outs_until_its_names_devices_keep_failing(
        config):
    cookies = museum_auth.DeviceCookies("s" * 32)
    logins = museum_auth.Logins(museum_auth.ConfiguredUsers(config.users), max_failures=3,
                                cookies=cookies)
    for _ in range(3):
        logins.per_name.count(("192.0.2.1", "admin"))
    with pytest.raises(museum_auth.TryLater):
        logins.sign_in("192.0.2.1", basic("admin", "guess")["Authorization"])
    cookie = [cookies.issue("admin")]
    for number in range(3):  # the known device is checked, though its address is locked
        with pytest.raises(museum_auth.NotSignedIn):
            logins.sign_in("192.0.2.1", basic("admin", f"guess {number}")["Authorization"],
                           cookie)
    with pytest.raises(museum_auth.TryLater):  # three failures locked its devices out too
        logins.sign_in("192.0.2.1", ADMIN["Authorization"], [cookies.issue("admin")])
    assert logins.sign_in("192.0.2.2", ADMIN["Authorization"]).user == config.users["admin"]
    assert not logins.per_known_device.locked_for("visitor")  # a name's own cookies only

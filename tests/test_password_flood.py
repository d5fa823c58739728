"""A flood of wrong passwords over every known name, from rotating addresses, against a real
`museum serve` with passwords at the service's own cost (scrypt N=2^17): device keys and
credentials verified before are answered as quickly as beside the same flood sent without
credentials (all password checks together hold at most one worker thread, the other
guesses are answered 429 at once), and the flooded name's owner signs in on a known
device, with its device cookie, in one try.

Slow: the passwords' hashes and the flood take tens of seconds."""

from concurrent.futures import ThreadPoolExecutor
from http.cookies import SimpleCookie

import pytest
from conftest import basic
from password_flood import FLOOD_THREADS, p50_p99, password_flood, timed_requests
from serving import running_server

import museum_credentials

pytestmark = pytest.mark.slow

SUMMARY = "/v1.1/admissions/summary"
PASSWORD_USERS = {"admin": "admin", "gate": "gate", "gate2": "gate", "visitor": "visitor"}
PASSWORDS = {name: f"the {name} password, long enough" for name in PASSWORD_USERS}
GATE_KEY = museum_credentials.new_device_key()
DEVICE = basic("door-north", GATE_KEY)
VERIFIED = basic("visitor", PASSWORDS["visitor"])
TIMED = 200  # requests of each kind, beside each flood
# Beside the password flood, answers may take this many times their p99 beside the same
# flood sent without credentials (which needs no check), or 100 ms more, whichever is
# larger: the flood's own requests cost the server and a shared machine alike, and what is
# measured is what the password checks add to that.
SLOWER, SLACK_MS = 5, 100


@pytest.fixture(scope="module")
def flood_config():
    """Every known name with a password at the service's own cost, and a gate's key."""
    with ThreadPoolExecutor(2) as pool:
        hashes = dict(zip(PASSWORDS, pool.map(museum_credentials.hash_password,
                                              PASSWORDS.values())))
    users = "".join(f"{name} = {role}:{hashes[name]}\n" for name, role in PASSWORD_USERS.items())
    return (f"[museum]\ntimezone = UTC\n[log]\naccess = off\n[users]\n{users}"
            f"door-north = gate:{museum_credentials.hash_key(GATE_KEY)}\n")


def device_cookie(headers):
    cookie = SimpleCookie(headers["Set-Cookie"])["museum_device"]
    assert cookie["httponly"] and cookie["samesite"] == "Strict" and cookie["path"] == "/v1.1"
    assert not cookie["secure"]  # plain HTTP on loopback; behind the TLS proxy it is Secure
    return f"museum_device={cookie.value}"


def test_a_password_flood_over_every_name_delays_no_device_key_nor_verified_user_and_the_owner_gets_in(
        tmp_path, flood_config):
    db = str(tmp_path / "museum.sqlite3")
    (tmp_path / "before").mkdir()
    with running_server(tmp_path / "before", flood_config, db=db) as server:
        status, headers, _ = server.request("GET", SUMMARY,
                                            headers=basic("gate", PASSWORDS["gate"]))
        assert status == 200
        cookie = device_cookie(headers)
    # A restart: nothing is verified any more, and the cookie still holds (its key is
    # derived from the QR secret the database keeps).
    (tmp_path / "after").mkdir()
    with running_server(tmp_path / "after", flood_config, db=db) as server:
        server.log_in(VERIFIED)
        timed = {"device": DEVICE, "verified": VERIFIED}
        with password_flood(server.port, []) as plain:
            unchecked = {kind: timed_requests(server, headers, TIMED)
                         for kind, headers in timed.items()}
        with password_flood(server.port, list(PASSWORD_USERS)) as answers:
            flooded = {kind: timed_requests(server, headers, TIMED)
                       for kind, headers in timed.items()}
            owner = server.request("GET", SUMMARY, timeout=60, headers={
                **basic("gate", PASSWORDS["gate"]), "Cookie": cookie})
        checks = server.log().count("wrong password for")
    assert owner[0] == 200  # the owner's one try, with the device's cookie
    assert "Set-Cookie" not in owner[1]  # a cookie issued within the day is not renewed
    # The floods were ones: every guess answered, one check at a time, the others at once.
    assert set(plain) == {401} and set(answers) == {401, 429}, (plain, answers)
    assert answers[401] == checks and answers[429] > 10 * FLOOD_THREADS, (answers, checks)
    for kind in timed:
        assert set(unchecked[kind][0]) == set(flooded[kind][0]) == {200}, kind
        (plain_p50, plain_p99), (flooded_p50, flooded_p99) = (
            p50_p99(unchecked[kind][1]), p50_p99(flooded[kind][1]))
        print(f"\n{kind} p50/p99: beside a flood without credentials {plain_p50:.1f}/"
              f"{plain_p99:.1f} ms ({sum(plain.values())} answers), beside the password "
              f"flood {flooded_p50:.1f}/{flooded_p99:.1f} ms ({answers}); owner {owner[0]}")
        assert flooded_p99 < max(SLOWER * plain_p99, plain_p99 + SLACK_MS), (
            kind, plain_p99, flooded_p99)

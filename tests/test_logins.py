"""Logins that keep the door open: requests without credentials, wrong passwords, a busy
morning or guessed ticket codes shut no one else out; device keys sign in without a slow
hash; every route answers each role as one table says. Real servers, statuses only."""

import io
import json
import os
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import falcon.inspect
import pytest

import museum
import museum_auth
import museum_config
import museum_vocabulary
import museum_credentials
from commands import museum_command
from conftest import basic, quick_hash
from serving import running_server, wait_until
from ticketing import UNKNOWN_ID

HOURS = "/v1.1/museum-hours"
SUMMARY = "/v1.1/admissions/summary"
ADMISSIONS = "/v1.1/admissions"
WRONG_PASSWORD_LOG = re.compile(r"INFO museum\.auth: wrong password for (\S+)")


def users_config(users, extra=""):
    """A config with `users` ({name: (role, hash)}), UTC, access lines written at once."""
    lines = "".join(f"{name} = {role}:{password_hash}\n"
                    for name, (role, password_hash) in users.items())
    return f"[museum]\ntimezone = UTC\n[log]\nflush = 0\n{extra}[users]\n{lines}"


@pytest.fixture(scope="module")
def door_config():
    """Two gates, a desk, an admin and a visitor with cheap hashes; the password is the
    name's."""
    return users_config({name: (role, quick_hash(name)) for name, role in [
        ("admin", "admin"), ("desk", "desk"), ("gate", "gate"), ("gate2", "gate"),
        ("visitor", "visitor")]})


def login(name):
    return basic(name, name)


def checks_logged(server):
    """The names of every wrong password the server checked, from its log."""
    return WRONG_PASSWORD_LOG.findall(server.log())


# -- lock-outs that cannot be turned on the museum ------------------------------------------

def test_1000_requests_without_credentials_lock_out_no_gate(tmp_path, door_config):
    address = "127.0.0.7"
    with running_server(tmp_path, door_config) as server:
        assert server.request("GET", SUMMARY, headers=login("gate"), source=address)[0] == 200
        for _ in range(1000):
            assert server.request("GET", SUMMARY, source=address)[0] == 401
        assert server.request("GET", SUMMARY, headers=login("gate"), source=address)[0] == 200
        assert server.request("GET", SUMMARY, headers=login("gate2"), source=address)[0] == 200


def test_10_wrong_passwords_for_admin_do_not_block_gate_from_that_address(tmp_path, door_config):
    address = "127.0.0.8"
    with running_server(tmp_path, door_config) as server:
        for number in range(10):  # the default [auth] max_failures
            wrong = basic("admin", f"guess {number}")
            assert server.request("GET", HOURS, headers=wrong, source=address)[0] == 401
        assert server.request("GET", SUMMARY, headers=login("gate"), source=address)[0] == 200
        status, headers, _ = server.request("GET", HOURS, headers=login("admin"), source=address)
        assert status == 429 and int(headers["Retry-After"]) > 0  # admin, from there only
        assert server.request("GET", HOURS, headers=login("admin"))[0] == 200


def test_a_repeated_wrong_password_is_answered_without_a_new_check(tmp_path, door_config):
    with running_server(tmp_path, door_config) as server:
        for number in range(20):
            source = f"127.0.2.{number + 1}"  # as from rotating addresses
            assert server.request("GET", HOURS, headers=basic("admin", "letmein"),
                                  source=source)[0] == 401
        assert server.request("GET", HOURS, headers=basic("admin", "letmein2"))[0] == 401
        wait_until(lambda: len(checks_logged(server)) == 2, 10, what="two checks logged")
        assert server.request("GET", HOURS, headers=login("admin"))[0] == 200
    assert checks_logged(server) == ["admin", "admin"]


def test_six_staff_logging_in_at_once_all_get_in_retrying_as_told(tmp_path):
    """One password check at a time: the others are told at once to retry in a second (the
    scanner page does), never held waiting on a worker thread."""
    staff = [f"staff{number}" for number in range(6)]
    with ThreadPoolExecutor(2) as pool:  # the service's own strength, N=2^17
        hashes = list(pool.map(museum_credentials.hash_password, staff))
    config = users_config({name: ("gate", password_hash)
                           for name, password_hash in zip(staff, hashes)})
    with running_server(tmp_path, config) as server:
        start = threading.Barrier(len(staff))

        def first_login(name):
            start.wait()
            for _ in range(120):  # no order among retries: patience on a loaded machine
                status, headers, _ = server.request("GET", SUMMARY, headers=login(name))
                if status != 429:
                    return status
                assert headers["Retry-After"] == "1"
                time.sleep(1)
            return status

        with ThreadPoolExecutor(len(staff)) as pool:
            statuses = list(pool.map(first_login, staff))
    assert statuses == [200] * len(staff)


# -- one lane -------------------------------------------------------------------------------

def test_a_lane_is_taken_or_refused_at_once_and_free_again_after_its_check():
    lane = museum_auth.Lane(niceness=10)
    checking, release = threading.Event(), threading.Event()

    def check():
        checking.set()
        release.wait(timeout=30)
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(lane.run, check)
        checking.wait(timeout=30)
        with pytest.raises(museum_auth.TryLater):
            lane.run(check)
        release.set()
        assert first.result(timeout=30) >= 10  # the check yields the processor
    assert not lane.busy()
    with pytest.raises(ValueError):
        lane.run(int, "a check that fails gives the lane back")
    assert lane.run(int, "7") == 7


# -- device keys ----------------------------------------------------------------------------

def test_a_paired_device_key_signs_in_and_a_users_line_still_does(tmp_path, door_config):
    assert museum_command(tmp_path, door_config, "init").status == 0
    done = museum_command(tmp_path, door_config, "add-device", "door-north", "--role", "gate")
    assert done.status == 0, done.err
    [code] = re.findall(r"/scan#pair=([A-Za-z0-9_-]{22})$", done.out, re.MULTILINE)
    assert museum_config.parse_config(door_config) == museum_config.parse_config(
        (tmp_path / "museum.ini").read_text())  # the config file is unchanged

    # A device key declared in [users], as before the database kept devices, still signs in.
    west_key = museum_credentials.new_device_key()
    west_line = f"door-west = gate:{museum_credentials.hash_key(west_key)}\n"
    with running_server(tmp_path, door_config + west_line) as server:
        status, _, paired = server.request("POST", "/v1.1/devices/pair", {"code": code})
        assert status == 200, paired
        key = json.loads(paired)["key"]
        assert "key$" not in server.log()  # the digest stays in the database
        for name, device_key in [("door-north", key), ("door-west", west_key)]:
            for number in range(30):  # wrong keys lock nothing out: a key cannot be guessed
                assert server.request("GET", SUMMARY, headers=basic(name, f"x{number}"),
                                      source="127.0.0.9")[0] == 401
            device = basic(name, device_key)
            assert server.request("GET", SUMMARY, headers=device, source="127.0.0.9")[0] == 200
            assert server.request("POST", ADMISSIONS, {
                "confirmationCode": "ticket-general-abcdef-12345"},
                                  headers=device)[0] == 404
            assert server.request("DELETE", f"{ADMISSIONS}/{UNKNOWN_ID}",
                                  headers=device)[0] == 404
    assert checks_logged(server) == []  # no password check for a key, right or wrong


@pytest.mark.parametrize("name", ["", "a:b", "door north", ".door", "d" * 65])
def test_add_device_refuses_a_name_that_cannot_be_a_user(tmp_path, door_config, name):
    done = museum_command(tmp_path, door_config, "add-device", name, "--role", "gate")
    assert done.status == 2 and "device name" in done.err and not done.out


def test_a_key_digest_checks_its_key_only():
    key = museum_credentials.new_device_key()
    digest = museum_credentials.hash_key(key)
    assert museum_credentials.check_password(key, digest)
    assert not museum_credentials.check_password(key[:-1], digest)
    assert not museum_credentials.is_weak(digest)
    assert digest != museum_credentials.hash_key(key)  # salted


# -- guessed ticket codes -----------------------------------------------------------------

def test_more_than_30_unknown_codes_in_a_minute_refuse_that_user_for_a_minute(tmp_path,
                                                                            door_config):
    with running_server(tmp_path, door_config) as server:
        def admit(name, code):
            return server.request("POST", ADMISSIONS, {"confirmationCode": code},
                                  headers=login(name))

        for number in range(30):
            assert admit("gate", f"ticket-general-{number:06x}-00000")[0] == 404
        status, headers, _ = admit("gate", "ticket-general-ffffff-00031")
        assert status == 429 and 0 < int(headers["Retry-After"]) <= 60
        assert admit("gate", "ticket-general-ffffff-00032")[0] == 429
        assert admit("gate2", "ticket-general-ffffff-00033")[0] == 404  # another user goes on
        assert server.request("GET", SUMMARY, headers=login("gate"))[0] == 200
        log = server.log()
    [warning] = [line for line in log.splitlines() if "admissions refused" in line]
    assert " WARNING " in warning and "to gate " in warning and "30" in warning
    assert "ticket-general" not in log


# -- deny by default: every route, method and role ---------------------------------------------

PUBLIC = "public"
STAFF_DEVICE = "staff device"  # a door's or desk's sign-in: a gate or a desk, never others
ID = UNKNOWN_ID
# Per route: the role each method needs, or PUBLIC. A method not listed is refused: 405 to
# a signed-in user (401 first without credentials), 405 to anyone on a public route.
ROLE_TABLE = {
    "/healthz": {"GET": PUBLIC, "HEAD": PUBLIC, "OPTIONS": PUBLIC},
    "/v1.1/openapi.json": {"GET": PUBLIC, "HEAD": PUBLIC, "OPTIONS": PUBLIC},
    "/v1.1/museum-hours": {"GET": "visitor", "HEAD": "visitor"},
    "/v1.1/museum-hours/{date}": {"PUT": "admin", "DELETE": "admin"},
    "/v1.1/special-events": {"GET": "visitor", "HEAD": "visitor", "POST": "admin"},
    "/v1.1/special-events/{event_id}": {"GET": "visitor", "HEAD": "visitor", "PATCH": "admin",
                                        "DELETE": "admin"},
    "/v1.1/tickets": {"POST": "visitor", "GET": "admin", "HEAD": "admin"},
    "/v1.1/tickets/{ticket_id}": {"GET": "gate", "HEAD": "gate", "DELETE": "desk"},
    "/v1.1/availability": {"GET": "visitor", "HEAD": "visitor"},
    "/v1.1/reports/sales": {"GET": "desk", "HEAD": "desk"},
    "/v1.1/reports/sales/chart": {"GET": "desk", "HEAD": "desk"},
    "/v1.1/reports/arrivals/chart": {"GET": "desk", "HEAD": "desk"},
    "/v1.1/tickets/{ticket_id}/qr": {"GET": "visitor", "HEAD": "visitor"},
    "/v1.1/admissions": {"POST": "gate"},
    "/v1.1/admissions/list": {"GET": "gate", "HEAD": "gate"},
    "/v1.1/admissions/summary": {"GET": "gate", "HEAD": "gate"},
    "/v1.1/admissions/lookup": {"POST": "gate"},
    "/v1.1/admissions/{ticket_id}": {"GET": "gate", "HEAD": "gate", "DELETE": "gate"},
    "/v1.1/devices/pair": {"POST": PUBLIC, "OPTIONS": PUBLIC},
    "/v1.1/devices/session": {"POST": STAFF_DEVICE, "DELETE": STAFF_DEVICE},
    "/v1.1/price-categories": {"GET": "visitor", "HEAD": "visitor"},
    # Orders admit every role; which order an account finds, the resource decides.
    "/v1.1/orders": {"POST": "visitor"},
    "/v1.1/orders/{order_id}": {"GET": "visitor", "HEAD": "visitor", "DELETE": "visitor"},
    "/v1.1/orders/{order_id}/confirm": {"POST": "visitor"},
    "/v1.1/orders/{order_id}/qr": {"GET": "visitor", "HEAD": "visitor"},
    "/v1.1/orders/{order_id}/payment": {"POST": "desk"},
    "/v1.1/museum": {"GET": "visitor", "HEAD": "visitor"},
    "/v1.1/tickets/{ticket_id}/resend": {"POST": "visitor"},
    "/v1.1/orders/{order_id}/resend": {"POST": "visitor"},
    "/v1.1/outbox": {"GET": "admin", "HEAD": "admin"},
    "/v1.1/outbox/{message_id}": {"DELETE": "admin"},
    "/v1.1/outbox/{message_id}/retry": {"POST": "admin"},
    "/scan": {"GET": PUBLIC, "HEAD": PUBLIC, "OPTIONS": PUBLIC},
    "/scan/scan.js": {"GET": PUBLIC, "HEAD": PUBLIC, "OPTIONS": PUBLIC},
    "/scan/scan.css": {"GET": PUBLIC, "HEAD": PUBLIC, "OPTIONS": PUBLIC},
    "/scan/offline.js": {"GET": PUBLIC, "HEAD": PUBLIC, "OPTIONS": PUBLIC},
    "/scan/sw.js": {"GET": PUBLIC, "HEAD": PUBLIC, "OPTIONS": PUBLIC},
    "/t/{token}": {"GET": PUBLIC, "HEAD": PUBLIC, "OPTIONS": PUBLIC},
    "/t/ticket.css": {"GET": PUBLIC, "HEAD": PUBLIC, "OPTIONS": PUBLIC},
    "/t/ticket.js": {"GET": PUBLIC, "HEAD": PUBLIC, "OPTIONS": PUBLIC},
    "/t/ticket-sw.js": {"GET": PUBLIC, "HEAD": PUBLIC, "OPTIONS": PUBLIC},
    "/shop": {"GET": PUBLIC, "HEAD": PUBLIC, "OPTIONS": PUBLIC},
    "/shop/shop.js": {"GET": PUBLIC, "HEAD": PUBLIC, "OPTIONS": PUBLIC},
    "/shop/shop.css": {"GET": PUBLIC, "HEAD": PUBLIC, "OPTIONS": PUBLIC},
    "/shop/qr.js": {"GET": PUBLIC, "HEAD": PUBLIC, "OPTIONS": PUBLIC},
    "/desk": {"GET": PUBLIC, "HEAD": PUBLIC, "OPTIONS": PUBLIC},
    "/desk/desk.js": {"GET": PUBLIC, "HEAD": PUBLIC, "OPTIONS": PUBLIC},
    "/desk/desk.css": {"GET": PUBLIC, "HEAD": PUBLIC, "OPTIONS": PUBLIC},
}
METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
ROLES = [None, *museum_vocabulary.ROLES]


def expected_status(route, method, role):
    """401, 403, 405, or "served": any other answer of the resource itself (2xx, 400,
    404, ...)."""
    row = ROLE_TABLE[route]
    needed = row.get(method)
    if needed == PUBLIC:
        return "served"
    if PUBLIC in row.values():
        return 405
    if role is None:
        return 401
    if needed is None:
        return 405
    if needed == STAFF_DEVICE:
        return "served" if role in ("gate", "desk") else 403
    ranks = museum_vocabulary.ROLES
    return 403 if ranks.index(role) < ranks.index(needed) else "served"


def test_the_role_table_names_every_route(config, store):
    app = museum.create_app(config, store=store)
    assert {route.path for route in falcon.inspect.inspect_app(app).routes} == set(ROLE_TABLE)


def test_every_route_method_and_role_answers_as_the_table_says(tmp_path, door_config):
    answers = {}
    with running_server(tmp_path, door_config) as server:
        for route in ROLE_TABLE:
            path = re.sub(r"\{[^}]*\}", ID, route)
            for method in METHODS:
                for role in ROLES:
                    body = {} if method in ("POST", "PATCH", "PUT") else None
                    headers = login(role) if role else {}
                    answers[route, method, role] = server.request(method, path, body,
                                                                  headers)[0]
    wrong = {}
    for (route, method, role), status in answers.items():
        expected = expected_status(route, method, role)
        served = status < 500 and status not in (401, 403, 405, 429)
        if not (served if expected == "served" else status == expected):
            wrong[route, method, role] = (status, expected)
    assert wrong == {}

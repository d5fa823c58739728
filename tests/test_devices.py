"""Devices added and revoked while the service runs: `museum add-device` and `museum
revoke-device` write the database, and every instance on it accepts a new key or refuses a
revoked one from its next request, with no restart and no other request refused meanwhile.
And the same password sent many times at once is checked once, every request answered."""

import json
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import pytest

import museum_auth
import museum_credentials
from commands import museum_command
from conftest import GATE, assert_problem, basic, quick_hash
from serving import running_instances, running_server, wait_until

SUMMARY = "/v1.1/admissions/summary"
HOURS = "/v1.1/museum-hours"
PAIRING_LINK = re.compile(r"/scan#pair=([A-Za-z0-9_-]+)$", re.MULTILINE)


def device_key(name, role="gate"):
    """A new key and its [users] line."""
    key = museum_credentials.new_device_key()
    return key, f"{name} = {role}:{museum_credentials.hash_key(key)}\n"


# -- through the WSGI app -------------------------------------------------------------------

def stored_device(store, name, role="gate"):
    """A device added to `store` as `museum add-device` adds it; its Authorization header."""
    key = museum_credentials.new_device_key()
    store.add_device(name, role, museum_credentials.hash_key(key), "2026-11-22T09:00:00Z")
    return basic(name, key)


def test_a_stored_device_signs_in_with_its_role_and_not_once_revoked(client, store):
    door = stored_device(store, "door-north")
    shop = stored_device(store, "web-shop", "visitor")
    client.get(SUMMARY, headers=door, status=200)
    client.get(HOURS, headers=shop, status=200)
    assert_problem(client.get(SUMMARY, headers=shop, status=403), 403)
    store.revoke_device("door-north", "2026-11-22T10:00:00Z")
    # Verified a moment ago, refused now: a stored device's sign-in is never remembered.
    assert_problem(client.get(SUMMARY, headers=door, status=401), 401)
    client.get(HOURS, headers=shop, status=200)


@pytest.mark.parametrize("case", ["wrong key", "another device's key", "revoked"])
def test_a_stored_device_with_a_wrong_or_revoked_key_is_the_usual_401(client, store, case):
    door = stored_device(store, "door-north")
    other_key = museum_auth.basic_credentials(stored_device(store, "door-south")
                                              ["Authorization"])[1]
    headers = {"wrong key": basic("door-north", "x" * 32),
               "another device's key": basic("door-north", other_key), "revoked": door}[case]
    if case == "revoked":
        store.revoke_device("door-north", "2026-11-22T10:00:00Z")
    res = client.get(SUMMARY, headers=headers, status=401)
    assert assert_problem(res, 401)["detail"] == "Valid credentials are required."


def test_a_name_of_users_is_never_read_from_the_database(client, store):
    stored_device(store, "gate")  # as if written behind add-device's back
    client.get(SUMMARY, headers=GATE, status=200)  # [users] gate, with its password


# -- add-device and revoke-device on running services ----------------------------------------

@pytest.fixture
def devices_config():
    """A gate and an admin with cheap passwords, and a device key of [users] (as before
    devices were kept in the database); `config.west` is that device's header."""
    key, line = device_key("door-west")
    text = ("[museum]\ntimezone = UTC\n[log]\nflush = 0\n[users]\n"
            f"admin = admin:{quick_hash('admin')}\ngate = gate:{quick_hash('gate')}\n{line}")
    return text, basic("door-west", key)


class Watch:
    """Requests of devices that must go on being served, sent over and over from a thread
    until the block ends: every status they got, per device and server."""

    def __init__(self, servers, devices):
        self.servers, self.devices = servers, devices
        self.statuses = {}
        self.stopping = threading.Event()

    def run(self):
        while not self.stopping.is_set():
            for server_number, server in enumerate(self.servers):
                for name, headers in self.devices.items():
                    status = server.request("GET", SUMMARY, headers=headers)[0]
                    self.statuses.setdefault((name, server_number), []).append(status)


@contextmanager
def watching(servers, devices):
    watch = Watch(servers, devices)
    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(watch.run)
        try:
            yield watch
        finally:
            watch.stopping.set()
            running.result()


def paired(server, name, added):
    """The Authorization header of the device `museum add-device` said `added` of, paired
    through `server` as the scanner page pairs: with the key made then."""
    status, _, answer = server.request("POST", "/v1.1/devices/pair", {
        "code": PAIRING_LINK.search(added)[1]})
    assert status == 200, answer
    return basic(name, json.loads(answer)["key"])


def add_and_revoke_while_others_are_served(directory, config_text, db, servers, others):
    """Add a device with `museum add-device` while `servers` run, pair it, see every one of
    them accept its key within 5 s, revoke it, see each refuse it within 5 s; meanwhile
    `others` (devices' headers by name) are answered 200 every time."""
    for server in servers:
        for headers in others.values():
            assert server.request("GET", SUMMARY, headers=headers)[0] == 200
    with watching(servers, others) as watch:
        added = museum_command(directory, config_text, "add-device", "door-north", "--role",
                               "gate", "--db", db)
        assert added.status == 0, added.err
        north = paired(servers[0], "door-north", added.out)
        for server in servers:
            wait_until(lambda: server.request("GET", SUMMARY, headers=north)[0] == 200, 5,
                       what="the new device let in")
        revoked = museum_command(directory, config_text, "revoke-device", "door-north",
                                 "--db", db)
        assert revoked.status == 0, revoked.err
        for server in servers:
            wait_until(lambda: server.request("GET", SUMMARY, headers=north)[0] == 401, 5,
                       what="the revoked device refused")
        wait_until(lambda: all(len(got) >= 3 for got in watch.statuses.values()), 30,
                   what="the other devices' requests")
    assert len(watch.statuses) == len(servers) * len(others)
    assert {key: set(got) for key, got in watch.statuses.items()} == {
        key: {200} for key in watch.statuses}


def test_a_device_added_and_revoked_on_a_running_service(tmp_path, devices_config):
    config_text, west = devices_config
    db = str(tmp_path / "museum.sqlite3")
    (tmp_path / "ops").mkdir()
    assert museum_command(tmp_path / "ops", config_text, "init", "--db", db).status == 0
    added = museum_command(tmp_path / "ops", config_text, "add-device", "door-east", "--role",
                           "gate", "--db", db)
    assert added.status == 0, added.err
    with running_server(tmp_path, config_text, db=db) as server:
        east = paired(server, "door-east", added.out)
        add_and_revoke_while_others_are_served(
            tmp_path / "ops", config_text, db, [server],
            {"door-east": east, "door-west": west, "gate": basic("gate", "gate")})


def test_a_device_added_and_revoked_on_two_instances_over_postgres(tmp_path, devices_config,
                                                                  postgres_url):
    config_text, west = devices_config
    (tmp_path / "ops").mkdir()
    with running_instances(tmp_path, config_text, postgres_url, 2) as servers:
        added = museum_command(tmp_path / "ops", config_text, "add-device", "door-east",
                               "--role", "gate", "--db", postgres_url)
        assert added.status == 0, added.err
        east = paired(servers[1], "door-east", added.out)
        add_and_revoke_while_others_are_served(
            tmp_path / "ops", config_text, postgres_url, servers,
            {"door-east": east, "door-west": west})


def test_add_device_refuses_a_name_of_users_or_one_in_use(tmp_path, devices_config):
    config_text, _ = devices_config
    db = str(tmp_path / "museum.sqlite3")
    assert museum_command(tmp_path, config_text, "init", "--db", db).status == 0
    for name in ("gate", "door-west"):
        done = museum_command(tmp_path, config_text, "add-device", name, "--role", "gate",
                              "--db", db)
        assert done.status == 2 and "[users]" in done.err and not done.out
    assert museum_command(tmp_path, config_text, "add-device", "door-north", "--role", "gate",
                          "--db", db).status == 0
    again = museum_command(tmp_path, config_text, "add-device", "door-north", "--role",
                           "visitor", "--db", db)
    assert again.status == 2 and "revoke-device door-north" in again.err and not again.out


def test_revoke_device_says_what_it_cannot_revoke(tmp_path, devices_config):
    config_text, _ = devices_config
    db = str(tmp_path / "museum.sqlite3")
    assert museum_command(tmp_path, config_text, "init", "--db", db).status == 0
    unknown = museum_command(tmp_path, config_text, "revoke-device", "door-north", "--db", db)
    assert unknown.status == 2 and "no device named door-north" in unknown.err
    configured = museum_command(tmp_path, config_text, "revoke-device", "door-west", "--db", db)
    assert configured.status == 2 and "remove its line there" in configured.err


def test_devices_lists_names_roles_and_times_never_a_key(tmp_path, devices_config):
    config_text, _ = devices_config
    db = str(tmp_path / "museum.sqlite3")
    assert museum_command(tmp_path, config_text, "init", "--db", db).status == 0
    for name, role in [("web-shop", "visitor"), ("door-north", "gate")]:
        museum_command(tmp_path, config_text, "add-device", name, "--role", role, "--db", db)
    museum_command(tmp_path, config_text, "revoke-device", "door-north", "--db", db)
    listed = museum_command(tmp_path, config_text, "devices", "--db", db)
    assert listed.status == 0, listed.err
    rows = [line.split() for line in listed.out.splitlines()]
    assert rows[0] == ["NAME", "ROLE", "ADDED", "REVOKED"]
    assert [row[:2] for row in rows[1:]] == [["door-north", "gate"], ["web-shop", "visitor"],
                                             ["door-west", "gate"]]
    stamp = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
    assert stamp.fullmatch(rows[1][3]) and rows[2][3] == "-" and rows[3][2] == "[users]"
    assert "key$" not in listed.out


# -- the same password at once ----------------------------------------------------------------

def test_32_first_logins_at_once_with_one_password_are_all_answered(tmp_path):
    """At the service's own hash strength a check takes about a second: every request of a
    shop's pool starting together waits for that one check rather than being refused."""
    config_text = ("[museum]\ntimezone = UTC\n[users]\n"
                   f"shop = visitor:{museum_credentials.hash_password('shop password')}\n")
    shop = basic("shop", "shop password")
    with running_server(tmp_path, config_text) as server:
        start = threading.Barrier(32)

        def first_login(_):
            start.wait()
            return server.request("GET", HOURS, headers=shop, timeout=60)[0]

        with ThreadPoolExecutor(32) as pool:
            statuses = list(pool.map(first_login, range(32)))
        log = server.log()
    assert statuses == [200] * 32
    assert "wrong password" not in log


def test_a_correct_and_a_wrong_password_at_once_each_get_their_own_answer(tmp_path):
    config_text = f"[museum]\ntimezone = UTC\n[users]\nshop = visitor:{quick_hash('right')}\n"
    with running_server(tmp_path, config_text) as server:
        start = threading.Barrier(8)

        def login(number):
            start.wait()
            password = "right" if number % 2 else "wrong"
            for _ in range(30):  # one check at a time: the others retry as they are told
                status, headers, _ = server.request("GET", HOURS,
                                                    headers=basic("shop", password))
                if status != 429:
                    return status
                time.sleep(int(headers["Retry-After"]))
            return status

        with ThreadPoolExecutor(8) as pool:
            statuses = list(pool.map(login, range(8)))
    assert statuses == [401, 200] * 4


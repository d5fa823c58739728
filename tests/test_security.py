"""Security properties: the cost of a failed login, the credential cache, brute force, safe
headers, logs without secrets, the trusted reverse proxy, and the rotations docs/security.md
describes. The real-server tests run `museum serve` and connect from two loopback addresses
(127.0.0.1 and 127.0.0.2) to act as two clients.
"""

import hashlib
import json
import re
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
import webtest

import museum
import museum_config
import museum_credentials
import museum_door
import museum_services
from conftest import ADMIN, ENTRY_TIMES, GATE, NOW, VISITOR, basic, quick_hash
from serving import problem, running_server, wait_until
from ticketing import EVENTS, TICKETS, event_body, open_days, ticket_body

ROOT = Path(__file__).resolve().parent.parent
HOURS = "/v1.1/museum-hours"
CLIENT, OTHER_CLIENT = "127.0.0.1", "127.0.0.2"
CLERK = basic("clerk", "clerk")  # a visitor not logged in before, where a test adds it


# -- the cost of a failed login ------------------------------------------------------------

def test_a_wrong_password_and_an_unknown_user_cost_the_same_one_hash(make_client, monkeypatch):
    """An unknown name pays one scrypt at the cost of the real names' hashes, as a real name
    with a wrong password does. Were the hash skipped for unknown users, they would answer
    about a hundred times faster and tell which names exist. (benchmarks/ time the two.)"""
    password_hash = museum_credentials.hash_password("admin-pass", n=2**14)
    client = make_client(museum.parse_config(f"[users]\nadmin = admin:{password_hash}\n"))
    costs = []  # (N, r, p) of every scrypt computed
    scrypt = hashlib.scrypt

    def counted(password, **parameters):
        costs.append((parameters["n"], parameters["r"], parameters["p"]))
        return scrypt(password, **parameters)

    monkeypatch.setattr(hashlib, "scrypt", counted)
    paid = {}
    for kind, credentials in [("wrong password", basic("admin", "guess")),
                              ("unknown user", basic("nobody", "guess"))]:
        costs.clear()
        client.get(HOURS, headers=credentials, status=401)
        paid[kind] = list(costs)
    assert paid == {"wrong password": [(2**14, 8, 1)], "unknown user": [(2**14, 8, 1)]}


def test_a_changed_password_stops_working_after_a_restart(tmp_path, password_hashes,
                                                          config_text):
    """The verified-credential cache lives in the process: a restart on a new config forgets
    the old password even though it was verified (and cached) before."""
    with running_server(tmp_path, config_text) as server:
        for _ in range(2):  # the second answer comes from the cache
            assert server.request("GET", HOURS, headers=ADMIN)[0] == 200
    changed = config_text.replace(password_hashes["admin"], quick_hash("rotated"))
    with running_server(tmp_path, changed) as server:
        status, headers, data = server.request("GET", HOURS, headers=ADMIN)
        assert status == 401
        problem(status, headers, data)
        assert server.request("GET", HOURS, headers=basic("admin", "rotated"))[0] == 200


def test_a_changed_password_stops_working_when_the_app_is_rebuilt(
        make_client, config_text, password_hashes):
    """The same for an app rebuilt from a reloaded config in a running process."""
    before = make_client(museum.parse_config(config_text))
    before.get(HOURS, headers=ADMIN, status=200)
    before.get(HOURS, headers=ADMIN, status=200)
    changed = config_text.replace(password_hashes["admin"], quick_hash("rotated"))
    after = make_client(museum.parse_config(changed))
    after.get(HOURS, headers=ADMIN, status=401)
    before.get(HOURS, headers=ADMIN, status=200)  # the old app keeps its own config


# -- brute force ---------------------------------------------------------------------------

@pytest.mark.slow
def test_ten_failures_lock_one_address_out_with_429_and_others_log_in(tmp_path, config_text):
    """Default threshold and window (10 failures in 60 s); the lock-out shortened to 3 s so
    the test also sees it end."""
    with running_server(tmp_path, config_text + "[auth]\nlockout = 3\n") as server:
        for number in range(10):
            status, _, _ = server.request("GET", HOURS, headers=basic("admin", f"guess-{number}"),
                                          source=OTHER_CLIENT)
            assert status == 401, number
        status, headers, data = server.request("GET", HOURS, headers=ADMIN,
                                               source=OTHER_CLIENT)
        assert status == 429, "even the right password waits out the lock-out"
        problem(status, headers, data)
        assert 1 <= int(headers["Retry-After"]) <= 3
        # Another address is unaffected, both when it logs in and when it fails once.
        assert server.request("GET", HOURS, headers=VISITOR, source=CLIENT)[0] == 200
        assert server.request("GET", HOURS, headers=basic("visitor", "typo"),
                              source=CLIENT)[0] == 401
        assert server.request("GET", HOURS, headers=ADMIN, source=CLIENT)[0] == 200
        wait_until(lambda: server.request("GET", HOURS, headers=ADMIN,
                                          source=OTHER_CLIENT)[0] == 200, 10, 0.25,
                   "the end of the lock-out")
        log = server.log()
    assert log.count(f"{OTHER_CLIENT} GET {HOURS} 401") == 10
    assert f"{OTHER_CLIENT} GET {HOURS} 429" in log


# -- headers -------------------------------------------------------------------------------

def exchanges(server, days):
    """One request of every kind the API answers: (what, status, headers, body)."""
    status, _, data = server.request("POST", EVENTS, event_body(1, days[:2]), ADMIN)
    event_id = json.loads(data)["eventId"]
    status, headers, data = server.request("POST", TICKETS, ticket_body(1, days[0], event_id),
                                           VISITOR)
    qr = headers["Location"]
    etag = server.request("GET", qr, headers=VISITOR)[1]["Etag"]
    calls = [
        ("health", "GET", "/healthz", None, {}),
        ("openapi", "GET", "/v1.1/openapi.json", None, {}),
        ("hours", "GET", HOURS, None, VISITOR),
        ("listing", "GET", EVENTS, None, VISITOR),
        ("event", "GET", f"{EVENTS}/{event_id}", None, VISITOR),
        ("create", "POST", EVENTS, event_body(2, days[:1]), ADMIN),
        ("patch", "PATCH", f"{EVENTS}/{event_id}", {"price": 3}, ADMIN),
        ("ticket", "POST", TICKETS, ticket_body(2, days[1]), VISITOR),
        ("image", "GET", qr, None, VISITOR),
        ("not modified", "GET", qr, None, {**VISITOR, "If-None-Match": etag}),
        ("bad request", "GET", f"{EVENTS}?limit=0", None, VISITOR),
        ("unauthorized", "GET", HOURS, None, {}),
        ("forbidden", "DELETE", f"{EVENTS}/{event_id}", None, VISITOR),
        ("not found", "GET", "/nothing", None, VISITOR),
        ("wrong method", "PUT", HOURS, None, VISITOR),
        ("unsupported media", "POST", TICKETS, None,
         {**VISITOR, "Content-Type": "text/plain"}),
        ("cancel", "DELETE", f"{EVENTS}/{event_id}", None, ADMIN),
        ("gone", "GET", qr, None, VISITOR),
    ]
    answers = []
    for what, method, path, body, headers in calls:
        status, response_headers, data = server.request(method, path, body, headers)
        answers.append((what, status, response_headers, data))
    return answers


@pytest.mark.parametrize("ident", ["museum", "", "Acme Gallery"])
def test_every_answer_is_nosniff_json_is_no_store_and_server_says_only_the_ident(
        tmp_path, config_text, ident):
    days = open_days(config_text, 3)
    with running_server(tmp_path, config_text + f"[server]\nident = {ident}\n") as server:
        answers = exchanges(server, days)
        raw = server.exchange(b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 70000 + b"\r\n\r\n")
    statuses = {what: status for what, status, _, _ in answers}
    assert statuses == {
        "health": 200, "openapi": 200, "hours": 200, "listing": 200, "event": 200,
        "create": 201, "patch": 200, "ticket": 201, "image": 200, "not modified": 304,
        "bad request": 400, "unauthorized": 401, "forbidden": 403, "not found": 404,
        "wrong method": 405, "unsupported media": 415, "cancel": 204, "gone": 410}
    for what, status, headers, data in answers:
        assert headers.get("X-Content-Type-Options") == "nosniff", what
        if headers.get("Content-Type", "").endswith("json"):
            assert headers.get("Cache-Control") == "no-store", what
        assert headers.get("Server") == (ident or None), (what, headers)
        assert not {"X-Powered-By", "Via"} & set(headers), what
        assert not re.search(r"waitress|falcon|python|\d+\.\d+\.\d+", " ".join(
            f"{name}: {value}" for name, value in headers.items()
            if name not in ("Date", "Location", "ETag", "Link")), re.I), (what, headers)
    image = next(headers for what, _, headers, _ in answers if what == "image")
    assert image["Content-Type"] == "image/png"
    assert image["Cache-Control"] == "private, max-age=86400"
    # waitress's own answer to a malformed request: plain text, the ident only, nothing echoed.
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.0 431 ") and b"aaaa" not in raw and b"waitress" not in raw
    assert (f"Server: {ident}".encode() in head) == bool(ident)


# -- logs ----------------------------------------------------------------------------------

EMAIL, PHONE = "grace.hopper@navy.example.org", "+1 (202) 555-0173"
SECRETS = ["s3cret-guess", "admin-pass", "visitor-pass", EMAIL, "grace.hopper", PHONE,
           "555-0173", "2025550173", "InjectedLine", "forged.example.org"]


@pytest.mark.slow
def test_logs_never_hold_passwords_authorization_emails_or_phones(tmp_path, config_text):
    """Secrets sent everywhere a client can put them: credentials (right and wrong), bodies
    (accepted and refused), query strings, path segments, other headers. Then not one of them,
    nor the Authorization header in any form, is in the log; and no request forged a line."""
    days = open_days(config_text, 2)
    wrong = basic("admin", "s3cret-guess")
    digits = "2025550173"
    with running_server(tmp_path, config_text) as server:
        requests = [
            ("GET", HOURS, None, ADMIN),
            ("GET", HOURS, None, wrong),
            ("GET", HOURS, None, basic("grace.hopper", "s3cret-guess")),
            ("POST", TICKETS, {**ticket_body(1, days[0]), "email": EMAIL, "phone": PHONE},
             VISITOR),
            ("POST", TICKETS, {**ticket_body(2, days[0]), "email": EMAIL, "phone": "x" + PHONE},
             VISITOR),
            ("POST", TICKETS, {**ticket_body(3, days[0]), "email": EMAIL, "phone": PHONE},
             {**VISITOR, "Idempotency-Key": EMAIL}),
            ("POST", TICKETS, {"email": EMAIL, "phone": PHONE, "extra": EMAIL}, VISITOR),
            ("GET", f"{EVENTS}?email={EMAIL}&phone={digits}", None, VISITOR),
            ("GET", f"{EVENTS}/{EMAIL}", None, VISITOR),
            ("GET", f"{EVENTS}/{digits}", None, VISITOR),
            ("GET", f"{TICKETS}/%2B1%20(202)%20555-0173/qr", None, VISITOR),
            ("GET", f"/{EMAIL}/{digits}", None, VISITOR),
            ("GET", "/v1.1/x%0a2026-01-01%2000:00:00,000%20INFO%20museum.access:%20InjectedLine",
             None, VISITOR),
            ("GET", HOURS, None, {**ADMIN, "X-Forwarded-For": "forged.example.org",
                                  "User-Agent": EMAIL, "Referer": f"https://x/?{EMAIL}"}),
        ]
        for method, path, body, headers in requests:
            status = server.request(method, path, body, headers)[0]
            assert status < 500, (method, path, status)
        server.stop()
        log = server.log()
    assert log.count(" museum.access: ") == len(requests), log
    for line in log.splitlines():
        assert re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} [A-Z]+ ", line), line
    credentials = [ADMIN, VISITOR, wrong, basic("grace.hopper", "s3cret-guess")]
    for secret in SECRETS + [value for header in credentials for value in
                             (header["Authorization"], header["Authorization"].split()[1])]:
        assert secret not in log, secret
    for line in log.splitlines():
        assert not re.search(r"\d{7}", line.partition(" museum.access: ")[2]), line


# -- behind a TLS-terminating reverse proxy ------------------------------------------------

def security_md_proxy_config():
    """The `[server]` example of docs/security.md for a proxy over TCP, which this test runs as
    written."""
    text = (ROOT / "docs" / "security.md").read_text()
    return re.search(r"```ini\n(\[server\]\nhost = .*?)```", text, re.S).group(1)


@pytest.mark.slow
def test_proxy_headers_are_honoured_only_from_the_trusted_address(tmp_path, config_text):
    """docs/security.md's config trusts 127.0.0.1 as the proxy. Its X-Forwarded-* headers make the
    client address (logs, lock-out) and the public URLs (Link); the same headers from
    127.0.0.2 are dropped, so a direct client can neither hide nor frame another address."""
    config = config_text.replace("[users]\n", f"[users]\nclerk = visitor:{quick_hash('clerk')}\n")
    config += security_md_proxy_config()
    assert museum.parse_config(config)["server"]["trusted_proxy"] == CLIENT
    days = open_days(config_text, 2)
    forwarded = {"X-Forwarded-For": "198.51.100.1, 203.0.113.7",  # a client's own XFF first
                 "X-Forwarded-Proto": "https", "X-Forwarded-Host": "museum.example.org"}
    with running_server(tmp_path, config) as server:
        for number in range(2):
            assert server.request("POST", EVENTS, event_body(number, days), ADMIN)[0] == 201
        listing = f"{EVENTS}?limit=1"
        via_proxy = server.request("GET", listing, headers={**VISITOR, **forwarded},
                                   source=CLIENT)[1]
        direct = server.request("GET", listing, headers={**VISITOR, **forwarded},
                                source=OTHER_CLIENT)[1]
        assert via_proxy["Link"].startswith("<https://museum.example.org/v1.1/special-events?")
        assert direct["Link"].startswith(f"<http://127.0.0.1:{server.port}/v1.1/special-events?")

        # Ten failures of 203.0.113.7 behind the proxy lock out that client only (for a
        # name not verified before: verified credentials pass any lock-out) ...
        for number in range(10):
            assert server.request("GET", HOURS, headers={**basic("gate", f"guess-{number}"),
                                  **forwarded}, source=CLIENT)[0] == 401
        assert server.request("GET", HOURS, headers={**GATE, **forwarded},
                              source=CLIENT)[0] == 429
        # ... and a direct client cannot claim to be someone else, locked or not.
        for number in range(10):
            spoofed = {**basic("clerk", f"guess-{number}"), "X-Forwarded-For": f"192.0.2.{number}"}
            assert server.request("GET", HOURS, headers=spoofed, source=OTHER_CLIENT)[0] == 401
        assert server.request("GET", HOURS, headers={**CLERK, **forwarded},
                              source=OTHER_CLIENT)[0] == 429
        other_visitor = {**forwarded, "X-Forwarded-For": "203.0.113.8"}
        assert server.request("GET", HOURS, headers={**CLERK, **other_visitor},
                              source=CLIENT)[0] == 200
        assert server.request("GET", HOURS, headers={**GATE, **forwarded},
                              source=OTHER_CLIENT)[0] == 200
        log = server.log()
    assert f"203.0.113.7 GET {EVENTS} 200" in log and f"{OTHER_CLIENT} GET {EVENTS} 200" in log
    assert "198.51.100.1" not in log and "192.0.2." not in log


# -- the rotations docs/security.md describes ----------------------------------------------

def test_replacing_the_demo_passwords_leaves_no_demo_user(tmp_path):
    shipped = (ROOT / "museum.ini").read_text()
    assert sorted(museum_config.check_passwords(museum.parse_config(shipped), None)) == [
        "admin", "desk", "gate", "visitor"]
    rotated = re.sub(r"(?m)^(admin|desk|gate|visitor) = (\w+):\S+$",
                     lambda m: f"{m[1]} = {m[2]}:{quick_hash(m[1] + '-new')}", shipped)
    config = museum.parse_config(rotated)
    assert museum_config.check_passwords(config, None) == []
    assert museum_credentials.check_password("admin-new", config.users["admin"].password_hash)


def test_rotating_the_generated_qr_secret_makes_old_codes_read_as_forged(tmp_path, config,
                                                                          db_path, store):
    """docs/security.md: stop the service, delete the stored secret, start again."""
    client = webtest.TestApp(museum.create_app(config, store=store, clock=lambda: NOW))
    ticket = client.post_json(TICKETS, {"ticketType": "general", "ticketDate": "2026-11-24",
                                        "email": "ada@example.org"}, headers=VISITOR).json
    old_secret = museum_services.qr_secret(config, store)
    old_code = museum_door.qr_text(old_secret, ticket["ticketId"], ticket["confirmationCode"])
    store.close()
    with closing(sqlite3.connect(db_path)) as conn, conn:
        conn.execute("DELETE FROM settings WHERE name = 'qr_secret'")
    new_secret = museum_services.qr_secret(config, store)
    assert new_secret != old_secret and len(new_secret) == 64
    today = NOW.date().replace(day=24)
    assert museum_door.verify_ticket(old_code, new_secret, store, today, ENTRY_TIMES) == "forged"
    new_code = museum_door.qr_text(new_secret, ticket["ticketId"], ticket["confirmationCode"])
    assert museum_door.verify_ticket(new_code, new_secret, store, today, ENTRY_TIMES).startswith("valid")


def test_a_configured_qr_secret_wins_over_the_stored_one(config_text, store):
    secret = "rotated-2026-" + "0" * 24
    configured = museum.parse_config(config_text + f"[tickets]\nqr_secret = {secret}\n")
    assert museum_services.qr_secret(configured, store) == secret
    assert museum_services.qr_secret(museum.parse_config(config_text), store) != secret

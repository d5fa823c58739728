"""The scanner page when the network fails, in a real headless Chromium against a real
`museum serve` on sqlite: a lost answer is asked again under the scan's id and ends as one
admission shown green; with the service stopped, scans are decided from the day's list
(admitted offline, refused, or "Cannot check offline"), kept across a reload (the service
worker still shows the page) and sent once the service is back, none admitted twice; two
gates that were both offline and admitted one ticket see one admission and one double
entry, in the strip and in the counters; a scan made offline is still read as a scan first
(whatever window is open, through another keyboard layout); signing out sends the queue or
loses it only once confirmed, revokes the device and leaves no scan in the browser.

The network between a page and the service is a small loopback proxy in the test
(`Network`): it forwards every request, or drops the answers to admissions after the
service handled them, or is cut (every connection closed unanswered), or holds some
requests on their way until the test releases them. Nothing waits a fixed
time for the page: each test waits on what the page shows, with a deadline.
`MUSEUM_SCREENSHOTS=docs pytest tests/test_door_offline_page.py` rewrites the pictures of
docs/door.md.
"""

import json
import re
import socket
import socketserver
import threading
import time
from contextlib import contextmanager

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

import test_scan_page as scan_page
from conftest import ADMIN, basic
from serving import running_server, wait_until
import test_door_page as door_page
from test_door_page import SCREENS, fits_the_screen, outcome, strip_rows
from test_door_rush import no_window_open, scanner_types, through_layout
from test_scan_page import (GATE_AUTH, buy, call, chromium, config_with_users, counter_rows,
                            pairing_link, qr, scan, screenshot, set_screen, shown, today_at)

pytestmark = scan_page.pytestmark
# As the scanner page's tests, at the sizes of the door page's tests.
server, browser, screen = scan_page.server, scan_page.browser, door_page.screen
OFFLINE_LINES = ["General entry", "sent when online"]
CANNOT_CHECK = ("warn", "Cannot check offline", ["not in today's list"])
OUTAGE = 30  # s, as the outage at the entrance
ADMISSIONS = b"POST /v1.1/admissions "
# A well-formed QR text of a ticket the day's list does not hold (sold after it was kept).
NOT_IN_THE_LIST = {"ticketId": "5b0c1a3e-8f7d-4c2b-9a61-0d4e3f2a1b9c",
                   "confirmationCode": "ticket-general-abcdef-12345"}


@pytest.fixture(scope="module")
def door_config():
    """An admin, a visitor and a gate user; the gates (gate2, door-south) are paired."""
    return config_with_users({"admin": "admin", "visitor": "visitor", "gate": "gate"})


class Network:
    """A loopback proxy in front of `server`, one request per connection
    (`Connection: close`, so the browser never resends on a reused one). `lose_answers()`:
    admissions still reach the service, but their answers are dropped (the connection is
    closed unanswered); `cut()`: nothing gets through; `mend()`: everything does again.
    `hold(start)`: requests that start so wait on their way to the service until
    `release()`, and are then forwarded and answered (counted in `held` and `delivered`)."""

    def __init__(self, server):
        self.upstream = server.port
        self.database = server.database  # where a device is paired (pairing_link)
        self.mode = "up"
        self.lost = 0  # answers to admissions dropped so far
        self.holding = None  # the start of the requests held, or None
        self.released = threading.Event()
        self.held = self.delivered = 0
        self.listener = socketserver.ThreadingTCPServer(("127.0.0.1", 0), self._handler())
        self.listener.daemon_threads = True
        self.port = self.listener.server_address[1]
        threading.Thread(target=self.listener.serve_forever, daemon=True).start()

    def lose_answers(self):
        self.mode = "losing"

    def cut(self):
        self.mode = "cut"

    def mend(self):
        self.mode = "up"

    def hold(self, start):
        self.holding = start

    def release(self):
        self.released.set()

    def close(self):
        self.released.set()
        self.listener.shutdown()
        self.listener.server_close()

    def _handler(self):
        network = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self):
                network._relay(self.request)

        return Handler

    def _relay(self, client):
        request = read_request(client) if self.mode != "cut" else None
        if request is None:
            return
        held = self.holding is not None and request.startswith(self.holding)
        if held:
            self.held += 1
            self.released.wait()
        with socket.create_connection(("127.0.0.1", self.upstream), timeout=30) as upstream:
            upstream.sendall(request)
            answer = read_to_end(upstream)
        if self.mode == "losing" and request.startswith(ADMISSIONS):
            self.lost += 1  # handled by the service, never answered
            return
        client.sendall(answer)
        if held:
            self.delivered += 1


def read_request(client):
    """One HTTP request from `client` (head and Content-Length body), its Connection header
    made `close`; None if the client closed first."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = client.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    length = re.search(rb"(?im)^content-length: *(\d+)", head)
    while length and len(body) < int(length.group(1)):
        body += client.recv(65536)
    lines = [line for line in head.split(b"\r\n") if not line.lower().startswith(b"connection:")]
    return b"\r\n".join([*lines, b"Connection: close"]) + b"\r\n\r\n" + body


def read_to_end(connection):
    answer = b""
    while chunk := connection.recv(65536):
        answer += chunk
    return answer


@contextmanager
def network_to(server):
    network = Network(server)
    try:
        yield network
    finally:
        network.close()


def open_page_as(driver, origin, name="gate2"):
    """The page opened by `name`'s pairing link at `origin` (the service or a Network in
    front of it), once it keeps today's list and its service worker controls it."""
    driver.get(pairing_link(origin, name))
    WebDriverWait(driver, 15).until(lambda d: d.execute_script(
        "return Boolean(navigator.serviceWorker.controller)"
        f" && Boolean(localStorage.getItem('museum.scanner.list.{name}'))"))
    WebDriverWait(driver, 10).until(lambda d: counter_rows(d).get("General entry"))


def show_at(driver, size):
    """Show the page at one of SCREENS (by name), as the `screen` fixture does."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {**SCREENS[size], "deviceScaleFactor": 1})


def typed_part(receipt):
    """The code's random part, as a person types it from the ticket."""
    return receipt["confirmationCode"].split("-", 2)[2]


def waiting(driver):
    """What the page says beside its name about scans waiting for the service ("" when
    nothing waits and the service answers)."""
    return shown(driver, "offline-state") or ""


def admissions_of(server, receipt):
    """How many times the service admitted the ticket (its history's admissions)."""
    status, history = call(server, "GET", f"/v1.1/admissions/{receipt['ticketId']}", ADMIN)
    assert status == 200, history
    return [entry["action"] for entry in history["history"]].count("admitted")


def row_words(driver):
    return [words[1] for _, words in strip_rows(driver)]


def wait_for_rows(driver, words, timeout=30):
    """The strip's words (newest first) once they are `words`."""
    try:
        WebDriverWait(driver, timeout).until(lambda d: row_words(d) == words)
    except Exception:
        assert row_words(driver) == words
        raise


def test_lost_answers_end_as_one_admission_shown_green(server, browser):
    set_screen(browser, **scan_page.SMALL_PHONE)
    today = today_at(server).isoformat()
    first, second = buy(server, today), buy(server, today)
    with network_to(server) as network:
        open_page_as(browser, network)

        # The service admits, its answers are lost: the page asks again under the scan's
        # id, saying so, and is answered the original admission once answers come through.
        network.lose_answers()
        browser.switch_to.active_element.send_keys(qr(first) + Keys.ENTER)
        WebDriverWait(browser, 10, poll_frequency=0.05).until(
            lambda d: outcome(d) == ("busy", "Checking… (retrying)"))
        network.mend()
        WebDriverWait(browser, 10).until(lambda d: outcome(d)[1] != "Checking… (retrying)")
        assert outcome(browser) == ("good", "Admitted") and network.lost >= 1
        assert admissions_of(server, first) == 1

        # Lost for longer than the page waits (2 s): admitted offline from the list; the
        # queued scan goes with the same id, and its row shows the original admission.
        network.lose_answers()
        assert scan(browser, qr(second)) == ("good", "Admitted (offline)", OFFLINE_LINES)
        network.mend()
        wait_for_rows(browser, ["Admitted", "Admitted"])
        assert waiting(browser) == ""
        assert admissions_of(server, second) == 1
        status, summary = call(server, "GET", "/v1.1/admissions/summary", GATE_AUTH)
        assert summary["admitted"]["general"] == 2 and summary["doubleEntries"] == 0


def test_a_reload_during_an_outage_still_scans_from_the_list(server, browser, screen,
                                                            tmp_path, door_config):
    today = today_at(server).isoformat()
    ticket, typed, elsewhere = (buy(server, today) for _ in range(3))
    status, _ = call(server, "POST", "/v1.1/admissions", ADMIN, {"code": qr(elsewhere)})
    assert status == 201
    open_page_as(browser, server)
    port = server.port
    server.stop()

    browser.refresh()  # the service worker's copy of the page, still signed in
    WebDriverWait(browser, 10).until(lambda d: shown(d, "device") == "Signed in as gate2")
    assert scan(browser, qr(ticket)) == ("good", "Admitted (offline)", OFFLINE_LINES)
    assert fits_the_screen(browser)
    screenshot(browser, tmp_path, f"door-admitted-offline-{screen}.png")
    # Marked admitted in the list kept here: a second scan is refused as usual.
    assert scan(browser, qr(ticket))[:2] == ("bad", "Already admitted")
    assert scan(browser, typed_part(typed)) == ("good", "Admitted (offline)", OFFLINE_LINES)
    tone, headline, lines = scan(browser, qr(elsewhere))
    assert (tone, headline) == ("bad", "Already admitted") and lines[0].endswith("by admin")
    assert scan(browser, "ticket-general-000000-00000") == CANNOT_CHECK
    assert scan(browser, qr(NOT_IN_THE_LIST)) == CANNOT_CHECK
    assert waiting(browser) == "Offline · 2 to send"
    assert fits_the_screen(browser)
    screenshot(browser, tmp_path, f"door-cannot-check-offline-{screen}.png")

    browser.refresh()  # the queue is kept across reloads too
    WebDriverWait(browser, 10).until(lambda d: waiting(d).endswith("2 to send"))
    with running_server(tmp_path, door_config, "--port", str(port)) as back:
        WebDriverWait(browser, 30).until(lambda d: waiting(d) == "")
        rows = row_words(browser)
        assert rows.count("Admitted") == 2 and "Admitted (offline)" not in rows
        assert admissions_of(back, ticket) == 1 and admissions_of(back, typed) == 1


def test_a_scan_offline_is_still_read_as_a_scan_through_another_layout(server, browser):
    today = today_at(server).isoformat()
    ticket = buy(server, today)
    with network_to(server) as network:
        open_page_as(browser, network)
        network.cut()

        # Find open, the scanner set to the US layout on a German system: the burst is a
        # scan (the window closes, nothing lands in its fields), turned back into the QR text
        # it was, and only then decided from the list.
        browser.find_element(By.ID, "find").click()
        scanner_types(browser, through_layout(qr(ticket), "QWERTZ"))
        WebDriverWait(browser, 10).until(lambda d: outcome(d) == ("good", "Admitted (offline)"))
        assert no_window_open(browser)
        assert browser.find_element(By.ID, "find-email").get_attribute("value") == ""
        note = browser.find_element(By.CSS_SELECTOR, "#details p.note").text
        assert note.startswith("The scanner types with another keyboard layout (German")
        assert waiting(browser) == "Offline · 1 to send"

        network.mend()
        wait_for_rows(browser, ["Admitted"])
        assert waiting(browser) == ""
    assert admissions_of(server, ticket) == 1


@pytest.mark.slow
def test_twenty_scans_during_a_30_s_outage_are_synced_none_admitted_twice(
        server, browser, tmp_path, door_config):
    set_screen(browser, **scan_page.SMALL_PHONE)
    today = today_at(server).isoformat()
    tickets = [buy(server, today) for _ in range(20)]
    open_page_as(browser, server)
    port = server.port
    server.stop()
    stopped = time.monotonic()

    for number, ticket in enumerate(tickets):
        scanned = qr(ticket) if number % 2 else typed_part(ticket)
        assert scan(browser, scanned) == ("good", "Admitted (offline)", OFFLINE_LINES), number
        if number == 9:  # a reload halfway: the page, its list and its queue are kept
            browser.refresh()
            WebDriverWait(browser, 10).until(lambda d: waiting(d).endswith("10 to send"))
    assert scan(browser, qr(tickets[0]))[:2] == ("bad", "Already admitted")
    assert waiting(browser) == "Offline · 20 to send"
    # The outage goes on past the list's 30 s refresh: the page keeps its queue meanwhile.
    wait_until(lambda: waiting(browser) == "Offline · 20 to send"
               and time.monotonic() - stopped >= OUTAGE, OUTAGE + 30, interval=1,
               what="an outage of 30 s with every scan kept")

    with running_server(tmp_path, door_config, "--port", str(port)) as back:
        WebDriverWait(browser, 30).until(lambda d: waiting(d) == "")
        rows = row_words(browser)
        assert rows == ["Already admitted"] + ["Admitted"] * 19, rows  # the strip holds 20
        assert [admissions_of(back, ticket) for ticket in tickets] == [1] * 20
        status, summary = call(back, "GET", "/v1.1/admissions/summary", GATE_AUTH)
        assert summary["admitted"]["general"] == 20 and summary["doubleEntries"] == 0


@pytest.mark.slow
def test_two_offline_gates_admitting_one_ticket_report_one_double_entry(server, browser,
                                                                        tmp_path):
    today = today_at(server).isoformat()
    ticket = buy(server, today)
    show_at(browser, "1280")
    with network_to(server) as north_net, network_to(server) as south_net, \
            chromium(tmp_path / "south-profile") as south:
        set_screen(south, **scan_page.SMALL_PHONE)
        open_page_as(browser, north_net, "gate2")
        open_page_as(south, south_net, "door-south")
        north_net.cut()
        south_net.cut()
        for gate in (browser, south):
            assert scan(gate, qr(ticket)) == ("good", "Admitted (offline)", OFFLINE_LINES)

        north_net.mend()  # the north gate's admission reaches the service first
        WebDriverWait(browser, 30).until(lambda d: waiting(d) == "")
        wait_for_rows(browser, ["Admitted"])
        south_net.mend()
        WebDriverWait(south, 30).until(lambda d: waiting(d) == "")
        words = row_words(south)
        assert len(words) == 1 and re.fullmatch(
            r"Double entry: also admitted by gate2 at \d\d:\d\d", words[0]), words
        assert strip_rows(south)[0][0] == "warn"
        WebDriverWait(south, 10).until(lambda d: counter_rows(d).get("Double entries") == "1"
                                       and outcome(d) == ("idle", "Ready"))
        screenshot(south, tmp_path, "door-double-entry-360.png")
        show_at(south, "1280")
        screenshot(south, tmp_path, "door-double-entry-1280.png")

    assert admissions_of(server, ticket) == 1
    status, summary = call(server, "GET", "/v1.1/admissions/summary", GATE_AUTH)
    assert summary["admitted"]["general"] == 1 and summary["doubleEntries"] == 1


# -- signing out ------------------------------------------------------------------------------

def kept_in_browser(driver):
    """What the page's origin keeps: (localStorage as {key: value}, the names of its
    IndexedDB databases, the paths its service worker's caches hold)."""
    return driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        (async () => {
          const databases = await indexedDB.databases();
          const paths = [];
          for (const name of await caches.keys()) {
            const kept = await caches.open(name);
            paths.push(...(await kept.keys()).map((request) => new URL(request.url).pathname));
          }
          return [Object.fromEntries(Object.entries(localStorage)),
                  databases.map((database) => database.name), paths];
        })().then(done, (error) => done(String(error)));""")


def assert_nothing_of(tickets, driver):
    """The browser keeps nothing of `tickets` (ids, codes, QR texts) and no scan at all:
    only the scanner's settings, and the page's own files."""
    storage_kept, databases, paths = kept_in_browser(driver)
    text = " ".join([*storage_kept, *storage_kept.values(), *databases, *paths])
    for ticket in tickets:
        for part in (ticket["ticketId"], ticket["confirmationCode"], typed_part(ticket)):
            assert part not in text
    assert set(storage_kept) <= {"museum.scanner.settings"}, storage_kept
    assert databases == []
    assert set(paths) <= {"/scan", "/scan/scan.js", "/scan/scan.css", "/scan/offline.js"}


def sign_out(driver):
    driver.find_element(By.ID, "settings").click()
    driver.find_element(By.ID, "sign-out").click()


def test_signing_out_offline_loses_the_queue_only_once_confirmed_and_keeps_no_scan(
        server, browser, tmp_path):
    set_screen(browser, **scan_page.SMALL_PHONE)
    today = today_at(server).isoformat()
    online, offline = buy(server, today), buy(server, today)
    with network_to(server) as network:
        open_page_as(browser, network)
        assert scan(browser, qr(online))[:2] == ("good", "Admitted")
        network.cut()
        assert scan(browser, typed_part(offline)) == ("good", "Admitted (offline)",
                                                      OFFLINE_LINES)
        sign_out(browser)
        lose = browser.find_element(By.ID, "sign-out-anyway")
        WebDriverWait(browser, 15).until(lambda d: lose.is_displayed())
        assert shown(browser, "sign-out-status").startswith(
            "1 admission made offline has not reached the service")
        assert waiting(browser) == "Offline · 1 to send"  # nothing lost before the tap
        screenshot(browser, tmp_path, "scan-sign-out-unsent.png")

        lose.click()
        assert scan_page.sign_in_status(browser) == (
            "Signed out, but the service could not be told: have gate2 revoked (museum "
            "revoke-device gate2)")
        screenshot(browser, tmp_path, "scan-signed-out-offline.png")
        assert_nothing_of([online, offline], browser)
        network.mend()
    assert admissions_of(server, offline) == 0  # lost, as the attendant confirmed


def answers_seen(driver, path):
    """How many answers to requests of `path` the page has had (its resource timings), once
    the page's tasks queued until now have run."""
    return driver.execute_async_script("""
        const [path, done] = arguments;
        const count = () => performance.getEntriesByType("resource")
          .filter((entry) => new URL(entry.name).pathname === path).length;
        setTimeout(() => setTimeout(() => done(count()), 0), 0);""", path)


def test_signing_out_sends_the_queue_revokes_the_device_and_keeps_no_scan(server, browser):
    today = today_at(server).isoformat()
    ticket = buy(server, today)
    with network_to(server) as network:
        open_page_as(browser, network)
        key = json.loads(scan_page.stored_sign_in(browser))["key"]
        network.cut()
        assert scan(browser, qr(ticket)) == ("good", "Admitted (offline)", OFFLINE_LINES)
        # The counters' refresh that follows the queue's sending is held on its way until
        # the key is revoked: its 401 comes after the sign-out, which it must not reword.
        network.hold(b"GET /v1.1/admissions/summary ")
        network.mend()
        sign_out(browser)
        assert scan_page.sign_in_status(browser) == "Signed out. Sign in again to scan."
        wait_until(lambda: network.held >= 1, 10, what="the counters' refresh held")
        seen = answers_seen(browser, "/v1.1/admissions/summary")
        network.release()
        wait_until(lambda: network.delivered == network.held, 10,
                   what="the held requests answered (401: the key is revoked)")
        WebDriverWait(browser, 10).until(
            lambda d: answers_seen(d, "/v1.1/admissions/summary") == seen + network.held)
        assert shown(browser, "sign-in-status") == "Signed out. Sign in again to scan."
        assert_nothing_of([ticket], browser)
    assert admissions_of(server, ticket) == 1
    status, _ = call(server, "GET", "/v1.1/admissions/summary", basic("gate2", key))
    assert status == 401  # revoked

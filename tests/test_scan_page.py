"""The scanner page at the entrance (/scan) in a real headless Chromium against a real
`museum serve`: signing in by a pairing link or the page's own form and signing out, codes
typed as a barcode scanner in keyboard mode types them, the outcome and counters a gate
attendant sees, a 360 px phone without horizontal scrolling, and no Content-Security-Policy
violation.

No login box: headless Chromium holds a request whose 401 would make a browser ask for a
password until the script gives up, so a page that let the browser ask would show
"Offline" (or stay "Signing in…") where these tests expect the page's own words.

Needs Debian's `chromium` and `chromium-driver` (CI installs them); skipped without them,
failed without them under CI.
Screenshots go to tmp_path; `MUSEUM_SCREENSHOTS=docs pytest tests/test_scan_page.py`
rewrites those of docs/door.md.
"""

import json
import os
import re
import shutil
import sqlite3
from contextlib import closing, contextmanager
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

import museum_credentials
import museum_devices
import museum_door
import storage
from commands import museum_command
from a11y import SMALL_PHONE, assert_accessible, needs_axe, set_screen, unreachable_controls
from conftest import ADMIN, PASSWORDS, VISITOR, basic, needs, quick_hash
from museum_http import rfc3339
from serving import running_server
from ticketing import sell_order

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
pytestmark = needs(
    CHROMIUM.exists() and CHROMEDRIVER.exists(),
    "needs Debian's chromium and chromium-driver: apt-get install chromium chromium-driver")

CHROMIUM_FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync")
QR_SECRET = "scanner-page-test-secret-0123456789abcdef"
GATE_PASSWORD = PASSWORDS["gate"]
GATE_AUTH = basic("gate", GATE_PASSWORD)  # the gate user of [users]
SCANNER = "gate2"  # the device the pages' tests pair (museum add-device)
# The browser's zone, which is not the museum's (UTC): the page shows the museum's times.
BROWSER_ZONE = "Asia/Kolkata"
PHONE = {"width": 400, "height": 800}
EVENT_NAME = "Night at the Museum"


# [hours] lines: open 08:00-20:00 every day, so any day a test runs sells general tickets.
OPEN_EVERY_DAY = "".join(f"{day} = 08:00-20:00\n" for day in (
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"))


def user_lines(users):
    """[users] lines of `users` ({name: role}), each with its PASSWORDS entry or the gate's.
    The hashes are cheap: a revoked device's name is an unknown one, which pays a hash as
    costly as the configured ones, and the page decides a scan offline when no answer comes
    within 2 s."""
    return "".join(f"{name} = {role}:{quick_hash(PASSWORDS.get(name, GATE_PASSWORD))}\n"
                   for name, role in users.items())


def config_with_users(users):
    """UTC, open every day, a fixed QR key, and `users` (see user_lines)."""
    return ("[museum]\ntimezone = UTC\n"
            f"[tickets]\nqr_secret = {QR_SECRET}\n"
            f"[hours]\n{OPEN_EVERY_DAY}"
            f"[users]\n{user_lines(users)}")


@pytest.fixture(scope="module")
def door_config():
    """An admin, a visitor and a gate user."""
    return config_with_users({"admin": "admin", "visitor": "visitor", "gate": "gate"})


@pytest.fixture
def server(tmp_path, door_config):
    with running_server(tmp_path, door_config) as started:
        yield started


@pytest.fixture
def browser(tmp_path):
    """Headless Chromium in BROWSER_ZONE, at phone size, not signed in."""
    with chromium(tmp_path / "chromium-profile") as driver:
        yield driver


@contextmanager
def chromium(profile, screen=None):
    """Headless Chromium with its own `profile` directory (another device's browser), in
    BROWSER_ZONE, at phone size (or `screen`'s), not signed in; quit when the block ends."""
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # An explicit driver path: Selenium Manager then looks nothing up and downloads nothing.
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)),
                              options=options)
    try:
        driver.execute_cdp_cmd("Emulation.setTimezoneOverride", {"timezoneId": BROWSER_ZONE})
        # Still pictures for the screenshots: the page then skips its pop-in animation.
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {
            "features": [{"name": "prefers-reduced-motion", "value": "reduce"}]})
        set_screen(driver, **(screen or PHONE))
        yield driver
    finally:
        driver.quit()


def call(server, method, path, auth, body=None):
    status, _, data = server.request(method, path, body=body, headers=auth)
    return status, json.loads(data)


def buy(server, day, event_id=None):
    """A ticket bought through the API as a visitor: its receipt."""
    body = {"ticketType": "event" if event_id else "general", "ticketDate": day,
            "email": "ada@example.org"}
    if event_id:
        body["eventId"] = event_id
    status, receipt = call(server, "POST", "/v1.1/tickets", VISITOR, body)
    assert status == 201, receipt
    return receipt


def qr(receipt, secret=QR_SECRET):
    return museum_door.qr_text(secret, receipt["ticketId"], receipt["confirmationCode"])


def add_device(database, name, pairing=None):
    """The gate device `name` added to `database` as `museum add-device` adds it (one of
    that name in use is revoked first): with `pairing`, its code's (digest, expiry)."""
    store = storage.open_store(database, migrate=False)
    try:
        now = datetime.now(timezone.utc)
        key_digest = museum_credentials.hash_key(museum_credentials.new_device_key())
        try:
            store.add_device(name, "gate", key_digest, rfc3339(now), pairing)
        except storage.DeviceExists:
            store.revoke_device(name, rfc3339(now))
            store.add_device(name, "gate", key_digest, rfc3339(now), pairing)
    finally:
        store.close()


def pairing_link(origin, name=SCANNER):
    """The pairing link of a new gate device `name` of the service at `origin` (a server,
    or a Network in front of one): its one-time code in the fragment."""
    code, pairing = museum_devices.new_pairing(datetime.now(timezone.utc))
    add_device(origin.database, name, pairing)
    return f"http://127.0.0.1:{origin.port}/scan#pair={code}"


def revoke_device(server, name=SCANNER):
    """`museum revoke-device` of `name`, as it writes the database."""
    store = storage.open_store(server.database, migrate=False)
    try:
        store.revoke_device(name, rfc3339(datetime.now(timezone.utc)))
    finally:
        store.close()


def open_page(driver, server, userinfo=""):
    """The page opened by a new device's pairing link, once it is signed in and shows the
    counters."""
    driver.get(pairing_link(server).replace("//", f"//{userinfo}", 1))
    WebDriverWait(driver, 10).until(lambda d: counter_rows(d).get("General entry"))


def shown(driver, element_id):
    element = driver.find_element(By.ID, element_id)
    return element.text if element.is_displayed() else None


def sign_in_status(driver):
    """The sign-in form's message once the form is shown and done signing in."""
    def settled(d):
        text = shown(d, "sign-in-status")
        return text if text and text != "Signing in…" else None

    return WebDriverWait(driver, 10).until(settled)


def type_as_a_person(driver, text, pause=0.1):
    """Keys typed where the focus is, `pause` seconds apart: a person's pace, which the page
    tells from a scanner's."""
    chain = ActionChains(driver)
    for key in text:
        chain.send_keys(key).pause(pause)
    chain.perform()


def sign_in_with_form(driver, name, secret):
    for field_id, text in (("name", name), ("secret", secret + Keys.ENTER)):
        field = driver.find_element(By.ID, field_id)
        field.clear()
        field.click()
        type_as_a_person(driver, text)


def stored_sign_in(driver):
    return driver.execute_script("return localStorage.getItem('museum.scanner.signIn')")


def scan(driver, text):
    """Type `text` and Enter where the focus is, as a barcode scanner does; the outcome
    (body tone, headline, detail lines) once it is shown."""
    focused = driver.switch_to.active_element
    assert focused.get_attribute("id") == "code", "the code field lost the focus"
    focused.send_keys(text + Keys.ENTER)
    headline = driver.find_element(By.ID, "headline")
    # "Checking…", then "Checking… (retrying)" while a lost answer is asked again.
    WebDriverWait(driver, 15).until(lambda d: not headline.text.startswith("Checking…"))
    return (driver.find_element(By.TAG_NAME, "body").get_attribute("class"), headline.text,
            driver.find_element(By.ID, "details").text.splitlines())


def counter_rows(driver):
    """{row name: "admitted / sold"} as the counters show them."""
    rows = driver.find_elements(By.CSS_SELECTOR, "#counts tr")
    return {row.find_element(By.TAG_NAME, "th").text: row.find_element(By.TAG_NAME, "td").text
            for row in rows}


def wait_for_counters(driver, expected):
    try:
        WebDriverWait(driver, 10).until(lambda d: counter_rows(d) == expected)
    except TimeoutException:
        assert counter_rows(driver) == expected  # a diff of what the page shows instead
        raise


def screenshot(driver, tmp_path, name):
    directory = Path(os.environ.get("MUSEUM_SCREENSHOTS", tmp_path))
    driver.save_screenshot(str(directory / name))


def csp_violations(driver):
    """Content-Security-Policy messages in the browser's console since the last call."""
    return [entry["message"] for entry in driver.get_log("browser")
            if "Content Security Policy" in entry["message"]]


def today_at(server):
    status, summary = call(server, "GET", "/v1.1/admissions/summary", GATE_AUTH)
    assert status == 200
    return date.fromisoformat(summary["date"])


@needs_axe
def test_scanned_codes_show_each_outcome_and_move_the_counters(server, browser, tmp_path):
    today = today_at(server)
    status, event = call(server, "POST", "/v1.1/special-events", ADMIN,
                         {"name": EVENT_NAME, "location": "Great Hall", "price": 25,
                          "eventDescription": "Torchlit tour.", "dates": [today.isoformat()]})
    assert status == 201, event
    general = buy(server, today.isoformat())
    elsewhere = buy(server, today.isoformat())  # admitted by another gate (the admin)
    event_ticket = buy(server, today.isoformat(), event["eventId"])
    tomorrows = buy(server, (today + timedelta(days=1)).isoformat())

    open_page(browser, server)
    assert browser.find_element(By.ID, "day").text == f"Today, {today.isoformat()}"
    wait_for_counters(browser, {"General entry": "0 / 2", EVENT_NAME: "0 / 1"})
    assert re.fullmatch(r"\d\d:\d\d", shown(browser, "clock"))
    assert_accessible(browser, "/scan signed in")
    # The field takes the focus back from all but a button (a scanner types wherever the
    # focus is), and the buttons come before it: Shift+Tab reaches them.
    assert unreachable_controls(browser, backwards=True) == []

    assert scan(browser, qr(general)) == ("good", "Admitted",
                                          ["General entry", today.isoformat()])
    wait_for_counters(browser, {"General entry": "1 / 2", EVENT_NAME: "0 / 1"})
    screenshot(browser, tmp_path, "scan-admitted.png")
    assert_accessible(browser, "/scan after an admission")

    # Scanned again here at once (the visitor is still at the gate): no refusal.
    tone, headline, details = scan(browser, qr(general))
    assert (tone, headline, details[1:]) == ("warn", "Admitted here", ["General entry"])
    assert re.fullmatch(r"\d+ s ago", details[0])
    screenshot(browser, tmp_path, "scan-admitted-here.png")

    # Admitted at another gate: refused, at the museum's time (UTC), not the browser's.
    status, first = call(server, "POST", "/v1.1/admissions", ADMIN, {"code": qr(elsewhere)})
    assert status == 201
    admitted_at = datetime.fromisoformat(first["admittedAt"]).astimezone(ZoneInfo("UTC"))
    assert scan(browser, qr(elsewhere)) == ("bad", "Already admitted",
                                            [f"at {admitted_at:%H:%M} by admin", "General entry"])
    wait_for_counters(browser, {"General entry": "2 / 2", EVENT_NAME: "0 / 1"})
    screenshot(browser, tmp_path, "scan-already-admitted.png")
    assert_accessible(browser, "/scan after a refusal")

    # A confirmation code typed by hand, in capitals, admits the event ticket.
    assert scan(browser, event_ticket["confirmationCode"].upper()) == (
        "good", "Admitted", [f"Event: {EVENT_NAME}", today.isoformat()])
    wait_for_counters(browser, {"General entry": "2 / 2", EVENT_NAME: "1 / 1"})

    assert scan(browser, qr(general, secret="not-the-museums-key-" * 2))[:2] == ("bad", "Forged")
    assert scan(browser, qr(tomorrows)) == (
        "warn", "Wrong date",
        [f"early: ticket for {tomorrows['ticketDate']} (in 1 day)", "General entry"])
    assert scan(browser, "ticket-general-000000-00000")[:2] == ("bad", "Unknown")
    wait_for_counters(browser, {"General entry": "2 / 2", EVENT_NAME: "1 / 1"})
    assert csp_violations(browser) == []


def test_page_fits_a_phone_without_a_camera_api_and_says_when_the_server_is_gone(server,
                                                                                 browser):
    set_screen(browser, **SMALL_PHONE)
    # Opened as an old kiosk bookmark might be, with credentials in the address too.
    open_page(browser, server, userinfo=f"gate:{GATE_PASSWORD}@")
    assert scan(browser, "ticket-general-000000-00000")[:2] == ("bad", "Unknown")
    assert browser.execute_script(
        "return document.documentElement.scrollWidth <= window.innerWidth")
    headline_px = browser.execute_script(
        "return parseFloat(getComputedStyle(document.getElementById('headline')).fontSize)")
    assert headline_px >= 48

    # The Scan button shows only where the browser can read QR codes from the camera.
    camera_api = browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        if (!("BarcodeDetector" in window) || !navigator.mediaDevices) done(false);
        else BarcodeDetector.getSupportedFormats().then((f) => done(f.includes("qr_code")));""")
    button = browser.find_element(By.ID, "camera")
    WebDriverWait(browser, 5).until(lambda d: button.is_displayed() == camera_api)

    assert csp_violations(browser) == []
    # The check above can fail: an inline script is refused and logged as a violation.
    browser.execute_script("""
        const script = document.createElement("script");
        script.textContent = "document.title = 'inline'";
        document.head.append(script);""")
    assert browser.title != "inline" and csp_violations(browser)

    server.stop()
    assert scan(browser, "ticket-general-000000-00000") == (
        "warn", "Cannot check offline", ["not in today's list"])
    assert "stale" in browser.find_element(By.ID, "counters").get_attribute("class")


# -- signing in and out ----------------------------------------------------------------------

def history_cells(profile):
    """Every value of every table of Chromium's History database in `profile`, as text,
    read from a copy (a running Chromium holds a lock on the file)."""
    copy = profile.parent / "History-copy"
    shutil.copyfile(profile / "Default" / "History", copy)
    with closing(sqlite3.connect(copy)) as history:
        tables = [row[0] for row in history.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")]
        return [str(cell) for table in tables
                for row in history.execute(f'SELECT * FROM "{table}"') for cell in row]


def local_storage(driver):
    """{key: value} of the page's localStorage."""
    return driver.execute_script("return Object.fromEntries(Object.entries(localStorage))")


def test_a_pairing_link_signs_in_and_leaves_no_key_in_the_history(server, tmp_path):
    """The link's one-time code is in Chromium's History (a fragment is kept there whatever
    the page does), the key it fetched nowhere in it."""
    profile = tmp_path / "chromium-profile"
    link = pairing_link(server)
    with chromium(profile) as browser:
        set_screen(browser, **SMALL_PHONE)
        browser.get(link)
        WebDriverWait(browser, 10).until(lambda d: shown(d, "device") == "Signed in as gate2")
        assert browser.current_url == f"http://127.0.0.1:{server.port}/scan"
        kept = json.loads(stored_sign_in(browser))
        assert kept.keys() == {"name", "key"} and kept["name"] == "gate2"
        key = kept["key"]
        assert scan(browser, "ticket-general-000000-00000")[:2] == ("bad", "Unknown")
        # Opened again without the link, as after a restart of the phone: still signed in.
        browser.get(f"http://127.0.0.1:{server.port}/scan")
        WebDriverWait(browser, 10).until(lambda d: shown(d, "device") == "Signed in as gate2")
        assert key not in browser.page_source
        screenshot(browser, tmp_path, "scan-paired.png")
    # Quit: Chromium has written its History.
    cells = history_cells(profile)
    assert link in cells  # the visit is there, fragment and all: the check below can fail
    assert not [cell for cell in cells if key in cell]
    assert set(re.findall(r"#pair=([A-Za-z0-9_-]+)", " ".join(cells))) == {
        link.rpartition("#pair=")[2]}
    assert key not in server.log()
    status, used = call(server, "POST", "/v1.1/devices/pair", {},
                        {"code": link.rpartition("#pair=")[2]})
    assert (status, used["detail"]) == (410, museum_devices.SPENT_CODE["used"])


def test_a_pairing_link_pairs_once(server, browser, tmp_path):
    set_screen(browser, **SMALL_PHONE)
    link = pairing_link(server)
    browser.get(link)
    WebDriverWait(browser, 10).until(lambda d: shown(d, "device") == "Signed in as gate2")
    browser.execute_script("localStorage.clear()")
    browser.get(link)
    assert sign_in_status(browser) == museum_devices.SPENT_CODE["used"]
    assert browser.current_url == f"http://127.0.0.1:{server.port}/scan"
    screenshot(browser, tmp_path, "scan-pairing-used.png")
    browser.get(f"http://127.0.0.1:{server.port}/scan#pair=made-up-code")
    assert sign_in_status(browser) == museum_devices.UNKNOWN_CODE
    # A link of the kind older versions made, with a key in it, is refused and removed.
    browser.get(f"http://127.0.0.1:{server.port}/scan#device=gate2&key=secret")
    assert sign_in_status(browser).startswith("This link is of an older kind")
    assert browser.current_url == f"http://127.0.0.1:{server.port}/scan"
    assert stored_sign_in(browser) is None
    # A password an older page kept is erased at the next load.
    browser.execute_script("localStorage.setItem('museum.scanner.signIn', "
                           "JSON.stringify({name: 'gate', secret: arguments[0]}))", GATE_PASSWORD)
    browser.refresh()
    assert sign_in_status(browser).startswith("Open the pairing link")
    assert stored_sign_in(browser) is None


@needs_axe
def test_the_form_signs_a_gate_user_in_with_a_session_and_refuses_an_admin(
        server, browser, tmp_path, door_config):
    set_screen(browser, **SMALL_PHONE)
    (tmp_path / "ops").mkdir()
    browser.get(f"http://127.0.0.1:{server.port}/scan")
    assert sign_in_status(browser).startswith("Open the pairing link")
    screenshot(browser, tmp_path, "scan-sign-in.png")
    assert_accessible(browser, "/scan signed out")
    sign_in_with_form(browser, "gate", "not-the-password")
    message = sign_in_status(browser)
    assert message == "Wrong name, key or password: check them and try again"
    assert browser.find_element(By.ID, "secret").get_attribute("value") == ""
    assert "{" not in browser.find_element(By.TAG_NAME, "body").text
    screenshot(browser, tmp_path, "scan-wrong-password.png")
    assert_accessible(browser, "/scan after a wrong password")

    for name in ("admin", "visitor"):
        sign_in_with_form(browser, name, PASSWORDS[name])
        assert sign_in_status(browser) == ("Only a gate device or a gate user signs in here, "
                                           "not an admin or a visitor: nothing was kept")
        assert local_storage(browser) == {}
        assert browser.find_element(By.ID, "secret").get_attribute("value") == ""
    screenshot(browser, tmp_path, "scan-admin-refused.png")

    sign_in_with_form(browser, "gate", GATE_PASSWORD)
    WebDriverWait(browser, 10).until(
        lambda d: (shown(d, "device") or "").startswith("Signed in as gate-"))
    session = shown(browser, "device").removeprefix("Signed in as ")
    assert re.fullmatch(r"gate-\d{8}-\d{6}(-[0-9a-f]{4})?", session)
    assert json.loads(stored_sign_in(browser)).keys() == {"name", "key"}
    assert not [value for value in local_storage(browser).values() if GATE_PASSWORD in value]
    assert scan(browser, "ticket-general-000000-00000")[:2] == ("bad", "Unknown")
    assert browser.execute_script(
        "return document.documentElement.scrollWidth <= window.innerWidth")
    screenshot(browser, tmp_path, "scan-session.png")
    listed = museum_command(tmp_path / "ops", door_config, "devices",
                            "--db", server.database)
    assert re.search(rf"^{session} +gate +\S+ +-$", listed.out, re.MULTILINE), listed.out

    browser.find_element(By.ID, "settings").click()
    assert_accessible(browser, "/scan's settings")
    browser.find_element(By.ID, "sign-out").click()
    assert sign_in_status(browser) == "Signed out. Sign in again to scan."
    assert stored_sign_in(browser) is None and shown(browser, "scanner") is None
    listed = museum_command(tmp_path / "ops", door_config, "devices",
                            "--db", server.database)
    assert not re.search(rf"^{session} +gate +\S+ +-$", listed.out, re.MULTILINE), listed.out
    assert csp_violations(browser) == []


def test_a_locked_out_sign_in_says_how_long_to_wait(server, browser):
    for number in range(10):  # [auth] max_failures wrong passwords for this name and address
        status, _ = call(server, "GET", "/v1.1/admissions/summary",
                         basic("gate", f"guess-{number}"))
        assert status == 401
    browser.get(f"http://127.0.0.1:{server.port}/scan")
    sign_in_with_form(browser, "gate", GATE_PASSWORD)
    assert re.fullmatch(r"Too many attempts, retry in \d+ s", sign_in_status(browser))


def test_a_device_paired_by_its_link_admits_until_its_key_is_revoked(tmp_path, door_config,
                                                                     browser):
    """As a museum pairs a phone while the service runs: `museum add-device` adds the
    device and prints the pairing link; the link signs the page in with a key of its own,
    which admits; once `museum revoke-device` has run, the page says the key is no longer
    valid. No restart."""
    set_screen(browser, **SMALL_PHONE)
    (tmp_path / "ops").mkdir()
    db = str(tmp_path / "museum.sqlite3")
    with running_server(tmp_path, door_config) as server:
        added = museum_command(tmp_path / "ops", door_config, "add-device", "door-north",
                               "--role", "gate", "--url", f"http://127.0.0.1:{server.port}",
                               "--db", db)
        assert added.status == 0, added.err
        lines = [line.strip() for line in added.out.splitlines()]
        link = next(line for line in lines
                    if line.startswith(f"http://127.0.0.1:{server.port}/scan#pair="))
        ticket = buy(server, today_at(server).isoformat())
        browser.get(link)
        WebDriverWait(browser, 10).until(lambda d: shown(d, "device") == "Signed in as door-north")
        assert browser.current_url == f"http://127.0.0.1:{server.port}/scan"
        assert scan(browser, qr(ticket))[:2] == ("good", "Admitted")
        assert json.loads(stored_sign_in(browser))["key"] not in server.log()
        revoked = museum_command(tmp_path / "ops", door_config, "revoke-device", "door-north",
                                 "--db", db)
        assert revoked.status == 0, revoked.err
        browser.find_element(By.ID, "code").send_keys("ticket-general-000000-00000" + Keys.ENTER)
        assert sign_in_status(browser) == "Signed out: this device's key is no longer valid"


def test_a_revoked_key_signs_the_scanner_out(server, browser, tmp_path):
    set_screen(browser, **SMALL_PHONE)
    open_page(browser, server)
    revoke_device(server)
    browser.find_element(By.ID, "code").send_keys("ticket-general-000000-00000" + Keys.ENTER)
    assert sign_in_status(browser) == "Signed out: this device's key is no longer valid"
    assert stored_sign_in(browser) is None
    assert browser.find_element(By.ID, "name").get_attribute("value") == "gate2"
    screenshot(browser, tmp_path, "scan-signed-out.png")


FAMILY_CATEGORIES = ("[categories]\nadult = Adult\n"
                     "child = Child | 0 | note: check age: under 14\n")


def sell_an_order(server, categories, **changes):
    """An order sold straight through the server's database (as the orders' API sells
    one), for today at the museum."""
    store = storage.open_store(server.database, migrate=False)
    try:
        return sell_order(store, categories, day=today_at(server).isoformat(), **changes)
    finally:
        store.close()


def test_an_orders_code_admits_the_family_on_a_small_phone(tmp_path, door_config, browser):
    with running_server(tmp_path, door_config + FAMILY_CATEGORIES) as server:
        family = sell_an_order(server, ["adult", "adult", "child", "child"])
        held = sell_an_order(server, ["adult"], status="pending",
                             expires_at=rfc3339(datetime.now(timezone.utc) + timedelta(hours=1)))
        set_screen(browser, **SMALL_PHONE)
        open_page(browser, server)
        wait_for_counters(browser, {"General entry": "0 / 5"})

        assert scan(browser, family["orderCode"]) == (
            "good", "4 admitted", ["2 Adult, 2 Child", "Child: check age: under 14"])
        wait_for_counters(browser, {"General entry": "4 / 5"})
        screenshot(browser, tmp_path, "scan-order-admitted.png")
        # Every line whole on a 360 px phone, the count at arm's length, the note boxed.
        assert browser.execute_script(
            "return document.documentElement.scrollWidth <= window.innerWidth")
        assert browser.execute_script("""
            const note = document.querySelector('#details .door-note');
            const box = note.getBoundingClientRect();
            return box.bottom <= window.innerHeight && box.right <= window.innerWidth
              && parseFloat(getComputedStyle(note).fontSize) >= 18
              && parseFloat(getComputedStyle(document.getElementById('headline')).fontSize)
                 >= 48""")

        # Scanned again at once: this gate let them in a moment ago.
        assert scan(browser, family["orderCode"])[:2] == ("warn", "Admitted here")
        # An order not paid yet: refused whole, as its ticket alone is.
        assert scan(browser, held["orderCode"]) == (
            "bad", "Not paid", ["the order is on hold: not paid yet", "1 Adult"])
        screenshot(browser, tmp_path, "scan-order-unpaid.png")
        tone, headline, details = scan(browser, held["tickets"][0]["confirmationCode"])
        assert (tone, headline, details[0]) == ("bad", "Not paid",
                                                "its order is on hold: not paid yet")
        wait_for_counters(browser, {"General entry": "4 / 5"})
        assert csp_violations(browser) == []

"""The scanner page at the entrance (/scan) in a real headless Chromium against a real
`museum serve`: codes typed as a barcode scanner in keyboard mode types them, the outcome and
counters a gate attendant sees, a 360 px phone without horizontal scrolling, and no
Content-Security-Policy violation.

Needs Debian's `chromium` and `chromium-driver` (CI installs them); skipped without them.
Screenshots go to tmp_path; `MUSEUM_SCREENSHOTS=docs pytest tests/test_scan_page.py`
rewrites the README's two.
"""

import json
import os
from datetime import date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

import museum
import museum_config
from conftest import ADMIN, PASSWORDS, VISITOR, basic
from serving import running_server

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
pytestmark = pytest.mark.skipif(
    not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
    reason="needs Debian's chromium and chromium-driver: apt-get install chromium chromium-driver")

CHROMIUM_FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync")
QR_SECRET = "scanner-page-test-secret-0123456789abcdef"
GATE_PASSWORD = PASSWORDS["gate"]
GATE_AUTH = basic("gate2", GATE_PASSWORD)  # a gate user named as staff would be
# The browser's zone, which is not the museum's (UTC): the page shows times in local time.
BROWSER_ZONE = "Asia/Kolkata"
PHONE = {"width": 400, "height": 800}
EVENT_NAME = "Night at the Museum"


@pytest.fixture(scope="module")
def door_config():
    """UTC, open every day (any day the test runs sells general tickets), a fixed QR key, and
    an admin, a visitor and a gate user."""
    hours = "".join(f"{day} = 08:00-20:00\n" for day in
                    ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"))
    return ("[museum]\ntimezone = UTC\n"
            f"[tickets]\nqr_secret = {QR_SECRET}\n"
            f"[hours]\n{hours}"
            "[users]\n"
            f"admin = admin:{museum_config.hash_password(PASSWORDS['admin'])}\n"
            f"visitor = visitor:{museum_config.hash_password(PASSWORDS['visitor'])}\n"
            f"gate2 = gate:{museum_config.hash_password(GATE_PASSWORD)}\n")


@pytest.fixture
def server(tmp_path, door_config):
    with running_server(tmp_path, door_config) as started:
        yield started


@pytest.fixture
def browser(tmp_path):
    """Headless Chromium signed in as the gate user, in BROWSER_ZONE, at phone size."""
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'chromium-profile'}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # An explicit driver path: Selenium Manager then looks nothing up and downloads nothing.
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)),
                              options=options)
    try:
        # Basic credentials as an extra header on every request, the page's fetch() calls
        # included: a headless browser has no login dialog to answer, and a user:password@
        # address would leave the sending to the browser's login cache.
        driver.execute_cdp_cmd("Network.enable", {})
        driver.execute_cdp_cmd("Network.setExtraHTTPHeaders", {"headers": GATE_AUTH})
        driver.execute_cdp_cmd("Emulation.setTimezoneOverride", {"timezoneId": BROWSER_ZONE})
        # Still pictures for the screenshots: the page then skips its pop-in animation.
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {
            "features": [{"name": "prefers-reduced-motion", "value": "reduce"}]})
        set_screen(driver, **PHONE)
        yield driver
    finally:
        driver.quit()


def set_screen(driver, width, height):
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": 1, "mobile": True})


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
    return museum.qr_text(secret, receipt["ticketId"], receipt["confirmationCode"])


def open_page(driver, server, userinfo=""):
    driver.get(f"http://{userinfo}127.0.0.1:{server.port}/scan")
    WebDriverWait(driver, 10).until(lambda d: counter_rows(d).get("General entry"))


def scan(driver, text):
    """Type `text` and Enter where the focus is, as a barcode scanner does; the outcome
    (body tone, headline, detail lines) once it is shown."""
    focused = driver.switch_to.active_element
    assert focused.get_attribute("id") == "code", "the code field lost the focus"
    focused.send_keys(text + Keys.ENTER)
    headline = driver.find_element(By.ID, "headline")
    WebDriverWait(driver, 10).until(lambda d: headline.text != "Checking…")
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


def test_scanned_codes_show_each_outcome_and_move_the_counters(server, browser, tmp_path):
    today = today_at(server)
    status, event = call(server, "POST", "/v1.1/special-events", ADMIN,
                         {"name": EVENT_NAME, "location": "Great Hall", "price": 25,
                          "eventDescription": "Torchlit tour.", "dates": [today.isoformat()]})
    assert status == 201, event
    general = buy(server, today.isoformat())
    buy(server, today.isoformat())  # sold, never scanned: the counters show 1 / 2
    event_ticket = buy(server, today.isoformat(), event["eventId"])
    tomorrows = buy(server, (today + timedelta(days=1)).isoformat())

    open_page(browser, server)
    assert browser.find_element(By.ID, "day").text == f"Today, {today.isoformat()}"
    wait_for_counters(browser, {"General entry": "0 / 2", EVENT_NAME: "0 / 1"})

    assert scan(browser, qr(general)) == ("good", "Admitted",
                                          ["General entry", today.isoformat()])
    wait_for_counters(browser, {"General entry": "1 / 2", EVENT_NAME: "0 / 1"})
    screenshot(browser, tmp_path, "scan-admitted.png")

    tone, headline, details = scan(browser, qr(general))
    status, first = call(server, "POST", "/v1.1/admissions", GATE_AUTH, {"code": qr(general)})
    assert status == 409 and first["admittedBy"] == "gate2"
    admitted_at = datetime.fromisoformat(first["admittedAt"]).astimezone(ZoneInfo(BROWSER_ZONE))
    assert (tone, headline, details) == ("bad", "Already admitted",
                                         [f"at {admitted_at:%H:%M} by gate2", "General entry"])
    screenshot(browser, tmp_path, "scan-already-admitted.png")

    # A confirmation code typed by hand, in capitals, admits the event ticket.
    assert scan(browser, event_ticket["confirmationCode"].upper()) == (
        "good", "Admitted", [f"Event: {EVENT_NAME}", today.isoformat()])
    wait_for_counters(browser, {"General entry": "1 / 2", EVENT_NAME: "1 / 1"})

    assert scan(browser, qr(general, secret="not-the-museums-key-" * 2))[:2] == ("bad", "Forged")
    assert scan(browser, qr(tomorrows)) == (
        "warn", "Wrong date", [f"ticket for {tomorrows['ticketDate']}", "General entry"])
    assert scan(browser, "ticket-general-000000-00000")[:2] == ("bad", "Unknown")
    wait_for_counters(browser, {"General entry": "1 / 2", EVENT_NAME: "1 / 1"})
    assert csp_violations(browser) == []


def test_page_fits_a_phone_without_a_camera_api_and_says_when_the_server_is_gone(server,
                                                                                 browser):
    set_screen(browser, width=360, height=740)
    # Opened as a kiosk's bookmark might be, with the credentials in the address.
    open_page(browser, server, userinfo=f"gate2:{GATE_PASSWORD}@")
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
        "error", "Offline", ["no connection — try again"])
    assert "stale" in browser.find_element(By.ID, "counters").get_attribute("class")

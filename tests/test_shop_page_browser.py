"""The booking page (/shop) in a real headless Chromium against a real `museum serve` with
the shop on, paid at the desk: a family books two adults and two children on a 360×740
phone and sees four QR codes that each admit at the door; the page embedded by a museum's
own site in an iframe (and refused by any other); ended and full entry slots shown as such;
German for a browser that asks for it; two browsers after the last places; a booking with
the keyboard alone, the focus shown at each stop. Every step fits
the phone's width, and no Content-Security-Policy violation happens.

Each state of the page passes axe-core (tests/a11y.py) at 360×740 and 1280×800, beside the
page's own checks here (every control named, the language set, the outcome announced).

Needs Debian's `chromium` and `chromium-driver`, and axe-core from npm (skipped without
them, failed under CI). Screenshots go to
tmp_path; `MUSEUM_SCREENSHOTS=docs pytest tests/test_shop_page_browser.py` rewrites those of
docs/shop.md.
"""

import http.server
import threading
from contextlib import contextmanager
from datetime import date, timedelta

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

import test_scan_page
from a11y import assert_accessible, focused, needs_axe, press, tab_to, unreachable_controls
from conftest import ADMIN, VISITOR, zone_at_noon
from qr import read_screenshot_qr
from serving import free_port, running_server
# browser: headless Chromium, at phone size, as the scanner page's tests have it.
from test_scan_page import (GATE_AUTH, OPEN_EVERY_DAY, SMALL_PHONE, browser,  # noqa: F401
                            call, chromium, csp_violations, screenshot, set_screen,
                            user_lines)

# A server and one or two browsers each: 10 s and more.
pytestmark = [pytest.mark.slow, test_scan_page.pytestmark]
FAMILY_EMAIL = "family@example.org"
SLOT_PLACES = 4  # [capacity] general_per_slot
DESK = {"width": 1280, "height": 800}


def shop_config(embedder_port):
    """Open 08:00-20:00 every day in hourly slots of 4 places, in a zone where it is about
    noon now (08:00 to 11:00 have ended, 12:00 is open); adults pay 12 at the desk, children
    nothing; the museum's site at http://127.0.0.1:`embedder_port` may frame the page."""
    hours, users = OPEN_EVERY_DAY, user_lines({name: name for name in ("admin", "gate", "visitor")})
    return (f"[museum]\nname = Museum of the Sea\ntimezone = {zone_at_noon()}\n"
            f"[log]\nflush = 0\n[hours]\n{hours}slot_minutes = 60\n"
            f"[capacity]\ngeneral_per_slot = {SLOT_PLACES}\n"
            "[categories]\nadult = Adult | 12\nchild = Child under 14 | 0\n"
            "[shop]\nenabled = true\npay_at_desk = true\n"
            f"allowed_origins = http://127.0.0.1:{embedder_port}\n"
            f"[users]\n{users}")


@pytest.fixture
def embedder_port():
    return free_port()


@pytest.fixture
def server(tmp_path, embedder_port):
    with running_server(tmp_path, shop_config(embedder_port)) as started:
        yield started


def today_at(server):
    status, museum = call(server, "GET", "/v1.1/museum", VISITOR)
    assert status == 200
    return date.fromisoformat(museum["now"][:10])


def buy_places(server, day, entry_time, places):
    """`places` general tickets for `entry_time` of `day`, sold through the API."""
    status, order = call(server, "POST", "/v1.1/orders", VISITOR, {
        "items": [{"ticketType": "general", "ticketDate": day.isoformat(),
                   "entryTime": entry_time, "category": "child", "quantity": places}],
        "email": "other@example.org"})
    assert status == 201, order


def open_shop(driver, url):
    driver.get(url)
    WebDriverWait(driver, 10).until(
        lambda d: d.find_element(By.ID, "booking").is_displayed())


def choices(driver, group):
    """{value: (label text, enabled)} of the radio choices of `group` (offer, day, slot)."""
    return {each.get_attribute("value"): (
        driver.find_element(By.CSS_SELECTOR, f"label[for='{each.get_attribute('id')}']")
        .text.replace("\n", " "), each.is_enabled())
        for each in driver.find_elements(By.CSS_SELECTOR, f"input[name='{group}']")}


def choose(driver, group, value):
    driver.find_element(By.CSS_SELECTOR, f"label[for='{group}-{value}']").click()


def add_tickets(driver, category, count):
    plus = driver.find_element(By.CSS_SELECTOR, f"#quantity-{category} + button")
    for _ in range(count):
        plus.click()


def wait_for_total(driver, expected):
    WebDriverWait(driver, 10).until(
        lambda d: d.find_element(By.ID, "total").text == expected,
        f"total {expected!r}")


def book(driver, email):
    field = driver.find_element(By.ID, "email")
    field.clear()
    field.send_keys(email)
    driver.find_element(By.ID, "book").click()


def wait_for_tickets(driver, count):
    """The confirmation's tickets once shown: their QR codes (svg elements)."""
    WebDriverWait(driver, 10).until(
        lambda d: d.find_element(By.ID, "confirmation").is_displayed())
    codes = driver.find_elements(By.CSS_SELECTOR, "#order-tickets svg")
    assert len(codes) == count
    return codes


def shown_qr(code):
    """The text of the QR code `code` (an svg element) as the screen shows it."""
    code.parent.execute_script("arguments[0].scrollIntoView()", code)
    return read_screenshot_qr(code.screenshot_as_png)


def fits_width(driver):
    return driver.execute_script(
        "return document.documentElement.scrollWidth <= window.innerWidth")


def unnamed_controls(driver):
    """The ids of the page's visible or focusable controls that have no accessible name."""
    return driver.execute_script("""
        return [...document.querySelectorAll("input, button, select, a")].filter((control) =>
          !(control.labels && control.labels.length) && !control.getAttribute("aria-label")
          && !control.textContent.trim()).map((control) => control.id || control.outerHTML);""")


def page_screenshot(driver, tmp_path, name, frame_size=SMALL_PHONE):
    """The whole page, as tall as it is, at the current width."""
    height = driver.execute_script("return document.documentElement.scrollHeight")
    set_screen(driver, frame_size["width"], max(height, frame_size["height"]))
    screenshot(driver, tmp_path, name)
    set_screen(driver, **frame_size)


@needs_axe
def test_a_family_books_four_tickets_on_a_phone_and_each_admits(server, browser, tmp_path):
    set_screen(browser, **SMALL_PHONE)
    today = today_at(server)
    buy_places(server, today, "13:00", SLOT_PLACES)  # 13:00 is full
    open_shop(browser, f"http://127.0.0.1:{server.port}/shop")
    assert browser.find_element(By.ID, "museum-name").text == "Museum of the Sea"
    assert browser.execute_script("return document.documentElement.lang") == "en"
    slots = choices(browser, "slot")
    assert slots["11:00"] == ("11:00 ended", False)
    assert slots["13:00"] == ("13:00 full", False)
    assert slots["12:00"] == (f"12:00 {SLOT_PLACES} left", True)
    assert browser.find_element(By.ID, "slot-12:00").is_selected()  # the first open one
    assert choices(browser, "day")[today.isoformat()][1]  # today still has open slots
    assert_accessible(browser, "/shop at the start")

    add_tickets(browser, "adult", 2)
    add_tickets(browser, "child", 2)
    wait_for_total(browser, "Total: €24.00, paid at the desk")
    assert fits_width(browser) and unnamed_controls(browser) == []
    page_screenshot(browser, tmp_path, "shop-choose-360.png")
    assert_accessible(browser, "/shop with counts entered")

    book(browser, FAMILY_EMAIL)
    codes = wait_for_tickets(browser, 4)
    assert browser.find_element(By.ID, "order-due").text == "To pay at the desk: €24.00"
    assert browser.switch_to.active_element.get_attribute("id") == "confirmation"
    assert [each.text for each in browser.find_elements(By.CSS_SELECTOR, "#order-tickets h3")] \
        == ["Adult · ticket 1 of 4", "Adult · ticket 2 of 4",
            "Child under 14 · ticket 3 of 4", "Child under 14 · ticket 4 of 4"]
    assert fits_width(browser) and unnamed_controls(browser) == []
    page_screenshot(browser, tmp_path, "shop-booked-360.png")
    assert_accessible(browser, "/shop's confirmation with its QR codes")

    # Each QR code as the phone shows it admits one of the family at the door.
    for code in codes:
        status, admitted = call(server, "POST", "/v1.1/admissions", GATE_AUTH,
                                {"code": shown_qr(code)})
        assert (status, admitted["result"]) == (201, "admitted"), admitted
    link = browser.find_element(By.CSS_SELECTOR, "#order-tickets a")
    assert link.get_attribute("href").startswith(f"http://127.0.0.1:{server.port}/t/")
    assert csp_violations(browser) == []


def checked(driver, group):
    return driver.find_element(By.CSS_SELECTOR, f"input[name='{group}']:checked")


@needs_axe
def test_a_family_books_with_the_keyboard_alone(server, browser):
    """Tab and Shift+Tab from control to control, the arrows in the choices and the
    numbers, Space and Enter on the buttons: never a click, and the focus shown at each
    stop."""
    tomorrow = (today_at(server) + timedelta(days=1)).isoformat()
    status, event = call(server, "POST", "/v1.1/special-events", ADMIN, {
        "name": "Lantern tour", "location": "Harbour", "price": 12,
        "eventDescription": "By lantern light.", "dates": [tomorrow]})
    assert status == 201, event
    set_screen(browser, **SMALL_PHONE)
    open_shop(browser, f"http://127.0.0.1:{server.port}/shop")
    assert unreachable_controls(browser) == []

    tab_to(browser, "#offer-general")
    press(browser, Keys.ARROW_DOWN)  # the event: the choices are drawn again, focus kept
    assert focused(browser).get_attribute("id") == f"offer-{event['eventId']}"
    press(browser, Keys.ARROW_UP)
    assert focused(browser).get_attribute("id") == "offer-general"
    tab_to(browser, "input[name='day']:checked")
    assert checked(browser, "day").get_attribute("value") == tomorrow  # the event's, kept
    press(browser, Keys.ARROW_LEFT)
    assert checked(browser, "day").get_attribute("value") == today_at(server).isoformat()
    press(browser, Keys.ARROW_RIGHT)
    assert focused(browser).get_attribute("value") == tomorrow
    tab_to(browser, "input[name='slot']:checked")
    slot = checked(browser, "slot").get_attribute("value")  # today's first open, kept
    press(browser, Keys.ARROW_RIGHT)
    later = f"{int(slot[:2]) + 1:02}:00"
    assert checked(browser, "slot").get_attribute("value") == later
    assert_accessible(browser, "/shop with a day and a slot chosen")

    tab_to(browser, "#quantity-adult + button")
    press(browser, Keys.ENTER, Keys.SPACE)
    tab_to(browser, "#quantity-child")
    press(browser, Keys.ARROW_UP, Keys.ARROW_UP)
    wait_for_total(browser, "Total: €24.00, paid at the desk")
    tab_to(browser, "#email")
    press(browser, FAMILY_EMAIL)
    tab_to(browser, "#quantity-child", backwards=True)  # a last look back, and forth again
    tab_to(browser, "#book")
    press(browser, Keys.ENTER)
    assert len(wait_for_tickets(browser, 4)) == 4
    assert browser.find_element(By.ID, "order-facts").text.endswith(f" · {later}")
    availability = call(server, "GET", f"/v1.1/availability?startDate={tomorrow}"
                        f"&endDate={tomorrow}", ADMIN)[1]
    booked = next(each for each in availability[0]["slots"] if each["time"] == later)
    assert booked["sold"] == 4
    assert unreachable_controls(browser) == []
    tab_to(browser, "#order-tickets a")
    tab_to(browser, "#again")
    press(browser, Keys.SPACE)
    WebDriverWait(browser, 10).until(
        lambda d: d.find_element(By.ID, "booking").is_displayed())


class Embedder(http.server.BaseHTTPRequestHandler):
    """The museum's own site: one page embedding the booking page with the documented
    iframe line (the shop's address in the server's `shop` attribute)."""

    def do_GET(self):  # noqa: N802 (the name http.server calls)
        body = ("<!doctype html><title>Visit us</title><body style='font-family: serif'>"
                "<h1>Museum of the Sea: visit us</h1><p>Open every day from 8 to 20. "
                "Children under 14 come free.</p>"
                f'<iframe src="{self.server.shop}" title="Book tickets" width="100%" '
                'height="900" style="border: 0"></iframe>').encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@contextmanager
def museum_site(port, shop):
    site = http.server.ThreadingHTTPServer(("127.0.0.1", port), Embedder)
    site.shop = shop
    thread = threading.Thread(target=site.serve_forever, daemon=True)
    thread.start()
    try:
        yield
    finally:
        site.shutdown()
        site.server_close()


def test_the_museums_site_embeds_the_page_and_no_other_site_may(server, browser, tmp_path,
                                                                embedder_port):
    set_screen(browser, **DESK)
    shop = f"http://127.0.0.1:{server.port}/shop"
    with museum_site(embedder_port, shop):
        # The same site under another name is another origin, not listed: refused.
        browser.get(f"http://localhost:{embedder_port}/")
        frame = browser.find_element(By.TAG_NAME, "iframe")
        browser.switch_to.frame(frame)
        assert browser.find_elements(By.ID, "booking") == []
        browser.switch_to.default_content()
        assert any("frame-ancestors" in message for message in csp_violations(browser))

        browser.get(f"http://127.0.0.1:{embedder_port}/")
        browser.switch_to.frame(browser.find_element(By.TAG_NAME, "iframe"))
        WebDriverWait(browser, 10).until(
            lambda d: d.find_element(By.ID, "booking").is_displayed())
        choose(browser, "day", sorted(choices(browser, "day"))[1])  # tomorrow
        choose(browser, "slot", "10:00")
        add_tickets(browser, "adult", 2)
        add_tickets(browser, "child", 2)
        wait_for_total(browser, "Total: €24.00, paid at the desk")
        browser.execute_script("window.scrollTo(0, 0)")
        browser.switch_to.default_content()
        browser.execute_script("window.scrollTo(0, 0)")
        screenshot(browser, tmp_path, "shop-embedded-1280.png")
        browser.switch_to.frame(browser.find_element(By.TAG_NAME, "iframe"))
        book(browser, FAMILY_EMAIL)
        codes = wait_for_tickets(browser, 4)
        assert len(set(map(shown_qr, codes))) == 4
        browser.switch_to.default_content()
        assert csp_violations(browser) == []


@needs_axe
def test_a_browser_asking_for_german_gets_the_page_in_german(server, tmp_path):
    today = today_at(server)
    buy_places(server, today, "13:00", SLOT_PLACES)
    with chromium(tmp_path / "german-profile") as browser:
        set_screen(browser, **SMALL_PHONE)
        browser.execute_cdp_cmd("Network.enable", {})
        browser.execute_cdp_cmd("Network.setUserAgentOverride", {
            "userAgent": browser.execute_script("return navigator.userAgent"),
            "acceptLanguage": "de-DE,de;q=0.9,en;q=0.5"})
        open_shop(browser, f"http://127.0.0.1:{server.port}/shop")
        assert browser.execute_script("return document.documentElement.lang") == "de"
        assert browser.find_element(By.CSS_SELECTOR, "#what legend").text \
            == "Was möchten Sie besuchen?"
        slots = choices(browser, "slot")
        assert (slots["11:00"], slots["13:00"]) == (("11:00 vorbei", False),
                                                    ("13:00 ausgebucht", False))
        add_tickets(browser, "adult", 1)
        wait_for_total(browser, "Summe: 12,00 €, zu zahlen an der Kasse")
        book(browser, "not an email")
        error = WebDriverWait(browser, 10).until(
            lambda d: d.find_element(By.ID, "email-error").text)
        assert error.startswith("E-Mail: must be")  # the API's own message, named
        assert fits_width(browser)
        page_screenshot(browser, tmp_path, "shop-german-360.png")
        assert_accessible(browser, "/shop in German with a field error")
        assert csp_violations(browser) == []


@needs_axe
def test_two_browsers_after_the_last_places_one_order_whole_the_other_told(server, tmp_path):
    today = today_at(server)
    buy_places(server, today, "12:00", SLOT_PLACES - 2)  # two places left at 12:00
    with chromium(tmp_path / "first") as first, chromium(tmp_path / "second") as second:
        for browser in (first, second):
            set_screen(browser, **SMALL_PHONE)
            open_shop(browser, f"http://127.0.0.1:{server.port}/shop")
            assert choices(browser, "slot")["12:00"] == ("12:00 2 left", True)
            add_tickets(browser, "child", 2)
            wait_for_total(browser, "Total: free")
            browser.find_element(By.ID, "email").send_keys(FAMILY_EMAIL)
        for browser in (first, second):  # both sent before either is answered
            browser.execute_script("document.getElementById('book').click()")
        outcomes = []
        for browser in (first, second):
            WebDriverWait(browser, 10).until(
                lambda d: d.find_element(By.ID, "confirmation").is_displayed()
                or d.find_element(By.ID, "problem").text)
            outcomes.append(browser.find_element(By.ID, "confirmation").is_displayed())
        assert sorted(outcomes) == [False, True]
        told = second if outcomes[0] else first
        assert told.find_element(By.ID, "problem").text.startswith("Sold out")
        assert choices(told, "slot")["12:00"] == ("12:00 full", False)  # read again
        page_screenshot(told, tmp_path, "shop-sold-out-360.png")
        assert_accessible(told, "/shop told sold out")
    status, availability = call(server, "GET", f"/v1.1/availability?endDate={today}", ADMIN)
    noon = next(slot for slot in availability[0]["slots"] if slot["time"] == "12:00")
    assert (noon["sold"], noon["available"]) == (SLOT_PLACES, 0)

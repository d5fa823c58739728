"""The ticket page in a real headless Chromium against a real `museum serve`: a 360×740 phone
shows it without horizontal scrolling and without a Content-Security-Policy violation, its QR
code (as drawn on the screen) scans to the sale's `qrText`, and once opened it still shows
the ticket, pixel for pixel, after the service is gone (its service worker); printed on A4 and on Letter, an
order's page takes one page per ticket.

Each page passes axe-core (tests/a11y.py) at 360×740 and 1280×800. Needs Debian's `chromium`
and `chromium-driver`, and axe-core from npm (CI installs them); skipped without them,
failed without them under CI.
Screenshots go to tmp_path; `MUSEUM_SCREENSHOTS=docs pytest tests/test_ticket_page_browser.py`
rewrites those of docs/ticket-page.md.
"""

import base64
import re
import uuid
from datetime import datetime, timedelta, timezone

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.print_page_options import PrintOptions
from selenium.webdriver.support.ui import WebDriverWait

import storage
import test_scan_page
from a11y import assert_accessible, needs_axe, serious_violations
from qr import read_screenshot_qr
from serving import running_server
from test_scan_page import SMALL_PHONE, buy, chromium, config_with_users, csp_violations, \
    screenshot, set_screen

pytestmark = test_scan_page.pytestmark
PAPER = {"A4": (21.0, 29.7), "Letter": (21.59, 27.94)}  # cm
PRINT_MARGIN = 1.5  # cm, ticket.css's @page margin
PIXELS_PER_CM = 96 / 2.54  # CSS pixels


@pytest.fixture
def server(tmp_path):
    config = config_with_users({"visitor": "visitor"}).replace(
        "[museum]\n", "[museum]\nname = Musée des Beaux-Arts de la Ville\n")
    with running_server(tmp_path, config) as started:
        yield started


@pytest.fixture
def browser(tmp_path):
    with chromium(tmp_path / "chromium-profile", SMALL_PHONE) as driver:
        yield driver


def tomorrow():
    return (datetime.now(timezone.utc) + timedelta(days=1)).date().isoformat()


def open_page(browser, server, link):
    browser.get(f"http://127.0.0.1:{server.port}{link}")
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".ticket svg"))


def shown_qr_codes(browser):
    """The text of each QR code as the browser draws it on the screen, scrolled to it."""
    texts = []
    for picture in browser.find_elements(By.CSS_SELECTOR, ".code-picture"):
        browser.execute_script("arguments[0].scrollIntoView()", picture)
        texts.append(read_screenshot_qr(picture.screenshot_as_png))
    browser.execute_script("window.scrollTo(0, 0)")
    return texts


def fits_the_width(browser):
    return browser.execute_script(
        "return document.documentElement.scrollWidth <= window.innerWidth")


@needs_axe
def test_a_phone_shows_the_ticket_whose_code_scans_and_keeps_it_offline(
        server, browser, tmp_path):
    receipt = buy(server, tomorrow())
    open_page(browser, server, receipt["ticketPage"])
    assert_accessible(browser, "a ticket's page")
    assert fits_the_width(browser)
    assert shown_qr_codes(browser) == [receipt["qrText"]]
    qr_width = browser.find_element(By.CSS_SELECTOR, ".code-picture svg").size["width"]
    assert qr_width >= 300  # large: nearly the whole width of a 360 px phone
    assert receipt["confirmationCode"] in browser.find_element(By.TAG_NAME, "main").text
    screenshot(browser, tmp_path, "ticket-page-360.png")
    online = browser.get_screenshot_as_png()
    assert csp_violations(browser) == []
    WebDriverWait(browser, 10).until(lambda d: d.execute_script(
        "return navigator.serviceWorker.controller !== null"))

    assert server.stop() == 0  # the basement: no service to reach
    browser.refresh()
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".ticket svg"))
    assert shown_qr_codes(browser) == [receipt["qrText"]]
    assert browser.get_screenshot_as_png() == online  # the very same page, pixel for pixel


@needs_axe
def test_a_voided_ticket_shows_gone_when_online_even_after_it_was_kept(server, browser):
    receipt = buy(server, tomorrow())
    open_page(browser, server, receipt["ticketPage"])
    WebDriverWait(browser, 10).until(lambda d: d.execute_script(
        "return navigator.serviceWorker.controller !== null"))
    opened = storage.open_store(server.database, migrate=False)
    try:
        opened.void_ticket(receipt["ticketId"], "2026-11-22T12:00:00Z")
    finally:
        opened.close()
    browser.refresh()
    WebDriverWait(browser, 10).until(lambda d: "voided" in d.find_element(By.TAG_NAME,
                                                                          "h1").text)
    assert browser.find_elements(By.CSS_SELECTOR, "svg") == []
    assert_accessible(browser, "a voided ticket's page")
    # The check above can fail: a field without a name is a critical violation.
    browser.execute_script("document.querySelector('main').append("
                           "Object.assign(document.createElement('input'), {id: 'nameless'}))")
    assert [(rule["id"], [node["target"] for node in rule["nodes"]])
            for rule in serious_violations(browser)] == [("label", ["#nameless"])]


def pages_printed(browser, paper):
    width, height = PAPER[paper]
    options = PrintOptions()
    options.page_width, options.page_height = width, height
    pdf = base64.b64decode(browser.print_page(options))
    return len(re.findall(rb"/Type\s*/Page\b", pdf))


@needs_axe
def test_an_orders_page_prints_one_ticket_on_each_a4_or_letter_page(server, browser,
                                                                     tmp_path):
    day = tomorrow()
    opened = storage.open_store(server.database, migrate=False)
    try:
        made = opened.create_order(
            {"orderId": str(uuid.uuid4()), "orderCode": "order-0a1b2c-3d4e5",
             "status": "confirmed", "channel": "web", "createdAt": f"{day}T09:00:00Z"},
            [{"ticketId": str(uuid.uuid4()), "ticketType": "general", "ticketDate": day,
              "confirmationCode": f"ticket-general-0a1b2c-3d4e{number}",
              "email": "family@example.org", "price": 0, "currency": "EUR",
              "category": "adult"} for number in range(3)], f"{day}T09:00:00Z")
    finally:
        opened.close()
    open_page(browser, server, f"/t/{made['pageToken']}")
    assert len(shown_qr_codes(browser)) == 3 and fits_the_width(browser)
    assert_accessible(browser, "an order's page")
    screenshot(browser, tmp_path, "ticket-page-order-360.png")
    for paper in PAPER:
        assert pages_printed(browser, paper) == 3, paper
    # Each ticket as printed is shorter than the smaller paper's printable height (Letter):
    # what the page count above shows, checked on the ticket's own box.
    width, height = (round((side - 2 * PRINT_MARGIN) * PIXELS_PER_CM)
                     for side in PAPER["Letter"])
    set_screen(browser, width=width, height=height)
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    tickets = browser.find_elements(By.CSS_SELECTOR, ".ticket")
    assert [ticket.size["height"] < height for ticket in tickets] == [True] * 3
    printed_qr = browser.find_element(By.CSS_SELECTOR, ".code-picture svg").size["width"]
    assert printed_qr == pytest.approx(10 * PIXELS_PER_CM, abs=1)  # 10 cm wide
    screenshot(browser, tmp_path, "ticket-page-print.png")

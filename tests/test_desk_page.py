"""The desk page (/desk) in a real headless Chromium against a real `museum serve`: a desk
user signs in with the page's own form (no login box), sells a walk-in two adults and a
child paid cash at 360×740, sees three QR codes that each admit at the door, and the print
view holds the tickets alone, one a page; a ticket found by its code is voided; an admin
signs in with its password kept in the page's memory. Every step fits the window's width,
and no Content-Security-Policy violation happens.

Needs Debian's `chromium` and `chromium-driver` (skipped without them). Screenshots go to
tmp_path; `MUSEUM_SCREENSHOTS=docs pytest tests/test_desk_page.py` rewrites those of
docs/desk.md.
"""

import base64
from datetime import date, datetime, timedelta, timezone
from urllib.parse import unquote
from xml.etree import ElementTree

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

import museum
import museum_outbox
import storage
from conftest import ADMIN, PASSWORDS, zone_at_noon
from qr import read_qr
from serving import running_server
from test_scan_page import (GATE_AUTH, OPEN_EVERY_DAY, SMALL_PHONE, call, chromium,
                            csp_violations, screenshot, set_screen, user_lines)

from test_outbox import smtp_server  # noqa: F401 (a fixture)

pytestmark = pytest.mark.slow  # a server and a browser: 10 s and more
SVG = "{http://www.w3.org/2000/svg}"
DESK_SCREEN = {"width": 1280, "height": 800}


def desk_config():
    """Open 08:00-20:00 every day in hourly slots, in a zone where it is about noon now;
    adults pay 12, children 5; an admin, a desk user and a gate user."""
    hours, users = OPEN_EVERY_DAY, user_lines({name: name for name in ("admin", "desk", "gate")})
    return (f"[museum]\ntimezone = {zone_at_noon()}\n[log]\nflush = 0\n"
            f"[hours]\n{hours}slot_minutes = 60\n[capacity]\ngeneral_per_slot = 20\n"
            "[categories]\nadult = Adult | 12\nchild = Child under 14 | 5\n"
            f"[users]\n{users}")


@pytest.fixture
def server(tmp_path):
    with running_server(tmp_path, desk_config()) as started:
        yield started


@pytest.fixture
def browser(tmp_path):
    with chromium(tmp_path / "chromium-profile", SMALL_PHONE) as driver:
        yield driver


def wait_for(browser, condition, seconds=10):
    return WebDriverWait(browser, seconds).until(condition)


def fits_width(browser):
    return browser.execute_script(
        "return document.documentElement.scrollWidth <= window.innerWidth")


def sign_in(browser, server, name):
    browser.get(f"http://127.0.0.1:{server.port}/desk")
    browser.find_element(By.ID, "name").send_keys(name)
    browser.find_element(By.ID, "secret").send_keys(PASSWORDS[name])
    browser.find_element(By.ID, "sign-in-button").click()
    # Signed in once the day's choices are loaded from the availability.
    wait_for(browser, lambda d: d.find_element(By.ID, "sale-kind").get_attribute("length")
             not in (None, "0"))


def set_count(browser, category, count):
    field = browser.find_element(By.ID, f"count-{category}")
    field.clear()
    field.send_keys(str(count))


def shown_codes(browser):
    """The text of each ticket's QR code as the page shows it (its data: PNG, decoded)."""
    wait_for(browser, lambda d: d.find_element(By.ID, "tickets").get_attribute(
        "data-loaded") == "true")
    sources = [image.get_attribute("src") for image in
               browser.find_elements(By.CSS_SELECTOR, "#tickets img")]
    assert all(source.startswith("data:image/png;base64,") for source in sources)
    return [read_qr(base64.b64decode(source.split(",", 1)[1])) for source in sources]


def test_a_walk_in_is_sold_three_tickets_paid_cash_and_each_admits(server, browser,
                                                                     tmp_path):
    sign_in(browser, server, "desk")
    assert browser.execute_script("return localStorage.getItem('museum.desk.signIn')")
    slot = browser.find_element(By.ID, "sale-slot").get_attribute("value")
    assert slot  # the first slot not ended is chosen
    set_count(browser, "adult", 2)
    set_count(browser, "child", 1)
    wait_for(browser, lambda d: d.find_element(By.ID, "total").text ==
             "Total 29.00 EUR for 3 ticket(s)")
    assert fits_width(browser)
    screenshot(browser, tmp_path, "desk-sell-360.png")
    browser.find_element(By.ID, "sell-button").click()

    codes = shown_codes(browser)
    assert len(codes) == 3
    status = browser.find_element(By.ID, "sell-status").text
    assert status == "Sold: 3 ticket(s), 29.00 EUR paid cash."
    assert fits_width(browser)
    screenshot(browser, tmp_path, "desk-sold-360.png")
    for code in codes:
        admitted, answer = call(server, "POST", "/v1.1/admissions", GATE_AUTH, {"code": code})
        assert (admitted, answer["result"]) == (201, "admitted"), answer

    # Printed, the tickets alone show, each on a page of its own.
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    shown = browser.execute_script("""
        return [...document.body.querySelectorAll('section, header, li.ticket')]
          .filter((e) => e.getBoundingClientRect().height > 0)
          .map((e) => e.id || e.className + ':' + getComputedStyle(e).breakAfter)""")
    assert shown == ["sold", "ticket:page", "ticket:page", "ticket:auto"]
    assert csp_violations(browser) == []


def test_a_ticket_found_by_its_code_is_voided(server, browser, tmp_path):
    sign_in(browser, server, "desk")
    set_count(browser, "adult", 1)
    browser.find_element(By.ID, "sell-button").click()
    shown_codes(browser)
    code = browser.find_element(By.CSS_SELECTOR, "#tickets .code").text

    browser.find_element(By.ID, "find-code").send_keys(code[-12:])
    browser.find_element(By.ID, "find-button").click()
    wait_for(browser, lambda d: d.find_element(By.ID, "find-status").text.startswith("1 ticket"))
    browser.find_element(By.CSS_SELECTOR, "#found button.danger").click()
    browser.find_element(By.CSS_SELECTOR, "#found button.confirm").click()
    wait_for(browser, lambda d: d.find_element(By.ID, "find-status").text == f"Voided {code}.")
    assert browser.find_element(By.CSS_SELECTOR, "#found p").text.endswith("· void")
    assert fits_width(browser)
    screenshot(browser, tmp_path, "desk-voided-360.png")
    status, answer = call(server, "POST", "/v1.1/admissions", GATE_AUTH,
                          {"confirmationCode": code})
    assert (status, answer["result"]) == (410, "void"), answer
    assert csp_violations(browser) == []


def test_an_admin_signs_in_for_this_page_only_and_a_gate_is_refused(server, browser,
                                                                      tmp_path):
    set_screen(browser, **DESK_SCREEN)
    sign_in(browser, server, "admin")
    assert browser.find_element(By.ID, "who").text == "Signed in as admin (admin)"
    # The admin's password is not kept: a reload asks for it again.
    assert browser.execute_script("return localStorage.getItem('museum.desk.signIn')") is None
    assert fits_width(browser)
    screenshot(browser, tmp_path, "desk-1280.png")
    browser.refresh()
    wait_for(browser, lambda d: d.find_element(By.ID, "sign-in").is_displayed())

    browser.find_element(By.ID, "name").send_keys("gate")
    browser.find_element(By.ID, "secret").send_keys(PASSWORDS["gate"])
    browser.find_element(By.ID, "sign-in-button").click()
    wait_for(browser, lambda d: d.find_element(By.ID, "sign-in-status").text ==
             "This page is for desk and admin users: sign in as one")
    assert date.today()  # the page reached no sale
    assert csp_violations(browser) == []


def fill(browser, field_id, text):
    field = browser.find_element(By.ID, field_id)
    field.clear()
    field.send_keys(text)


def test_an_admin_creates_an_event_after_a_field_error_and_cancels_it(server, browser,
                                                                        tmp_path):
    sign_in(browser, server, "admin")
    day = browser.find_element(By.ID, "sale-date").get_attribute("value")
    fill(browser, "event-name", "Night at the Museum")
    fill(browser, "event-location", "Great Hall")
    fill(browser, "event-eventDescription", "Torches and stories.")
    fill(browser, "event-dates", day)
    fill(browser, "event-price", "15")
    fill(browser, "event-capacity", "0")
    fill(browser, "event-price-child", "7.5")
    browser.find_element(By.ID, "event-save").click()
    # The API's own message, next to its field, and the field in focus.
    error = browser.find_element(By.ID, "event-capacity-error")
    wait_for(browser, lambda d: error.text.startswith("capacity "))
    assert browser.switch_to.active_element.get_attribute("id") == "event-capacity"
    assert fits_width(browser)
    screenshot(browser, tmp_path, "desk-event-error-360.png")

    fill(browser, "event-capacity", "30")
    browser.find_element(By.ID, "event-save").click()
    status = browser.find_element(By.ID, "event-status")
    wait_for(browser, lambda d: status.text == "Created: Night at the Museum.")
    assert error.text == ""
    event_id = browser.find_element(By.ID, "event-choice").get_attribute("value")
    answer = call(server, "GET", f"/v1.1/special-events/{event_id}", ADMIN)[1]
    assert (answer["capacity"], answer["prices"]) == (30, {"child": 7.5}), answer
    # It is sold at the desk that day.
    wait_for(browser, lambda d: "Night at the Museum — 30 left" in d.find_element(
        By.ID, "sale-kind").text)

    browser.find_element(By.ID, "event-cancel").click()
    browser.find_element(By.ID, "event-cancel-confirm").click()
    wait_for(browser, lambda d: status.text == "Cancelled: Night at the Museum.")
    listed = call(server, "GET", f"/v1.1/special-events?startDate={day}", ADMIN)[1]
    assert event_id not in [event["eventId"] for event in listed]
    assert csp_violations(browser) == []


def test_the_report_shows_its_chart_and_its_csv_downloads_as_the_api_answers_it(
        server, browser, tmp_path):
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    set_screen(browser, **DESK_SCREEN)
    sign_in(browser, server, "admin")
    browser.execute_cdp_cmd("Browser.setDownloadBehavior", {
        "behavior": "allow", "downloadPath": str(downloads)})
    set_count(browser, "adult", 1)
    browser.find_element(By.ID, "sell-button").click()
    shown_codes(browser)
    browser.find_element(By.ID, "report-show").click()
    wait_for(browser, lambda d: d.find_element(By.ID, "report-status").text == "1 row(s)")
    chart = browser.find_element(By.ID, "report-chart")
    wait_for(browser, lambda d: chart.get_attribute("src").startswith("data:image/svg+xml"))
    assert chart.get_attribute("alt").startswith("Tickets sold per day")
    browser.execute_script("arguments[0].scrollIntoView()", chart)
    assert fits_width(browser)
    screenshot(browser, tmp_path, "desk-report-1280.png")
    browser.find_element(By.ID, "report-csv").click()
    wait_for(browser, lambda d: d.find_element(By.ID, "report-status").text.startswith(
        "Downloaded sales-"))
    wait_for(browser, lambda d: [path for path in downloads.iterdir()
                                 if path.suffix == ".csv"])
    downloaded = next(downloads.glob("*.csv"))
    status, _, data = server.request("GET", "/v1.1/reports/sales?format=csv", headers=ADMIN)
    assert status == 200
    assert downloaded.read_bytes() == data
    assert csp_violations(browser) == []


def test_today_shows_each_slot_and_hour_sold_and_arrived(server, browser, tmp_path):
    """Two of three tickets admitted: the tables count them, and the service's chart of
    the arrivals per hour shows their hour's bar against the hour's 20 places."""
    sign_in(browser, server, "desk")
    set_count(browser, "adult", 2)
    set_count(browser, "child", 1)
    browser.find_element(By.ID, "sell-button").click()
    codes = shown_codes(browser)
    for code in codes[:2]:
        call(server, "POST", "/v1.1/admissions", GATE_AUTH, {"code": code})
    browser.find_element(By.ID, "today-refresh").click()
    status = browser.find_element(By.ID, "today-status")
    wait_for(browser, lambda d: status.text.endswith(
        ": 3 ticket(s) sold, 2 arrived, 0 double entries"))
    slot = browser.find_element(By.ID, "sale-slot").get_attribute("value")
    rows = [row.text for row in browser.find_elements(By.CSS_SELECTOR, "#today-slots tr")]
    assert f"{slot} 3 / 20 2" in rows
    hours = browser.find_element(By.ID, "today-hours").text
    assert hours.endswith(":00 2")
    arrived_hour = hours.split()[-2]
    chart = browser.find_element(By.ID, "today-arrivals-chart")
    wait_for(browser, lambda d: chart.get_attribute("src").startswith("data:image/svg+xml"))
    svg = ElementTree.fromstring(unquote(chart.get_attribute("src").split(",", 1)[1]))
    bars = [rect.find(f"{SVG}title").text for rect in svg.iter(f"{SVG}rect")]
    assert f"{arrived_hour}: 2 arrived of 20 places" in bars
    assert sum(int(bar.split(": ")[1].split()[0]) for bar in bars) == 2
    assert chart.get_attribute("alt").startswith("Arrivals per hour, ")
    assert f"{arrived_hour} 2 arrived of 20 places" in chart.get_attribute("alt")
    assert browser.execute_script("return arguments[0].naturalWidth", chart) > 0
    assert fits_width(browser)
    browser.execute_script("document.getElementById('today-section').scrollIntoView()")
    screenshot(browser, tmp_path, "desk-today-360.png")
    assert csp_violations(browser) == []


def given_up(config, db_path):
    """Every message of the outbox tried by a sender whose clock runs an hour at each look,
    from now until the messages fail (3 days): the served sender, on the real clock, is
    left nothing due."""
    store = storage.open_store(db_path)
    moment = [datetime.now(timezone.utc)]
    sender = museum_outbox.Sender(config, store, lambda: moment[0])
    try:
        while any(message["state"] != "failed" for message in store.list_messages()):
            sender.send_due()
            moment[0] += timedelta(hours=1)
    finally:
        store.close()


def test_an_admin_sees_a_failed_mail_and_sends_it_again(tmp_path, browser, smtp_server):
    """A mail the SMTP server refused for 3 days shows on the admin's desk with its address
    and the server's answer; sent again, it arrives."""
    url, mailbox = smtp_server(refusals=10_000)
    text = desk_config() + f"[mail]\nurl = {url}\nfrom = tickets@museum.example.org\n"
    with running_server(tmp_path, text) as server:
        day = call(server, "GET", "/v1.1/museum", ADMIN)[1]["now"][:10]
        sold = call(server, "POST", "/v1.1/tickets", ADMIN, {
            "ticketType": "general", "ticketDate": day, "entryTime": "19:00",
            "email": "ada@example.org"})
        assert sold[0] == 201, sold
        given_up(museum.parse_config(text), str(tmp_path / "museum.sqlite3"))
        set_screen(browser, **DESK_SCREEN)
        sign_in(browser, server, "admin")
        panel = browser.find_element(By.ID, "outbox-section")
        wait_for(browser, lambda d: panel.is_displayed() and d.find_elements(
            By.CSS_SELECTOR, "#outbox-messages li"))
        shown = browser.find_element(By.CSS_SELECTOR, "#outbox-messages li").text
        assert "Mail to ada@example.org" in shown and "554 5.7.1 not now" in shown
        browser.execute_script("arguments[0].scrollIntoView()", panel)
        assert fits_width(browser)
        screenshot(browser, tmp_path, "desk-outbox-1280.png")

        mailbox.refusals = 0
        browser.find_element(By.XPATH, "//button[text()='Send again']").click()
        status = browser.find_element(By.ID, "outbox-status")
        wait_for(browser, lambda d: status.text.startswith("Queued again: the mail to "
                                                           "ada@example.org"))
        wait_for(browser, lambda d: mailbox.mails, seconds=30)  # the served sender's look
        assert mailbox.mails[0]["To"] == "ada@example.org"
        assert call(server, "GET", "/healthz", None)[1]["outbox"]["failed"] == 0
        assert csp_violations(browser) == []


def test_a_desk_user_sees_no_outbox_panel(server, browser):
    sign_in(browser, server, "desk")
    assert not browser.find_element(By.ID, "outbox-section").is_displayed()

"""The desk page (/desk) in a real headless Chromium against a real `museum serve`: a desk
user signs in with the page's own form (no login box), sells a walk-in two adults and a
child paid cash at 360×740, sees three QR codes that each admit at the door, and the print
view holds the tickets alone, one a page; a walk-in is sold with the keyboard alone; a
ticket found by its code is voided with its reason, which shows when it is found again; an
order booked on /shop to be paid at the desk is found with its payment due, marked paid
cash and voided whole; an admin signs in with its password kept in the page's memory. Every
step fits the window's width, passes axe-core (tests/a11y.py) at 360×740 and 1280×800, and
no Content-Security-Policy violation happens.

Needs Debian's `chromium` and `chromium-driver`, and axe-core from npm (skipped without
them, failed under CI). Screenshots go to
tmp_path; `MUSEUM_SCREENSHOTS=docs pytest tests/test_desk_page.py` rewrites those of
docs/desk.md.
"""

import base64
from datetime import date, datetime, timedelta, timezone
from urllib.parse import unquote
from xml.etree import ElementTree

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

import museum
import museum_outbox
import storage
import test_scan_page
from a11y import assert_accessible, focused, needs_axe, press, tab_to, unreachable_controls
from conftest import ADMIN, PASSWORDS, basic, zone_at_noon
from qr import read_qr
from serving import running_server
from test_scan_page import (GATE_AUTH, OPEN_EVERY_DAY, SMALL_PHONE, call, chromium,
                            csp_violations, screenshot, set_screen, user_lines)
from test_shop_page_browser import (add_tickets, book, open_shop, wait_for_tickets,
                                    wait_for_total)

from test_outbox import smtp_server  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.slow, test_scan_page.pytestmark]  # a server and a browser: 10 s+
SVG = "{http://www.w3.org/2000/svg}"
DESK_SCREEN = {"width": 1280, "height": 800}
DESK_AUTH = basic("desk", PASSWORDS["desk"])


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
def shop_server(tmp_path):
    """The desk's museum with the booking page on, priced tickets paid at the desk."""
    with running_server(tmp_path, desk_config() + "[shop]\nenabled = true\n"
                        "pay_at_desk = true\n") as started:
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


@needs_axe
def test_a_walk_in_is_sold_three_tickets_paid_cash_and_each_admits(server, browser,
                                                                     tmp_path):
    browser.get(f"http://127.0.0.1:{server.port}/desk")
    assert_accessible(browser, "/desk's sign-in")
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
    assert_accessible(browser, "/desk after a sale, its tickets shown")
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


@needs_axe
def test_a_walk_in_is_sold_with_the_keyboard_alone(server, browser):
    """Tab and Shift+Tab from field to field, the arrows in the numbers and the choices,
    Enter and Space on the buttons: never a click, and the focus shown at each stop."""
    browser.get(f"http://127.0.0.1:{server.port}/desk")
    wait_for(browser, lambda d: d.find_element(By.ID, "sign-in").is_displayed())
    tab_to(browser, "#name")
    press(browser, "desk")
    tab_to(browser, "#secret")
    press(browser, PASSWORDS["desk"], Keys.ENTER)
    # The sign-in form is hidden: the focus goes to the sale, not to the page.
    wait_for(browser, lambda d: d.switch_to.active_element.get_attribute("id") == "sale-date")
    focused(browser)

    tab_to(browser, "#count-adult")
    press(browser, Keys.ARROW_UP, Keys.ARROW_UP)
    tab_to(browser, "#count-child")
    press(browser, Keys.ARROW_UP)
    tab_to(browser, "#count-adult", backwards=True)
    press(browser, Keys.ARROW_DOWN)  # one adult fewer
    tab_to(browser, "input[name='payment']:checked")
    press(browser, Keys.ARROW_RIGHT)
    assert focused(browser).get_attribute("value") == "card"
    wait_for(browser, lambda d: d.find_element(By.ID, "total").text ==
             "Total 17.00 EUR for 2 ticket(s)")
    tab_to(browser, "#sell-button")
    press(browser, Keys.ENTER)
    assert len(shown_codes(browser)) == 2
    assert browser.find_element(By.ID, "sell-status").text \
        == "Sold: 2 ticket(s), 17.00 EUR paid card."
    assert focused(browser).get_attribute("id") == "print"
    assert unreachable_controls(browser) == []
    # The check above can fail: a button taken out of the Tab order is found.
    browser.execute_script("document.getElementById('new-sale').tabIndex = -1")
    assert unreachable_controls(browser) == [
        '<button id="new-sale" type="button" tabindex="-1">']
    browser.execute_script("document.getElementById('new-sale').removeAttribute('tabindex')")
    tab_to(browser, "#new-sale")
    press(browser, Keys.SPACE)
    wait_for(browser, lambda d: not d.find_element(By.ID, "sold").is_displayed())
    assert focused(browser).get_attribute("id") == "sale-date"


def sell_one(browser):
    """One adult ticket sold at the desk page; its confirmation code."""
    set_count(browser, "adult", 1)
    browser.find_element(By.ID, "sell-button").click()
    shown_codes(browser)
    return browser.find_element(By.CSS_SELECTOR, "#tickets .code").text


def find(browser, field_id, text, found):
    """Look `text` up in the find form's `field_id`; wait for `found` (its status's start)."""
    for other in ("find-code", "find-email"):
        browser.find_element(By.ID, other).clear()
    browser.find_element(By.ID, field_id).send_keys(text)
    browser.find_element(By.ID, "find-button").click()
    wait_for(browser, lambda d: d.find_element(By.ID, "find-status").text.startswith(found))


def void_with_reason(browser, code, reason, found="#found"):
    """Void the found ticket (or, in "#found-orders", the found order), asked for a reason
    (required) and once more."""
    browser.find_element(By.CSS_SELECTOR, f"{found} button.danger").click()
    assert_accessible(browser, f"/desk asking for the reason of a void in {found}")
    assert browser.find_element(By.CSS_SELECTOR, f"{found} form label").text == \
        "Reason for the void"
    field = browser.switch_to.active_element  # the reason takes the focus
    confirm = browser.find_element(By.CSS_SELECTOR, f"{found} button.confirm")
    confirm.click()  # empty: the browser's own check of a required field stops it
    assert browser.execute_script("return arguments[0].validity.valueMissing", field)
    field.send_keys("   ")
    confirm.click()
    wait_for(browser, lambda d: d.find_element(By.ID, "find-status").text ==
             "Not voided: say why in the reason for the void.")
    field.clear()
    field.send_keys(reason)
    browser.find_element(By.CSS_SELECTOR, f"{found} button.confirm").click()
    wait_for(browser, lambda d: d.find_element(By.ID, "find-status").text == f"Voided {code}.")


@needs_axe
def test_a_ticket_found_by_its_code_is_voided_with_its_reason(server, browser, tmp_path):
    sign_in(browser, server, "desk")
    code = sell_one(browser)
    find(browser, "find-code", code[-12:], "1 ticket")
    assert_accessible(browser, "/desk with a ticket found")
    void_with_reason(browser, code, "Visitor fell ill")
    lines = [each.text for each in browser.find_elements(By.CSS_SELECTOR, "#found p")]
    assert lines[0].endswith("· void") and lines[1] == "Reason for the void: Visitor fell ill"
    assert fits_width(browser)
    screenshot(browser, tmp_path, "desk-voided-360.png")
    status, answer = call(server, "POST", "/v1.1/admissions", GATE_AUTH,
                          {"confirmationCode": code})
    assert (status, answer["result"]) == (410, "void"), answer
    # Found again, the void ticket shows the reason the service kept.
    browser.refresh()
    wait_for(browser, lambda d: d.find_element(By.ID, "desk").is_displayed())
    find(browser, "find-code", code, "1 ticket")
    assert [each.text for each in browser.find_elements(By.CSS_SELECTOR, "#found p")][1:] \
        == ["Reason for the void: Visitor fell ill"]
    assert browser.find_elements(By.CSS_SELECTOR, "#found button") == []
    assert csp_violations(browser) == []


@needs_axe
def test_an_order_booked_on_the_shop_is_found_due_and_marked_paid_cash(shop_server, browser,
                                                                       tmp_path):
    open_shop(browser, f"http://127.0.0.1:{shop_server.port}/shop")
    add_tickets(browser, "adult", 2)
    wait_for_total(browser, "Total: €24.00, paid at the desk")
    book(browser, "family@example.org")
    wait_for_tickets(browser, 2)

    sign_in(browser, shop_server, "desk")
    find(browser, "find-email", "family@example.org", "2 ticket(s)")
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#found-orders li"))
    order = browser.find_element(By.CSS_SELECTOR, "#found-orders li")
    line, due = order.find_elements(By.CSS_SELECTOR, "p")[:2]
    assert line.text.endswith("· 2 ticket(s) · confirmed")
    assert due.text == "Payment due: 24.00 EUR"
    code = line.text.split(" ")[1]
    assert [each.text for each in order.find_elements(By.CSS_SELECTOR, "button")] == [
        "Paid cash", "Paid card", f"Void {code}"]
    assert fits_width(browser)
    assert_accessible(browser, "/desk with an order's payment due")
    screenshot(browser, tmp_path, "desk-payment-due-360.png")

    order.find_element(By.XPATH, ".//button[.='Paid cash']").click()
    wait_for(browser, lambda d: d.find_element(By.ID, "find-status").text ==
             f"Order {code} paid cash: 24.00 EUR.")
    assert due.text == "Paid cash: 24.00 EUR"
    assert [each.text for each in order.find_elements(By.CSS_SELECTOR, "button")] == [
        f"Void {code}"]
    assert fits_width(browser)
    screenshot(browser, tmp_path, "desk-paid-360.png")
    _, found = call(shop_server, "POST", "/v1.1/admissions/lookup", DESK_AUTH,
                         {"email": "family@example.org"})
    status, stored = call(shop_server, "GET", f"/v1.1/orders/{found['tickets'][0]['orderId']}",
                          ADMIN)
    assert (status, stored["payment"], stored["total"]) == (200, "cash", 24)

    # Another ticket, sold at the desk, voided with a reason that then shows.
    browser.find_element(By.ID, "find-email").clear()
    sold = sell_one(browser)
    find(browser, "find-code", sold, "1 ticket")
    void_with_reason(browser, sold, "Sold twice by mistake")
    assert browser.find_elements(By.CSS_SELECTOR, "#found p")[1].text == \
        "Reason for the void: Sold twice by mistake"
    _, found = call(shop_server, "POST", "/v1.1/admissions/lookup", DESK_AUTH,
                    {"code": sold})
    assert found["tickets"][0]["voidReason"] == "Sold twice by mistake"

    # The family's whole order, voided at once: found again, each ticket reads void.
    find(browser, "find-email", "family@example.org", "2 ticket(s)")
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#found-orders li"))
    void_with_reason(browser, code, "Family could not come", "#found-orders")
    wait_for(browser, lambda d: [each.text.endswith("· void") for each in
                                 d.find_elements(By.CSS_SELECTOR, "#found li > p:first-child")]
             == [True, True])
    assert browser.find_element(By.ID, "find-status").text == f"Voided {code}."
    status, stored = call(shop_server, "GET", f"/v1.1/orders/{stored['orderId']}", ADMIN)
    assert (stored["status"], stored["voidReason"]) == ("voided", "Family could not come")
    assert csp_violations(browser) == []


@needs_axe
def test_an_admin_signs_in_for_this_page_only_and_a_gate_is_refused(server, browser,
                                                                      tmp_path):
    set_screen(browser, **DESK_SCREEN)
    sign_in(browser, server, "admin")
    assert browser.find_element(By.ID, "who").text == "Signed in as admin (admin)"
    # The admin's password is not kept: a reload asks for it again.
    assert browser.execute_script("return localStorage.getItem('museum.desk.signIn')") is None
    assert fits_width(browser)
    screenshot(browser, tmp_path, "desk-1280.png")
    assert_accessible(browser, "/desk signed in as admin, its admin sections shown")
    assert unreachable_controls(browser) == []
    browser.refresh()
    wait_for(browser, lambda d: d.find_element(By.ID, "sign-in").is_displayed())

    browser.find_element(By.ID, "name").send_keys("gate")
    browser.find_element(By.ID, "secret").send_keys(PASSWORDS["gate"])
    browser.find_element(By.ID, "sign-in-button").click()
    wait_for(browser, lambda d: d.find_element(By.ID, "sign-in-status").text ==
             "This page is for desk and admin users: sign in as one")
    assert_accessible(browser, "/desk's sign-in refusing a gate user")
    assert date.today()  # the page reached no sale
    assert csp_violations(browser) == []


def fill(browser, field_id, text):
    field = browser.find_element(By.ID, field_id)
    field.clear()
    field.send_keys(text)


@needs_axe
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
    assert_accessible(browser, "/desk's event form with a field error")

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


@needs_axe
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
    assert_accessible(browser, "/desk's report with its chart")
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


@needs_axe
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
    assert_accessible(browser, "/desk's day at a glance")
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


@needs_axe
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
        assert_accessible(browser, "/desk's failed mails")

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

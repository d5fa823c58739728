"""The scanner page on a busy morning, in a real headless Chromium against a real
`museum serve` on sqlite, at a 360×740 phone and a 1280×800 desk screen: a refusal hidden by
the next scan stays in the strip of recent scans, the outcome returns to Ready by itself,
an admission is undone from the strip (and one undone elsewhere offers no undo), a
visitor without the ticket is found by email and admitted, a 200-character event name fits
without scrolling, tones and buzzes tell admitted from refused (muted: the buzz only), and
a timed ticket scanned before its entry time is amber.

Nothing waits a fixed time for the page: each test waits on what the page shows, with a
deadline. Scans 0.4 s apart are typed through WebDriver's own pauses between keystrokes, as
a barcode scanner would type them. `MUSEUM_SCREENSHOTS=docs pytest tests/test_door_page.py`
rewrites the pictures of docs/door.md.
"""

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

import test_scan_page as scan_page
from a11y import assert_accessible_as_shown, needs_axe
from conftest import ADMIN, VISITOR, zone_at_noon
from serving import running_server
from test_scan_page import (GATE_AUTH, buy, call, csp_violations, open_page, qr, scan,
                            screenshot, shown, today_at, type_as_a_person)

# As the scanner page's tests: skipped without Chromium, a `museum serve` on a fresh sqlite
# database, a headless Chromium signed in as nobody.
pytestmark = scan_page.pytestmark
door_config, server, browser = scan_page.door_config, scan_page.server, scan_page.browser
SCREENS = {"360": {"width": 360, "height": 740, "mobile": True},
           "1280": {"width": 1280, "height": 800, "mobile": False}}
LONG_NAME = ("The Long Night of Museums: a torchlit tour through the galleries of antiquity, "
             "with readings, music from three centuries and a late supper in the Great Hall "
             "for friends of the museum and their guests")[:200].ljust(200, ".")


@pytest.fixture(params=sorted(SCREENS))
def screen(request, browser):
    """The size the browser shows the page at, by name ("360" or "1280")."""
    size = SCREENS[request.param]
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                            {**size, "deviceScaleFactor": 1})
    return request.param


def strip_rows(driver):
    """The strip of recent scans, newest first: [(row class, words of the row)], read at
    once (the page redraws the strip with each answer)."""
    return [(tone, words) for tone, words in driver.execute_script("""
        return [...document.querySelectorAll("#strip li")].map((row) => [row.className,
            [...row.querySelectorAll(".scan p")].map((part) => part.textContent)]);""")]


def wait_for_strip(driver, count):
    """The strip once it holds `count` scans, every one answered."""
    def answered(d):
        rows = strip_rows(d)
        return rows if len(rows) == count and all(c != "busy" for c, _ in rows) else None

    return WebDriverWait(driver, 10).until(answered)


def outcome(driver):
    """(body tone, headline) as shown."""
    return (driver.find_element(By.TAG_NAME, "body").get_attribute("class"),
            driver.find_element(By.ID, "headline").text)


def fits_the_screen(driver):
    """No scrolling, and the counters wholly in view."""
    return driver.execute_script("""
        const counters = document.getElementById("counters").getBoundingClientRect();
        return document.scrollingElement.scrollHeight <= window.innerHeight
            && document.scrollingElement.scrollWidth <= window.innerWidth
            && counters.top >= 0 && counters.bottom <= window.innerHeight;""")


def set_clear_after(driver, seconds):
    driver.find_element(By.ID, "settings").click()
    field = driver.find_element(By.ID, "clear-after")
    field.clear()
    field.send_keys(str(seconds))
    driver.find_element(By.ID, "options-close").click()


def test_a_refusal_hidden_by_the_next_scan_stays_red_in_the_strip(server, browser, screen,
                                                                 tmp_path):
    today = today_at(server).isoformat()
    first, elsewhere, second = (buy(server, today) for _ in range(3))
    status, _ = call(server, "POST", "/v1.1/admissions", ADMIN, {"code": qr(elsewhere)})
    assert status == 201  # admitted at another gate
    open_page(browser, server)
    set_clear_after(browser, 30)  # the last outcome stays while it is looked at

    # Valid, already admitted (at another gate), valid: 0.4 s apart, as a queue moves.
    (ActionChains(browser).send_keys(qr(first) + Keys.ENTER).pause(0.4)
     .send_keys(qr(elsewhere) + Keys.ENTER).pause(0.4)
     .send_keys(qr(second) + Keys.ENTER).perform())
    rows = wait_for_strip(browser, 3)
    first_end, elsewhere_end, second_end = (
        "…" + each["confirmationCode"][-5:] for each in (first, elsewhere, second))
    assert [(tone, words[1:]) for tone, words in rows] == [
        ("good", ["Admitted", "General entry", second_end]),
        ("bad", ["Already admitted", "General entry", elsewhere_end]),
        ("good", ["Admitted", "General entry", first_end]),
    ]
    assert outcome(browser) == ("good", "Admitted")
    WebDriverWait(browser, 10).until(lambda d: shown(d, "previous") == "(previous scan refused)")
    assert fits_the_screen(browser)
    screenshot(browser, tmp_path, f"door-strip-{screen}.png")

    # Tapping the red row tells what happened to that scan.
    browser.find_elements(By.CSS_SELECTOR, "#strip li .scan")[1].click()
    facts = browser.find_element(By.ID, "scan-facts").text
    assert shown(browser, "scan-title") == "Already admitted"
    for expected in (elsewhere["ticketId"], elsewhere["confirmationCode"], "by admin"):
        assert expected in facts
    screenshot(browser, tmp_path, f"door-details-{screen}.png")
    browser.find_element(By.ID, "scan-close").click()
    WebDriverWait(browser, 10).until(  # ready for the next ticket
        lambda d: d.switch_to.active_element.get_attribute("id") == "code")

    # A reload keeps the strip.
    browser.refresh()
    assert [(tone, words[1:]) for tone, words in wait_for_strip(browser, 3)] == [
        (tone, words[1:]) for tone, words in rows]
    assert csp_violations(browser) == []


def test_the_outcome_returns_to_ready_and_the_settings_stay(server, browser, screen, tmp_path):
    open_page(browser, server)
    set_clear_after(browser, 1)
    browser.find_element(By.ID, "mute").click()
    assert shown(browser, "mute") == "Muted"

    assert scan(browser, "ticket-general-000000-00000")[:2] == ("bad", "Unknown")
    WebDriverWait(browser, 10).until(lambda d: outcome(d) == ("idle", "Ready"))
    assert strip_rows(browser)[0][0] == "bad"  # the refusal is still there to see
    screenshot(browser, tmp_path, f"door-ready-{screen}.png")

    browser.refresh()
    WebDriverWait(browser, 10).until(lambda d: shown(d, "mute") == "Muted")
    browser.find_element(By.ID, "settings").click()
    assert browser.find_element(By.ID, "clear-after").get_attribute("value") == "1"
    screenshot(browser, tmp_path, f"door-settings-{screen}.png")


def test_an_admission_undone_from_the_strip_scans_as_valid_again(server, browser, screen,
                                                                tmp_path):
    today = today_at(server).isoformat()
    ticket = buy(server, today)
    open_page(browser, server)
    assert scan(browser, qr(ticket))[:2] == ("good", "Admitted")
    WebDriverWait(browser, 10).until(
        lambda d: shown(d, "device-count") == "· 1 admitted here today")

    browser.find_element(By.CSS_SELECTOR, "#strip li .undo").click()
    assert shown(browser, "undo-status").startswith("Undo this admission?")
    screenshot(browser, tmp_path, f"door-undo-{screen}.png")
    browser.find_element(By.ID, "undo-confirm").click()
    WebDriverWait(browser, 10).until(
        lambda d: shown(d, "undo-status") == "Undone: the ticket will scan as valid again.")
    WebDriverWait(browser, 10).until(  # the service's history, the undo included
        lambda d: d.find_element(By.ID, "scan-facts").text.endswith(" by gate2")
        and "\nHistory\nadmitted " in d.find_element(By.ID, "scan-facts").text
        and "\nundone " in d.find_element(By.ID, "scan-facts").text.split("History")[1])
    screenshot(browser, tmp_path, f"door-undone-{screen}.png")
    browser.find_element(By.ID, "scan-close").click()
    assert strip_rows(browser)[0][1][1] == "Admitted · undone"
    assert not browser.find_elements(By.CSS_SELECTOR, "#strip li .undo")

    status, history = call(server, "GET", f"/v1.1/admissions/{ticket['ticketId']}", GATE_AUTH)
    assert status == 200 and history["admitted"] is False
    assert [entry["action"] for entry in history["history"]] == ["admitted", "undone"]
    assert scan(browser, qr(ticket))[:2] == ("good", "Admitted")
    assert csp_violations(browser) == []


@needs_axe
def test_a_lost_ticket_is_found_by_email_and_admitted(server, browser, screen, tmp_path):
    today = today_at(server).isoformat()
    email = "lost.ticket@example.org"
    status, ticket = call(server, "POST", "/v1.1/tickets", VISITOR,
                          {"ticketType": "general", "ticketDate": today, "email": email})
    assert status == 201, ticket
    buy(server, today)  # another buyer's: not found
    open_page(browser, server)

    browser.find_element(By.ID, "find").click()
    type_as_a_person(browser, email + Keys.ENTER)  # into the email field, which has the focus
    WebDriverWait(browser, 10).until(lambda d: shown(d, "find-status") == f"1 ticket for {today}")
    found = browser.find_element(By.ID, "found").text
    assert "General entry" in found and ticket["confirmationCode"] in found
    assert "not admitted" in found
    screenshot(browser, tmp_path, f"door-find-{screen}.png")
    assert_accessible_as_shown(browser, f"/scan's search for a lost ticket at {screen}")

    browser.find_element(By.CSS_SELECTOR, "#found button").click()
    WebDriverWait(browser, 10).until(lambda d: outcome(d) == ("good", "Admitted"))
    assert strip_rows(browser)[0][1][1:3] == ["Admitted", "General entry"]
    assert email not in server.log() and email not in browser.current_url

    # Only the random part of the code, in capitals, typed as the label says: the same ticket.
    part = ticket["confirmationCode"].split("-", 2)[2].upper()
    assert scan(browser, part)[:2] == ("warn", "Admitted here")
    browser.find_element(By.ID, "find").click()
    browser.find_element(By.ID, "find-code").click()
    type_as_a_person(browser, part + Keys.ENTER)
    WebDriverWait(browser, 10).until(lambda d: shown(d, "find-status") == f"1 ticket for {today}")
    assert "· admitted" in browser.find_element(By.ID, "found").text
    assert csp_violations(browser) == []


def test_a_200_character_event_name_fits_without_scrolling(server, browser, screen, tmp_path):
    assert len(LONG_NAME) == 200
    today = today_at(server).isoformat()
    status, event = call(server, "POST", "/v1.1/special-events", ADMIN,
                         {"name": LONG_NAME, "location": "Great Hall", "price": 25,
                          "eventDescription": "Torchlit tour.", "dates": [today]})
    assert status == 201, event
    tickets = [buy(server, today, event["eventId"]) for _ in range(6)]
    open_page(browser, server)
    set_clear_after(browser, 30)
    for ticket in tickets:
        assert scan(browser, qr(ticket))[:2] == ("good", "Admitted")
    assert scan(browser, qr(tickets[0]))[:2] == ("warn", "Admitted here")
    wait_for_strip(browser, 7)
    WebDriverWait(browser, 10).until(
        lambda d: d.find_element(By.CSS_SELECTOR, "#counts tr:last-child td").text == "6 / 6")
    assert fits_the_screen(browser)
    screenshot(browser, tmp_path, f"door-long-name-{screen}.png")


def test_an_admission_undone_elsewhere_no_longer_offers_undo(server, browser, screen):
    today = today_at(server).isoformat()
    ticket = buy(server, today)
    open_page(browser, server)
    assert scan(browser, qr(ticket))[:2] == ("good", "Admitted")
    # Meanwhile an admin undid that admission and admitted the ticket again: the admission
    # is no longer this gate's, though the strip still offers its undo.
    status, _, _ = server.request("DELETE", f"/v1.1/admissions/{ticket['ticketId']}",
                                  headers=ADMIN)
    assert status == 204
    assert call(server, "POST", "/v1.1/admissions", ADMIN, {"code": qr(ticket)})[0] == 201

    # Opened, the row reads the ticket's history: undone, and no confirmation to give.
    browser.find_element(By.CSS_SELECTOR, "#strip li .undo").click()
    WebDriverWait(browser, 10).until(lambda d: shown(d, "scan-title") == "Admitted · undone")
    assert not browser.find_element(By.ID, "undo-confirm").is_displayed()
    assert "\nundone " in browser.find_element(By.ID, "scan-facts").text
    browser.find_element(By.ID, "scan-close").click()
    assert strip_rows(browser)[0][1][1] == "Admitted · undone"
    assert not browser.find_elements(By.CSS_SELECTOR, "#strip li .undo")
    status, history = call(server, "GET", f"/v1.1/admissions/{ticket['ticketId']}", GATE_AUTH)
    assert history["admitted"] is True and history["admittedBy"] == "admin"


# Watches the page's sounds and buzzes without changing them: each oscillator started (its
# frequency) and each vibration asked for, in the order made.
SIGNAL_WATCH = """
    window.signalsMade = [];
    const start = OscillatorNode.prototype.start;
    OscillatorNode.prototype.start = function (...when) {
        window.signalsMade.push(this.frequency.value);
        return start.apply(this, when);
    };
    navigator.vibrate = (pattern) => window.signalsMade.push(["vibrate", pattern]) > 0;
"""


def signals(driver):
    return driver.execute_script("const made = window.signalsMade.splice(0); return made;")


def test_tones_and_buzzes_tell_admitted_from_refused_and_mute_silences_them(server, browser):
    today = today_at(server).isoformat()
    ticket, other = buy(server, today), buy(server, today)
    browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": SIGNAL_WATCH})
    open_page(browser, server)
    signals(browser)

    assert scan(browser, qr(ticket))[:2] == ("good", "Admitted")
    assert signals(browser) == [1320, ["vibrate", 80]]  # one short high tone
    # Scanned again at this gate at once: the visitor is in, no refusal's tone.
    assert scan(browser, qr(ticket))[:2] == ("warn", "Admitted here")
    assert signals(browser) == [1320, ["vibrate", 80]]
    assert call(server, "POST", "/v1.1/admissions", ADMIN, {"code": qr(other)})[0] == 201
    assert scan(browser, qr(other))[:2] == ("bad", "Already admitted")
    assert signals(browser) == [220, 220, ["vibrate", [200, 100, 200]]]  # low, twice

    browser.find_element(By.ID, "mute").click()
    assert scan(browser, "ticket-general-000000-00000")[:2] == ("bad", "Unknown")
    assert signals(browser) == [["vibrate", [200, 100, 200]]]  # muted: the buzz only


def test_a_ticket_scanned_before_its_entry_time_is_shown_amber(tmp_path, door_config,
                                                              browser):
    """With timed entry, a ticket for today's last slot (23:55, open all day) is too early
    until 15 minutes before it: amber, as a wrong date is, with the service's words. The
    museum's zone is one where it is about noon now, so the slot is hours away."""
    timed_config = door_config.replace("timezone = UTC", f"timezone = {zone_at_noon()}") \
        .replace("08:00-20:00", "00:00-23:59").replace("[hours]\n", "[hours]\nslot_minutes = 5\n")
    with running_server(tmp_path, timed_config) as server:
        today = today_at(server)
        status, ticket = call(server, "POST", "/v1.1/tickets", VISITOR, {
            "ticketType": "general", "ticketDate": today.isoformat(),
            "email": "ada@example.org", "entryTime": "23:55"})
        assert status == 201, ticket
        open_page(browser, server)
        assert scan(browser, qr(ticket)) == (
            "warn", "Too early", ["entry at 23:55, admitted from 23:40", "General entry"])
        # Find shows the slot too.
        browser.find_element(By.ID, "find").click()
        browser.find_element(By.ID, "find-code").click()
        type_as_a_person(browser, ticket["confirmationCode"][-12:] + Keys.ENTER)
        WebDriverWait(browser, 10).until(lambda d: "entry 23:55" in d.find_element(
            By.ID, "found").text)
        assert csp_violations(browser) == []

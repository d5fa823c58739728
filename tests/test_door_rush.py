"""The scanner page at the moments a busy entrance has, in a real headless Chromium
against a real `museum serve`, at a 360×740 phone and a 1280×800 screen: a scan made while a
window is open (an undo's confirmation, a scan's details, Find, the settings) is decided as
a scan and confirms nothing; a scanner typing through a German or French keyboard layout is
read; a misread is amber, not fraud; every line of every outcome is on screen whole; Find
admits a family; the strip follows an undo made elsewhere; a revoked key signs out with the
refusal tone and a scan is never typed into the sign-in form.

A barcode scanner types its text a few ms per key and Enter: WebDriver's ActionChains types
at that pace; a person's keys are typed 0.1 s apart (`type_as_a_person`).
"""

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

import test_door_page as door_page
import test_scan_page as scan_page
from conftest import ADMIN, VISITOR
from test_door_page import (LONG_NAME, SIGNAL_WATCH, fits_the_screen, outcome, set_clear_after,
                            signals, strip_rows, wait_for_strip)
from test_scan_page import (GATE_AUTH, buy, call, csp_violations, open_page, qr,
                            revoke_device, screenshot, shown, sign_in_status,
                            stored_sign_in, today_at, type_as_a_person)

pytestmark = scan_page.pytestmark
door_config, server, browser = scan_page.door_config, scan_page.server, scan_page.browser
screen = door_page.screen


def scanner_types(driver, text):
    """`text` and Enter at a scanner's pace, wherever the focus is."""
    ActionChains(driver).send_keys(text + Keys.ENTER).perform()


def history(server, ticket):
    status, answer = call(server, "GET", f"/v1.1/admissions/{ticket['ticketId']}", GATE_AUTH)
    assert status == 200
    return [entry["action"] for entry in answer["history"]]


def no_window_open(driver):
    return not driver.execute_script("return document.querySelector('dialog[open]')")


# -- a scan is always a scan -----------------------------------------------------------------

def test_a_scan_with_any_window_open_is_a_scan_and_confirms_nothing(server, browser, screen):
    today = today_at(server).isoformat()
    first, *others = (buy(server, today) for _ in range(5))
    open_page(browser, server)
    set_clear_after(browser, 30)
    scanner_types(browser, qr(first))
    wait_for_strip(browser, 1)

    def open_undo_confirmation(d):
        d.find_element(By.CSS_SELECTOR, "#strip li .undo").click()

    def open_details(d):
        d.find_elements(By.CSS_SELECTOR, "#strip li .scan")[-1].click()

    def open_find(d):
        d.find_element(By.ID, "find").click()

    def open_settings(d):
        d.find_element(By.ID, "settings").click()

    windows = [(open_undo_confirmation, "scan-details"), (open_details, "scan-details"),
               (open_find, "finder"), (open_settings, "options")]
    for count, ((open_window, window), ticket) in enumerate(zip(windows, others), start=2):
        open_window(browser)
        assert browser.find_element(By.ID, window).get_attribute("open") is not None
        focused = browser.switch_to.active_element.get_attribute("id")
        assert focused not in ("undo-confirm", "admit-all")
        scanner_types(browser, qr(ticket))
        rows = wait_for_strip(browser, count)
        assert rows[0][0] == "good" and outcome(browser) == ("good", "Admitted")
        assert no_window_open(browser)
        WebDriverWait(browser, 10).until(
            lambda d: d.switch_to.active_element.get_attribute("id") == "code")

    # Nothing was undone, nothing typed into Find or the settings.
    assert [tone for tone, _ in strip_rows(browser)] == ["good"] * 5
    for ticket in (first, *others):
        assert history(server, ticket) == ["admitted"]
    assert browser.find_element(By.ID, "find-email").get_attribute("value") == ""
    assert browser.find_element(By.ID, "clear-after").get_attribute("value") == "30"

    # Enter on the undo's confirmation itself (moved to by Tab, say) confirms nothing either:
    # it takes a tap or a click.
    open_undo_confirmation(browser)
    confirm = browser.find_element(By.ID, "undo-confirm")
    browser.execute_script("arguments[0].focus()", confirm)
    ActionChains(browser).send_keys(Keys.ENTER).send_keys(Keys.SPACE).perform()
    assert shown(browser, "undo-status").startswith("Undo this admission?")
    assert history(server, others[-1]) == ["admitted"]
    assert csp_violations(browser) == []


def test_a_person_still_types_into_find_and_the_settings(server, browser):
    today = today_at(server).isoformat()
    ticket = buy(server, today)
    open_page(browser, server)
    browser.find_element(By.ID, "find").click()
    browser.find_element(By.ID, "find-code").click()
    type_as_a_person(browser, ticket["confirmationCode"][-12:] + Keys.ENTER)
    WebDriverWait(browser, 10).until(lambda d: shown(d, "find-status") == f"1 ticket for {today}")
    assert browser.find_element(By.ID, "find-code").get_attribute("value") == \
        ticket["confirmationCode"][-12:]
    assert strip_rows(browser) == []  # a search, not a scan


# -- misreads and other keyboard layouts -----------------------------------------------------

# The keys a US-layout scanner presses, and what a German (QWERTZ) or French (AZERTY) system
# makes of them: the number row, the letter rows (";" sits where German has "ö", French "m"),
# and the same with Shift.
US_KEYS = "1234567890-qwertyuiopasdfghjkl;zxcvbnm" + "QWERTYUIOPASDFGHJKL:ZXCVBNM"
LAYOUT_KEYS = {
    "QWERTZ": "1234567890ßqwertzuiopasdfghjklöyxcvbnm" + "QWERTZUIOPASDFGHJKLÖYXCVBNM",
    "AZERTY": "&é\"'(-è_çà)azertyuiopqsdfghjklmwxcvbn," + "AZERTYUIOPQSDFGHJKLMWXCVBN?",
}


def through_layout(text, layout):
    keys = dict(zip(US_KEYS, LAYOUT_KEYS[layout], strict=True))
    return "".join(keys[character] for character in text)


def test_a_scanner_typing_through_qwertz_or_azerty_is_read(server, browser, screen, tmp_path):
    today = today_at(server).isoformat()
    german, french = buy(server, today), buy(server, today)
    typed = through_layout(qr(german), "QWERTZ")
    assert typed.startswith("MUSEUM1Ö") and "ß" in typed
    open_page(browser, server)
    set_clear_after(browser, 30)

    scanner_types(browser, typed)
    wait_for_strip(browser, 1)
    assert outcome(browser) == ("good", "Admitted")
    note = browser.find_element(By.CSS_SELECTOR, "#details p.note").text
    assert note.startswith("The scanner types with another keyboard layout (German")
    screenshot(browser, tmp_path, f"door-layout-{screen}.png")
    assert history(server, german) == ["admitted"]

    typed = through_layout(qr(french), "AZERTY")
    assert typed.startswith("?USEU?&M")
    scanner_types(browser, typed)
    wait_for_strip(browser, 2)
    assert outcome(browser) == ("good", "Admitted")
    assert not browser.find_elements(By.CSS_SELECTOR, "#details p.note")  # said once
    assert history(server, french) == ["admitted"]

    # Scanned again, through the layout: the ticket it is (admitted here), not unknown.
    scanner_types(browser, typed)
    wait_for_strip(browser, 3)
    assert outcome(browser) == ("warn", "Admitted here")


def test_a_truncated_read_is_unreadable_not_forged(server, browser, screen, tmp_path):
    ticket = buy(server, today_at(server).isoformat())
    open_page(browser, server)
    set_clear_after(browser, 30)
    for count, text in enumerate((qr(ticket)[:70], through_layout(qr(ticket)[:70], "QWERTZ"),
                                  "WIFI:S:museum;T:WPA;P:visitors;;"), start=1):
        scanner_types(browser, text)
        wait_for_strip(browser, count)
        assert outcome(browser) == ("warn", "Unreadable"), text
    screenshot(browser, tmp_path, f"door-unreadable-{screen}.png")
    assert history(server, ticket) == []
    scanner_types(browser, qr(ticket))  # read whole at last, and not locked out
    wait_for_strip(browser, 4)
    assert outcome(browser) == ("good", "Admitted")


# -- every line on screen --------------------------------------------------------------------

# [text, inside the viewport and the outcome's box, clipped] of each line of the outcome; an
# event's name (class "kind") may end in an ellipsis by design and is not counted as clipped.
OUTCOME_LINES = """
    const view = {left: 0, top: 0, right: window.innerWidth, bottom: window.innerHeight};
    const box = document.getElementById("outcome").getBoundingClientRect();
    const within = (r, b) => r.left >= b.left - 0.5 && r.right <= b.right + 0.5
        && r.top >= b.top - 0.5 && r.bottom <= b.bottom + 0.5;
    const lines = [...document.querySelectorAll("#headline, #details p, #previous")]
        .filter((line) => line.checkVisibility());
    return lines.map((line) => {
        const r = line.getBoundingClientRect();
        const clipped = !line.classList.contains("kind") && (
            line.scrollWidth > line.clientWidth || line.scrollHeight > line.clientHeight);
        return [line.textContent, within(r, view) && within(r, box), clipped];
    });"""


def outcome_lines(driver):
    return driver.execute_script(OUTCOME_LINES)


@pytest.mark.slow
def test_every_line_of_every_outcome_is_on_screen_whole(server, browser, screen, tmp_path):
    today = today_at(server)
    tomorrow = today.fromordinal(today.toordinal() + 1).isoformat()
    events = []
    for number in range(5):  # four that day, and one cancelled
        name = f"{number} {LONG_NAME}"[:200]
        status, event = call(server, "POST", "/v1.1/special-events", ADMIN,
                             {"name": name, "location": "Great Hall", "price": 25,
                              "eventDescription": "Torchlit tour.",
                              "dates": [today.isoformat(), tomorrow]})
        assert status == 201, event
        events.append(event)
    for event in events:  # sold today, never scanned: each event has its counter
        buy(server, today.isoformat(), event["eventId"])
    admitted, cancelled = (buy(server, today.isoformat(), e["eventId"]) for e in events[::4])
    voided = buy(server, today.isoformat(), events[2]["eventId"])
    early = buy(server, tomorrow, events[3]["eventId"])
    elsewhere = buy(server, today.isoformat(), events[1]["eventId"])
    assert call(server, "POST", "/v1.1/admissions", ADMIN, {"code": qr(elsewhere)})[0] == 201
    assert server.request("DELETE", f"/v1.1/special-events/{events[4]['eventId']}",
                          headers=ADMIN)[0] == 204
    assert server.request("DELETE", f"/v1.1/tickets/{voided['ticketId']}",
                          headers=ADMIN)[0] == 204
    open_page(browser, server)
    set_clear_after(browser, 60)
    assert len(browser.find_elements(By.CSS_SELECTOR, "#counts tr")) == 5  # general, 4 events

    scans = [(qr(admitted), "Admitted"), (qr(admitted), "Admitted here"),
             (qr(elsewhere), "Already admitted"),
             (qr(early), "Wrong date"), (qr(cancelled), "Cancelled"), (qr(voided), "Void"),
             (qr(admitted, secret="not-the-museums-key-" * 2), "Forged"),
             ("ticket-general-000000-00000", "Unknown"), (qr(admitted)[:50], "Unreadable")]
    for count, (text, headline) in enumerate(scans, start=1):
        scanner_types(browser, text)
        wait_for_strip(browser, count)
        assert outcome(browser)[1] == headline
        lines = outcome_lines(browser)
        assert all(inside and not clipped for _, inside, clipped in lines), lines
        assert fits_the_screen(browser)

    # A refusal hidden at once by the next scan: "(previous scan refused)" on screen too.
    (ActionChains(browser).send_keys(qr(elsewhere) + Keys.ENTER).pause(0.3)
     .send_keys(qr(early) + Keys.ENTER).perform())
    wait_for_strip(browser, len(scans) + 2)
    WebDriverWait(browser, 10).until(lambda d: shown(d, "previous") == "(previous scan refused)")
    lines = outcome_lines(browser)
    assert [text for text, _, _ in lines][-1] == "(previous scan refused)"
    assert any("(in 1 day)" in text for text, _, _ in lines)
    assert all(inside and not clipped for _, inside, clipped in lines), lines
    assert fits_the_screen(browser)
    screenshot(browser, tmp_path, f"door-lines-{screen}.png")

    # The strip's rows name the ticket's event, on the phone too.
    kinds = browser.execute_script("""return [...document.querySelectorAll("#strip .kind")]
        .map((kind) => kind.checkVisibility() && kind.textContent);""")
    assert kinds[0].startswith("Event: 3 The Long Night")


# -- Find admits a family --------------------------------------------------------------------

def test_find_admits_a_family_at_once(server, browser, screen, tmp_path):
    """A family's four tickets for today, one admitted already (at another gate): one search,
    one tap, three admissions."""
    email = "family@example.org"
    today = today_at(server).isoformat()
    family = []
    for _ in range(4):
        status, ticket = call(server, "POST", "/v1.1/tickets", VISITOR, {
            "ticketType": "general", "ticketDate": today, "email": email})
        assert status == 201, ticket
        family.append(ticket)
    assert call(server, "POST", "/v1.1/admissions", ADMIN, {"code": qr(family[0])})[0] == 201
    open_page(browser, server)
    set_clear_after(browser, 30)

    browser.find_element(By.ID, "find").click()
    type_as_a_person(browser, email + Keys.ENTER)
    WebDriverWait(browser, 10).until(lambda d: shown(d, "find-status") == f"4 tickets for {today}")
    assert shown(browser, "admit-all") == "Admit all 3"
    screenshot(browser, tmp_path, f"door-family-{screen}.png")
    # Enter on it (a scanner's, say) admits nobody: it takes a tap.
    button = browser.find_element(By.ID, "admit-all")
    browser.execute_script("arguments[0].focus()", button)
    ActionChains(browser).send_keys(Keys.ENTER).perform()
    assert strip_rows(browser) == []
    button.click()
    rows = wait_for_strip(browser, 3)
    assert [words[1] for _, words in rows] == ["Admitted"] * 3
    for ticket in family:
        assert history(server, ticket) == ["admitted"]
    assert csp_violations(browser) == []


# -- the strip follows the service, a revoked key, the sign-in form --------------------------

@pytest.mark.slow
def test_an_admins_undo_shows_in_the_strip_within_30_s(server, browser):
    ticket = buy(server, today_at(server).isoformat())
    open_page(browser, server)
    scanner_types(browser, qr(ticket))
    assert wait_for_strip(browser, 1)[0][1][1] == "Admitted"
    assert browser.find_elements(By.CSS_SELECTOR, "#strip li .undo")
    assert server.request("DELETE", f"/v1.1/admissions/{ticket['ticketId']}",
                          headers=ADMIN)[0] == 204
    WebDriverWait(browser, 45).until(lambda d: strip_rows(d)[0][1][1] == "Admitted · undone")
    assert not browser.find_elements(By.CSS_SELECTOR, "#strip li .undo")


def test_a_revoked_key_signs_out_with_the_refusal_tone_and_a_scan_is_no_password(
        server, browser):
    browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": SIGNAL_WATCH})
    ticket = buy(server, today_at(server).isoformat())
    open_page(browser, server)
    signals(browser)
    revoke_device(server)
    scanner_types(browser, qr(ticket))
    assert sign_in_status(browser) == "Signed out: this device's key is no longer valid"
    assert signals(browser) == [220, 220, ["vibrate", [200, 100, 200]]]
    assert browser.switch_to.active_element.get_attribute("id") == "secret"

    # The next visitor's scan lands on the form: said, and never sent as the password.
    sign_ins = server.log().count("/v1.1/devices/session")
    scanner_types(browser, qr(ticket))
    WebDriverWait(browser, 10).until(
        lambda d: shown(d, "sign-in-status").startswith("Scan after signing in"))
    assert browser.find_element(By.ID, "secret").get_attribute("value") == ""
    assert stored_sign_in(browser) is None
    assert server.log().count("/v1.1/devices/session") == sign_ins

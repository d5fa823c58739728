"""The scanner page's amber "Collect", in a real headless Chromium against a real `museum
serve`: a family books on /shop to pay at the desk and is scanned on /scan on a 360×740
phone; the first ticket shows amber "Collect 24.00 EUR" large, announced as every outcome,
the next one plain green. Offline, the page says the same from its day's list.

`MUSEUM_SCREENSHOTS=docs pytest tests/test_door_collect_page.py` rewrites the pictures of
docs/door.md.
"""

import pytest
from selenium.webdriver.common.by import By

import test_door_offline_page as offline_page
from a11y import assert_accessible, needs_axe
from serving import free_port, running_server
from test_door_offline_page import (OFFLINE_LINES, network_to, open_page_as, wait_for_rows,
                                    waiting)
from test_door_page import fits_the_screen, set_clear_after
from test_scan_page import (SMALL_PHONE, browser, csp_violations, open_page,  # noqa: F401
                            scan, screenshot, sell_an_order, set_screen)
from test_shop_page_browser import (FAMILY_EMAIL, add_tickets, book, open_shop, shop_config,
                                    wait_for_tickets, wait_for_total)

pytestmark = pytest.mark.slow  # a server and a browser, the shop then the door: 10 s and more
door_config = offline_page.door_config
AMBER, BLACK = "rgb(255, 176, 0)", "rgb(0, 0, 0)"


def outcome_colours(driver):
    """(the page's background, the headline's colour, its font size in px, whether it is
    inside the live region that announces every outcome)."""
    return tuple(driver.execute_script("""
        const headline = document.getElementById("headline");
        return [getComputedStyle(document.body).backgroundColor,
                getComputedStyle(headline).color, parseFloat(getComputedStyle(headline).fontSize),
                headline.closest("[aria-live]") !== null];"""))


@needs_axe
def test_a_family_booked_to_pay_at_the_desk_is_asked_to_pay_once_in_amber(browser, tmp_path):
    set_screen(browser, **SMALL_PHONE)
    with running_server(tmp_path, shop_config(free_port())) as server:
        open_shop(browser, f"http://127.0.0.1:{server.port}/shop")
        add_tickets(browser, "adult", 2)
        add_tickets(browser, "child", 2)
        wait_for_total(browser, "Total: €24.00, paid at the desk")
        book(browser, FAMILY_EMAIL)
        wait_for_tickets(browser, 4)
        codes = [each.text for each in
                 browser.find_elements(By.CSS_SELECTOR, "#order-tickets p.code")]

        open_page(browser, server)
        set_clear_after(browser, 60)  # the outcome stays for the screenshot
        tone, headline, lines = scan(browser, codes[0])
        assert (tone, headline, lines[:2]) == ("collect", "Collect 24.00 EUR",
                                               ["Admitted: not paid yet", "General entry"])
        background, colour, size, announced = outcome_colours(browser)
        # Black on amber (about 11:1), at the headline's full size, in the live region.
        assert (background, colour, announced) == (AMBER, BLACK, True) and size >= 48
        assert fits_the_screen(browser)
        screenshot(browser, tmp_path, "scan-order-collect.png")
        assert_accessible(browser, "/scan asking to collect")

        # The family's next ticket: the money was asked for with the first.
        assert scan(browser, codes[1])[:2] == ("good", "Admitted")
        assert csp_violations(browser) == []


def test_offline_the_page_asks_to_collect_from_its_list(tmp_path, door_config, browser):
    set_screen(browser, **SMALL_PHONE)
    with running_server(tmp_path, door_config) as server, network_to(server) as network:
        family = sell_an_order(server, ["adult", "child"], payment="due")
        first, second = (ticket["confirmationCode"] for ticket in family["tickets"])
        open_page_as(browser, network)
        set_clear_after(browser, 60)
        network.cut()
        tone, headline, lines = scan(browser, first)
        assert (tone, headline) == ("collect", "Collect 20.00 EUR")
        assert lines[0] == "Admitted (offline): not paid yet" and lines[-1] == "sent when online"
        screenshot(browser, tmp_path, "door-collect-offline-360.png")
        assert scan(browser, second) == ("good", "Admitted (offline)", OFFLINE_LINES)
        assert waiting(browser) == "Offline · 2 to send"

        # Back online, the service agrees: the first asked for it, the second not.
        network.mend()
        wait_for_rows(browser, ["Admitted", "Collect 20.00 EUR"])
        assert waiting(browser) == ""

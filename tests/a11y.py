"""Accessibility in the pages' Chromium tests: axe-core's serious and critical violations
(WCAG 2.0 and 2.1, A and AA, and axe's best practices) in the state a test has brought a
page to, at a phone's size and a desk's; and the keyboard alone moving the focus from stop
to stop, the focus shown at each.

axe-core comes from npm, pinned in tests/npm/package.json and its lock, installed with
`npm ci --prefix tests/npm` (CI does it); nothing is downloaded at test time. Without it
the tests that need it skip, saying why (fail under CI, see conftest.needs).
"""

from pathlib import Path

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys

from conftest import needs

AXE_SCRIPT = Path(__file__).parent / "npm" / "node_modules" / "axe-core" / "axe.min.js"
needs_axe = needs(AXE_SCRIPT.exists(), "needs axe-core from npm: npm ci --prefix tests/npm")
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]
# The sizes every page works at, without scrolling sideways (WCAG's reflow): a small phone
# and a desk's screen.
SMALL_PHONE = {"width": 360, "height": 740}
DESK_SIZE = {"width": 1280, "height": 800}
SIZES = (SMALL_PHONE, DESK_SIZE)

# Run on the page as it is; only what a person is stopped by (serious, critical) is kept.
RUN_AXE = """
const [tags, done] = arguments;
axe.run(document, {runOnly: {type: "tag", values: tags}, resultTypes: ["violations"]})
  .then((results) => done(results.violations
    .filter((rule) => rule.impact === "serious" || rule.impact === "critical")
    .map((rule) => ({id: rule.id, impact: rule.impact, help: rule.help,
                     nodes: rule.nodes.map((node) => ({
                       target: node.target.join(" "), summary: node.failureSummary}))}))),
        (error) => done([{id: "axe-error", impact: "critical", help: String(error), nodes: []}]));
"""


def set_screen(driver, width, height):
    """The page's viewport set to `width`×`height` CSS pixels, as a phone's or a screen's."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": 1, "mobile": True})


def serious_violations(driver):
    """axe-core's serious and critical violations on the page now: a list of {id, impact,
    help, nodes: [{target, summary}]}. The script is given through WebDriver, which the
    page's Content-Security-Policy does not apply to; it is given again after a page load."""
    if not driver.execute_script("return typeof axe !== 'undefined'"):
        driver.execute_script(AXE_SCRIPT.read_text())
    return driver.execute_async_script(RUN_AXE, AXE_TAGS)


def described(violations):
    """The violations as lines a failing assert shows: rule, impact, help, then each node's
    CSS target and what to fix."""
    lines = []
    for rule in violations:
        lines.append(f"{rule['id']} ({rule['impact']}): {rule['help']}")
        for node in rule["nodes"]:
            summary = " ".join(node["summary"].split())
            lines.append(f"    {node['target']}: {summary}")
    return "\n".join(lines)


def assert_accessible_as_shown(driver, state):
    """No serious or critical violation in the page's current `state` (words for the
    failure message) at the size the page is shown at."""
    violations = serious_violations(driver)
    assert not violations, f"axe-core on {state}:\n{described(violations)}"


def assert_accessible(driver, state):
    """As assert_accessible_as_shown, at each of SIZES; the page is left at the size it
    had (as set_screen sets it)."""
    size = driver.execute_script(
        "return {width: window.innerWidth, height: window.innerHeight}")
    try:
        for screen in SIZES:
            set_screen(driver, **screen)
            assert_accessible_as_shown(driver, f"{state} at {screen['width']}×{screen['height']}")
    finally:
        set_screen(driver, **size)


# -- the keyboard alone ------------------------------------------------------------------------

# The focused element, and whether its focus is shown: a ring of 2 px or more drawn by the
# page (Chromium's own is 1 px and may be hard to see) on it or, for a control the page hides
# under its styled label (the shop's choices), on that label.
FOCUS = """
const element = document.activeElement;
const ring = (each) => {
  const style = getComputedStyle(each);
  return style.outlineStyle !== "none" && parseFloat(style.outlineWidth) >= 2;
};
return {element, tag: element.outerHTML.slice(0, element.outerHTML.indexOf(">") + 1),
        outline: getComputedStyle(element).outline,
        shown: ring(element) || [...(element.labels || [])].some(ring)};
"""


def press(driver, *keys):
    """`keys` pressed on whatever has the focus, as a person at the keyboard presses them."""
    ActionChains(driver).send_keys(*keys).perform()


def focused(driver):
    """The focused element; it is asserted to show its focus."""
    focus = driver.execute_script(FOCUS)
    assert focus["shown"], f"focus not shown on {focus['tag']} (outline: {focus['outline']})"
    return focus["element"]


def tab(driver, backwards=False):
    """Tab pressed, or Shift+Tab `backwards`."""
    keys = ActionChains(driver)
    if backwards:
        keys.key_down(Keys.SHIFT).send_keys(Keys.TAB).key_up(Keys.SHIFT).perform()
    else:
        keys.send_keys(Keys.TAB).perform()


def tab_to(driver, selector, backwards=False, stops=40):
    """Tab (Shift+Tab `backwards`) from stop to stop until the focus is on the element that
    the CSS `selector` matches, the focus shown at each stop; that element."""
    for _ in range(stops):
        if driver.execute_script(
                "return document.activeElement.matches(arguments[0])", selector):
            return focused(driver)
        tab(driver, backwards)
        focused(driver)
    raise AssertionError(f"{selector} not reached in {stops} stops")


# The page's visible controls: what a pointer can use, a keyboard must reach. A radio
# button counts as reached when its group is (the arrows move within a group); an element
# the page focuses by itself only (tabindex -1, such as a confirmation) is no control.
CONTROLS = """
const controls = [...document.querySelectorAll(
  "a[href], button, input, select, textarea, [tabindex]:not([tabindex='-1'])")];
return controls.filter((each) => !each.disabled && each.getClientRects().length
                                 && getComputedStyle(each).visibility === "visible");
"""


def unreachable_controls(driver, backwards=False, stops=200):
    """The page's visible controls that Tab (Shift+Tab `backwards`) does not reach, going
    once around the page from where the focus is, as the start of their tags; the focus is
    asserted shown at each stop."""
    where = "return document.hasFocus() && document.activeElement !== document.body" \
            " ? document.activeElement : null"
    start = driver.execute_script(where)
    reached, outside = [start] if start else [], 0
    for _ in range(stops):
        tab(driver, backwards)
        element = driver.execute_script(where)
        if element is None:  # past an end of the page, in the browser's own controls
            outside += 1
            if outside > 1:
                break
            continue
        if reached and element == reached[-1]:  # the next part of a date field
            continue
        if element in reached:  # around the page
            break
        focused(driver)
        reached.append(element)
    return driver.execute_script("""
        const [controls, reached] = arguments;
        const groups = new Set(reached.filter((each) => each.type === "radio")
          .map((each) => each.name));
        return controls.filter((each) => !reached.includes(each)
                                         && !(each.type === "radio" && groups.has(each.name)))
          .map((each) => each.outerHTML.slice(0, each.outerHTML.indexOf(">") + 1));""",
        driver.execute_script(CONTROLS), reached)

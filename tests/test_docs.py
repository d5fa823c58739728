"""The documentation agrees with the code: the configuration reference is the schema's, the
environment-variable rule is the parser's, every command named exists, every relative link
and anchor leads somewhere, and the README stays a front page."""

import importlib.util
import re
from pathlib import Path

import pytest

import museum_cli
import museum_config
import museum_vocabulary
import museum_credentials

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
REGENERATE = ".venv/bin/python docs/make_reference.py"

FENCED_BLOCK = re.compile(r"^```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6} (.+)$", re.MULTILINE)
# `museum WORD`, WORD ending the name (not museum-backup.timer, not museum.ini).
COMMAND = re.compile(r"(?<![\w.:/-])museum ([a-z][a-z-]*)(?![\w.-])")
# How the service names itself in its log lines ("museum service 1.3.0 … listening").
NOT_COMMANDS = {"service"}


def make_reference():
    """docs/make_reference.py, the generator the lead re-runs (docs/ is not a package)."""
    spec = importlib.util.spec_from_file_location("make_reference",
                                                  ROOT / "docs" / "make_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def text_of(page):
    return page.read_text(encoding="utf-8")


def prose_of(page):
    """The page without its fenced code blocks, where a `[x](y)` or `# x` is code."""
    return FENCED_BLOCK.sub("", text_of(page))


def code_of(page):
    """The fenced blocks and inline code spans of a page: where commands are written."""
    text = text_of(page)
    return [*FENCED_BLOCK.findall(text), *CODE_SPAN.findall(FENCED_BLOCK.sub("", text))]


def anchor(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors_of(page):
    return {anchor(heading) for heading in HEADING.findall(prose_of(page))}


def relative_links():
    for page in PAGES:
        for target in LINK.findall(prose_of(page)):
            if not re.match(r"[a-z]+:", target):
                yield page, target


def commands_named():
    """(page, subcommand) for every `museum SUBCOMMAND` in the pages' code, where `museum`
    is the command run (not an argument: `sudo -u museum cp`, `usermod -aG museum`)."""
    for page in PAGES:
        for code in code_of(page):
            for match in COMMAND.finditer(code):
                before = code[:match.start()].split()[-1:]
                if not (before and before[0].startswith("-")):
                    yield page, match.group(1)


def test_the_configuration_reference_is_rendered_from_the_schema():
    page = ROOT / "docs" / "configuration.md"
    assert text_of(page) == make_reference().with_reference(text_of(page)), (
        f"docs/configuration.md's reference differs from museum_config.SCHEMA; "
        f"regenerate it: {REGENERATE}")


def test_the_configuration_page_says_how_to_regenerate_its_reference():
    assert REGENERATE in text_of(ROOT / "docs" / "configuration.md").split("## ")[0]


def test_every_free_section_has_its_row_in_the_reference():
    assert set(make_reference().FREE_SECTION_ROWS) == set(museum_config.FREE_SECTIONS), (
        "describe each section of museum_config.FREE_SECTIONS in docs/make_reference.py")


@pytest.mark.parametrize("section, key", [(section, key)
                                          for section, options in museum_config.SCHEMA.items()
                                          for key in options])
def test_each_option_of_the_schema_has_the_variable_the_reference_names(section, key):
    """The variable takes effect: its value is either read or refused naming the option."""
    variable = f"MUSEUM_{section}_{key}".upper()
    assert f"`{variable}`" in text_of(ROOT / "docs" / "configuration.md")
    try:
        config = museum_config.parse_config("", environ={variable: "\x00"})
    except museum_config.ConfigError as error:
        assert f"[{section}] {key}:" in str(error)
    else:
        assert config[section][key] == "\x00"


def test_the_free_sections_have_no_variables():
    """As the reference says: [users], [exceptions] and [capacity_dates] come from the file."""
    environ = {"MUSEUM_USERS_ALICE": "admin:" + museum_credentials.hash_key("k"),
               "MUSEUM_EXCEPTIONS_2026-12-24": "closed",
               "MUSEUM_CAPACITY_DATES_2026-12-24": "5"}
    assert museum_config.parse_config("", environ=environ) == museum_config.parse_config("")


def test_the_readme_is_a_front_page():
    size = len(README.read_bytes())
    assert size < 12_000, f"README.md is {size} bytes: move the details to a page of docs/"


def test_the_readme_names_every_role():
    for role in museum_vocabulary.ROLES:
        assert f"| {role} |" in text_of(README), role


@pytest.mark.parametrize("page", PAGES[1:], ids=lambda page: page.name)
def test_each_page_is_listed_in_the_readme_and_leads_back(page):
    assert f"](docs/{page.name})" in text_of(README)
    assert "](../README.md)" in text_of(page).split("\n## ")[0]


@pytest.mark.parametrize("page, target", list(relative_links()),
                         ids=lambda value: getattr(value, "name", value))
def test_every_relative_link_leads_to_a_file_and_heading(page, target):
    path, _, fragment = target.partition("#")
    linked = (page.parent / path).resolve() if path else page
    assert linked.exists(), f"{page.name}: {target}: no such file"
    if fragment:
        assert fragment in anchors_of(linked), f"{page.name}: {target}: no such heading"


def test_the_pages_name_commands():
    """The next test must have something to check: the pages do name commands."""
    assert {"serve", "backup", "restore", "verify-ticket"} <= {
        name for _, name in commands_named()}


@pytest.mark.parametrize("name", sorted({name for _, name in commands_named()} - NOT_COMMANDS))
def test_every_command_named_exists(name, capsys):
    with pytest.raises(SystemExit) as exit_status:
        museum_cli.build_parser().parse_args([name, "--help"])
    assert exit_status.value.code == 0, (
        f"the docs name `museum {name}`, which is no subcommand: {capsys.readouterr().err}")

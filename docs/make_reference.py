"""Render the configuration reference of docs/configuration.md from `museum_config.SCHEMA`.

    python docs/make_reference.py

rewrites the block between the reference markers of docs/configuration.md; the rest of the
page is left as it is. tests/test_docs.py fails while the block differs from what this
renders, so the reference cannot drift from the options the service reads.
"""

from pathlib import Path

import museum_config
import museum_vocabulary

PAGE = Path(__file__).resolve().parent / "configuration.md"
START, END = "<!-- reference:start -->", "<!-- reference:end -->"

# The sections whose keys the museum chooses (names, dates): the schema cannot list their
# options, so each gets one row here. A new free section fails tests/test_docs.py until it
# is described.
FREE_SECTION_ROWS = {
    "users": ("*NAME*", "`ROLE:HASH`, the role one of "
              + ", ".join(f"`{role}`" for role in museum_vocabulary.ROLES)
              + "; the hash from `museum hash-password`, or a device key's digest "
              "(`key$…`; new devices are kept in the database: `museum add-device`)"),
    "exceptions": ("*YYYY-MM-DD*", "`closed` or `HH:MM-HH:MM` for that date only, instead "
                   "of [hours]"),
    "capacity_dates": ("*YYYY-MM-DD*", "places of general entry that date only, or "
                       "`unlimited`, instead of [capacity] general_per_day"),
    "categories": ("*NAME*", "a price category, one line each, the default first: `LABEL | "
                   "PRICE | persons: N | note: TEXT`, all but the label optional (the price "
                   "left out: [tickets] general_price; persons: the places a ticket takes, "
                   "default 1; note: what the door checks). Without the section: one, "
                   "`adult`, at general_price"),
}


def _cell(text):
    return text.replace("|", "\\|")


def _default(value):
    return f"`{value}`" if value else "(empty)"


def _variable(section, key):
    return f"`MUSEUM_{section}_{key}`".upper()


def _sections(names):
    listed = [f"[{name}]" for name in names]
    return ", ".join(listed[:-1]) + " and " + listed[-1]


def _environment_rule():
    """Which sections the variables cover, as `museum_config.parse_config` reads them: the
    options of the schema, never the free sections."""
    return (f"Every option of {_sections(museum_config.SCHEMA)} can be set by its environment "
            f"variable `MUSEUM_<SECTION>_<KEY>`, named in the table. The entries of "
            f"{_sections(museum_config.FREE_SECTIONS)} have no variable: they come from the "
            f"config file only.")


def reference():
    """The block's content: the environment rule, one row per option of the schema, then
    one per free section."""
    rows = [_environment_rule(), "",
            "| section | option | default | environment variable | meaning |",
            "| --- | --- | --- | --- | --- |"]
    for section, options in museum_config.SCHEMA.items():
        rows += [f"| {section} | `{key}` | {_default(option.default)} | "
                 f"{_variable(section, key)} | {_cell(option.help)} |"
                 for key, option in options.items()]
    for section in museum_config.FREE_SECTIONS:
        key, meaning = FREE_SECTION_ROWS[section]
        rows.append(f"| {section} | {key} | | none | {_cell(meaning)} |")
    return "\n".join(rows) + "\n"


def with_reference(page_text):
    """The page with its marked block replaced by the current reference."""
    before, rest = page_text.split(START, 1)
    _, after = rest.split(END, 1)
    return f"{before}{START}\n{reference()}{END}{after}"


def main():
    PAGE.write_text(with_reference(PAGE.read_text(encoding="utf-8")), encoding="utf-8")


if __name__ == "__main__":
    main()

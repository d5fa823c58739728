"""Tests of museum_ticket_image: the PNG is well formed, stable, and its QR code scans."""

import struct
import uuid
import zlib

import pytest

from qr import chunks, decode_grey, read_qr, scan
from museum_ticket_image import render_ticket

QR_SCALE = 4
QUIET_MODULES = 4


def qr_payload(seed: int = 1) -> str:
    ticket_id = uuid.UUID(int=seed * 0x9E3779B97F4A7C15)
    return f"MUSEUM1:{ticket_id}:ticket-general-1a2b3c-4d5e6:{seed:016x}"


def sample_fields() -> list[tuple[str, str]]:
    return [
        ("Type", "Special event"),
        ("Date", "2026-12-01"),
        ("Event", "Night at the Museum"),
        ("Code", "ticket-event-1a2b3c-4d5e6"),
    ]


def assert_scans_as(png: bytes, text: str) -> None:
    assert read_qr(png) == text


@pytest.mark.parametrize("payload", [qr_payload(), "MUSEUM1:42"])
def test_qr_code_decodes_to_the_exact_payload(payload):
    assert_scans_as(render_ticket("MUSEUM TICKET", sample_fields(), payload), payload)


def test_png_chunks_are_well_formed():
    png = render_ticket("MUSEUM TICKET", sample_fields(), qr_payload())
    parts = chunks(png)
    kinds = [kind for kind, _, _ in parts]
    assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND"
    assert set(kinds) == {b"IHDR", b"IDAT", b"IEND"}
    for kind, data, crc in parts:
        assert zlib.crc32(kind + data) == crc, kind
    width, height = struct.unpack(">II", parts[0][1][:8])
    decoded_width, decoded_height, pixels = decode_grey(png)
    assert (decoded_width, decoded_height) == (width, height)
    assert len(pixels) == width * height
    assert width > height > 0, "the ticket is laid out landscape"


def test_qr_code_has_a_four_module_quiet_zone():
    png = render_ticket("MUSEUM TICKET", sample_fields(), qr_payload())
    width, _, pixels = decode_grey(png)
    corners = scan(png)[0].position
    xs = [p.x for p in (corners.top_left, corners.top_right, corners.bottom_left, corners.bottom_right)]
    ys = [p.y for p in (corners.top_left, corners.top_right, corners.bottom_left, corners.bottom_right)]
    left, right, top, bottom = min(xs), max(xs), min(ys), max(ys)
    # The decoder's corners may sit a pixel off the symbol's edge, so stay clear of it.
    near, far = 2, QUIET_MODULES * QR_SCALE - 1
    ring = [
        (x, y)
        for y in range(top - far, bottom + far + 1)
        for x in range(left - far, right + far + 1)
        if not (left - near <= x <= right + near and top - near <= y <= bottom + near)
    ]
    assert ring
    assert all(pixels[y * width + x] == 255 for x, y in ring)


def test_same_input_gives_the_same_bytes():
    first = render_ticket("MUSEUM TICKET", sample_fields(), qr_payload())
    second = render_ticket("MUSEUM TICKET", sample_fields(), qr_payload())
    assert first == second


@pytest.mark.parametrize(
    "changed",
    [
        ("MUSEUM PASS", sample_fields(), qr_payload()),
        ("MUSEUM TICKET", sample_fields()[:-1], qr_payload()),
        ("MUSEUM TICKET", sample_fields()[:-1] + [("Code", "ticket-event-1a2b3c-4d5e7")], qr_payload()),
        ("MUSEUM TICKET", sample_fields(), qr_payload(2)),
    ],
)
def test_different_input_gives_different_bytes(changed):
    assert render_ticket(*changed) != render_ticket("MUSEUM TICKET", sample_fields(), qr_payload())


@pytest.mark.parametrize(
    "name",
    [
        "Zoë Ångström-Núñez",
        "Visitor 😀👨‍👩‍👧 🎟️",
        "nul\x00byte and\ttab\nnewline",
        "\u202eevil\u202c \u200fשלום عربي",
        "漢字かな",
        "W" * 1000,
        "",
    ],
)
def test_awkward_text_renders_and_the_code_still_scans(name):
    payload = qr_payload(3)
    png = render_ticket(name, [("Name", name), (name, "value"), ("", "")], payload)
    assert_scans_as(png, payload)


def test_accents_fold_to_plain_letters():
    payload = qr_payload()
    accented = render_ticket("Musée", [("Name", "Zoë Núñez")], payload)
    plain = render_ticket("Musee", [("Name", "Zoe Nunez")], payload)
    assert accented == plain


def test_typographic_punctuation_folds_to_ascii():
    payload = qr_payload()
    curly = render_ticket("Night \u2014 Day", [("Name", "O\u2019Brien \u201cJr\u201d")], payload)
    straight = render_ticket("Night - Day", [("Name", "O'Brien \"Jr\"")], payload)
    assert curly == straight


def test_undrawable_characters_become_question_marks():
    payload = qr_payload()
    assert render_ticket("T", [("Name", "A😀\x00B")], payload) == render_ticket("T", [("Name", "A??B")], payload)


def test_long_text_is_cut_off_instead_of_widening_the_ticket():
    payload = qr_payload()
    short = render_ticket("T", [("Name", "W")], payload)
    long = render_ticket("T" * 500, [("Name", "W" * 1000)], payload)
    longer = render_ticket("T" * 900, [("Name", "W" * 2000)], payload)
    assert decode_grey(long)[:2] == decode_grey(short)[:2]
    assert long == longer, "everything past the visible width is dropped"
    assert long != short

"""Render a museum ticket as a PNG: a readable text panel beside a scannable QR code,
and keep each ticket's image once drawn.

Everything is drawn with a built-in bitmap font and encoded with the standard
library, so the output depends only on the inputs (the service hashes it for
an ETag) and needs no imaging library.
"""

import collections
import hashlib
import struct
import threading
import unicodedata
import zlib

import segno

from museum_door import qr_text
from museum_vocabulary import TICKET_LABELS

__all__ = ["render_ticket", "TicketImages"]


class TicketImages:
    """Each ticket's (and order's) image and its digest (for an ETag), drawn once per process: one
    drawing costs about 15 ms. Concurrent first requests for an image wait for one
    drawing instead of each drawing it; the least recently used go first past LIMIT."""

    LIMIT = 2048

    def __init__(self, secret):
        self.secret = secret  # signs the QR text
        self._images = collections.OrderedDict()
        self._lock = threading.Lock()
        self._drawing = {}  # key -> lock held by the one thread drawing that image

    def image(self, ticket):
        """(PNG bytes, digest) of `ticket`, as the store gives it."""
        # The key holds everything drawn, so a renamed event gets a new image, never a stale one.
        return self._cached((ticket["ticketId"], ticket["eventName"]), lambda: render_ticket(
            "MUSEUM TICKET", _ticket_lines(ticket), qr_text(
                self.secret, ticket["ticketId"], ticket["confirmationCode"])))

    def order_image(self, order):
        """(PNG bytes, digest) of an order's code, which admits all its tickets at once."""
        days = sorted({ticket["ticketDate"] for ticket in order["tickets"]})
        lines = [("Date", ", ".join(days)), ("Tickets", str(len(order["tickets"]))),
                 ("Code", order["orderCode"])]
        return self._cached((order["orderId"],), lambda: render_ticket(
            "MUSEUM ORDER", lines, qr_text(self.secret, order["orderId"], order["orderCode"])))

    def _cached(self, key, draw):
        """(PNG bytes, digest) that `draw()` makes for `key`, drawn once."""
        with self._lock:
            if key in self._images:
                self._images.move_to_end(key)
                return self._images[key]
            drawing = self._drawing.setdefault(key, threading.Lock())
        with drawing:
            with self._lock:
                if key in self._images:
                    return self._images[key]
            try:
                png = draw()
                entry = png, hashlib.sha256(png).hexdigest()[:32]
                with self._lock:
                    self._images[key] = entry
                    if len(self._images) > self.LIMIT:
                        self._images.popitem(last=False)
            finally:
                with self._lock:
                    self._drawing.pop(key, None)
        return entry


def _ticket_lines(ticket):
    lines = [("Type", TICKET_LABELS[ticket["ticketType"]]),
             ("Date", ticket["ticketDate"])]
    if ticket["entryTime"]:
        lines.append(("Entry", ticket["entryTime"]))
    if ticket["eventName"]:
        lines.append(("Event", ticket["eventName"]))
    lines.append(("Code", ticket["confirmationCode"]))
    return lines


WHITE = 255
BLACK = 0

# 5x8 font for ASCII 0x20-0x7E: eight base-32 digits per glyph, one per row,
# leftmost pixel in the high bit. Rows 0-6 hold capitals, row 7 descenders.
_FONT_DATA = (
    "0000000044444040aaa00000aavavaa04fke5u40op248j30cik8lid044800000"
    "248884208422248004lel400044v440000000c48000v000000000cc001248g00"
    "ehjlphe04c4444e0eh1248v0v2421he026aiv220vgu11he068guhhe0v1248880"
    "ehhehhe0ehhf12c00cc0cc000cc0c480248g842000v0v00084212480eh124040"
    "eh1dlle0ehhvhhh0uhhuhhu0ehggghe0sihhhis0vgguggv0vgguggg0ehgnhhf0"
    "hhhvhhh0e44444e072222ic0hikokih0ggggggv0hrllhhh0hhpljhh0ehhhhhe0"
    "uhhuggg0ehhhlid0uhhukih0fgge11u0v4444440hhhhhhe0hhhhha40hhhllla0"
    "hha4ahh0hha44440v1248gv0e88888e00g842100e22222e04ah000000000000v"
    "8420000000e1fhf0ggmphhu000egghe011djhhf000ehvge0698s888000fhhf1e"
    "ggmphhh040c444e0206222icggikoki0c44444e000qllhh000mphhh000ehhhe0"
    "00uhhugg00fhhf1100mpggg000fge1u088s8896000hhhjd000hhha4000hhlla0"
    "00ha4ah000hhhf1e00v248v0244844204444444084424480008l2000"
)
GLYPH_W = 5
GLYPH_H = 8
CELL_W = GLYPH_W + 1  # one blank column between letters
_GLYPHS = {
    chr(0x20 + i): tuple(int(digit, 32) for digit in _FONT_DATA[i * GLYPH_H:(i + 1) * GLYPH_H])
    for i in range(len(_FONT_DATA) // GLYPH_H)
}

TITLE_SCALE = 3
BODY_SCALE = 2
LINE_GAP = 8  # pixels between text lines
TEXT_WIDTH = 36 * CELL_W * BODY_SCALE  # room for 36 body characters
PAD = 16
FRAME = 3
DASH_ON, DASH_OFF = 6, 4  # the perforation between text and QR code
# Four pixels per module keeps phone cameras happy at screen resolution, and a
# four-module quiet zone is what the QR standard requires for reliable reads.
QR_SCALE = 4
QR_QUIET = 4


def render_ticket(title: str, fields: list[tuple[str, str]], qr_text: str) -> bytes:
    """PNG bytes of a ticket: `title` as a header, one `label: value` line per field, and a QR code of `qr_text`."""
    text = _text_panel(title, fields)
    qr = _qr_panel(qr_text)
    return _encode_png(_compose(text, qr))


def _text_panel(title: str, fields: list[tuple[str, str]]) -> list[bytes]:
    rows = _text_rows(_fit(_to_ascii(title), TITLE_SCALE), TITLE_SCALE)
    rows += _blank_rows(TEXT_WIDTH, LINE_GAP // 2)
    rows += [bytes([BLACK]) * TEXT_WIDTH] * 2  # rule under the title
    rows += _blank_rows(TEXT_WIDTH, LINE_GAP)
    labels = [_to_ascii(label) for label, _ in fields]
    labels = [f"{label}:" if label else "" for label in labels]
    # Aligning the values makes the ticket scannable by eye; the cap stops one
    # long label from pushing every value off the line.
    indent = min(max(map(len, labels), default=0), 12)
    for label, (_, value) in zip(labels, fields, strict=True):
        line = f"{label.ljust(indent)} {_to_ascii(value)}"
        rows += _text_rows(_fit(line, BODY_SCALE), BODY_SCALE)
        rows += _blank_rows(TEXT_WIDTH, LINE_GAP)
    return rows


# Curly quotes and dashes are common in names and titles, and NFKD leaves them be.
_TYPOGRAPHY = str.maketrans("\u2018\u2019\u201c\u201d\u2013\u2014", "''\"\"--")


def _to_ascii(text: str) -> str:
    """Fold `text` to what the font can draw: accents dropped, unknown characters as '?'."""
    out = []
    for ch in unicodedata.normalize("NFKD", text.translate(_TYPOGRAPHY)):
        if " " <= ch <= "~":
            out.append(ch)
        elif (kind := unicodedata.category(ch)).startswith("M") or kind == "Cf":
            continue  # accents, joiners and direction marks have no look of their own
        else:
            out.append(" " if ch.isspace() else "?")
    return "".join(out)


def _fit(line: str, scale: int) -> str:
    room = TEXT_WIDTH // (CELL_W * scale)
    return line if len(line) <= room else line[:room - 3] + "..."


def _cell_rows(scale: int) -> list[bytes]:
    """Pixels of one scaled character-cell row for every 5-bit glyph row pattern."""
    table = []
    for bits in range(1 << GLYPH_W):
        dots = [bits >> (GLYPH_W - 1 - col) & 1 for col in range(GLYPH_W)] + [0]
        table.append(b"".join(bytes([BLACK if dot else WHITE]) * scale for dot in dots))
    return table


_CELLS = {scale: _cell_rows(scale) for scale in (TITLE_SCALE, BODY_SCALE)}


def _text_rows(line: str, scale: int) -> list[bytes]:
    cells = _CELLS[scale]
    glyphs = [_GLYPHS[ch] for ch in line]
    rows = []
    for y in range(GLYPH_H):
        row = b"".join(cells[glyph[y]] for glyph in glyphs).ljust(TEXT_WIDTH, bytes([WHITE]))
        rows += [row] * scale
    return rows


def _qr_panel(qr_text: str) -> list[bytes]:
    # make_qr, not make: a Micro QR would be smaller but most phones can't read it.
    qr = segno.make_qr(qr_text, error="m")
    module = {0: bytes([WHITE]) * QR_SCALE, 1: bytes([BLACK]) * QR_SCALE}
    quiet = module[0] * QR_QUIET
    rows = []
    for line in qr.matrix:
        rows += [quiet + b"".join(module[dark] for dark in line) + quiet] * QR_SCALE
    margin = _blank_rows(len(rows[0]), QR_QUIET * QR_SCALE)
    return margin + rows + margin


def _blank_rows(width: int, count: int) -> list[bytes]:
    return [bytes([WHITE]) * width] * count


def _compose(text: list[bytes], qr: list[bytes]) -> list[bytes]:
    """Lay the text panel and the QR panel side by side inside a frame."""
    height = max(len(text) + 2 * PAD, len(qr))
    text = _blank_rows(TEXT_WIDTH, PAD) + text
    text += _blank_rows(TEXT_WIDTH, height - len(text))
    # The QR code sits in the middle; its quiet zone is its own padding.
    above = (height - len(qr)) // 2
    qr = _blank_rows(len(qr[0]), above) + qr + _blank_rows(len(qr[0]), height - len(qr) - above)
    edge = bytes([BLACK]) * FRAME
    pad = bytes([WHITE]) * PAD
    dash, gap = bytes([BLACK, BLACK]), bytes([WHITE, WHITE])
    rows = []
    for y in range(height):
        perforation = dash if y % (DASH_ON + DASH_OFF) < DASH_ON else gap
        rows.append(edge + pad + text[y] + pad + perforation + qr[y] + edge)
    border = [bytes([BLACK]) * len(rows[0])] * FRAME
    return border + rows + border


def _encode_png(rows: list[bytes]) -> bytes:
    """8-bit greyscale PNG, every row with filter type 0 (none)."""
    width, height = len(rows[0]), len(rows)
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    pixels = zlib.compress(b"".join(b"\x00" + row for row in rows))
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", pixels)
        + _chunk(b"IEND", b"")
    )


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

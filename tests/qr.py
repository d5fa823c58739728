"""Reading ticket images back in tests: a small PNG reader and zxing-cpp QR decoding.

Only what `museum_ticket_image` writes is understood: 8-bit greyscale, no interlace, every row
with filter type 0. Anything else fails an assertion, which is itself a finding. Screenshots
of a browser (8-bit RGB or RGBA, any filter) are read by `read_screenshot_qr`.
"""

import struct
import zlib

import zxingcpp

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def chunks(png: bytes) -> list[tuple[bytes, bytes, int]]:
    """(type, data, stored CRC) of every chunk, checking the framing on the way."""
    assert png[:8] == PNG_SIGNATURE
    found, pos = [], 8
    while pos < len(png):
        (length,) = struct.unpack(">I", png[pos:pos + 4])
        kind = png[pos + 4:pos + 8]
        data = png[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", png[pos + 8 + length:pos + 12 + length])
        assert len(data) == length, "chunk runs past the end of the file"
        found.append((kind, data, crc))
        pos += 12 + length
    assert pos == len(png)
    return found


def decode_grey(png: bytes) -> tuple[int, int, bytes]:
    """Width, height and pixels of an 8-bit greyscale PNG whose rows all use filter 0."""
    parts = chunks(png)
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", parts[0][1])
    assert (depth, colour, interlace) == (8, 0, 0)
    raw = zlib.decompress(b"".join(data for kind, data, _ in parts if kind == b"IDAT"))
    assert len(raw) == height * (width + 1)
    rows = [raw[y * (width + 1):(y + 1) * (width + 1)] for y in range(height)]
    assert all(row[0] == 0 for row in rows), "only filter type 0 is expected"
    return width, height, b"".join(row[1:] for row in rows)


def scan(png: bytes) -> list:
    """Every barcode zxing-cpp finds in the image."""
    width, height, pixels = decode_grey(png)
    return zxingcpp.read_barcodes(memoryview(pixels).cast("B", (height, width)))


def read_qr(png: bytes) -> str:
    """The text of the one QR code in the image (anything else found fails)."""
    results = scan(png)
    assert [result.format for result in results] == [zxingcpp.BarcodeFormat.QRCode], results
    return results[0].text


def _paeth(left, up, up_left):
    guess = left + up - up_left
    distances = (abs(guess - left), abs(guess - up), abs(guess - up_left))
    return (left, up, up_left)[distances.index(min(distances))]


def decode_screenshot(png: bytes) -> tuple[int, int, bytes]:
    """Width, height and grey pixels (the green channel) of an 8-bit RGB or RGBA PNG, as
    Chromium writes screenshots: any of the five row filters, no interlace."""
    parts = chunks(png)
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", parts[0][1])
    assert (depth, colour, interlace) in ((8, 2, 0), (8, 6, 0))
    step = 3 if colour == 2 else 4
    stride = width * step
    raw = zlib.decompress(b"".join(data for kind, data, _ in parts if kind == b"IDAT"))
    previous, grey = bytearray(stride), bytearray()
    for y in range(height):
        start = y * (stride + 1)
        kind, row = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for x in range(stride):
            left = row[x - step] if x >= step else 0
            up_left = previous[x - step] if x >= step else 0
            row[x] = (row[x] + (0, left, previous[x], (left + previous[x]) // 2,
                                _paeth(left, previous[x], up_left))[kind]) & 0xFF
        grey += row[1::step]
        previous = row
    return width, height, bytes(grey)


def read_screenshot_qr(png: bytes) -> str:
    """The text of the one QR code in a browser's screenshot (anything else found fails)."""
    width, height, pixels = decode_screenshot(png)
    results = zxingcpp.read_barcodes(memoryview(pixels).cast("B", (height, width)))
    assert [result.format for result in results] == [zxingcpp.BarcodeFormat.QRCode], results
    return results[0].text

"""Reading ticket images back in tests: a small PNG reader and zxing-cpp QR decoding.

`read_qr` understands only what `museum_ticket_image` writes: 8-bit greyscale, no
interlace, every row with filter type 0. Anything else fails an assertion, which is itself
a finding. `read_screenshot_qr` reads a browser's screenshot (8-bit colour, any row
filter), and `read_svg_qr` the SVG that segno draws inside the ticket page, put on pixels
as a browser would.
"""

import re
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
    return _read_pixels(*decode_grey(png))


def read_screenshot_qr(png: bytes) -> str:
    """The text of the one QR code in a browser's screenshot (RGB or RGBA, 8-bit)."""
    return _read_pixels(*decode_colour_as_grey(png))


def decode_colour_as_grey(png: bytes) -> tuple[int, int, bytes]:
    """Width, height and the red channel (grey enough for black on white) of an 8-bit RGB
    or RGBA PNG, its rows unfiltered (PNG filters 0 to 4)."""
    parts = chunks(png)
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", parts[0][1])
    assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
    step = 3 if colour == 2 else 4  # bytes per pixel
    stride = width * step
    raw = zlib.decompress(b"".join(data for kind, data, _ in parts if kind == b"IDAT"))
    above, red = bytearray(stride), bytearray()
    for y in range(height):
        kind, row = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = row[i - step] if i >= step else 0
            upper_left = above[i - step] if i >= step else 0
            row[i] = (row[i] + _predicted(kind, left, above[i], upper_left)) & 0xFF
        red += row[::step]
        above = row
    return width, height, bytes(red)


def _predicted(kind, left, up, upper_left):
    """What PNG filter `kind` adds back to a byte from its neighbours."""
    if kind == 0:
        return 0
    if kind == 1:
        return left
    if kind == 2:
        return up
    if kind == 3:
        return (left + up) // 2
    assert kind == 4, kind
    estimate = left + up - upper_left
    near_left, near_up, near_corner = (abs(estimate - left), abs(estimate - up),
                                       abs(estimate - upper_left))
    if near_left <= near_up and near_left <= near_corner:
        return left
    return up if near_up <= near_corner else upper_left


SVG_SIZE = re.compile(r'viewBox="0 0 (\d+) (\d+)"')
SVG_DARK = re.compile(r'<path stroke="#000" d="([^"]+)"')
SVG_STEP = re.compile(r"([Mmh])([-\d. ]+)")


def read_svg_qr(svg: str, scale: int = 4) -> str:
    """The text of the one QR code segno drew as `svg`: its dark path (absolute and
    relative moves, and horizontal runs one module high) put on pixels, `scale` a module."""
    width, height = (int(number) for number in SVG_SIZE.search(svg).groups())
    dark = [bytearray(b"\xff" * width) for _ in range(height)]
    x = y = 0.0
    for command, numbers in SVG_STEP.findall(SVG_DARK.search(svg)[1]):
        values = [float(number) for number in numbers.split()]
        if command == "M":
            x, y = values
        elif command == "m":
            x, y = x + values[0], y + values[1]
        else:
            dark[int(y)][int(x):int(x + values[0])] = b"\x00" * int(values[0])
            x += values[0]
    rows = [bytes(pixel for pixel in row for _ in range(scale)) for row in dark]
    pixels = b"".join(row for row in rows for _ in range(scale))
    return _read_pixels(width * scale, height * scale, pixels)


def _read_pixels(width, height, pixels):
    results = zxingcpp.read_barcodes(memoryview(pixels).cast("B", (height, width)))
    assert [result.format for result in results] == [zxingcpp.BarcodeFormat.QRCode], results
    return results[0].text

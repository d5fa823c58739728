"""Reading ticket images back in tests: a small PNG reader and zxing-cpp QR decoding.

Only what `museum_ticket_image` writes is understood: 8-bit greyscale, no interlace, every row
with filter type 0. Anything else fails an assertion, which is itself a finding.
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

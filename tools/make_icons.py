"""Writes the installed app's icons (www/icon-192.png, www/icon-512.png and the maskable
www/icon-maskable-512.png) from the favicon's design: a 3x3 grid of patches on the page's dark
ground, as an attention map over patches reads. Standard library only; run from the project
root: python3 tools/make_icons.py."""

import struct
import zlib

GROUND = (0x11, 0x14, 0x1B)
BLUE, ORANGE, YELLOW = (0x3B, 0x52, 0x8B), (0xE0, 0x70, 0x20), (0xF6, 0xD8, 0x60)
# favicon.svg's patches, row by row.
PATCHES = [[BLUE, ORANGE, BLUE], [ORANGE, YELLOW, ORANGE], [BLUE, ORANGE, BLUE]]


def icon(size, maskable):
    """RGBA rows: the favicon's 16-unit design scaled to `size`; a maskable icon fills the
    square with the ground and keeps the grid inside the central 80 % safe zone."""
    unit = size / 16
    inset = size * 0.1 if maskable else 0.0
    grid = (size - 2 * inset) / 16 * 12 if maskable else 12 * unit
    origin = inset + ((size - 2 * inset) - grid) / 2 if maskable else 2 * unit
    radius = 0 if maskable else 3 * unit
    rows = []
    for y in range(size):
        row = bytearray()
        for x in range(size):
            cx, cy = x + 0.5, y + 0.5
            # Rounded corners: outside the corner circles is transparent.
            dx = max(radius - cx, cx - (size - radius), 0)
            dy = max(radius - cy, cy - (size - radius), 0)
            if radius and dx * dx + dy * dy > radius * radius:
                row += bytes((0, 0, 0, 0))
                continue
            colour = GROUND
            gx, gy = (cx - origin) / (grid / 3), (cy - origin) / (grid / 3)
            if 0 <= gx < 3 and 0 <= gy < 3:
                colour = PATCHES[int(gy)][int(gx)]
            row += bytes(colour + (255,))
        rows.append(bytes(row))
    return rows


def png(rows, size):
    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    raw = b"".join(b"\x00" + row for row in rows)
    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


for name, size, maskable in [
    ("icon-192.png", 192, False),
    ("icon-512.png", 512, False),
    ("icon-maskable-512.png", 512, True),
]:
    with open(f"www/{name}", "wb") as out:
        out.write(png(icon(size, maskable), size))

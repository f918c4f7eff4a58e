"""Draw the board's home-screen icons (static/icons/*.png) from the same shapes as static/favicon.svg,
and the phone's tab icons (the plain one and the one of the player's turn).

Pure Python (zlib + struct), so it runs anywhere: ``python3 tools/make_icons.py``. The PNGs are committed;
run this again only when the design changes.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "static" / "icons"
BG = (0x14, 0x16, 0x1C)
GOLD = (0xF0, 0xB4, 0x29)
BLUE = (0x4A, 0xA3, 0xFF)
# the favicon's two crossed blades in its 64-unit box, drawn in this order (the blue one on top)
SHAPES = [
    (GOLD, [(14, 50), (42, 14), (50, 22), (22, 50)]),
    (BLUE, [(50, 50), (22, 14), (14, 22), (42, 50)]),
]
# the turn's icon: gold, the blades dark, a red dot with a dark rim in the top right corner
RED = (0xFF, 0x5D, 0x5D)
TURN_SHAPES = [(BG, poly) for _, poly in SHAPES]
TURN_DOT = (52.0, 12.0, 10.0, 1.5)  # centre, radius, half the rim's width (in the 64-unit box)


def inside(poly: list[tuple[float, float]], x: float, y: float) -> bool:
    hit = False
    j = len(poly) - 1
    for i, (xi, yi) in enumerate(poly):
        xj, yj = poly[j]
        if (yi > y) != (yj > y) and x < (xj - xi) * (y - yi) / (yj - yi) + xi:
            hit = not hit
        j = i
    return hit


def in_rounded(x: float, y: float, size: float, radius: float) -> bool:
    cx = min(max(x, radius), size - radius)
    cy = min(max(y, radius), size - radius)
    return (x - cx) ** 2 + (y - cy) ** 2 <= radius**2


def draw(size: int, maskable: bool = False, samples: int = 3, turn: bool = False) -> bytes:
    # a maskable icon keeps its picture inside the central 80% and fills the whole square
    scale = 64 / size / (0.72 if maskable else 1.0)
    shift = 32 - 32 * (1 / (0.72 if maskable else 1.0))
    rows = []
    for py in range(size):
        row = bytearray([0])
        for px in range(size):
            acc = [0.0, 0.0, 0.0, 0.0]
            for sy in range(samples):
                for sx in range(samples):
                    x = px + (sx + 0.5) / samples
                    y = py + (sy + 0.5) / samples
                    if not maskable and not in_rounded(x, y, size, size * 12 / 64):
                        continue
                    colour = GOLD if turn else BG
                    ux, uy = x * scale + shift, y * scale + shift
                    for c, poly in TURN_SHAPES if turn else SHAPES:
                        if inside(poly, ux, uy):
                            colour = c
                    if turn:
                        cx, cy, r, rim = TURN_DOT
                        d = ((ux - cx) ** 2 + (uy - cy) ** 2) ** 0.5
                        if d <= r - rim:
                            colour = RED
                        elif d <= r + rim:
                            colour = BG
                    acc[0] += colour[0]
                    acc[1] += colour[1]
                    acc[2] += colour[2]
                    acc[3] += 255
            n = samples * samples
            alpha = acc[3] / n
            if alpha:
                row += bytes(round(acc[k] / (acc[3] / 255)) for k in range(3)) + bytes([round(alpha)])
            else:
                row += b"\0\0\0\0"
        rows.append(bytes(row))
    return png(size, size, b"".join(rows))


def png(width: int, height: int, raw: bytes) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "icon-192.png").write_bytes(draw(192))
    (OUT / "icon-512.png").write_bytes(draw(512, samples=2))
    (OUT / "icon-maskable-512.png").write_bytes(draw(512, maskable=True, samples=2))
    # the phone's tab icons: a PNG is decoded in no time, an SVG icon is loaded as a document of its own
    # at each change (a few milliseconds of a phone's main thread when the turn comes and goes)
    (OUT / "favicon-32.png").write_bytes(draw(32, samples=4))
    (OUT / "favicon-turn-32.png").write_bytes(draw(32, samples=4, turn=True))


if __name__ == "__main__":
    main()
